// NEON packed-weight kernels of the integer types (packed.h, kernels.h: PackedKernels): Q4_0,
// Q5_0, IQ4_NL and Q8_0 against block_q8_0c activations, Q4_1 and Q5_1 against block_q8_1c,
// Q4_K, Q5_K, Q6_K and IQ4_XS against Q8_K, and the grid types' decoded levels
// (Kernels::grid_gemm).
//
// Include only from the NEON translation units, through kernels_neon-inl.h: both compile these
// kernels, kernels_neon.cpp with the baseline flags and kernels_neon_dotprod.cpp with +dotprod
// (word_dot becomes sdot), so everything here has internal linkage, for the reasons
// simd_float-inl.h gives. The float types' packed kernels are in kernels_neon.cpp, the one
// translation unit that has simd_float-inl.h.
//
// A 64-byte packed word is four 128-bit registers: register g holds rows 4g..4g+3, one row per
// 32-bit lane (a "slice" of the group). A kernel takes the group slice by slice within each
// block column, so each slice's weight registers serve several tokens (K::kTokens), and every
// float accumulator lane belongs to one row: nothing is summed horizontally.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

// ---- Integer kernels ---------------------------------------------------------------------------

#if !defined(__ARM_FEATURE_DOTPROD)
// a's word I times activation word I without sdot: bytes times the word broadcast into int16
// (a product of two bytes fits), pairs added into int32. lo's lanes 0-1 collect the slice's
// row 0, lanes 2-3 row 1; hi's rows 2 and 3.
template <int I>
void widen_word(int32x4_t& lo, int32x4_t& hi, int8x16_t a, int8x16_t x) {
    const int8x16_t xw = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(x), I));
    lo = vpadalq_s16(lo, vmull_s8(vget_low_s8(a), vget_low_s8(xw)));
    hi = vpadalq_s16(hi, vmull_high_s8(a, xw));
}
#endif

// sum over i < 4 of a[i] . (32-bit lane i of x), one int32 lane per row: 16 values of 4 rows.
int32x4_t word_dot(const int8x16_t* a, int8x16_t x) {
#if defined(__ARM_FEATURE_DOTPROD)
    // sdot by element: 4 bytes of each row times lane i's 4 bytes, like vpdpbusd per row.
    int32x4_t s = vdotq_laneq_s32(vdupq_n_s32(0), a[0], x, 0);
    s = vdotq_laneq_s32(s, a[1], x, 1);
    s = vdotq_laneq_s32(s, a[2], x, 2);
    return vdotq_laneq_s32(s, a[3], x, 3);
#else
    int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
    widen_word<0>(lo, hi, a[0], x);
    widen_word<1>(lo, hi, a[1], x);
    widen_word<2>(lo, hi, a[2], x);
    widen_word<3>(lo, hi, a[3], x);
    return vpaddq_s32(lo, hi);
#endif
}

// The 32 values of a block or sub-block: a[i] faces activation bytes 4i..4i+3 (i < 8). Two
// independent chains.
int32x4_t block_dot(const int8x16_t* a, const int8_t* xq) {
    return vaddq_s32(word_dot(a, vld1q_s8(xq)), word_dot(a + 4, vld1q_s8(xq + 16)));
}

