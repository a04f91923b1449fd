// AVX-512 kernels (F, BW, VL, DQ and VNNI): four quantized 32-value blocks per step, integer dot
// products with vpdpbusd, float kernels from simd_float-inl.h.
//
// Compiled with -mavx512*: everything stays in the anonymous namespace and only intrinsics and
// xsimd templates instantiated for avx512bw are used, so no code compiled with these flags can
// be shared with (and picked by the linker for) the portable parts of the program.
#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/kernels_iq_avx2.h"
#include "ggml-lite/x86/packed_avx512.h"
#include "ggml-lite/x86/packed_stripes.h"
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

// Q8_0 of 32 values, bit-identical to quantize_row_q8_0_ref (the same max, the same float
// divisions, the same products, the same rounding), the levels kept as int32 lanes (elements
// 0-15, then 16-31) until stored: quantize_q8_0_blocks' Block.
struct Q8Lanes {
    float scale;  // before its rounding to fp16
    __m512i q0, q1;

    explicit Q8Lanes(const float* x) {
        const __m512 v0 = _mm512_loadu_ps(x);
        const __m512 v1 = _mm512_loadu_ps(x + 16);
        const float amax =
            _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        scale = amax / 127.0f;
        const __m512 vid = _mm512_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
        q0 = round_away(_mm512_mul_ps(v0, vid));
        q1 = round_away(_mm512_mul_ps(v1, vid));
    }
    fp16_t d16() const { return _cvtss_sh(scale, _MM_FROUND_TO_NEAREST_INT); }
    float d() const { return _cvtsh_ss(d16()); }
    void store(int8_t* qs) const {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(q1));
    }
};

void quantize_q8_0(const float* x, void* vy, int64_t n) {
    quantize_q8_0_blocks<Q8Lanes>(x, vy, n);
}

// ---- Quantized dot products: 32-value blocks -----------------------------------------------
//
// A step covers four blocks. Operand half A holds the first 16 elements of each block, one
// block per 128-bit lane, half B the last 16; two vpdpbusd leave each 128-bit lane with four
// partial sums of its block, and the scales are [d0 x4, d1 x4, d2 x4, d3 x4]. Loading whole
// blocks this way costs a few inserts, but one 64-byte load and one word permute fetch all
// four scales, which is what keeps Q4_0 streaming at memory speed.
//
// vpdpbusd multiplies unsigned by signed bytes. The unsigned levels q of Q4_0 (q - 8), Q5_0
// (q - 16) and IQ4_NL (its table's values plus 128) give sum (q - Offset) x = sum q x - Offset
// sum x: the correction depends on the activations only. For Q8_0 the activations are offset
// to unsigned x + 128, and sum w x = sum w (x + 128) - 128 sum w: the correction depends on the
// weights only. Either way the pair's dot starts from the correction and costs two vpdpbusd.
// Q4_1 and Q5_1 dot their unsigned levels as they are, and their blocks' m_w s_x join the
// float accumulator, one lane per block.

constexpr int kStep = 4;  // blocks per step

// The word index of each lane's scale: block b = lane / 4 starts at byte b * Stride.
template <size_t Stride>
struct ScaleIndex {
    alignas(64) int16_t idx[32];
    constexpr ScaleIndex() : idx() {
        for (int i = 0; i < 32; i++) idx[i] = static_cast<int16_t>((i / 4 % kStep) * Stride / 2);
    }
};

// 64 bytes from p, or only the first Bytes of them (the rest zero, never read).
template <size_t Bytes>
__m512i load_upto(const uint8_t* p) {
    if constexpr (Bytes >= 64) {
        return _mm512_loadu_si512(p);
    } else {
        return _mm512_maskz_loadu_epi8((uint64_t{1} << Bytes) - 1, p);
    }
}

// [h0 x4, h1 x4, h2 x4, h3 x4]: the fp16 value at byte At of each of four blocks of Stride
// bytes from p (At 0: their scales). Reads only those 4 * Stride bytes.
template <size_t Stride, size_t At = 0>
__m512 scales4(const uint8_t* p) {
    static constexpr ScaleIndex<Stride> kIndex;
    constexpr size_t kAvail = 4 * Stride - At;  // bytes from p + At to the blocks' end
    const __m512i idx = _mm512_load_si512(kIndex.idx);
    __m512i h;
    if constexpr (3 * Stride + 2 <= 64) {
        h = _mm512_permutexvar_epi16(idx, load_upto<kAvail>(p + At));
    } else {
        h = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + At), idx,
                                      load_upto<kAvail - 64>(p + At + 64));
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

