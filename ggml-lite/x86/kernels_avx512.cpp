// AVX-512 kernels (F, BW, VL, DQ and VNNI): four quantized blocks per step, integer dot
// products with vpdpbusd, float kernels from simd_float-inl.h.
//
// Compiled with -mavx512*: everything stays in the anonymous namespace and only intrinsics and
// xsimd templates instantiated for avx512bw are used, so no code compiled with these flags can
// be shared with (and picked by the linker for) the portable parts of the program.
#include <immintrin.h>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/packed_kquant_avx512.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace {

using Arch = Avx512;
using FK = FloatKernels<Arch>;

// ---- Q8_0 activations --------------------------------------------------------------------

// roundf semantics (ties away from zero) as the scalar reference has them; the rounding
// instructions round ties to even. Truncate, then step away from zero when |frac| >= 0.5.
__m512i round_away(__m512 v) {
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
    const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 step = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
    return _mm512_cvtps_epi32(_mm512_mask_add_ps(t, up, t, step));
}

// Bit-identical to quantize_row_q8_0_ref: the same max, the same float divisions, the same
// products, the same rounding.
void quantize_q8_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0*>(vy);
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        const __m512 v0 = _mm512_loadu_ps(x);
        const __m512 v1 = _mm512_loadu_ps(x + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        const __m512 vid = _mm512_set1_ps(id);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y[b].qs),
                         _mm512_cvtepi32_epi8(round_away(_mm512_mul_ps(v0, vid))));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y[b].qs + 16),
                         _mm512_cvtepi32_epi8(round_away(_mm512_mul_ps(v1, vid))));
    }
}

// ---- Quantized dot products --------------------------------------------------------------
//
// A step covers four blocks. Operand half A holds the first 16 elements of each block, one
// block per 128-bit lane, half B the last 16; two vpdpbusd leave each 128-bit lane with four
// partial sums of its block, and the scales are [d0 x4, d1 x4, d2 x4, d3 x4]. Loading whole
// blocks this way costs a few inserts, but one 64-byte load and one word permute fetch all
// four scales, which is what keeps Q4_0 streaming at memory speed.
//
// vpdpbusd multiplies unsigned by signed bytes. For Q4_0 the weights are unsigned nibbles q,
// and sum (q - 8) x = sum q x - 8 sum x: the correction depends on the activations only.
// For Q8_0 the activations are offset to unsigned x + 128, and sum w x = sum w (x + 128) -
// 128 sum w: the correction depends on the weights only. Either way the pair's dot starts
// from the correction and costs two vpdpbusd.

constexpr int kStep = 4;  // blocks per step

// The word index of each lane's scale: block b = lane / 4 starts at byte b * Stride.
template <size_t Stride>
struct ScaleIndex {
    alignas(64) int16_t idx[32];
    constexpr ScaleIndex() : idx() {
        for (int i = 0; i < 32; i++) idx[i] = static_cast<int16_t>((i / 4 % kStep) * Stride / 2);
    }
};

// [d0 x4, d1 x4, d2 x4, d3 x4] from four blocks of Stride bytes, each starting with its fp16
// scale. Reads at most 4 * Stride bytes from p (64 for Q4_0, 128 for Q8_0).
template <size_t Stride>
__m512 scales4(const uint8_t* p) {
    static constexpr ScaleIndex<Stride> kIndex;
    const __m512i idx = _mm512_load_si512(kIndex.idx);
    const __m512i lo = _mm512_loadu_si512(p);
    __m512i h;
    if constexpr (3 * Stride + 2 <= 64) {
        h = _mm512_permutexvar_epi16(idx, lo);
    } else {
        h = _mm512_permutex2var_epi16(lo, idx, _mm512_loadu_si512(p + 64));
    }
    return _mm512_cvtph_ps(_mm512_castsi512_si256(h));
}

// 16 bytes from each of four blocks Stride bytes apart, one block per 128-bit lane.
template <size_t Stride>
__m512i lanes4(const uint8_t* p) {
    const auto load = [](const uint8_t* q) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    };
    __m512i v = _mm512_castsi128_si512(load(p));
    v = _mm512_inserti32x4(v, load(p + Stride), 1);
    v = _mm512_inserti32x4(v, load(p + 2 * Stride), 2);
    return _mm512_inserti32x4(v, load(p + 3 * Stride), 3);
}

