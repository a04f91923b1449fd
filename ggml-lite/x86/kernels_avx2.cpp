// AVX2 kernels (+FMA, F16C): two quantized blocks per step, integer dot products with
// vpmaddubsw/vpmaddwd, float kernels from simd_float-inl.h.
//
// Compiled with -mavx2 -mfma -mf16c: everything stays in the anonymous namespace and only
// intrinsics and xsimd templates instantiated for fma3<avx2> are used, so no code compiled
// with these flags can be shared with the portable parts of the program.
#include <immintrin.h>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/packed_avx2.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace {

using Arch = Avx2;
using FK = FloatKernels<Arch>;

// ---- Q8_0 activations --------------------------------------------------------------------

// roundf semantics (ties away from zero) as the scalar reference has them; the rounding
// instructions round ties to even. Truncate, then step away from zero when |frac| >= 0.5.
__m256i round_away(__m256 v) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 step = _mm256_or_ps(_mm256_and_ps(v, sign), _mm256_set1_ps(1.0f));
    return _mm256_cvtps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, step)));
}

float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// Bit-identical to quantize_row_q8_0_ref: the same max, the same float divisions, the same
// products, the same rounding.
void quantize_q8_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0*>(vy);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int k = 0; k < 4; k++) {
            v[k] = _mm256_loadu_ps(x + 8 * k);
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
        }
        const float d = hmax(amax) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        __m256i q[4];
        for (int k = 0; k < 4; k++) q[k] = round_away(_mm256_mul_ps(v[k], _mm256_set1_ps(id)));
        // The packs interleave 128-bit lanes; the permutation puts the dwords back in order.
        const __m256i p =
            _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        const __m256i ordered =
            _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), ordered);
    }
}

// ---- Quantized dot products --------------------------------------------------------------
//
// A step covers two blocks. Operand half A holds the first 16 elements of each block, one
// block per 128-bit lane, half B the last 16; after the pair sums each 128-bit lane holds
// four partial sums of its block, and the scales are [d0 x4, d1 x4].
//
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into saturating int16, so the
// operands must keep every pair sum within int16. Q8_0 × Q8_0 uses |w| and sign(w)·x (pairs
// at most 2·127·127, widened to int32 before the halves are added); Q4_0 uses the unsigned
// nibbles q and subtracts 8·(pair sums of x), so sum (q - 8) x comes out exactly (at most
// 4·15·127 per int16 before the subtraction).

constexpr int kStep = 2;  // blocks per step
constexpr size_t kQ8 = sizeof(block_q8_0);
constexpr size_t kQ4 = sizeof(block_q4_0);

// [d0 x4, d1 x4] from two blocks Stride bytes apart, each starting with its fp16 scale.
template <size_t Stride>
__m256 scales2(const uint8_t* p) {
    const __m128i h = _mm_unpacklo_epi16(_mm_loadu_si16(p), _mm_loadu_si16(p + Stride));
    const __m128 d = _mm_cvtph_ps(h);
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(d),
                                    _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// 16 bytes from each of two blocks Stride bytes apart, one block per 128-bit lane.
template <size_t Stride>
__m256i lanes2(const uint8_t* p) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + Stride));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

