// The NEON integer kernels (every quantized weight type; packed for Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K) and their entries in the kernel tables,
// written once for both NEON tables.
//
// Include only from the two NEON translation units: kernels_neon.cpp, compiled with the
// baseline flags (the `neon` table), and kernels_neon_dotprod.cpp, compiled with +dotprod
// (the `neon_dotprod` table), where dot_bytes and the packed kernels' word_dot become sdot
// (vdotq_s32). Everything has internal linkage, for the reasons simd_float-inl.h gives: the
// +dotprod copies must never be picked for the baseline ones. The float kernels and the
// activation quantizers need no extension; kernels_neon.cpp alone compiles them, and the
// neon_dotprod table borrows them from the neon one.
#pragma once

#include <arm_neon.h>

#include <cstring>
#include <type_traits>

#include "ggml-lite/arm/packed_neon-inl.h"
#include "ggml-lite/arm/packed_q23_neon-inl.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

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

// ---- 32-value blocks: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL ---------------------------------
//
// Every type's levels become signed bytes in element order (Q4_0's q - 8, Q5_0's q - 16,
// IQ4_NL's table values by tbl), dotted with the activations in exact int32 lanes. Q4_1 and Q5_1
// (levels q, at most 31) add m_w s_x per block in a float sum of their own.

// One operand of a pair: 32 signed bytes in element order, the scale, and the factor of the
// min part (Q4_1/Q5_1 weights: m; Q8_1 activations: s; else 0).
struct Operand {
    int8x16_t lo, hi;
    float d;
    float m;
};

// Q8_0 or Q8_1 activations as they are (Q8_1's s in m).
template <class A>
Operand act_values(const A* b) {
    float s = 0.0f;
    if constexpr (std::is_same_v<A, block_q8_1>) s = half_to_float(b->s);
    return {vld1q_s8(b->qs), vld1q_s8(b->qs + 16), half_to_float(b->d), s};
}

struct Q8Weights {
    using Block = block_q8_0;
    using ActBlock = block_q8_0;
    static Operand load(const block_q8_0* b) { return act_values(b); }
};

// Byte j of 16: element j in the low nibble, j + 16 in the high.
void nibbles(const uint8_t* qs, uint8x16_t* lo, uint8x16_t* hi) {
    const uint8x16_t q = vld1q_u8(qs);
    *lo = vandq_u8(q, vdupq_n_u8(0x0f));
    *hi = vshrq_n_u8(q, 4);
}

// Q5_0/Q5_1: bits 0-15 of qh as 16 added to lo, bits 16-31 to hi. Each byte takes the qh byte
// holding its bit (tbl) and tests that bit.
void add_fifth_bits(const uint8_t* qh, uint8x16_t* lo, uint8x16_t* hi) {
    static constexpr uint8_t kByte[2][16] = {{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
                                             {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}};
    uint32_t h;
    std::memcpy(&h, qh, sizeof h);
    const uint8x16_t hv = vreinterpretq_u8_u32(vdupq_n_u32(h));
    const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201));
    const uint8x16_t sixteen = vdupq_n_u8(16);
    *lo = vorrq_u8(*lo, vandq_u8(vtstq_u8(vqtbl1q_u8(hv, vld1q_u8(kByte[0])), bit), sixteen));
    *hi = vorrq_u8(*hi, vandq_u8(vtstq_u8(vqtbl1q_u8(hv, vld1q_u8(kByte[1])), bit), sixteen));
}

// Q4_0, Q4_1, Q5_0, Q5_1: nibbles, the fifth bits where the block has qh, levels q - Offset, the
// min where the block has one.
template <class B, class A, int Offset>
struct UnsignedWeights {
    using Block = B;
    using ActBlock = A;
    static Operand load(const B* b) {
        uint8x16_t lo, hi;
        nibbles(b->qs, &lo, &hi);
        if constexpr (requires(const B& x) { x.qh; }) add_fifth_bits(b->qh, &lo, &hi);
        float m = 0.0f;
        if constexpr (requires(const B& x) { x.m; }) m = half_to_float(b->m);
        const int8x16_t offset = vdupq_n_s8(Offset);
        return {vsubq_s8(vreinterpretq_s8_u8(lo), offset),
                vsubq_s8(vreinterpretq_s8_u8(hi), offset), half_to_float(b->d), m};
    }
};