// -sum over each 4-byte group of a * b, over both halves: the correction a pair starts from.
__m512i neg_group_sum(__m512i a, __m512i b, __m512i factor) {
    const __m512i s =
        _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), factor, a), factor, b);
    return _mm512_sub_epi32(_mm512_setzero_si512(), s);
}

// One operand of a pair for a step: both halves, the correction (or unused), the scales.
struct Operand {
    __m512i a, b;
    __m512i init;
    __m512 d;
};

constexpr size_t kQ8 = sizeof(block_q8_0);
constexpr size_t kQ4 = sizeof(block_q4_0);

struct Q8Act {  // Q8_0 activations facing Q8_0 weights: offset to unsigned
    static Operand load(const uint8_t* p) {
        const __m512i off = _mm512_set1_epi8(static_cast<char>(0x80));
        return {_mm512_xor_si512(lanes4<kQ8>(p + 2), off),
                _mm512_xor_si512(lanes4<kQ8>(p + 18), off), _mm512_setzero_si512(),
                scales4<kQ8>(p)};
    }
};

struct Q8Weights {
    using Block = block_q8_0;
    using Act = Q8Act;
    static Operand load(const uint8_t* p) {
        const __m512i a = lanes4<kQ8>(p + 2), b = lanes4<kQ8>(p + 18);
        return {a, b, neg_group_sum(a, b, _mm512_set1_epi8(static_cast<char>(0x80))),
                scales4<kQ8>(p)};
    }
    static __m512i dot(const Operand& w, const Operand& x) {
        return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(w.init, x.a, w.a), x.b, w.b);
    }
};

struct Q4Act {  // Q8_0 activations facing Q4_0 weights: signed, with -8 sum x per group
    static Operand load(const uint8_t* p) {
        const __m512i a = lanes4<kQ8>(p + 2), b = lanes4<kQ8>(p + 18);
        return {a, b, neg_group_sum(a, b, _mm512_set1_epi8(8)), scales4<kQ8>(p)};
    }
};

struct Q4Weights {
    using Block = block_q4_0;
    using Act = Q4Act;
    // Low nibbles are elements 0-15 of their block, high nibbles 16-31.
    static Operand load(const uint8_t* p) {
        const __m512i q = lanes4<kQ4>(p + 2);
        const __m512i mask = _mm512_set1_epi8(0x0f);
        return {_mm512_and_si512(q, mask), _mm512_and_si512(_mm512_srli_epi16(q, 4), mask),
                _mm512_setzero_si512(), scales4<kQ4>(p)};
    }
    static __m512i dot(const Operand& w, const Operand& x) {
        return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(x.init, w.a, x.a), w.b, x.b);
    }
};

// Q8_0 or Q4_0 weights W: kStep blocks a step; each token's operand is loaded once for all
// rows.
template <class W>
struct QStep : TileStep<typename W::Block, block_q8_0, kStep, 2, false> {
    using Act = Operand;
    static Operand act(const block_q8_0* x) {
        return W::Act::load(reinterpret_cast<const uint8_t*>(x));
    }
    struct Acc {
        __m512 v = _mm512_setzero_ps();
        float total() const { return _mm512_reduce_add_ps(v); }
    };
    template <int NT>
    static void step(const typename W::Block& w, const Operand* x, Acc* acc) {
        const Operand wo = W::load(reinterpret_cast<const uint8_t*>(&w));
        for (int t = 0; t < NT; t++) {
            const __m512 sum = _mm512_cvtepi32_ps(W::dot(wo, x[t]));
            acc[t].v = _mm512_fmadd_ps(sum, _mm512_mul_ps(wo.d, x[t].d), acc[t].v);
        }
    }
};

// ---- Packed weights (packed.h) ----------------------------------------------------------------
//
// Sixteen rows per group, one int32 lane per row: a block column is 8 vpdpbusd, each 4 bytes
// of all 16 rows times 4 activation bytes broadcast from memory, then one conversion and one
// FMA per token. The weight operands (Q4_0's nibbles split) are loaded once per block column
// for up to kPackTokens tokens, and nothing is summed horizontally.