// Four fp16 values (the slice's row scales) as floats.
float32x4_t load_halves(const fp16_t* p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

// Each kind K gives Block, ActBlock, kValues (values per block column), kTokens (tokens per
// pass, as registers allow) and slice<NT>(w, g, x, acc): block column w's rows 4g..4g+3
// against NT tokens, fma'd into acc[t] as the reference orders its steps.

// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and Q8_0: a slice of a block column is eight signed operands,
// op[i] facing activation bytes 4i..4i+3; one float step per token. Against block_q8_1c (Q4_1,
// Q5_1) a second FMA per token adds the rows' minimums times s.
template <class P>
struct PackedQ32 {
    using Block = typename P::Block;
    using ActBlock = typename P::Act;
    static constexpr bool kMin = std::is_same_v<ActBlock, block_q8_1c>;
    static constexpr int kValues = QK8_0;
    // Four float accumulators (one per slice) a token, 16 registers; the operands and the
    // activations take most of the rest.
    static constexpr int kTokens = 4;
    template <int NT>
    static void slice(const Block& w, int g, const ActBlock* const* x, float32x4_t* acc) {
        int8x16_t op[8];
        P::load(w, g, op);
        const float32x4_t wd = load_halves(w.d + 4 * g);
        for (int t = 0; t < NT; t++) {
            int32x4_t s = block_dot(op, x[t]->qs);
            if constexpr (P::kAddCorrection) s = vaddq_s32(s, vdupq_n_s32(x[t]->c));
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(s), vmulq_n_f32(wd, x[t]->d));
        }
        if constexpr (kMin) {
            const float32x4_t wm = load_halves(w.m + 4 * g);
            for (int t = 0; t < NT; t++) acc[t] = vfmaq_n_f32(acc[t], wm, x[t]->s);
        }
    }
};

// The nibbles of Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL in slice g: op[i] elements 4i..4i+3 of each row,
// the low nibbles of words 0-3, then the high ones.
void packed_nibbles(const uint8_t (*qs)[kPackRows][4], int g, uint8x16_t* op) {
    const uint8x16_t mask = vdupq_n_u8(0x0f);
    for (int i = 0; i < 4; i++) {
        const uint8x16_t v = vld1q_u8(qs[i][4 * g]);
        op[i] = vandq_u8(v, mask);     // elements 4i..4i+3
        op[i + 4] = vshrq_n_u8(v, 4);  // elements 16 + 4i..
    }
}

// Q5_0 and Q5_1: the fifth bits to bit 4 of the nibbles. Element 4i + k's bit is bit i of byte k
// of the row's word (packed.h): the word shifted by 4 - i (vshl: negative is right) puts operand
// i's at bit 4 of each byte, and a bit select takes that bit from it.
void add_packed_fifth_bits(const uint8_t (*qh)[4], int g, uint8x16_t* q) {
    const uint32x4_t h = vreinterpretq_u32_u8(vld1q_u8(qh[4 * g]));
    const uint8x16_t bit4 = vdupq_n_u8(0x10);
    for (int i = 0; i < 8; i++) {
        const uint8x16_t at4 = vreinterpretq_u8_u32(vshlq_u32(h, vdupq_n_s32(4 - i)));
        q[i] = vbslq_u8(bit4, at4, q[i]);
    }
}

// Q4_0, Q4_1, Q5_0, Q5_1: the nibbles, with the fifth bits where the block has them. The
// levels q (0..31) are valid signed bytes; against block_q8_0c the reference's integer is
// c + sum q x (c = -8 sum x or -16 sum x), so c is added to the sum of products; block_q8_1c
// has no correction (the minimums are added after).
template <class B, class A, bool FifthBits>
struct PackedNibbles {
    using Block = B;
    using Act = A;
    static constexpr bool kAddCorrection = std::is_same_v<Act, block_q8_0c>;
    static void load(const Block& w, int g, int8x16_t* op) {
        uint8x16_t q[8];
        packed_nibbles(w.qs, g, q);
        if constexpr (FifthBits) add_packed_fifth_bits(w.qh, g, q);
        for (int i = 0; i < 8; i++) op[i] = vreinterpretq_s8_u8(q[i]);
    }
};
using PackedQ4 = PackedNibbles<block_q4_0x16, block_q8_0c, false>;
using PackedQ5 = PackedNibbles<block_q5_0x16, block_q8_0c, true>;
using PackedQ4_1 = PackedNibbles<block_q4_1x16, block_q8_1c, false>;
using PackedQ5_1 = PackedNibbles<block_q5_1x16, block_q8_1c, true>;

