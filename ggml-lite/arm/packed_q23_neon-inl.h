// NEON packed-weight kernels of Q3_K and Q2_K (packed.h: block_q3_Kx16, block_q2_Kx16) against
// Q8_K activations, slice by slice as packed_neon-inl.h's kinds (its packed_gemm runs them).
//
// Value 128h + 32k + 4u + i (u < 8, i < 4) is, for Q2_K, bits 2k and 2k + 1 of qs word 8h + u; for
// Q3_K, level u of unit 4h + k's three planes (packed.h: q3_K_packed_level). Words u < 4 belong to
// sub-block 8h + 2k, the others to the next; each sub-block's dot of the unsigned levels (signed
// bytes) times its scale is exact int32.
//
// Include only through kernels_neon-inl.h, after packed_neon-inl.h: everything here has internal
// linkage, for the reasons given there.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "ggml-lite/arm/packed_neon-inl.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

// The slice's rows' bytes of scales[k] (16 rows) in the low byte of their int32 lanes.
uint32x4_t slice_u32(const uint8_t* bytes, uint8x16_t pick) {
    return vreinterpretq_u32_u8(vqtbl1q_u8(vld1q_u8(bytes), pick));
}

// Sub-block sums of units (h, k), k < 4, for NT tokens: isum[t] += sc_2k' dot_2k' + sc_2k'+1
// dot_2k'+1 with sub-block dots from init(t, sub); op[u] the unit's levels.
template <int NT, class Init>
void add_unit(const int8x16_t* op, int sub, const int32x4_t* sc, const block_q8_K* const* x,
              Init init, int32x4_t* isum) {
    for (int t = 0; t < NT; t++) {
        const int8_t* xq = x[t]->qs + 16 * sub;
        const int32x4_t d0 = vaddq_s32(word_dot(op, vld1q_s8(xq)), init(t, sub));
        const int32x4_t d1 = vaddq_s32(word_dot(op + 4, vld1q_s8(xq + 16)), init(t, sub + 1));
        isum[t] = vmlaq_s32(vmlaq_s32(isum[t], d0, sc[sub]), d1, sc[sub + 1]);
    }
}

// Q3_K: levels q - 4, so each sub-block's dot starts at -4 times its bsum; the signed scales
// decoded from the slice's 12 scale bytes (q3_K_scale's bits).
struct PackedQ3K {
    using Block = block_q3_Kx16;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    static constexpr int kTokens = 2;
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g);
        uint32x4_t b[12];
        for (int k = 0; k < 12; k++) b[k] = slice_u32(w.scales[k], pick);
        int32x4_t sc[16];
        for (int j = 0; j < 16; j++) {
            const uint32x4_t nib =
                vandq_u32(j < 8 ? b[j] : vshrq_n_u32(b[j - 8], 4), vdupq_n_u32(15));
            const uint32x4_t top =
                vandq_u32(vshlq_u32(b[8 + j % 4], vdupq_n_s32(-2 * (j / 4))), vdupq_n_u32(3));
            sc[j] = vsubq_s32(vreinterpretq_s32_u32(vorrq_u32(nib, vshlq_n_u32(top, 4))),
                              vdupq_n_s32(32));
        }
        const auto init = [&](int t, int sub) { return vdupq_n_s32(-4 * x[t]->bsums[sub]); };
        int32x4_t isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = vdupq_n_s32(0);
        for (int unit = 0; unit < QK_K / 32; unit++) {
            uint8x16_t p[3];
            for (int j = 0; j < 3; j++) p[j] = vld1q_u8(w.q[unit][j][4 * g]);
            // Byte shifts need no masks where the field is a byte's top bits.
            const uint8x16_t seven = vdupq_n_u8(7), four = vdupq_n_u8(4);
            const auto s8 = [](uint8x16_t v) { return vreinterpretq_s8_u8(v); };
            const int8x16_t op[8] = {
                s8(vandq_u8(p[0], seven)),
                s8(vandq_u8(vshrq_n_u8(p[0], 3), seven)),
                s8(vorrq_u8(vshrq_n_u8(p[0], 6), vandq_u8(vshrq_n_u8(p[2], 4), four))),
                s8(vandq_u8(p[1], seven)),
                s8(vandq_u8(vshrq_n_u8(p[1], 3), seven)),
                s8(vorrq_u8(vshrq_n_u8(p[1], 6), vandq_u8(vshrq_n_u8(p[2], 5), four))),
                s8(vandq_u8(p[2], seven)),
                s8(vandq_u8(vshrq_n_u8(p[2], 3), seven)),
            };
            add_unit<NT>(op, 2 * unit, sc, x, init, isum);
        }
        const float32x4_t wd = load_halves(w.d + 4 * g);
        for (int t = 0; t < NT; t++)
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(wd, x[t]->d));
    }
};

// Q2_K: levels q, a 4-bit scale (low nibble) and min (high nibble) per 16 values; the mins
// times the bsums are a second exact sum, then the reference's two float steps.
struct PackedQ2K {
    using Block = block_q2_Kx16;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    static constexpr int kTokens = 2;
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g), low2 = vdupq_n_u8(3);
        int32x4_t sc[16];
        int32x4_t msum[NT];
        for (int t = 0; t < NT; t++) msum[t] = vdupq_n_s32(0);
        for (int j = 0; j < 16; j++) {
            const uint32x4_t b = slice_u32(w.scales[j], pick);
            sc[j] = vreinterpretq_s32_u32(vandq_u32(b, vdupq_n_u32(15)));
            const int32x4_t m = vreinterpretq_s32_u32(vshrq_n_u32(b, 4));
            for (int t = 0; t < NT; t++) msum[t] = vmlaq_n_s32(msum[t], m, x[t]->bsums[j]);
        }
        const auto init = [](int, int) { return vdupq_n_s32(0); };
        int32x4_t isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) {
            uint8x16_t q[8];
            for (int u = 0; u < 8; u++) q[u] = vld1q_u8(w.qs[8 * h + u][4 * g]);
            for (int k = 0; k < 4; k++) {
                const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(-2 * k));
                int8x16_t op[8];
                for (int u = 0; u < 8; u++)
                    op[u] = vreinterpretq_s8_u8(vandq_u8(vshlq_u8(q[u], shift), low2));
                add_unit<NT>(op, 8 * h + 2 * k, sc, x, init, isum);
            }
        }
        const float32x4_t wd = load_halves(w.d + 4 * g), wmin = load_halves(w.dmin + 4 * g);
        for (int t = 0; t < NT; t++) {
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(wd, x[t]->d));
            acc[t] =
                vfmaq_f32(acc[t], vcvtq_f32_s32(msum[t]), vnegq_f32(vmulq_n_f32(wmin, x[t]->d)));
        }
    }
};

}  // namespace
}  // namespace ggml_lite