// The 8 unsigned operands of a block column; operand i pairs with activation bytes 4i..4i+3.
struct PackedQ4 {  // low nibbles of words 0-3 (elements 4m..), then the high ones (16 + 4m..)
    using Block = block_q4_0x16;
    static void load(const Block& w, __m512i* op) {
        const __m512i mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
        for (int m = 0; m < 4; m++) {
            const __m512i v = _mm512_loadu_si512(w.qs[m]);
            op[m] = _mm512_and_si512(v, mask);
            op[m + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
        }
    }
};

struct PackedQ8 {  // stored as w + 128 already
    using Block = block_q8_0x16;
    static void load(const Block& w, __m512i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) op[m] = _mm512_loadu_si512(w.qs[m]);
    }
};

template <class P, int NT>
void packed_tile(int64_t nb, const typename P::Block* w, const uint8_t* x, size_t x_stride,
                 float* y, int64_t y_stride, __mmask16 rows) {
    // Blocks ahead to prefetch into L1 (and kFarAhead bytes into L2): the group is one
    // contiguous stream, but the lead keeps enough lines in flight when one thread streams
    // alone.
    constexpr int64_t kAhead = 8;
    // Tokens whose vpdpbusd chains are interleaved: a chain is 8 dependent instructions of
    // latency 5, so four side by side keep both vector ports busy.
    constexpr int kChains = 4;
    __m512 acc[NT];
    for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const auto* wb = reinterpret_cast<const uint8_t*>(w + b);
        prefetch_lines<sizeof(typename P::Block)>(wb + kAhead * sizeof(typename P::Block));
        prefetch_lines<sizeof(typename P::Block), 2>(wb + kFarAhead);
        __m512i op[8];
        P::load(w[b], op);
        const __m512 wd =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].d)));
        const auto act = [&](int t) -> const block_q8_0c& {
            return reinterpret_cast<const block_q8_0c*>(x + t * x_stride)[b];
        };
        const auto word = [&](int t, int i) {
            int32_t v;
            __builtin_memcpy(&v, act(t).qs + 4 * i, 4);
            return _mm512_set1_epi32(v);
        };
        const auto finish = [&](int t, __m512i sum) {
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum),
                                     _mm512_mul_ps(wd, _mm512_set1_ps(act(t).d)), acc[t]);
        };
        if constexpr (NT == 1) {
            // One token: its sum as two chains of four.
            __m512i s0 = _mm512_set1_epi32(act(0).c), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) {
                s0 = _mm512_dpbusd_epi32(s0, op[i], word(0, i));
                s1 = _mm512_dpbusd_epi32(s1, op[i + 4], word(0, i + 4));
            }
            finish(0, _mm512_add_epi32(s0, s1));
        } else {
            // Unrolled, so that acc[] and s[] live in registers.
#pragma GCC unroll 16
            for (int t0 = 0; t0 < NT; t0 += kChains) {
                constexpr int kMax = kChains;
                __m512i s[kMax];
#pragma GCC unroll 4
                for (int g = 0; g < kMax; g++) {
                    if (t0 + g < NT) s[g] = _mm512_set1_epi32(act(t0 + g).c);
                }
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
#pragma GCC unroll 4
                    for (int g = 0; g < kMax; g++) {
                        if (t0 + g < NT) s[g] = _mm512_dpbusd_epi32(s[g], op[i], word(t0 + g, i));
                    }
                }
#pragma GCC unroll 4
                for (int g = 0; g < kMax; g++) {
                    if (t0 + g < NT) finish(t0 + g, s[g]);
                }
            }
        }
    }
    for (int t = 0; t < NT; t++) _mm512_mask_storeu_ps(y + t * y_stride, rows, acc[t]);
}

template <class P>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wb = static_cast<const typename P::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    FK::with_count<kPackTokens>(
        nt, [&]<int NT>() { packed_tile<P, NT>(n / QK8_0, wb, xb, x_stride, y, y_stride, rows); });
}

// Float weights: a column of the group is 16 values, one vector; times the column's activation
// broadcast it is one FMA for 16 rows. Columns c go to partial sum c % 4, so even one token has
// four independent FMA chains.
// Tokens per pass: 4 partial sums each, 24 accumulators and 4 columns in 32 registers.
constexpr int kFloatTokens = 6;