// IQ4_NL's nibbles in slice g (one block column's, or one IQ4_XS sub-block's) looked up in the
// table of signed levels: op[i] elements 4i..4i+3 of each row.
void iq4nl_levels(const uint8_t (*qs)[kPackRows][4], int g, int8x16_t* op) {
    const int8x16_t table = vld1q_s8(kvalues_iq4nl);
    uint8x16_t q[8];
    packed_nibbles(qs, g, q);
    for (int i = 0; i < 8; i++) op[i] = vqtbl1q_s8(table, q[i]);
}

// IQ4_NL: the nibbles looked up in the table of signed levels. sum v x is exactly the
// reference's c + sum (v + 128) x with c = -128 sum x, so c is not read.
struct PackedIQ4NL {
    using Block = block_iq4_nlx16;
    using Act = block_q8_0c;
    static constexpr bool kAddCorrection = false;
    static void load(const Block& w, int g, int8x16_t* op) { iq4nl_levels(w.qs, g, op); }
};

struct PackedQ8 {
    using Block = block_q8_0x16;
    using Act = block_q8_0c;
    // Stored as w + 128: xor 0x80 gives w back, and sum w x is exactly the reference's
    // c + sum (w + 128) x with c = -128 sum x, so c is not read.
    static constexpr bool kAddCorrection = false;
    static void load(const Block& w, int g, int8x16_t* op) {
        const uint8x16_t flip = vdupq_n_u8(0x80);
        for (int i = 0; i < 8; i++)
            op[i] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(w.qs[i][4 * g]), flip));
    }
};

// Table indices that pick byte 4g + i of a 16-byte vector into the low byte of int32 lane i and
// zero the rest (vqtbl1q_u8 gives 0 for indices past 15): 16 rows' bytes to a slice's lanes.
uint8x16_t slice_bytes(int g) {
    const uint32x4_t iota = {0, 1, 2, 3};
    return vreinterpretq_u8_u32(
        vorrq_u32(vaddq_u32(vdupq_n_u32(4 * g), iota), vdupq_n_u32(0xffffff00)));
}

// Q4_K and Q5_K: per sub-block pair, eight words hold sub-block 2p in their low nibbles and
// 2p + 1 in their high ones, and Q5_K's fifth bits are bits 2p and 2p + 1 of qh words 0..7. Each
// sub-block dot times its 6-bit scale, and each min times the sub-block's activation sum (from
// bsums), are exact int32 per row; then the reference's two float steps.
// Q5_K's 8 words of sub-block planes (packed.h: q5_K_packed_level), slice g's 4 rows: byte
// shifts, so a plane's top bits need no mask.
inline void q5_K_words(const uint8_t (*planes)[kPackRows][4], int g, int8x16_t* op) {
    uint8x16_t p[5];
    for (int k = 0; k < 5; k++) p[k] = vld1q_u8(planes[k][4 * g]);
    const auto s8 = [](uint8x16_t v) { return vreinterpretq_s8_u8(v); };
    for (int k = 0; k < 5; k++) op[k] = s8(vandq_u8(p[k], vdupq_n_u8(31)));
    op[5] = s8(vorrq_u8(vshrq_n_u8(p[0], 5), vandq_u8(vshrq_n_u8(p[1], 2), vdupq_n_u8(0x18))));
    op[6] = s8(vorrq_u8(vorrq_u8(vshrq_n_u8(p[1], 7), vshlq_n_u8(vshrq_n_u8(p[2], 5), 1)),
                        vandq_u8(vshrq_n_u8(p[3], 1), vdupq_n_u8(0x10))));
    op[7] = s8(vorrq_u8(vshrq_n_u8(p[3], 6), vshlq_n_u8(vshrq_n_u8(p[4], 5), 2)));
}

