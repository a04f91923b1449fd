// NEON kernels (AArch64 Advanced SIMD): one quantized block per two 128-bit vectors, float
// kernels from simd_float.h.
//
// This file is compiled twice. As itself (baseline flags) it is the `neon` table. Included by
// kernels_neon_dotprod.cpp (compiled with +dotprod, LILA_NEON_DOTPROD_TU defined) it
// contributes only the integer dot products, now with sdot (vdotq_s32); that table borrows
// everything else from the baseline one, so no float or xsimd code is ever compiled with the
// extension. Everything stays in the anonymous namespace for the same reason as on x86.
#include <arm_neon.h>

#include <cstring>

#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#if !defined(LILA_NEON_DOTPROD_TU)
#include "ggml-lite/simd_float.h"
#endif

namespace ggml_lite {
namespace {

float half_to_float(fp16_t h) {
    __fp16 f;
    std::memcpy(&f, &h, sizeof f);
    return f;  // fcvt: exact
}

// acc[i] += the sum of the products of bytes 4i..4i+3 (dotprod), or of some 4 bytes (plain:
// the lanes are grouped differently, but every lane sum is exact and the lanes of a block
// add up to the same integer).
int32x4_t dot_bytes(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    // |a b| <= 127 * 128 fits int16; vpadalq adds neighbouring pairs into int32.
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

// One operand of a pair: 32 signed bytes in element order and the scale.
struct Operand {
    int8x16_t lo, hi;
    float d;
};

struct Q8Weights {
    using Block = block_q8_0;
    static Operand load(const block_q8_0* b) {
        return {vld1q_s8(b->qs), vld1q_s8(b->qs + 16), half_to_float(b->d)};
    }
};

struct Q4Weights {
    using Block = block_q4_0;
    // Byte j: element j in the low nibble, j + 16 in the high; values q - 8.
    static Operand load(const block_q4_0* b) {
        const uint8x16_t q = vld1q_u8(b->qs);
        const int8x16_t eight = vdupq_n_s8(8);
        return {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f))), eight),
                vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight), half_to_float(b->d)};
    }
};

// NR weight rows × NT activation rows. Per pair: one float accumulator fed block by block in
// order and reduced at the end: the same sequence whatever the tile, so a tile element equals
// vec_dot.
template <class Q, int NR, int NT>
void q_block(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x, size_t x_stride,
             float* y, int64_t y_stride) {
    using Block = typename Q::Block;
    float32x4_t acc[NR][NT];
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) acc[r][t] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < n / QK8_0; b++) {
        // Rows are short streams, too short for the hardware prefetchers to ramp up on; fetch
        // the same place in the next NR rows, the ones matmul hands over next.
        for (int r = 0; r < NR; r++) {
            __builtin_prefetch(w + (r + NR) * w_stride + b * sizeof(Block));
        }
        Operand xo[NT];
        for (int t = 0; t < NT; t++) {
            xo[t] = Q8Weights::load(reinterpret_cast<const block_q8_0*>(x + t * x_stride) + b);
        }
        for (int r = 0; r < NR; r++) {
            const Operand wo = Q::load(reinterpret_cast<const Block*>(w + r * w_stride) + b);
            for (int t = 0; t < NT; t++) {
                const int32x4_t s =
                    dot_bytes(dot_bytes(vdupq_n_s32(0), wo.lo, xo[t].lo), wo.hi, xo[t].hi);
                acc[r][t] = vfmaq_n_f32(acc[r][t], vcvtq_f32_s32(s), wo.d * xo[t].d);
            }
        }
    }
    for (int r = 0; r < NR; r++) {
        for (int t = 0; t < NT; t++) y[t * y_stride + r] = vaddvq_f32(acc[r][t]);
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

#if !defined(LILA_NEON_DOTPROD_TU)

// Bit-identical to quantize_row_q8_0_ref: the same max, the same float divisions and
// products, and fcvtas rounds ties away from zero exactly like roundf.
void quantize_q8_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0*>(vy);
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        float32x4_t v[8];
        float32x4_t amax = vdupq_n_f32(0.0f);
        for (int k = 0; k < 8; k++) {
            v[k] = vld1q_f32(x + 4 * k);
            amax = vmaxq_f32(amax, vabsq_f32(v[k]));
        }
        const float d = vmaxvq_f32(amax) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const __fp16 dh = d;  // fcvt, round to nearest even
        std::memcpy(&y[b].d, &dh, sizeof dh);
        for (int k = 0; k < 8; k += 2) {
            const int32x4_t q0 = vcvtaq_s32_f32(vmulq_n_f32(v[k], id));
            const int32x4_t q1 = vcvtaq_s32_f32(vmulq_n_f32(v[k + 1], id));
            const int16x8_t q16 = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1));
            vst1_s8(y[b].qs + 4 * k, vmovn_s16(q16));
        }
    }
}

using Arch = xsimd::neon64;
using FK = FloatKernels<Arch>;
using B = xsimd::batch<float, Arch>;

struct LoadF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
    static float scalar(const uint16_t* p) { return half_to_float(*p); }
};

// bfloat16 is the top half of a float: widen with a shift.
struct LoadBF16 {
    using Elem = uint16_t;
    static B load(const uint16_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
    static float scalar(const uint16_t* p) {
        const uint32_t u = static_cast<uint32_t>(*p) << 16;
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    }
};

void f32_from_float(const float* x, void* y, int64_t n) {
    std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

constexpr Kernels kNeon = {
    Isa::Neon,
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

#endif

}  // namespace

#if !defined(LILA_NEON_DOTPROD_TU)

const Kernels* kernels_neon() {
    return &kNeon;
}

#else

// The baseline table with the sdot integer kernels swapped in. Built on first use, which
// kernels_for() allows only when the CPU has the extension.
const Kernels* kernels_neon_dotprod() {
    static const Kernels table = [] {
        Kernels k = *kernels_neon();
        k.isa = Isa::NeonDotprod;
        k.types[kQ8_0].vec_dot = q_vec_dot<Q8Weights>;
        k.types[kQ8_0].gemm_tile = q_gemm_tile<Q8Weights>;
        k.types[kQ4_0].vec_dot = q_vec_dot<Q4Weights>;
        k.types[kQ4_0].gemm_tile = q_gemm_tile<Q4Weights>;
        return k;
    }();
    return &table;
}

#endif

}  // namespace ggml_lite