template <class P, int NT>
void packed_float_tile(int64_t n, const typename P::Elem* w, const uint8_t* x, size_t x_stride,
                       float* y, int64_t y_stride, __mmask16 rows) {
    const auto xt = [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride); };
    __m512 acc[NT][4];
    for (int t = 0; t < NT; t++) {
        for (int k = 0; k < 4; k++) acc[t][k] = _mm512_setzero_ps();
    }
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        // Every line 2 KiB ahead into L1 and kFarAhead into L2: a lead on top of the hardware
        // prefetchers.
        constexpr size_t kStep = 4 * kPackRows * sizeof(typename P::Elem);
        const auto* wc = reinterpret_cast<const uint8_t*>(w + c * kPackRows);
        prefetch_lines<kStep>(wc + 2048);
        prefetch_lines<kStep, 2>(wc + kFarAhead);
        __m512 wv[4];
        for (int k = 0; k < 4; k++) wv[k] = P::load(w + (c + k) * kPackRows);
        for (int t = 0; t < NT; t++) {
            for (int k = 0; k < 4; k++)
                acc[t][k] = _mm512_fmadd_ps(wv[k], _mm512_set1_ps(xt(t)[c + k]), acc[t][k]);
        }
    }
    for (; c < n; c++) {
        const __m512 wv = P::load(w + c * kPackRows);
        for (int t = 0; t < NT; t++)
            acc[t][c % 4] = _mm512_fmadd_ps(wv, _mm512_set1_ps(xt(t)[c]), acc[t][c % 4]);
    }
    for (int t = 0; t < NT; t++) {
        const __m512 sum =
            _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]), _mm512_add_ps(acc[t][2], acc[t][3]));
        _mm512_mask_storeu_ps(y + t * y_stride, rows, sum);
    }
}

template <class P>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wc = static_cast<const typename P::Elem*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t += kFloatTokens) {
        FK::with_count<kFloatTokens>(nt - t < kFloatTokens ? nt - t : kFloatTokens, [&]<int NT>() {
            packed_float_tile<P, NT>(n, wc, xb + t * x_stride, x_stride, y + t * y_stride, y_stride,
                                     rows);
        });
    }
}

// ---- Attention ---------------------------------------------------------------------------------

// Scores and softmax on 512-bit vectors (the lanes are positions); value sums too when
// head_dim is a multiple of 16, else (8, 24, ...) on 256-bit ones, so that value rows still
// fill whole vectors.
using Arch256 = Avx2;
using FK256 = FloatKernels<Arch256>;

template <class Elem, class L512, class L256>
void attend(const float* q, int64_t n_q, int64_t hd, const Elem* k, const Elem* v, int64_t n_pos,
            float scale, float* scores, float* out) {
    const int64_t stride = (n_pos + kKvBlock - 1) / kKvBlock * kKvBlock;
    float sums[FK::kMaxGroup];
    for (int64_t j = 0; j < n_q; j += FK::kMaxGroup) {
        const int64_t nj = n_q - j < FK::kMaxGroup ? n_q - j : FK::kMaxGroup;
        FK::attend_probs<L512>(q + j * hd, nj, hd, k, n_pos, scale, scores, stride, sums);
        if (hd % 16 != 0) {
            FK256::attend_sum<L256>(scores, stride, sums, nj, hd, v, n_pos, out + j * hd);
        } else {
            FK::attend_sum<L512>(scores, stride, sums, nj, hd, v, n_pos, out + j * hd);
        }
    }
}

// ---- k-quants: Q8_K activations, Q4_K and Q6_K weights -------------------------------------

// Bit-identical to quantize_row_q8_K_ref for finite input: the same max (the first value of
// largest magnitude), the same division and products, and vcvtps2dq rounds ties to even as
// ggml's nearest_int does. The saturating narrowing stops at 127 where the reference clamps.
void quantize_q8_K(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_K*>(vy);
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        __m512 vmax = _mm512_setzero_ps();
        for (int j = 0; j < QK_K; j += 16) {
            vmax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), vmax);
        }
        const float amax = _mm512_reduce_max_ps(vmax);
        block_q8_K& out = y[b];
        if (amax == 0.0f) {
            __builtin_memset(&out, 0, sizeof out);
            continue;
        }
        int first = 0;
        for (int j = 0;; j += 16) {
            const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)),
                                                     _mm512_set1_ps(amax), _CMP_EQ_OQ);
            if (hit) {
                first = j + __builtin_ctz(static_cast<unsigned>(hit));
                break;
            }
        }
        const float iscale = -127.0f / x[first];
        const __m512 vs = _mm512_set1_ps(iscale);
        for (int j = 0; j < QK_K; j += 16) {
            const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(vs, _mm512_loadu_ps(x + j)));
            out.bsums[j / 16] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out.qs + j), _mm512_cvtsepi32_epi8(q));
        }
        out.d = 1 / iscale;
    }
}

