// AVX-512 kernels (F, BW, VL, DQ and VNNI): two quantized blocks per 512-bit vector, integer
// dot products with vpdpbusd, float kernels from simd_float.h.
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
// A step covers two blocks (the second may be absent at an odd end: then its half of every
// vector is zero, its scale too, and it adds exactly nothing). Lanes 0-7 hold block b,
// lanes 8-15 block b+1, each lane the sum of 4 products.
//
// vpdpbusd multiplies unsigned by signed bytes. For Q4_0 the weights are unsigned nibbles q,
// and sum (q - 8) x = sum q x - 8 sum x: the correction depends on the activations only.
// For Q8_0 the activations are offset to unsigned x + 128, and sum w x = sum w (x + 128) -
// 128 sum w: the correction depends on the weights only. Either way one vpdpbusd per pair,
// starting from the correction.

// [d(b) x8, d(b+1) x8]
__m512 scales(fp16_t d0, fp16_t d1) {
    const __m128 d =
        _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d0 | static_cast<uint32_t>(d1) << 16)));
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(d));
}

__m512i load_q8_pair(const block_q8_0* b, int count) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[0].qs));
    const __m256i hi = count == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[1].qs))
                                  : _mm256_setzero_si256();
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// One operand of a pair: bytes for vpdpbusd, correction (or unused), scales.
struct Operand {
    __m512i v;
    __m512i init;
    __m512 d;
};

struct Q8Act {  // Q8_0 activations facing Q8_0 weights: offset to unsigned
    static Operand load(const block_q8_0* b, int count) {
        const __m512i x = load_q8_pair(b, count);
        return {_mm512_xor_si512(x, _mm512_set1_epi8(static_cast<char>(0x80))),
                _mm512_setzero_si512(), scales(b[0].d, count == 2 ? b[1].d : fp16_t{0})};
    }
};

struct Q8Weights {
    using Block = block_q8_0;
    using Act = Q8Act;
    static Operand load(const block_q8_0* b, int count) {
        const __m512i w = load_q8_pair(b, count);
        const __m512i sum128 = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                                   _mm512_set1_epi8(static_cast<char>(0x80)), w);
        return {w, _mm512_sub_epi32(_mm512_setzero_si512(), sum128),
                scales(b[0].d, count == 2 ? b[1].d : fp16_t{0})};
    }
    static __m512i dot(const Operand& w, const Operand& x) {
        return _mm512_dpbusd_epi32(w.init, x.v, w.v);
    }
};

struct Q4Act {  // Q8_0 activations facing Q4_0 weights: signed, with -8 sum x per lane
    static Operand load(const block_q8_0* b, int count) {
        const __m512i x = load_q8_pair(b, count);
        const __m512i sum8 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(8), x);
        return {x, _mm512_sub_epi32(_mm512_setzero_si512(), sum8),
                scales(b[0].d, count == 2 ? b[1].d : fp16_t{0})};
    }
};

struct Q4Weights {
    using Block = block_q4_0;
    using Act = Q4Act;
    // Nibbles in element order: 128-bit lanes [b lo, b hi, b+1 lo, b+1 hi] from the bytes
    // [q0, q0, q1, q1] shifted right by 0 or 4 per 64-bit half.
    static Operand load(const block_q4_0* b, int count) {
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[0].qs));
        const __m128i q1 = count == 2 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[1].qs))
                                      : _mm_setzero_si128();
        const __m512i q = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(q0), 0xff00, q1);
        const __m512i shift = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
        const __m512i nib = _mm512_and_si512(_mm512_srlv_epi64(q, shift), _mm512_set1_epi8(0x0f));
        return {nib, _mm512_setzero_si512(), scales(b[0].d, count == 2 ? b[1].d : fp16_t{0})};
    }
    static __m512i dot(const Operand& w, const Operand& x) {
        return _mm512_dpbusd_epi32(x.init, w.v, x.v);
    }
};

// NR weight rows × NT activation rows. Per pair: one float accumulator, fed block pair by
// block pair in order, reduced at the end: the same sequence whatever the tile, so a tile
// element equals vec_dot.
template <class Q, int NR, int NT>
void q_block(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride,
             float* y, int64_t y_stride) {
    using Block = typename Q::Block;
    const int64_t nb = n / QK8_0;
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) acc[r][t] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b += 2) {
        const int count = nb - b >= 2 ? 2 : 1;
        Operand xo[NT];
        for (int t = 0; t < NT; t++) {
            const auto* xb = reinterpret_cast<const block_q8_0*>(x + t * x_stride);
            xo[t] = Q::Act::load(xb + b, count);
        }
        for (int r = 0; r < NR; r++) {
            const auto* wb = reinterpret_cast<const Block*>(w + r * w_stride);
            const Operand wo = Q::load(wb + b, count);
            for (int t = 0; t < NT; t++) {
                const __m512 sum = _mm512_cvtepi32_ps(Q::dot(wo, xo[t]));
                acc[r][t] = _mm512_fmadd_ps(sum, _mm512_mul_ps(wo.d, xo[t].d), acc[r][t]);
            }
        }
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