using Q4Weights = UnsignedWeights<block_q4_0, block_q8_0, 8>;
using Q5Weights = UnsignedWeights<block_q5_0, block_q8_0, 16>;
using Q4_1Weights = UnsignedWeights<block_q4_1, block_q8_1, 0>;
using Q5_1Weights = UnsignedWeights<block_q5_1, block_q8_1, 0>;

struct IQ4NLWeights {
    using Block = block_iq4_nl;
    using ActBlock = block_q8_0;
    static Operand load(const block_iq4_nl* b) {
        uint8x16_t lo, hi;
        nibbles(b->qs, &lo, &hi);
        const int8x16_t table = vld1q_s8(kvalues_iq4nl);
        return {vqtbl1q_s8(table, lo), vqtbl1q_s8(table, hi), half_to_float(b->d), 0.0f};
    }
};

// 32-value block weights W: one block a step; each token's operand is loaded once for all rows.
template <class W>
struct QStep : TileStep<typename W::Block, typename W::ActBlock, 1, 2, false> {
    static constexpr bool kMin = std::is_same_v<typename W::ActBlock, block_q8_1>;
    using Act = Operand;
    static Operand act(const typename W::ActBlock* x) { return act_values(x); }
    struct Acc {
        float32x4_t v = vdupq_n_f32(0.0f);
        float m = 0.0f;  // the mins' part (Q4_1, Q5_1)
        float total() const {
            if constexpr (kMin) return vaddvq_f32(v) + m;
            return vaddvq_f32(v);
        }
    };
    template <int NT>
    static void step(const typename W::Block& w, const Operand* x, Acc* acc) {
        const Operand wo = W::load(&w);
        for (int t = 0; t < NT; t++) {
            const int32x4_t s =
                dot_bytes(dot_bytes(vdupq_n_s32(0), wo.lo, x[t].lo), wo.hi, x[t].hi);
            acc[t].v = vfmaq_n_f32(acc[t].v, vcvtq_f32_s32(s), wo.d * x[t].d);
            if constexpr (kMin) acc[t].m = __builtin_fmaf(wo.m, x[t].m, acc[t].m);
        }
    }
    // One fetch a step: the blocks are contiguous and shorter than a cache line (18 to 34
    // bytes), so their first bytes, step after step, reach every line of the next rows.
    static void prefetch(const uint8_t* p) { __builtin_prefetch(p); }
};

// ---- k-quants against Q8_K: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS -----------------------------
//
// A super-block is one step. The levels (Q2_K's, Q4_K's and Q5_K's q, Q3_K's q - 4, Q6_K's
// q - 32, IQ4_XS's table values) are signed bytes; each sub-block's byte dot product is
// multiplied by its integer scale in int32, so a super-block is an exact integer sum before its
// float scales, as in the scalar reference. The mins of Q2_K, Q4_K and Q5_K meet the activations
// only through their sums, Q8_K's bsums.

// sum over two 16-byte halves of a * b, in four int32 lanes.
int32x4_t dot32(int8x16_t a0, int8x16_t a1, const int8_t* b) {
    return dot_bytes(dot_bytes(vdupq_n_s32(0), a0, vld1q_s8(b)), a1, vld1q_s8(b + 16));
}