__m256i sum_pairs(__m256i p16) {
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// One operand of a pair for a step: both halves, what the dot needs besides, the scales.
struct Operand {
    __m256i a, b;
    __m256i aux_a, aux_b;  // Q8_0 weights: |a|, |b|; Q4_0 activations: 8 * pair sums of a + b
    __m256 d;
};

struct Q8Act {
    static Operand load(const uint8_t* p) {
        const __m256i zero = _mm256_setzero_si256();
        return {lanes2<kQ8>(p + 2), lanes2<kQ8>(p + 18), zero, zero, scales2<kQ8>(p)};
    }
};

struct Q8Weights {
    using Block = block_q8_0;
    using Act = Q8Act;
    static Operand load(const uint8_t* p) {
        const __m256i a = lanes2<kQ8>(p + 2), b = lanes2<kQ8>(p + 18);
        return {a, b, _mm256_sign_epi8(a, a), _mm256_sign_epi8(b, b), scales2<kQ8>(p)};
    }
    static __m256i dot(const Operand& w, const Operand& x) {
        const __m256i pa = _mm256_maddubs_epi16(w.aux_a, _mm256_sign_epi8(x.a, w.a));
        const __m256i pb = _mm256_maddubs_epi16(w.aux_b, _mm256_sign_epi8(x.b, w.b));
        return _mm256_add_epi32(sum_pairs(pa), sum_pairs(pb));
    }
};

struct Q4Act {
    static Operand load(const uint8_t* p) {
        const __m256i a = lanes2<kQ8>(p + 2), b = lanes2<kQ8>(p + 18);
        const __m256i eight = _mm256_set1_epi8(8);
        const __m256i corr =
            _mm256_add_epi16(_mm256_maddubs_epi16(eight, a), _mm256_maddubs_epi16(eight, b));
        return {a, b, corr, _mm256_setzero_si256(), scales2<kQ8>(p)};
    }
};

struct Q4Weights {
    using Block = block_q4_0;
    using Act = Q4Act;
    // Low nibbles are elements 0-15 of their block, high nibbles 16-31.
    static Operand load(const uint8_t* p) {
        const __m256i q = lanes2<kQ4>(p + 2);
        const __m256i mask = _mm256_set1_epi8(0x0f);
        const __m256i zero = _mm256_setzero_si256();
        return {_mm256_and_si256(q, mask), _mm256_and_si256(_mm256_srli_epi16(q, 4), mask), zero,
                zero, scales2<kQ4>(p)};
    }
    static __m256i dot(const Operand& w, const Operand& x) {
        const __m256i p =
            _mm256_add_epi16(_mm256_maddubs_epi16(w.a, x.a), _mm256_maddubs_epi16(w.b, x.b));
        return sum_pairs(_mm256_sub_epi16(p, x.aux_a));
    }
};

float hsum(__m256 v) {
    return hsum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

int32_t hsum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

// Q8_0 or Q4_0 weights W: kStep blocks a step; each token's operand is loaded once for all
// rows. One token at a time: 4 rows' accumulators and two operands fit the 16 registers.
template <class W>
struct QStep : TileStep<typename W::Block, block_q8_0, kStep, 1, false> {
    using Act = Operand;
    static Operand act(const block_q8_0* x) {
        return W::Act::load(reinterpret_cast<const uint8_t*>(x));
    }
    struct Acc {
        __m256 v = _mm256_setzero_ps();
        float total() const { return hsum(v); }
    };
    template <int NT>
    static void step(const typename W::Block& w, const Operand* x, Acc* acc) {
        const Operand wo = W::load(reinterpret_cast<const uint8_t*>(&w));
        for (int t = 0; t < NT; t++) {
            const __m256 sum = _mm256_cvtepi32_ps(W::dot(wo, x[t]));
            acc[t].v = _mm256_fmadd_ps(sum, _mm256_mul_ps(wo.d, x[t].d), acc[t].v);
        }
    }
};

// ---- k-quants: Q8_K activations, Q4_K and Q6_K weights -------------------------------------

// Bit-identical to quantize_row_q8_K_ref for finite input: the same max (the first value of
// largest magnitude), the same division and products, and vcvtps2dq rounds ties to even as
// ggml's nearest_int does. The packs saturate at 127 where the reference clamps.
void quantize_q8_K(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_K*>(vy);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        __m256 vmax = _mm256_setzero_ps();
        for (int j = 0; j < QK_K; j += 8) {
            vmax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), vmax);
        }
        const float amax = hmax(vmax);
        block_q8_K& out = y[b];
        if (amax == 0.0f) {
            __builtin_memset(&out, 0, sizeof out);
            continue;
        }
        int first = 0;
        for (int j = 0;; j += 8) {
            const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j));
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                first = j + __builtin_ctz(static_cast<unsigned>(hit));
                break;
            }
        }
        const float iscale = -127.0f / x[first];
        const __m256 vs = _mm256_set1_ps(iscale);
        for (int j = 0; j < QK_K; j += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; k++) {
                q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + j + 8 * k)));
            }
            out.bsums[j / 16] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[0], q[1])));
            out.bsums[j / 16 + 1] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[2], q[3])));
            // The packs interleave 128-bit lanes; the permutation puts the dwords back in order.
            const __m256i p =
                _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(out.qs + j),
                _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
        }
        out.d = 1 / iscale;
    }
}

// A super-block is one step. vpmaddubsw multiplies the unsigned levels (4 bits for Q4_K, 6 for
// Q6_K) by the signed activations into int16 pair sums (at most 2 * 63 * 128 < 2^15: exact);
// vpmaddwd multiplies those by their sub-block's scale into int32. The levels' offsets (Q4_K's
// mins, Q6_K's 32) meet the activations only through their sums, Q8_K's bsums, once per
// super-block. So each super-block is an exact integer sum before its float scales, as in the
// scalar reference.

