// NEON kernels (AArch64 Advanced SIMD), the `neon` table: the integer kernels of
// kernels_neon-inl.h, the activation quantizers, and the float kernels from simd_float-inl.h
// and the packed ones below. kernels_neon_dotprod.cpp compiles the integer kernels again with
// +dotprod and borrows the rest of this table, so no float or xsimd code is ever compiled with
// the extension. Everything stays in the anonymous namespace for the same reason as on x86.
#include <arm_neon.h>

#include <cstring>

#include "ggml-lite/arm/kernels_neon-inl.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"

namespace ggml_lite {
namespace {

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

// Bit-identical to quantize_row_q8_K_ref for finite input: the same max (the first value of
// largest magnitude), the same division and products, and fcvtns rounds ties to even as
// ggml's nearest_int does. The saturating narrowing stops at 127 where the reference clamps.
void quantize_q8_K(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_K*>(vy);
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float32x4_t vmax = vdupq_n_f32(0.0f);
        for (int j = 0; j < QK_K; j += 4) vmax = vmaxq_f32(vmax, vabsq_f32(vld1q_f32(x + j)));
        const float amax = vmaxvq_f32(vmax);
        block_q8_K& out = y[b];
        if (amax == 0.0f) {
            std::memset(&out, 0, sizeof out);
            continue;
        }
        int first = 0;
        while (__builtin_fabsf(x[first]) != amax) first++;
        const float iscale = -127.0f / x[first];
        for (int j = 0; j < QK_K; j += 16) {
            int32x4_t q[4];
            for (int k = 0; k < 4; k++)
                q[k] = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + j + 4 * k), iscale));
            out.bsums[j / 16] = static_cast<int16_t>(
                vaddvq_s32(vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3]))));
            const int16x8_t lo = vcombine_s16(vqmovn_s32(q[0]), vqmovn_s32(q[1]));
            const int16x8_t hi = vcombine_s16(vqmovn_s32(q[2]), vqmovn_s32(q[3]));
            vst1q_s8(out.qs + j, vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi)));
        }
        out.d = 1 / iscale;
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

// ---- F32, F16, BF16 ---------------------------------------------------------------------------
//
// A 4-column block of a group is 16 rows of 4 values (packed.h): one vector is one row's, lane k
// on column c + k, the reference's partial sum k, and one FMA with the token's x[c..c + 3] (one
// load) advances it. A pass takes S rows of NT tokens, S * NT = 16 accumulators: decode reads
// each weight line once, prefill reuses each weight register for NT tokens and each activation
// register for S rows.
template <class L, int NT>
void packed_float_tile(int64_t n, const typename L::Elem* w, const uint8_t* x, size_t x_stride,
                       float* y, int64_t y_stride, int nr) {
    using Elem = typename L::Elem;
    constexpr int S = NT == 1 ? 16 : NT == 2 ? 8 : 4;
    float32x4_t sums[NT][4];
    for (int r0 = 0; r0 < kPackRows; r0 += S) {
        // The fixed-count loops are unrolled so that acc[] lives in registers: GCC 12 otherwise
        // stores every accumulator to the stack at every step.
        float32x4_t acc[NT][S];
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
            for (int s = 0; s < S; s++) acc[t][s] = vdupq_n_f32(0.0f);
        }
        // One 4-column block (16 rows of 4 values at wb) against the tokens' activations at xc(t).
        const auto step = [&](const Elem* wb, auto xc) {
            float32x4_t xv[NT];
#pragma GCC unroll 16
            for (int t = 0; t < NT; t++) xv[t] = vld1q_f32(xc(t));
#pragma GCC unroll 16
            for (int s = 0; s < S; s++) {
                const float32x4_t wv = L::load(wb + 4 * (r0 + s));
#pragma GCC unroll 16
                for (int t = 0; t < NT; t++) acc[t][s] = vfmaq_f32(acc[t][s], wv, xv[t]);
            }
        };
        int64_t c = 0;
        for (; c + 4 <= n; c += 4) {
            // The next lines of the group: a block is 1-4 of them.
            const auto* wb = w + c * kPackRows;
            prefetch_lines<4 * kPackRows * sizeof(Elem)>(
                reinterpret_cast<const uint8_t*>(wb + 16 * kPackRows));
            step(wb, [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride) + c; });
        }
        if (c < n) {
            const FloatTail<Elem, NT> tail(n, w, x, x_stride);
            step(tail.w, [&](int t) { return tail.x[t]; });
        }
        // (p0 + p1) + (p2 + p3) of 4 rows: two pairwise adds.
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
            for (int s = 0; s < S; s += 4) {
                sums[t][(r0 + s) / 4] = vpaddq_f32(vpaddq_f32(acc[t][s], acc[t][s + 1]),
                                                   vpaddq_f32(acc[t][s + 2], acc[t][s + 3]));
            }
        }
    }