// One row's sums so far for one token, for the types with mins: lane 0 the scales part, lane 1
// the (negated) mins.
struct MinAcc {
    float32x2_t v = vdup_n_f32(0.0f);
    float total() const { return vaddv_f32(v); }
    // One super-block: its scales part, d_x d sum(lanes of scaled), and its mins part,
    // d_x dmin sum(lanes of mins).
    void add(int32x4_t scaled, int32x4_t mins, float dd, float dmin_d) {
        const int32x2_t ints = vset_lane_s32(vaddvq_s32(mins), vdup_n_s32(vaddvq_s32(scaled)), 1);
        v = vfma_f32(v, vset_lane_f32(-dmin_d, vdup_n_f32(dd), 1), vcvt_f32_s32(ints));
    }
};

// Each step is one weight super-block against NT tokens' activation blocks: the weights are
// unpacked once for all of them (prefill), and each token's sums run exactly as they would
// alone, so results do not depend on NT.
// Q4_K and Q5_K: Q5_K's fifth bit of value 32j + l is bit j of qh byte l.
template <class Block>
struct KMin : SuperBlockStep<Block> {
    using Acc = MinAcc;
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
        uint8_t sm[16];
        q4_K_scales_mins(w.scales, sm);
        const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sm + 8)));
        const uint8x16_t mask = vdupq_n_u8(0x0f);
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        for (int g = 0; g < QK_K / 64; g++) {
            const uint8x16_t q0 = vld1q_u8(w.qs + 32 * g);
            const uint8x16_t q1 = vld1q_u8(w.qs + 32 * g + 16);
            uint8x16_t u[4] = {vandq_u8(q0, mask), vandq_u8(q1, mask), vshrq_n_u8(q0, 4),
                               vshrq_n_u8(q1, 4)};
            if constexpr (std::is_same_v<Block, block_q5_K>) {
                // Bit 2g of qh bytes 0-31 for the low nibbles, bit 2g + 1 for the high ones.
                const uint8x16_t sixteen = vdupq_n_u8(16);
                for (int k = 0; k < 4; k++) {
                    const uint8x16_t h = vld1q_u8(w.qh + 16 * (k % 2));
                    const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1 << (2 * g + k / 2)));
                    u[k] = vorrq_u8(u[k], vandq_u8(vtstq_u8(h, bit), sixteen));
                }
            }
            const int8x16_t lo0 = vreinterpretq_s8_u8(u[0]), lo1 = vreinterpretq_s8_u8(u[1]);
            const int8x16_t hi0 = vreinterpretq_s8_u8(u[2]), hi1 = vreinterpretq_s8_u8(u[3]);
            for (int t = 0; t < NT; t++) {
                const int8_t* xq = x[t]->qs + 64 * g;
                sum[t] = vmlaq_n_s32(sum[t], dot32(lo0, lo1, xq), sm[2 * g]);
                sum[t] = vmlaq_n_s32(sum[t], dot32(hi0, hi1, xq + 32), sm[2 * g + 1]);
            }
        }
        const float d = half_to_float(w.d), dmin = half_to_float(w.dmin);
        for (int t = 0; t < NT; t++) {
            // Mins: m_j times the sum of its 32 activations (pairs of bsums, at most 32 * 128).
            const int16x8_t bs = vpaddq_s16(vld1q_s16(x[t]->bsums), vld1q_s16(x[t]->bsums + 8));
            const int32x4_t mprod =
                vmlal_high_s16(vmull_s16(vget_low_s16(mins), vget_low_s16(bs)), mins, bs);
            acc[t].add(sum[t], mprod, d * x[t]->d, dmin * x[t]->d);
        }
    }
};