// The nibbles of four blocks' 16 bytes at p (Stride apart): the low ones (elements 0-15) in a,
// the high ones (16-31) in b.
template <size_t Stride>
void nibbles4(const uint8_t* p, __m512i* a, __m512i* b) {
    const __m512i q = lanes4<Stride>(p);
    const __m512i mask = _mm512_set1_epi8(0x0f);
    *a = _mm512_and_si512(q, mask);
    *b = _mm512_and_si512(_mm512_srli_epi16(q, 4), mask);
}

// Q5_0/Q5_1: the fifth bits of four blocks' qh at p (Stride apart) added as 16 to the levels.
// Bits 0-15 of block k's qh are the byte mask of lane k of half A, bits 16-31 of half B.
template <size_t Stride>
void add_fifth_bits4(const uint8_t* p, __m512i* a, __m512i* b) {
    const auto qh = [&](int k) {
        int32_t h;
        __builtin_memcpy(&h, p + k * Stride, 4);
        return h;
    };
    const __m128i words =
        _mm_shuffle_epi8(_mm_setr_epi32(qh(0), qh(1), qh(2), qh(3)),
                         _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15));
    const __m512i sixteen = _mm512_set1_epi8(16);
    const auto mask_a = _cvtu64_mask64(static_cast<uint64_t>(_mm_cvtsi128_si64(words)));
    const auto mask_b = _cvtu64_mask64(static_cast<uint64_t>(_mm_extract_epi64(words, 1)));
    *a = _mm512_mask_add_epi8(*a, mask_a, *a, sixteen);
    *b = _mm512_mask_add_epi8(*b, mask_b, *b, sixteen);
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
    __m512 m;  // Q4_1/Q5_1 weights: [m0 x4, ...]; Q8_1 activations: [s0 x4, ...]
};

constexpr size_t kQ8 = sizeof(block_q8_0);

struct Q8Act {  // Q8_0 activations facing Q8_0 weights: offset to unsigned
    using Block = block_q8_0;
    static Operand load(const uint8_t* p) {
        const __m512i off = _mm512_set1_epi8(static_cast<char>(0x80));
        return {_mm512_xor_si512(lanes4<kQ8>(p + 2), off),
                _mm512_xor_si512(lanes4<kQ8>(p + 18), off), _mm512_setzero_si512(), scales4<kQ8>(p),
                _mm512_setzero_ps()};
    }
};

// Q8_0 activations facing unsigned levels q - Offset: signed, with -Offset sum x per group.
template <int Offset>
struct OffsetAct {
    using Block = block_q8_0;
    static Operand load(const uint8_t* p) {
        const __m512i a = lanes4<kQ8>(p + 2), b = lanes4<kQ8>(p + 18);
        return {a, b, neg_group_sum(a, b, _mm512_set1_epi8(static_cast<char>(Offset))),
                scales4<kQ8>(p), _mm512_setzero_ps()};
    }
};

struct Q8_1Act {  // Q8_1 activations facing Q4_1/Q5_1 weights: signed, s for the mins
    using Block = block_q8_1;
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(block_q8_1), kQ = offsetof(block_q8_1, qs);
        return {lanes4<kS>(p + kQ), lanes4<kS>(p + kQ + 16), _mm512_setzero_si512(), scales4<kS>(p),
                scales4<kS, offsetof(block_q8_1, s)>(p)};
    }
};

struct Q8Weights {
    using Block = block_q8_0;
    using Act = Q8Act;
    static Operand load(const uint8_t* p) {
        const __m512i a = lanes4<kQ8>(p + 2), b = lanes4<kQ8>(p + 18);
        return {a, b, neg_group_sum(a, b, _mm512_set1_epi8(static_cast<char>(0x80))),
                scales4<kQ8>(p), _mm512_setzero_ps()};
    }
    static __m512i dot(const Operand& w, const Operand& x) {
        return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(w.init, x.a, w.a), x.b, w.b);
    }
};

