// AVX-512 kernels (F, BW, VL, DQ and VNNI): four quantized blocks per step, integer dot
// products with vpdpbusd, float kernels from simd_float.h.
//
// Compiled with -mavx512*: everything stays in the anonymous namespace and only intrinsics and
// xsimd templates instantiated for avx512bw are used, so no code compiled with these flags can
// be shared with (and picked by the linker for) the portable parts of the program.
#include <immintrin.h>

#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/simd_float.h"

namespace ggml_lite {
namespace {

using Arch = xsimd::avx512bw;
using FK = FloatKernels<Arch>;
using B = xsimd::batch<float, Arch>;

struct LoadF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static float scalar(const uint16_t* p) { return _cvtsh_ss(*p); }
};

// bfloat16 is the top half of a float: widen and shift.
struct LoadBF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) {
        const __m512i h =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
    }
    static float scalar(const uint16_t* p) {
        return _mm_cvtss_f32(
            _mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(static_cast<uint32_t>(*p) << 16))));
    }
};

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
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) acc[r][t] = _mm512_setzero_ps();
    }
    const auto step = [&](const uint8_t* const* wp, const uint8_t* const* xp) {
        Operand xo[NT];
        for (int t = 0; t < NT; t++) xo[t] = Q::Act::load(xp[t]);
        for (int r = 0; r < NR; r++) {
            const Operand wo = Q::load(wp[r]);
            for (int t = 0; t < NT; t++) {
                const __m512 sum = _mm512_cvtepi32_ps(Q::dot(wo, xo[t]));
                acc[r][t] = _mm512_fmadd_ps(sum, _mm512_mul_ps(wo.d, xo[t].d), acc[r][t]);
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
        // The last 1-3 blocks, copied next to zero blocks (scale 0, quants 0) that add nothing.
        alignas(64) uint8_t wtail[NR][kStep * wb] = {};
        alignas(64) uint8_t xtail[NT][kStep * kQ8] = {};
        const size_t k = static_cast<size_t>(nb - b);
        for (int r = 0; r < NR; r++) {
            __builtin_memcpy(wtail[r], w + r * w_stride + b * wb, k * wb);
            wp[r] = wtail[r];
        }
        for (int t = 0; t < NT; t++) {
            __builtin_memcpy(xtail[t], x + t * x_stride + b * kQ8, k * kQ8);
            xp[t] = xtail[t];
        }
        step(wp, xp);
    }
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) y[t * y_stride + r] = _mm512_reduce_add_ps(acc[r][t]);
    }
}

template <class Q, int NR>
void q_rows(int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y,
            int64_t ys, int nt) {
    int t = 0;
    for (; t + 2 <= nt; t += 2) q_block<Q, NR, 2>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
    if (t < nt) q_block<Q, NR, 1>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
}

template <class Q>
void q_gemm_tile(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride,
                 float* y, int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    int r = 0;
    for (; r + 4 <= nr; r += 4)
        q_rows<Q, 4>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride, nt);
    for (; r < nr; r++)
        q_rows<Q, 1>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride, nt);
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

constexpr Kernels kAvx512 = {
    Isa::Avx512,
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

const Kernels* kernels_avx512() {
    return &kAvx512;
}

}  // namespace ggml_lite