template <class B, bool FifthBits>
struct PackedKMin {
    using Block = B;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    // The 16 operands of a sub-block pair stay in registers for all tokens: room for two
    // tokens' sums.
    static constexpr int kTokens = 2;
    // get_scale_min_k4 on all 16 rows' bytes at once; the slice's four as int32 lanes.
    static void scale_min(const Block& w, int j, uint8x16_t pick, int32x4_t& sc, int32x4_t& m) {
        const uint8x16_t low6 = vdupq_n_u8(0x3f);
        uint8x16_t s, mn;
        if (j < 4) {
            s = vandq_u8(vld1q_u8(w.scales[j]), low6);
            mn = vandq_u8(vld1q_u8(w.scales[j + 4]), low6);
        } else {
            const uint8x16_t q = vld1q_u8(w.scales[j + 4]);
            s = vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0f)),
                         vshlq_n_u8(vshrq_n_u8(vld1q_u8(w.scales[j - 4]), 6), 4));
            mn = vorrq_u8(vshrq_n_u8(q, 4), vshlq_n_u8(vshrq_n_u8(vld1q_u8(w.scales[j]), 6), 4));
        }
        sc = vreinterpretq_s32_u8(vqtbl1q_u8(s, pick));
        m = vreinterpretq_s32_u8(vqtbl1q_u8(mn, pick));
    }
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g), mask = vdupq_n_u8(0x0f);
        int32x4_t isum[NT], msum[NT];
        for (int t = 0; t < NT; t++) isum[t] = msum[t] = vdupq_n_s32(0);
        for (int p = 0; p < QK_K / 64; p++) {
            int8x16_t op[2][8];
            if constexpr (FifthBits) {
                for (int h = 0; h < 2; h++) q5_K_words(w.q[2 * p + h], g, op[h]);
            } else {
                for (int i = 0; i < 8; i++) {
                    const uint8x16_t v = vld1q_u8(w.qs[8 * p + i][4 * g]);
                    op[0][i] = vreinterpretq_s8_u8(vandq_u8(v, mask));
                    op[1][i] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
                }
            }
            for (int h = 0; h < 2; h++) {
                const int j = 2 * p + h;
                int32x4_t sc, m;
                scale_min(w, j, pick, sc, m);
                for (int t = 0; t < NT; t++) {
                    isum[t] = vmlaq_s32(isum[t], block_dot(op[h], x[t]->qs + 32 * j), sc);
                    msum[t] = vmlaq_n_s32(msum[t], m, x[t]->bsums[2 * j] + x[t]->bsums[2 * j + 1]);
                }
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

using PackedQ4K = PackedKMin<block_q4_Kx16, false>;
using PackedQ5K = PackedKMin<block_q5_Kx16, true>;

// Q6_K: sub-block g's words are its planes' levels q (packed.h: q6_K_packed_level), 0..63 as
// signed bytes; each sub-block's dot, minus 32 times its bsum, times its scale is exact int32.
struct PackedQ6K {
    using Block = block_q6_Kx16;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    static constexpr int kTokens = 2;
    // The slice's rows' scales of sub-block `sub` as int32 lanes (sign-extended).
    static int32x4_t scale(const Block& w, int sub, uint8x16_t pick) {
        const uint8x16_t b =
            vqtbl1q_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(w.scales[sub])), pick);
        return vshrq_n_s32(vshlq_n_s32(vreinterpretq_s32_u8(b), 24), 24);
    }
    // Sub-block g's 4 words of the slice: planes 0-2 masked, and word 3 gathered from their top
    // bits by shift-left-and-insert.
    static void words(const Block& w, int g, int sub, int8x16_t* op) {
        uint8x16_t p[3];
        for (int j = 0; j < 3; j++) p[j] = vld1q_u8(w.q[sub][j][4 * g]);
        for (int j = 0; j < 3; j++) op[j] = vreinterpretq_s8_u8(vandq_u8(p[j], vdupq_n_u8(63)));
        const uint8x16_t top12 = vsliq_n_u8(vshrq_n_u8(p[1], 6), vshrq_n_u8(p[2], 6), 2);
        op[3] = vreinterpretq_s8_u8(vsliq_n_u8(vshrq_n_u8(p[0], 6), top12, 2));
    }
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g);
        int32x4_t isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = vdupq_n_s32(0);
        for (int sub = 0; sub < QK_K / 16; sub += 2) {
            int8x16_t op[8];
            words(w, g, sub, op);
            words(w, g, sub + 1, op + 4);
            const int32x4_t sc0 = scale(w, sub, pick), sc1 = scale(w, sub + 1, pick);
            for (int t = 0; t < NT; t++) {
                const int8_t* xq = x[t]->qs + 16 * sub;
                const int32x4_t d0 =
                    vsubq_s32(word_dot(op, vld1q_s8(xq)), vdupq_n_s32(32 * x[t]->bsums[sub]));
                const int32x4_t d1 = vsubq_s32(word_dot(op + 4, vld1q_s8(xq + 16)),
                                               vdupq_n_s32(32 * x[t]->bsums[sub + 1]));
                isum[t] = vmlaq_s32(vmlaq_s32(isum[t], d0, sc0), d1, sc1);
            }
        }
        const float32x4_t wd = load_halves(w.d + 4 * g);
        for (int t = 0; t < NT; t++)
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(wd, x[t]->d));
    }
};