// Unsigned levels against signed activations, from the activations' correction.
__m512i unsigned_dot(const Operand& w, const Operand& x) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(x.init, w.a, x.a), w.b, x.b);
}

// Q4_0, Q4_1, Q5_0, Q5_1: nibbles at byte QsAt of the block, the fifth bits (Q5) at QhAt, the
// min (Q4_1, Q5_1) at byte 2.
template <class B, class A, size_t QsAt, size_t QhAt = 0>
struct UnsignedWeights {
    using Block = B;
    using Act = A;
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(Block);
        __m512i a, b;
        nibbles4<kS>(p + QsAt, &a, &b);
        if constexpr (QhAt != 0) add_fifth_bits4<kS>(p + QhAt, &a, &b);
        __m512 m = _mm512_setzero_ps();
        if constexpr (std::is_same_v<typename A::Block, block_q8_1>) m = scales4<kS, 2>(p);
        return {a, b, _mm512_setzero_si512(), scales4<kS>(p), m};
    }
    static __m512i dot(const Operand& w, const Operand& x) { return unsigned_dot(w, x); }
};

using Q4Weights = UnsignedWeights<block_q4_0, OffsetAct<8>, offsetof(block_q4_0, qs)>;
using Q5Weights =
    UnsignedWeights<block_q5_0, OffsetAct<16>, offsetof(block_q5_0, qs), offsetof(block_q5_0, qh)>;
using Q4_1Weights = UnsignedWeights<block_q4_1, Q8_1Act, offsetof(block_q4_1, qs)>;
using Q5_1Weights =
    UnsignedWeights<block_q5_1, Q8_1Act, offsetof(block_q5_1, qs), offsetof(block_q5_1, qh)>;

struct IQ4NLWeights {
    using Block = block_iq4_nl;
    using Act = OffsetAct<128>;
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(Block);
        const __m512i table = iq4nl_table_u8();
        __m512i a, b;
        nibbles4<kS>(p + offsetof(block_iq4_nl, qs), &a, &b);
        return {_mm512_shuffle_epi8(table, a), _mm512_shuffle_epi8(table, b),
                _mm512_setzero_si512(), scales4<kS>(p), _mm512_setzero_ps()};
    }
    static __m512i dot(const Operand& w, const Operand& x) { return unsigned_dot(w, x); }
};

// 32-value block weights W: kStep blocks a step; each token's operand is loaded once for all
// rows.
template <class W>
struct QStep : TileStep<typename W::Block, typename W::Act::Block, kStep, 2, false> {
    static constexpr bool kMin = std::is_same_v<typename W::Act::Block, block_q8_1>;
    using Act = Operand;
    static Operand act(const typename W::Act::Block* x) {
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
            // m and s hold each block's value four times: one lane per block. The same
            // accumulator: a second one per pair spilled the 32 registers (2 tokens x 4 rows).
            if constexpr (kMin) acc[t].v = _mm512_mask3_fmadd_ps(wo.m, x[t].m, acc[t].v, 0x1111);
        }
    }
};

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

// ---- Super-blocks: Q8_K activations; Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS weights -----------

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
// Q4_K and Q5_K: Q5_K's fifth bit of value 32j + l is bit j of qh byte l.
template <class Block>
struct KMin : SuperBlockStep<Block> {
    // One row's sums so far for one token: scales part (16 lanes) and mins part (4 lanes).
    struct Acc {
        __m512 s = _mm512_setzero_ps();
        __m128 m = _mm_setzero_ps();
        float total() const { return _mm512_reduce_add_ps(s) - hsum(m); }
    };
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
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
            __m512i v = _mm512_and_si512(_mm512_srlv_epi16(q, shift), mask);
            if constexpr (std::is_same_v<Block, block_q5_K>) {
                // Bit 2g of each qh byte for the low nibbles, 2g + 1 for the high ones; levels
                // up to 31 keep the pair sums exact (at most 2 * 31 * 128).
                const __m512i hb = _mm512_broadcast_i64x4(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh)));
                const __m512i bit =
                    _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * g))),
                                       _mm256_set1_epi8(static_cast<char>(2 << (2 * g))), 1);
                v = _mm512_mask_add_epi8(v, _mm512_test_epi8_mask(hb, bit), v,
                                         _mm512_set1_epi8(16));
            }
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
            const __m256i offset = q8_K_bsums_dot(sc, *x[t]);
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