struct Q6K : SuperBlockStep<block_q6_K> {
    struct Acc {
        float32x2_t v = vdup_n_f32(0.0f);  // both lanes carry the sum
        float total() const { return vget_lane_f32(v, 0); }
    };
    template <int NT>
    static void step(const block_q6_K& w, const block_q8_K* const* x, Acc* acc) {
        const uint8x16_t low4 = vdupq_n_u8(0x0f), low2 = vdupq_n_u8(0x03);
        const int8x16_t offset = vdupq_n_s8(32);
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        for (int h = 0; h < QK_K / 128; h++) {
            const uint8_t* ql = w.ql + 64 * h;
            const uint8_t* qh = w.qh + 32 * h;
            for (int v = 0; v < 2; v++) {
                // Values 32k + 16v + i (i < 16) of the half, for k < 4: the low 4 bits in ql
                // bytes 32(k % 2) + 16v + i (nibble k / 2), the high 2 in qh byte 16v + i at 2k.
                const uint8x16_t l0 = vld1q_u8(ql + 16 * v), l1 = vld1q_u8(ql + 32 + 16 * v);
                const uint8x16_t hb = vld1q_u8(qh + 16 * v);
                const uint8x16_t q[4] = {
                    vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(hb, low2), 4)),
                    vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 2), low2), 4)),
                    vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 4), low2), 4)),
                    vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(hb, 6), 4)),
                };
                for (int k = 0; k < 4; k++) {
                    const int8x16_t level = vsubq_s8(vreinterpretq_s8_u8(q[k]), offset);
                    const int scale = w.scales[8 * h + 2 * k + v];
                    for (int t = 0; t < NT; t++) {
                        const int8x16_t xq = vld1q_s8(x[t]->qs + 128 * h + 32 * k + 16 * v);
                        sum[t] = vmlaq_n_s32(sum[t], dot_bytes(vdupq_n_s32(0), level, xq), scale);
                    }
                }
            }
        }
        const float d = half_to_float(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].v = vfma_f32(acc[t].v, vdup_n_f32(d * x[t]->d),
                                vcvt_f32_s32(vdup_n_s32(vaddvq_s32(sum[t]))));
        }
    }
};

// An IQ4_XS block's eight signed scales (iq4_xs_scale) as int16, in registers: a loop over them
// costs a good part of a super-block's dot product.
int16x8_t iq4_xs_scales(const block_iq4_xs& b) {
    uint32_t packed;
    std::memcpy(&packed, b.scales_l, sizeof packed);
    const uint8x8_t l = vreinterpret_u8_u32(vdup_n_u32(packed));
    // Scale 2k's low 4 bits are byte k's low nibble, scale 2k + 1's its high one.
    const uint8x8_t lo = vzip1_u8(vand_u8(l, vdup_n_u8(0x0f)), vshr_n_u8(l, 4));
    // Scale i's top 2 bits: bits 2i and 2i + 1 of scales_h.
    static constexpr int16_t kShift[8] = {0, -2, -4, -6, -8, -10, -12, -14};
    const uint16x8_t h =
        vandq_u16(vshlq_u16(vdupq_n_u16(b.scales_h), vld1q_s16(kShift)), vdupq_n_u16(3));
    return vsubq_s16(vreinterpretq_s16_u16(vorrq_u16(vmovl_u8(lo), vshlq_n_u16(h, 4))),
                     vdupq_n_s16(32));
}

// IQ4_XS: the 16 levels (tbl) in eight 32-value blocks with signed scales.
struct IQ4XS : SuperBlockStep<block_iq4_xs> {
    struct Acc {
        float32x2_t v = vdup_n_f32(0.0f);  // both lanes carry the sum
        float total() const { return vget_lane_f32(v, 0); }
    };
    template <int NT>
    static void step(const block_iq4_xs& w, const block_q8_K* const* x, Acc* acc) {
        int16_t sc[QK_K / 32];
        vst1q_s16(sc, iq4_xs_scales(w));
        const int8x16_t table = vld1q_s8(kvalues_iq4nl);
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        for (int b = 0; b < QK_K / 32; b++) {
            uint8x16_t lo, hi;
            nibbles(w.qs + 16 * b, &lo, &hi);
            const int8x16_t l0 = vqtbl1q_s8(table, lo), l1 = vqtbl1q_s8(table, hi);
            for (int t = 0; t < NT; t++)
                sum[t] = vmlaq_n_s32(sum[t], dot32(l0, l1, x[t]->qs + 32 * b), sc[b]);
        }
        const float d = half_to_float(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].v = vfma_f32(acc[t].v, vdup_n_f32(d * x[t]->d),
                                vcvt_f32_s32(vdup_n_s32(vaddvq_s32(sum[t]))));
        }
    }
};