// Each step is one weight super-block against NT tokens' activation blocks: the weights are
// unpacked once for all of them (prefill), and each token's sums run exactly as they would
// alone, so results do not depend on NT.
struct Q4K : SuperBlockStep<block_q4_K> {
    // One row's sums so far for one token: scales part (8 lanes) and mins part (4 lanes).
    struct Acc {
        __m256 s = _mm256_setzero_ps();
        __m128 m = _mm_setzero_ps();
        float total() const { return hsum(s) - hsum(m); }
    };
    template <int NT>
    static void step(const block_q4_K& w, const block_q8_K* const* x, Acc* acc) {
        alignas(16) uint8_t sm[16];
        q4_K_scales_mins(w.scales, sm);
        const __m128i mins =
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm + 8)));
        const float d = _cvtsh_ss(w.d), dmin = _cvtsh_ss(w.dmin);
        for (int t = 0; t < NT; t++) acc[t].m = q4_K_mins(mins, dmin, *x[t], acc[t].m);
        const __m256i mask = _mm256_set1_epi8(0x0f);
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = _mm256_setzero_si256();
        for (int g = 0; g < QK_K / 64; g++) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * g));
            const __m256i lo = _mm256_and_si256(q, mask);                        // sub-block 2g
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);  // 2g + 1
            const __m256i sl = _mm256_set1_epi16(sm[2 * g]), sh = _mm256_set1_epi16(sm[2 * g + 1]);
            for (int t = 0; t < NT; t++) {
                const int8_t* xq = x[t]->qs + 64 * g;
                const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
                const __m256i xh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32));
                const __m256i pl = _mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, xl));
                const __m256i ph = _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, xh));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(pl, ph));
            }
        }
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

struct Q6K : SuperBlockStep<block_q6_K> {
    struct Acc {
        __m256 s = _mm256_setzero_ps();
        float total() const { return hsum(s); }
    };
    template <int NT>
    static void step(const block_q6_K& w, const block_q8_K* const* x, Acc* acc) {
        // The levels are q - 32: take 32 sum_k sc_k bsum_k off the sum of sc_k sum(q x).
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) {
            const __m256i offset = _mm256_madd_epi16(
                sc16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t]->bsums)));
            sum[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
        }
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        for (int h = 0; h < QK_K / 128; h++) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h));
            const __m256i l1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h + 32));
            const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh + 32 * h));
            // Values 32k..32k+31 of the half: the low 4 bits from ql, bits 2k, 2k+1 of qh on top.
            // (The 16-bit shifts never carry a kept bit across a byte.)
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low4),
                                _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(0x03)), 4)),
                _mm256_or_si256(_mm256_and_si256(l1, low4),
                                _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(0x0c)), 2)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                _mm256_and_si256(hb, _mm256_set1_epi8(0x30))),
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                    _mm256_srli_epi16(
                        _mm256_and_si256(hb, _mm256_set1_epi8(static_cast<char>(0xc0))), 2)),
            };
            for (int k = 0; k < 4; k++) {
                // 32 values = sub-blocks s and s + 1: their scales in the two 128-bit lanes.
                const int s = 8 * h + 2 * k;
                const __m256i scale =
                    _mm256_setr_m128i(_mm_set1_epi16(w.scales[s]), _mm_set1_epi16(w.scales[s + 1]));
                for (int t = 0; t < NT; t++) {
                    const __m256i xq = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(x[t]->qs + 128 * h + 32 * k));
                    sum[t] = _mm256_add_epi32(
                        sum[t], _mm256_madd_epi16(scale, _mm256_maddubs_epi16(q[k], xq)));
                }
            }
        }
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
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
    {Type::F32, {nullptr, avx2::packed_gemm_f32}},
    {Type::F16, {nullptr, avx2::packed_gemm_f16}},
    {Type::BF16, {nullptr, avx2::packed_gemm_bf16}},
    {Type::Q8_0, {quantize_q8_0c<128, quantize_q8_0>, avx2::packed_gemm_q8_0}},
    {Type::Q4_0, {quantize_q8_0c<8, quantize_q8_0>, avx2::packed_gemm_q4_0}},
    {Type::Q4_K, {quantize_q8_K, avx2::packed_gemm_q4_K}},
    {Type::Q6_K, {quantize_q8_K, avx2::packed_gemm_q6_K}},
};

}  // namespace

// Built on first use, which kernels_for() allows only when the CPU has AVX2.
const Kernels* kernels_avx2() {
    static const Kernels table = [] {
        Kernels k = with_overrides(kernels_scalar(), Isa::Avx2, kTypes, kPacked);
        set_float_kernels<Arch, LoadF16<Arch>>(k);
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