// IQ4_XS: the 16 levels (vpshufb) in eight 32-value blocks with signed scales, 64 values (two
// blocks, 32 bytes of qs) to a register. vpmaddubsw takes |w| and x negated where w < 0 (pair
// sums at most 2 * 127 * 127), vpdpwssd the blocks' scales, as for Q4_K.
struct IQ4XS : SuperBlockStep<block_iq4_xs> {
    struct Acc {
        __m512 s = _mm512_setzero_ps();
        float total() const { return _mm512_reduce_add_ps(s); }
    };
    template <int NT>
    static void step(const block_iq4_xs& w, const block_q8_K* const* x, Acc* acc) {
        static constexpr Q4ScaleIndex kIndex;  // blocks 2g and 2g + 1 as Q4_K's sub-blocks
        const __m512i scales = _mm512_castsi128_si512(iq4_xs_scales16(w));
        const __m512i table = _mm512_broadcast_i32x4(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
        const __m512i mask = _mm512_set1_epi8(0x0f);
        // Bytes 0-15 of qs in 128-bit lanes 0 and 1, bytes 16-31 in 2 and 3; lanes 1 and 3
        // shifted by 4: the two blocks' values in order.
        const __m512i spread = _mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3);
        const __m512i shift = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0,
                                                0x0004000400040004, 0x0004000400040004);
        __m512i sum[NT][2];
        for (int t = 0; t < NT; t++) sum[t][0] = sum[t][1] = _mm512_setzero_si512();
        for (int g = 0; g < QK_K / 64; g++) {
            const __m512i q = _mm512_permutexvar_epi64(
                spread, _mm512_castsi256_si512(
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * g))));
            const __m512i v =
                _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srlv_epi16(q, shift), mask));
            const __m512i av = _mm512_abs_epi8(v);
            const __mmask64 neg = _mm512_movepi8_mask(v);
            const __m512i sc = _mm512_permutexvar_epi16(_mm512_load_si512(kIndex.idx[g]), scales);
            for (int t = 0; t < NT; t++) {
                const __m512i xq = _mm512_loadu_si512(x[t]->qs + 64 * g);
                const __m512i xs = _mm512_mask_sub_epi8(xq, neg, _mm512_setzero_si512(), xq);
                sum[t][g % 2] =
                    _mm512_dpwssd_epi32(sum[t][g % 2], _mm512_maddubs_epi16(av, xs), sc);
            }
        }
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s = _mm512_fmadd_ps(_mm512_set1_ps(d * x[t]->d),
                                       _mm512_cvtepi32_ps(_mm512_add_epi32(sum[t][0], sum[t][1])),
                                       acc[t].s);
        }
    }
};

// Q2_K and Q3_K: 16 sub-blocks of 16 values, their 2-bit fields packed alike: value
// 128h + 32k + l (k < 4, l < 32) is bits 2k, 2k + 1 of qs byte 32h + l. So the values 64c..64c+63
// are the 32 bytes at 32(c / 2) in both 256-bit halves, shifted by 4(c % 2) and 4(c % 2) + 2,
// and their four sub-blocks' scales go to their int16 lanes as Q6_K's do.

// sum[t] plus token t's sum_k sc_k sum(level x) over the super-block in two vpdpwssd chains, as
// Q4_K's, sc16 the 16 scales as int16: the levels of values 64c.. are level(v, c), v their
// 2-bit fields at qs as unsigned bytes.
template <int NT, class Level>
void add_field_dots(const uint8_t* qs, __m256i sc16, Level level, const block_q8_K* const* x,
                    __m512i (*sum)[2]) {
    static constexpr Q6ScaleIndex kIndex;
    const __m512i low2 = _mm512_set1_epi8(3);
    for (int c = 0; c < QK_K / 64; c++) {
        const __m512i q = _mm512_broadcast_i64x4(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (c / 2))));
        const __m512i shift =
            _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(4 * (c % 2))),
                               _mm256_set1_epi16(static_cast<short>(4 * (c % 2) + 2)), 1);
        const __m512i v = level(_mm512_and_si512(_mm512_srlv_epi16(q, shift), low2), c);
        const __m512i scale = _mm512_permutexvar_epi16(_mm512_load_si512(kIndex.idx[c]),
                                                       _mm512_castsi256_si512(sc16));
        for (int t = 0; t < NT; t++) {
            const __m512i xq = _mm512_loadu_si512(x[t]->qs + 64 * c);
            sum[t][c % 2] = _mm512_dpwssd_epi32(sum[t][c % 2], _mm512_maddubs_epi16(v, xq), scale);
        }
    }
}