// The grid types' decoded levels (block_gridx16): sub-block j is words 4j..4j+3, the levels plus
// 64 (at most 126: signed bytes as they are), so its dot starts at -64 times its activations'
// sum; times the rows' scale, exact in int32, then one float step.
struct PackedGrid {
    using Block = block_gridx16;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    static constexpr int kTokens = 4;
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g);
        int32x4_t isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = vdupq_n_s32(0);
        for (int j = 0; j < QK_K / 16; j++) {
            int8x16_t op[4];
            for (int i = 0; i < 4; i++)
                op[i] = vreinterpretq_s8_u8(vld1q_u8(w.qs[4 * j + i][4 * g]));
            const int32x4_t sc = vreinterpretq_s32_u8(vqtbl1q_u8(vld1q_u8(w.scales[j]), pick));
            for (int t = 0; t < NT; t++) {
                const int32x4_t dot = vsubq_s32(word_dot(op, vld1q_s8(x[t]->qs + 16 * j)),
                                                vdupq_n_s32(kGridOffset * x[t]->bsums[j]));
                isum[t] = vmlaq_s32(isum[t], dot, sc);
            }
        }
        const float32x4_t wd = vld1q_f32(w.d + 4 * g);
        for (int t = 0; t < NT; t++)
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(wd, x[t]->d));
    }
};

// IQ4_XS: sub-block j is IQ4_NL's nibbles in words 4j..4j+3, looked up as signed levels; its
// exact dot times the rows' signed scale adds up in int32 per row, then one float step.
struct PackedIQ4XS {
    using Block = block_iq4_xsx16;
    using ActBlock = block_q8_K;
    static constexpr int kValues = QK_K;
    // A sub-block's 8 operands serve all tokens: room for four tokens' sums.
    static constexpr int kTokens = 4;
    // iq4_xs_scale on all 16 rows' bytes at once; the slice's four as int32 lanes.
    static int32x4_t scale(const Block& w, int j, uint8x16_t pick) {
        const int8x16_t lo_shift = vdupq_n_s8(static_cast<int8_t>(-4 * (j % 2)));
        const int8x16_t hi_shift = vdupq_n_s8(static_cast<int8_t>(-2 * (j % 4)));
        const uint8x16_t lo =
            vandq_u8(vshlq_u8(vld1q_u8(w.scales_l[j / 2]), lo_shift), vdupq_n_u8(0x0f));
        const uint8x16_t hi =
            vandq_u8(vshlq_u8(vld1q_u8(w.scales_h[j / 4]), hi_shift), vdupq_n_u8(0x03));
        const uint8x16_t sc = vqtbl1q_u8(vorrq_u8(lo, vshlq_n_u8(hi, 4)), pick);
        return vsubq_s32(vreinterpretq_s32_u8(sc), vdupq_n_s32(32));
    }
    template <int NT>
    static void slice(const Block& w, int g, const block_q8_K* const* x, float32x4_t* acc) {
        const uint8x16_t pick = slice_bytes(g);
        int32x4_t isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = vdupq_n_s32(0);
        for (int j = 0; j < QK_K / 32; j++) {
            int8x16_t op[8];
            iq4nl_levels(w.qs + 4 * j, g, op);
            const int32x4_t sc = scale(w, j, pick);
            for (int t = 0; t < NT; t++)
                isum[t] = vmlaq_s32(isum[t], block_dot(op, x[t]->qs + 32 * j), sc);
        }
        const float32x4_t wd = load_halves(w.d + 4 * g);
        for (int t = 0; t < NT; t++)
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(wd, x[t]->d));
    }
};