// A super-block is one step, 64 values to a register. vpmaddubsw multiplies the unsigned
// levels (4 bits for Q4_K, 6 for Q6_K) by the signed activations into int16 pair sums (at most
// 2 * 63 * 128 < 2^15: exact); vpdpwssd multiplies those by their sub-block's scale and adds
// them up in int32. The levels' offsets (Q4_K's mins, Q6_K's 32) meet the activations only
// through their sums, Q8_K's bsums, once per super-block. So each super-block is an exact
// integer sum before its float scales, as in the scalar reference.

// The word index of sub-block 2g's scale for the low 16 int16 lanes of the 64 values
// 64g..64g+63, of sub-block 2g + 1's for the high 16.
struct Q4ScaleIndex {
    alignas(64) int16_t idx[4][32];
    constexpr Q4ScaleIndex() : idx() {
        for (int g = 0; g < 4; g++) {
            for (int i = 0; i < 32; i++) idx[g][i] = static_cast<int16_t>(2 * g + i / 16);
        }
    }
};

// Each step is one weight super-block against NT tokens' activation blocks: the weights are
// unpacked once for all of them (prefill), and each token's sums run exactly as they would
// alone, so results do not depend on NT.
struct Q4K : SuperBlockStep<block_q4_K> {
    // One row's sums so far for one token: scales part (16 lanes) and mins part (4 lanes).
    struct Acc {
        __m512 s = _mm512_setzero_ps();
        __m128 m = _mm_setzero_ps();
        float total() const { return _mm512_reduce_add_ps(s) - hsum(m); }
    };
    template <int NT>
    static void step(const block_q4_K& w, const block_q8_K* const* x, Acc* acc) {
        static constexpr Q4ScaleIndex kIndex;
        alignas(16) uint8_t sm[16];
        q4_K_scales_mins(w.scales, sm);
        const __m128i mins =
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm + 8)));
        const float d = _cvtsh_ss(w.d), dmin = _cvtsh_ss(w.dmin);
        for (int t = 0; t < NT; t++) acc[t].m = q4_K_mins(mins, dmin, *x[t], acc[t].m);
        const __m512i scales = _mm512_castsi128_si512(
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm))));
        const __m512i mask = _mm512_set1_epi8(0x0f);
        // Shifts the upper 256 bits right by 4: high nibbles there, low ones below.
        const __m512i shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
        // Two sums per token: the dependent vpdpwssd chains are half as long.
        __m512i sum[NT][2];
        for (int t = 0; t < NT; t++) sum[t][0] = sum[t][1] = _mm512_setzero_si512();
        for (int g = 0; g < QK_K / 64; g++) {
            // Values 64g..64g+63 in order: the low nibbles (sub-block 2g), then the high ones.
            const __m512i q = _mm512_broadcast_i64x4(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * g)));
            const __m512i v = _mm512_and_si512(_mm512_srlv_epi16(q, shift), mask);
            const __m512i sc = _mm512_permutexvar_epi16(_mm512_load_si512(kIndex.idx[g]), scales);
            for (int t = 0; t < NT; t++) {
                const __m512i xq = _mm512_loadu_si512(x[t]->qs + 64 * g);
                sum[t][g % 2] = _mm512_dpwssd_epi32(sum[t][g % 2], _mm512_maddubs_epi16(v, xq), sc);
            }
        }
        for (int t = 0; t < NT; t++) {
            acc[t].s = _mm512_fmadd_ps(_mm512_set1_ps(d * x[t]->d),
                                       _mm512_cvtepi32_ps(_mm512_add_epi32(sum[t][0], sum[t][1])),
                                       acc[t].s);
        }
    }
};

// The word index of sub-block 4c + i's scale for each int16 lane of the 64 values 64c..64c+63
// (8 lanes per 16-value sub-block).
struct Q6ScaleIndex {
    alignas(64) int16_t idx[4][32];
    constexpr Q6ScaleIndex() : idx() {
        for (int c = 0; c < 4; c++) {
            for (int i = 0; i < 32; i++) idx[c][i] = static_cast<int16_t>(4 * c + i / 8);
        }
    }
};