// Q2_K: the 2-bit fields are the levels (pair sums at most 2 * 3 * 128), 4-bit scales; the
// mins' part, dmin sum_k m_k bsum_k, goes into the same float sum under its own scale.
struct Q2K : SuperBlockStep<block_q2_K> {
    using Acc = Q6K::Acc;
    template <int NT>
    static void step(const block_q2_K& w, const block_q8_K* const* x, Acc* acc) {
        __m256i sc16, m16;
        q2_K_scales_mins16(w, &sc16, &m16);
        __m512i sum[NT][2];
        for (int t = 0; t < NT; t++) sum[t][0] = sum[t][1] = _mm512_setzero_si512();
        add_field_dots<NT>(
            w.qs, sc16, [](__m512i v, int) { return v; }, x, sum);
        const float d = _cvtsh_ss(w.d), dmin = _cvtsh_ss(w.dmin);
        for (int t = 0; t < NT; t++) {
            const __m256i mins = q8_K_bsums_dot(m16, *x[t]);
            acc[t].s = _mm512_fmadd_ps(_mm512_set1_ps(d * x[t]->d),
                                       _mm512_cvtepi32_ps(_mm512_add_epi32(sum[t][0], sum[t][1])),
                                       acc[t].s);
            acc[t].s = _mm512_fnmadd_ps(_mm512_set1_ps(dmin * x[t]->d),
                                        _mm512_cvtepi32_ps(_mm512_zextsi256_si512(mins)), acc[t].s);
        }
    }
};

// Q3_K: levels q - 4, q the 2-bit field with the hmask bit on top (added as 4 under a mask).
// vpmaddubsw takes q unsigned (pair sums at most 2 * 7 * 128); the 4 comes off once per
// super-block through the bsums, as Q6_K's 32 does.
struct Q3K : SuperBlockStep<block_q3_K> {
    using Acc = Q6K::Acc;
    template <int NT>
    static void step(const block_q3_K& w, const block_q8_K* const* x, Acc* acc) {
        const __m256i sc = q3_K_scales16(w);
        __m512i sum[NT][2];
        for (int t = 0; t < NT; t++) {
            const __m256i offset = q8_K_bsums_dot(sc, *x[t]);
            sum[t][0] = _mm512_sub_epi32(_mm512_setzero_si512(),
                                         _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 2)));
            sum[t][1] = _mm512_setzero_si512();
        }
        const __m512i hm =
            _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.hmask)));
        // The third bit of value 64c + 32j + l (j < 2) = 128h + 32k + l: bit 4h + k = 2c + j of
        // hmask byte l.
        const auto level = [&](__m512i v, int c) {
            const __m512i bit =
                _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * c))),
                                   _mm256_set1_epi8(static_cast<char>(2 << (2 * c))), 1);
            return _mm512_mask_add_epi8(v, _mm512_test_epi8_mask(hm, bit), v, _mm512_set1_epi8(4));
        };
        add_field_dots<NT>(w.qs, sc, level, x, sum);
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s = _mm512_fmadd_ps(_mm512_set1_ps(d * x[t]->d),
                                       _mm512_cvtepi32_ps(_mm512_add_epi32(sum[t][0], sum[t][1])),
                                       acc[t].s);
        }
    }
};

using Q4K = KMin<block_q4_K>;
using Q5K = KMin<block_q5_K>;
using Q8 = QuantTiles<QStep<Q8Weights>>;
using Q4 = QuantTiles<QStep<Q4Weights>>;