// Rows r < nr of one token's 16 sums; the group's padding rows are computed but not stored.
void store_rows(float* y, const float32x4_t* v, int nr) {
    float all[kPackRows];
    for (int g = 0; g < 4; g++) vst1q_f32(all + 4 * g, v[g]);
    std::memcpy(y, all, static_cast<size_t>(nr) * sizeof(float));
}

// NT tokens against a group: block column by block column, slice by slice, each row's steps in
// the reference's order whatever NT is.
template <class K, int NT>
void packed_tile(int64_t nb, const typename K::Block* w, const uint8_t* x, size_t x_stride,
                 float* y, int64_t y_stride, int nr) {
    // Bytes ahead to prefetch: the group is one contiguous stream.
    constexpr size_t kAhead = sizeof(typename K::Block) < 1024 ? 4 * sizeof(typename K::Block)
                                                               : sizeof(typename K::Block);
    float32x4_t acc[4][NT];
    for (int g = 0; g < 4; g++) {
        for (int t = 0; t < NT; t++) acc[g][t] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < nb; b++) {
        prefetch_lines<sizeof(typename K::Block)>(reinterpret_cast<const uint8_t*>(w + b) + kAhead);
        const typename K::ActBlock* xb[NT];
        for (int t = 0; t < NT; t++)
            xb[t] = reinterpret_cast<const typename K::ActBlock*>(x + t * x_stride) + b;
        for (int g = 0; g < 4; g++) K::template slice<NT>(w[b], g, xb, acc[g]);
    }
    for (int t = 0; t < NT; t++) {
        const float32x4_t rows[4] = {acc[0][t], acc[1][t], acc[2][t], acc[3][t]};
        store_rows(y + t * y_stride, rows, nr);
    }
}

// packed_tile<K, NT> for NT = count (1 <= count <= Max). The dotprod translation unit has no
// simd_float-inl.h, whose FloatKernels::with_count does this for the float kernels.
template <class K, int Max = K::kTokens>
void packed_tile_n(int count, int64_t nb, const typename K::Block* w, const uint8_t* x,
                   size_t x_stride, float* y, int64_t y_stride, int nr) {
    if constexpr (Max > 1) {
        if (count < Max)
            return packed_tile_n<K, Max - 1>(count, nb, w, x, x_stride, y, y_stride, nr);
    }
    packed_tile<K, Max>(nb, w, x, x_stride, y, y_stride, nr);
}

template <class K>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const typename K::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t += K::kTokens) {
        const int count = nt - t < K::kTokens ? nt - t : K::kTokens;
        packed_tile_n<K>(count, n / K::kValues, wb, xb + t * x_stride, x_stride, y + t * y_stride,
                         y_stride, nr);
    }
}

}  // namespace
}  // namespace ggml_lite