struct Q6K : SuperBlockStep<block_q6_K> {
    struct Acc {
        __m512 s = _mm512_setzero_ps();
        float total() const { return _mm512_reduce_add_ps(s); }
    };
    template <int NT>
    static void step(const block_q6_K& w, const block_q8_K* const* x, Acc* acc) {
        static constexpr Q6ScaleIndex kIndex;
        const __m256i sc =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
        // The levels are q - 32: start from -32 sum_k sc_k bsum_k.
        __m512i sum[NT];
        for (int t = 0; t < NT; t++) {
            const __m256i offset = _mm256_madd_epi16(
                sc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t]->bsums)));
            sum[t] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                      _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 5)));
        }
        const __m512i low4 = _mm512_set1_epi8(0x0f);
        const __m512i low2 = _mm512_set1_epi8(0x03);
        for (int h = 0; h < QK_K / 128; h++) {
            const __m512i ql = _mm512_loadu_si512(w.ql + 64 * h);
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh + 32 * h));
            // qh byte l: bits 0-1, 2-3, 4-5, 6-7 top values l, l + 32, l + 64, l + 96 of the
            // half. hi2: the first two pairs for values 0..63, then (>> 4) the last two.
            // (The 16-bit shifts never carry a kept bit across a byte.)
            const __m512i hi2 =
                _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
            const __m512i q[2] = {
                _mm512_or_si512(_mm512_and_si512(ql, low4),
                                _mm512_slli_epi16(_mm512_and_si512(hi2, low2), 4)),
                _mm512_or_si512(
                    _mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                    _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hi2, 4), low2), 4)),
            };
            for (int c = 0; c < 2; c++) {
                const __m512i scale = _mm512_permutexvar_epi16(
                    _mm512_load_si512(kIndex.idx[2 * h + c]), _mm512_castsi256_si512(sc));
                for (int t = 0; t < NT; t++) {
                    const __m512i xq = _mm512_loadu_si512(x[t]->qs + 128 * h + 64 * c);
                    sum[t] = _mm512_dpwssd_epi32(sum[t], _mm512_maddubs_epi16(q[c], xq), scale);
                }
            }
        }
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm512_fmadd_ps(_mm512_set1_ps(d * x[t]->d), _mm512_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

using Q8 = QuantTiles<QStep<Q8Weights>>;
using Q4 = QuantTiles<QStep<Q4Weights>>;

constexpr TypeOverride kTypes[] = {
    {Type::F32, FK::kernels<LoadF32<Arch>>()},
    {Type::F16, FK::kernels<LoadF16<Arch>>()},
    {Type::BF16, FK::kernels<LoadBF16<Arch>>()},
    {Type::Q8_0, Q8::kernels(quantize_q8_0)},
    {Type::Q4_0, Q4::kernels()},
    {Type::Q4_K, QuantTiles<Q4K>::kernels()},
    {Type::Q6_K, QuantTiles<Q6K>::kernels()},
    {Type::Q8_K, {nullptr, quantize_q8_K, nullptr}},
};

constexpr PackedOverride kPacked[] = {
    {Type::F32, {nullptr, packed_float_gemm<LoadF32<Arch>>}},
    {Type::F16, {nullptr, packed_float_gemm<LoadF16<Arch>>}},
    {Type::BF16, {nullptr, packed_float_gemm<LoadBF16<Arch>>}},
    {Type::Q8_0, {quantize_q8_0c<128, quantize_q8_0>, packed_gemm<PackedQ8>}},
    {Type::Q4_0, {quantize_q8_0c<8, quantize_q8_0>, packed_gemm<PackedQ4>}},
    {Type::Q4_K, {quantize_q8_K, avx512::packed_gemm_q4_K}},
    {Type::Q6_K, {quantize_q8_K, avx512::packed_gemm_q6_K}},
};

}  // namespace

// Built on first use, which kernels_for() allows only when the CPU has AVX-512 and VNNI.
const Kernels* kernels_avx512() {
    static const Kernels table = [] {
        Kernels k = with_overrides(kernels_scalar(), Isa::Avx512, kTypes, kPacked);
        set_float_kernels<Arch, LoadF16<Arch>>(k);
        k.attend_f32 = attend<float, LoadF32<Arch>, LoadF32<Arch256>>;
        k.attend_f16 = attend<uint16_t, LoadF16<Arch>, LoadF16<Arch256>>;
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