// Q2_K and Q3_K: 16 sub-blocks of 16 values, their 2-bit fields packed alike: value
// 128h + 32k + l (k < 4, l < 32) is bits 2k, 2k + 1 of qs byte 32h + l, so the 16 bytes at
// 32h + 16j shifted by 2k are sub-block 8h + 2k + j in order.

// sum[t] plus token t's sum_s sc[s] sum(level x) over the super-block: the levels of sub-block
// 8h + 2k + j are level(v, h, k, j), v its 2-bit fields.
template <int NT, class Level>
void add_field_dots(const uint8_t* qs, const int8_t* sc, Level level, const block_q8_K* const* x,
                    int32x4_t* sum) {
    const uint8x16_t low2 = vdupq_n_u8(3);
    for (int h = 0; h < QK_K / 128; h++) {
        const uint8x16_t q[2] = {vld1q_u8(qs + 32 * h), vld1q_u8(qs + 32 * h + 16)};
        for (int k = 0; k < 4; k++) {
            const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(-2 * k));  // right by 2k
            for (int j = 0; j < 2; j++) {
                const int s = 8 * h + 2 * k + j;
                const int8x16_t v = level(vandq_u8(vshlq_u8(q[j], shift), low2), h, k, j);
                for (int t = 0; t < NT; t++) {
                    const int32x4_t dot = dot_bytes(vdupq_n_s32(0), v, vld1q_s8(x[t]->qs + 16 * s));
                    sum[t] = vmlaq_n_s32(sum[t], dot, sc[s]);
                }
            }
        }
    }
}

// Q2_K: the 2-bit fields are the levels, 4-bit scales, and 4-bit mins that meet the
// activations through the bsums.
struct Q2K : SuperBlockStep<block_q2_K> {
    using Acc = MinAcc;
    template <int NT>
    static void step(const block_q2_K& w, const block_q8_K* const* x, Acc* acc) {
        const uint8x16_t packed = vld1q_u8(w.scales);
        int8_t sc[16];
        vst1q_s8(sc, vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(0x0f))));
        const uint8x16_t mins = vshrq_n_u8(packed, 4);
        const int16x8_t m0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins)));
        const int16x8_t m1 = vreinterpretq_s16_u16(vmovl_high_u8(mins));
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        const auto level = [](uint8x16_t v, int, int, int) { return vreinterpretq_s8_u8(v); };
        add_field_dots<NT>(w.qs, sc, level, x, sum);
        const float d = half_to_float(w.d), dmin = half_to_float(w.dmin);
        for (int t = 0; t < NT; t++) {
            const int16x8_t b0 = vld1q_s16(x[t]->bsums), b1 = vld1q_s16(x[t]->bsums + 8);
            int32x4_t mprod = vmull_s16(vget_low_s16(m0), vget_low_s16(b0));
            mprod = vmlal_high_s16(mprod, m0, b0);
            mprod = vmlal_s16(mprod, vget_low_s16(m1), vget_low_s16(b1));
            mprod = vmlal_high_s16(mprod, m1, b1);
            acc[t].add(sum[t], mprod, d * x[t]->d, dmin * x[t]->d);
        }
    }
};

// A Q3_K block's 16 signed scales (q3_K_scale), four at a time in words: word i gets scales
// 4i..4i+3, their low nibbles from bytes 0-7 (the high nibbles for i >= 2), their top 2 bits
// from bits 2i, 2i + 1 of bytes 8-11. Then each byte, 0..63, less 32 with no borrow across
// bytes: its top bit set before the subtraction and flipped after.
void q3_K_scales(const uint8_t* packed, int8_t out[16]) {
    constexpr uint32_t kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
    constexpr uint32_t kTop = 0x80808080, kBias = 0x20202020;
    uint32_t u[4];
    std::memcpy(u, packed, 12);
    const uint32_t top = u[2];
    u[2] = ((u[0] >> 4) & kLow4) | (((top >> 4) & kLow2) << 4);
    u[3] = ((u[1] >> 4) & kLow4) | (((top >> 6) & kLow2) << 4);
    u[0] = (u[0] & kLow4) | ((top & kLow2) << 4);
    u[1] = (u[1] & kLow4) | (((top >> 2) & kLow2) << 4);
    for (uint32_t& word : u) word = ((word | kTop) - kBias) ^ kTop;
    std::memcpy(out, u, 16);
}