constexpr TypeOverride kTypes[] = {
    {Type::F32, FK::kernels<LoadF32<Arch>>()},
    {Type::F16, FK::kernels<LoadF16<Arch>>()},
    {Type::BF16, FK::kernels<LoadBF16<Arch>>()},
    {Type::Q8_0, Q8::kernels(quantize_q8_0)},
    {Type::Q4_0, Q4::kernels()},
    {Type::Q4_1, QuantTiles<QStep<Q4_1Weights>>::kernels()},
    {Type::Q5_0, QuantTiles<QStep<Q5Weights>>::kernels()},
    {Type::Q5_1, QuantTiles<QStep<Q5_1Weights>>::kernels()},
    {Type::IQ4_NL, QuantTiles<QStep<IQ4NLWeights>>::kernels()},
    {Type::Q2_K, QuantTiles<Q2K>::kernels()},
    {Type::Q3_K, QuantTiles<Q3K>::kernels()},
    {Type::Q4_K, QuantTiles<Q4K>::kernels()},
    {Type::Q5_K, QuantTiles<Q5K>::kernels()},
    {Type::Q6_K, QuantTiles<Q6K>::kernels()},
    {Type::IQ4_XS, QuantTiles<IQ4XS>::kernels()},
    {Type::Q8_K, {nullptr, quantize_q8_K, nullptr}},
    {Type::Q8_1, {nullptr, quantize_q8_1<quantize_q8_0>, nullptr}},
};

constexpr PackedOverride kPacked[] = {
    {Type::F32, {nullptr, avx512::packed_gemm_f32, avx512::packed_gemv2_f32}},
    {Type::F16, {nullptr, avx512::packed_gemm_f16, avx512::packed_gemv2_f16}},
    {Type::BF16, {nullptr, avx512::packed_gemm_bf16, avx512::packed_gemv2_bf16}},
    {Type::Q8_0,
     {quantize_q8_0c_blocks<128, Q8Lanes>, avx512::packed_gemm_q8_0, avx512::packed_gemv2_q8_0}},
    {Type::Q4_0,
     {quantize_q8_0c_blocks<8, Q8Lanes>, avx512::packed_gemm_q4_0, avx512::packed_gemv2_q4_0}},
    {Type::Q5_0,
     {quantize_q8_0c_blocks<16, Q8Lanes>, avx512::packed_gemm_q5_0, avx512::packed_gemv2_q5_0}},
    {Type::IQ4_NL,
     {quantize_q8_0c_blocks<128, Q8Lanes>, avx512::packed_gemm_iq4_nl,
      avx512::packed_gemv2_iq4_nl}},
    {Type::Q4_1,
     {quantize_q8_1c<quantize_q8_0>, avx512::packed_gemm_q4_1, avx512::packed_gemv2_q4_1}},
    {Type::Q5_1,
     {quantize_q8_1c<quantize_q8_0>, avx512::packed_gemm_q5_1, avx512::packed_gemv2_q5_1}},
    {Type::Q4_K, {quantize_q8_K, avx512::packed_gemm_q4_K}},
    {Type::Q5_K, {quantize_q8_K, avx512::packed_gemm_q5_K}},
    {Type::Q6_K, {quantize_q8_K, avx512::packed_gemm_q6_K}},
    {Type::IQ4_XS, {quantize_q8_K, avx512::packed_gemm_iq4_xs}},
    {Type::Q3_K, {quantize_q8_K, avx512::packed_gemm_q3_K}},
    {Type::Q2_K, {quantize_q8_K, avx512::packed_gemm_q2_K}},
    {Type::IQ2_XXS, {quantize_q8_K, nullptr}},
    {Type::IQ2_XS, {quantize_q8_K, nullptr}},
    {Type::IQ2_S, {quantize_q8_K, nullptr}},
    {Type::IQ3_XXS, {quantize_q8_K, nullptr}},
    {Type::IQ3_S, {quantize_q8_K, nullptr}},
    {Type::IQ1_S, {quantize_q8_K, nullptr}},
    {Type::IQ1_M, {quantize_q8_K, nullptr}},
};

}  // namespace

// Built on first use, which kernels_for() allows only when the CPU has AVX-512 and VNNI.
const Kernels* kernels_avx512() {
    static const Kernels table = [] {
        Kernels k = with_overrides(with_overrides(kernels_scalar(), Isa::Avx512, kTypes, kPacked),
                                   Isa::Avx512, avx2::kGridTypes, avx512::stripe_kernels());
        set_float_kernels<Arch, LoadF16<Arch>>(k);
        k.attend_f32 = attend<float, LoadF32<Arch>, LoadF32<Arch256>>;
        k.attend_f16 = attend<uint16_t, LoadF16<Arch>, LoadF16<Arch256>>;
        k.grid_gemm = avx512::packed_gemm_grid;
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