#pragma GCC unroll 16
    for (int t = 0; t < NT; t++) store_rows(y + t * y_stride, sums[t], nr);
}

// Tokens per pass of the float kernels (see packed_float_tile).
constexpr int kPackedFloatTokens = 4;

template <class L>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const auto* wc = static_cast<const typename L::Elem*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t += kPackedFloatTokens) {
        const int count = nt - t < kPackedFloatTokens ? nt - t : kPackedFloatTokens;
        FK::with_count<kPackedFloatTokens>(count, [&]<int NT>() {
            packed_float_tile<L, NT>(n, wc, xb + t * x_stride, x_stride, y + t * y_stride, y_stride,
                                     nr);
        });
    }
}

// What only the baseline translation unit has: the float kernels and the activation
// quantizers, which neon_dotprod borrows with the rest of the neon table.
constexpr TypeOverride kBaselineTypes[] = {
    {Type::F32, FK::kernels<LoadF32<Arch>>()},
    {Type::F16, FK::kernels<LoadF16>()},
    {Type::BF16, FK::kernels<LoadBF16>()},
    {Type::Q8_0, {nullptr, quantize_q8_0, nullptr}},
    {Type::Q8_K, {nullptr, quantize_q8_K, nullptr}},
    {Type::Q8_1, {nullptr, quantize_q8_1<quantize_q8_0>, nullptr}},
};
constexpr PackedOverride kBaselinePacked[] = {
    {Type::F32, {nullptr, packed_float_gemm<LoadF32<Arch>>}},
    {Type::F16, {nullptr, packed_float_gemm<LoadF16>}},
    {Type::BF16, {nullptr, packed_float_gemm<LoadBF16>}},
    {Type::Q8_0, {quantize_q8_0c<128, quantize_q8_0>, nullptr}},
    {Type::Q4_0, {quantize_q8_0c<8, quantize_q8_0>, nullptr}},
    {Type::Q5_0, {quantize_q8_0c<16, quantize_q8_0>, nullptr}},
    {Type::IQ4_NL, {quantize_q8_0c<128, quantize_q8_0>, nullptr}},
    {Type::Q4_1, {quantize_q8_1c<quantize_q8_0>, nullptr}},
    {Type::Q5_1, {quantize_q8_1c<quantize_q8_0>, nullptr}},
    {Type::Q4_K, {quantize_q8_K, nullptr}},
    {Type::Q5_K, {quantize_q8_K, nullptr}},
    {Type::Q6_K, {quantize_q8_K, nullptr}},
    {Type::IQ4_XS, {quantize_q8_K, nullptr}},
    {Type::Q3_K, {quantize_q8_K, nullptr}},
    {Type::Q2_K, {quantize_q8_K, nullptr}},
};

}  // namespace

const Kernels* kernels_neon() {
    static const Kernels table = [] {
        Kernels k = with_overrides(kernels_scalar(), Isa::Neon, kIntegerTypes, kIntegerPacked);
        k = with_overrides(k, Isa::Neon, kGridTypes, {});
        k = with_overrides(k, Isa::Neon, kBaselineTypes, kBaselinePacked);
        // The grid types stay on their rows, run by the NEON grid tiles: their packed stripes
        // have x86 kernels only, and the scalar one would take the tiles' place.
        for (Type t : {Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S,
                       Type::IQ1_S, Type::IQ1_M})
            k.packed[type_slot(t)] = {};
        set_float_kernels<Arch, LoadF16>(k);
        k.grid_gemm = kGridGemm;
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