// Q3_K: levels q - 4, q the 2-bit field with the hmask bit on top, as signed bytes.
struct Q3K : SuperBlockStep<block_q3_K> {
    using Acc = Q6K::Acc;
    template <int NT>
    static void step(const block_q3_K& w, const block_q8_K* const* x, Acc* acc) {
        int8_t sc[16];
        q3_K_scales(w.scales, sc);
        const uint8x16_t hm[2] = {vld1q_u8(w.hmask), vld1q_u8(w.hmask + 16)};
        const uint8x16_t four = vdupq_n_u8(4);
        // The third bit of value 128h + 32k + 16j + i is bit 4h + k of hmask byte 16j + i: the
        // level is the field less 4 where that bit is clear.
        const auto level = [&](uint8x16_t v, int h, int k, int j) {
            const uint8x16_t set =
                vtstq_u8(hm[j], vdupq_n_u8(static_cast<uint8_t>(1 << (4 * h + k))));
            return vsubq_s8(vreinterpretq_s8_u8(v), vreinterpretq_s8_u8(vbicq_u8(four, set)));
        };
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        add_field_dots<NT>(w.qs, sc, level, x, sum);
        const float d = half_to_float(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].v = vfma_f32(acc[t].v, vdup_n_f32(d * x[t]->d),
                                vcvt_f32_s32(vdup_n_s32(vaddvq_s32(sum[t]))));
        }
    }
};

using Q4K = KMin<block_q4_K>;
using Q5K = KMin<block_q5_K>;

// The integer kernels, in both tables: the neon one's, and the neon_dotprod one's with sdot.
constexpr TypeOverride kIntegerTypes[] = {
    {Type::Q8_0, QuantTiles<QStep<Q8Weights>>::kernels()},
    {Type::Q4_0, QuantTiles<QStep<Q4Weights>>::kernels()},
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
};
constexpr PackedOverride kIntegerPacked[] = {
    {Type::Q8_0, {nullptr, packed_gemm<PackedQ32<PackedQ8>>}},
    {Type::Q4_0, {nullptr, packed_gemm<PackedQ32<PackedQ4>>}},
    {Type::Q5_0, {nullptr, packed_gemm<PackedQ32<PackedQ5>>}},
    {Type::IQ4_NL, {nullptr, packed_gemm<PackedQ32<PackedIQ4NL>>}},
    {Type::Q4_1, {nullptr, packed_gemm<PackedQ32<PackedQ4_1>>}},
    {Type::Q5_1, {nullptr, packed_gemm<PackedQ32<PackedQ5_1>>}},
    {Type::Q4_K, {nullptr, packed_gemm<PackedQ4K>}},
    {Type::Q5_K, {nullptr, packed_gemm<PackedQ5K>}},
    {Type::Q6_K, {nullptr, packed_gemm<PackedQ6K>}},
    {Type::IQ4_XS, {nullptr, packed_gemm<PackedIQ4XS>}},
    {Type::Q3_K, {nullptr, packed_gemm<PackedQ3K>}},
    {Type::Q2_K, {nullptr, packed_gemm<PackedQ2K>}},
};
// Kernels::grid_gemm.
constexpr auto kGridGemm = packed_gemm<PackedGrid>;

}  // namespace
}  // namespace ggml_lite

// The grid types' steps, on dot_bytes and half_to_float above: their table rows are kGridTypes.
#include "ggml-lite/arm/kernels_iq_neon-inl.h"
