// AVX2 kernels (+FMA, F16C): two quantized blocks per step, integer dot products with
// vpmaddubsw/vpmaddwd, float kernels from simd_float.h.
//
// Compiled with -mavx2 -mfma -mf16c: everything stays in the anonymous namespace and only
// intrinsics and xsimd templates instantiated for fma3<avx2> are used, so no code compiled
// with these flags can be shared with the portable parts of the program.
#include <immintrin.h>

#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/simd_float.h"

namespace ggml_lite {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;
using FK = FloatKernels<Arch>;
using B = xsimd::batch<float, Arch>;

struct LoadF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static float scalar(const uint16_t* p) { return _cvtsh_ss(*p); }
};

// bfloat16 is the top half of a float: widen and shift.
struct LoadBF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) {
        const __m256i h =
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
    }
    static float scalar(const uint16_t* p) {
        return _mm_cvtss_f32(
            _mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(static_cast<uint32_t>(*p) << 16))));
    }
};

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

// Every cache line of [p, p + Bytes): one prefetch per 64 bytes and one for the last byte.
template <size_t Bytes>
void prefetch_range(const uint8_t* p) {
    const char* c = reinterpret_cast<const char*>(p);
    for (size_t off = 0; off < Bytes; off += 64) _mm_prefetch(c + off, _MM_HINT_T0);
    _mm_prefetch(c + Bytes - 1, _MM_HINT_T0);
}

// NR weight rows × NT activation rows. Per pair: one float accumulator fed step by step in
// order and reduced at the end: the same sequence whatever the tile, so a tile element equals
// vec_dot.
template <class Q, int NR, int NT>
void q_block(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride,
             float* y, int64_t y_stride) {
    constexpr size_t wb = sizeof(typename Q::Block);
    const int64_t nb = n / QK8_0;
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) acc[r][t] = _mm256_setzero_ps();
    }
    const auto step = [&](const uint8_t* const* wp, const uint8_t* const* xp) {
        Operand xo[NT];
        for (int t = 0; t < NT; t++) xo[t] = Q::Act::load(xp[t]);
        for (int r = 0; r < NR; r++) {
            const Operand wo = Q::load(wp[r]);
            for (int t = 0; t < NT; t++) {
                const __m256 sum = _mm256_cvtepi32_ps(Q::dot(wo, xo[t]));
                acc[r][t] = _mm256_fmadd_ps(sum, _mm256_mul_ps(wo.d, xo[t].d), acc[r][t]);
            }
        }
    };
    const uint8_t* wp[NR];
    const uint8_t* xp[NT];
    int64_t b = 0;
    for (; b + kStep <= nb; b += kStep) {
        for (int r = 0; r < NR; r++) wp[r] = w + r * w_stride + b * wb;
        for (int t = 0; t < NT; t++) xp[t] = x + t * x_stride + b * kQ8;
        // Rows are short streams (a 2048-column Q4_0 row is 18 cache lines), too short for
        // the hardware prefetchers to ramp up on; fetch the same place in the next NR rows,
        // the ones matmul hands over next, one tile ahead.
        for (int r = 0; r < NR; r++) prefetch_range<kStep * wb>(wp[r] + NR * w_stride);
        step(wp, xp);
    }
    if (b < nb) {
        // The odd last block, next to a zero block (scale 0, quants 0) that adds nothing.
        alignas(32) uint8_t wtail[NR][kStep * wb] = {};
        alignas(32) uint8_t xtail[NT][kStep * kQ8] = {};
        for (int r = 0; r < NR; r++) {
            __builtin_memcpy(wtail[r], w + r * w_stride + b * wb, wb);
            wp[r] = wtail[r];
        }
        for (int t = 0; t < NT; t++) {
            __builtin_memcpy(xtail[t], x + t * x_stride + b * kQ8, kQ8);
            xp[t] = xtail[t];
        }
        step(wp, xp);
    }
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) {
            __m128 s =
                _mm_add_ps(_mm256_castps256_ps128(acc[r][t]), _mm256_extractf128_ps(acc[r][t], 1));
            s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            s = _mm_add_ss(s, _mm_movehdup_ps(s));
            y[t * y_stride + r] = _mm_cvtss_f32(s);
        }
    }
}

// 4 rows × 1 token at a time: 4 accumulators and two operands fit the 16 registers.
template <class Q>
void q_gemm_tile(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride,
                 float* y, int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t++) {
        int r = 0;
        for (; r + 4 <= nr; r += 4) {
            q_block<Q, 4, 1>(n, wb + r * w_stride, w_stride, xb + t * x_stride, x_stride,
                             y + t * y_stride + r, y_stride);
        }
        for (; r < nr; r++) {
            q_block<Q, 1, 1>(n, wb + r * w_stride, w_stride, xb + t * x_stride, x_stride,
                             y + t * y_stride + r, y_stride);
        }
    }
}

template <class Q>
float q_vec_dot(int64_t n, const void* w, const void* x) {
    float y;
    q_block<Q, 1, 1>(n, static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(x), 0, &y,
                     0);
    return y;
}

void f32_from_float(const float* x, void* y, int64_t n) {
    auto* out = static_cast<float*>(y);
    for (int64_t i = 0; i < n; i++) out[i] = x[i];
}

constexpr Kernels kAvx2 = {
    Isa::Avx2,
    {
        {FK::vec_dot<LoadF32<Arch>>, f32_from_float, FK::gemm_tile<LoadF32<Arch>>},
        {FK::vec_dot<LoadF16>, nullptr, FK::gemm_tile<LoadF16>},
        {FK::vec_dot<LoadBF16>, nullptr, FK::gemm_tile<LoadBF16>},
        {q_vec_dot<Q8Weights>, quantize_q8_0, q_gemm_tile<Q8Weights>},
        {q_vec_dot<Q4Weights>, nullptr, q_gemm_tile<Q4Weights>},
    },
    FK::rmsnorm,
    FK::softmax,
    FK::silu_mul,
    FK::add,
    FK::scale,
    FK::axpy_f16<LoadF16>,
    FK::rope,
};

}  // namespace

const Kernels* kernels_avx2() {
    return &kAvx2;
}

}  // namespace ggml_lite
