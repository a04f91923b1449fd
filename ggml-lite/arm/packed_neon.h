// NEON packed-weight kernels (packed.h, kernels.h: PackedKernels).
//
// Not a standalone header: kernels_neon.cpp includes it inside its anonymous namespace, after
// its helpers (half_to_float, quantize_q8_0, LoadF16, ...), so that these kernels are compiled
// in both of its translation units like the rest: the integer kernels with and without sdot,
// the quantizers and float kernels (which need neither) only in the baseline one. For the same
// reason it includes nothing itself; kernels_neon.cpp includes packed.h.
//
// A 64-byte packed word is four 128-bit registers: register g holds rows 4g..4g+3, one row per
// 32-bit lane (a "slice" of the group). A kernel takes the group slice by slice within each
// block column, so each slice's weight registers serve up to four tokens, and every float
// accumulator lane belongs to one row: nothing is summed horizontally.
#pragma once

// ---- Q4_0 and Q8_0 ----------------------------------------------------------------------------
//
// Per block column and slice, eight signed operands: a[i] faces activation bytes 4i..4i+3 and
// b[i] bytes 16 + 4i..16 + 4i + 3 (i < 4), so the activation's two 16-byte halves are the two
// registers whose 32-bit lane i is the word each operand meets.

struct PackedQ4 {
    using Block = block_q4_0x16;
    // The levels q (0..15) are valid signed bytes; the reference's integer is c + sum q x
    // with c = -8 sum x, so c is added to the sum of products.
    static constexpr bool kAddCorrection = true;
    static void load(const Block& w, int g, int8x16_t* a, int8x16_t* b) {
        const uint8x16_t mask = vdupq_n_u8(0x0f);
        for (int i = 0; i < 4; i++) {
            const uint8x16_t v = vld1q_u8(w.qs[i][4 * g]);
            a[i] = vreinterpretq_s8_u8(vandq_u8(v, mask));  // elements 4i..4i+3
            b[i] = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));   // elements 16 + 4i..
        }
    }
};

struct PackedQ8 {
    using Block = block_q8_0x16;
    // Stored as w + 128: xor 0x80 gives w back, and sum w x is exactly the reference's
    // c + sum (w + 128) x with c = -128 sum x, so c is not read.
    static constexpr bool kAddCorrection = false;
    static void load(const Block& w, int g, int8x16_t* a, int8x16_t* b) {
        const uint8x16_t flip = vdupq_n_u8(0x80);
        for (int i = 0; i < 4; i++) {
            a[i] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(w.qs[i][4 * g]), flip));
            b[i] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(w.qs[i + 4][4 * g]), flip));
        }
    }
};

#if !defined(__ARM_FEATURE_DOTPROD)
// Word I of both operand sets without sdot: bytes times the word broadcast into int16, a[I]'s
// and b[I]'s products added there (each at most 128 * 127 in magnitude: the activations are
// within +-127, so two fit int16), then pairs into int32. lo's lanes 0-1 collect row 4g, 2-3
// row 4g + 1; hi's the rows 4g + 2 and 4g + 3.
template <int I>
void widen_word(int32x4_t& lo, int32x4_t& hi, int8x16_t a, int8x16_t b, int8x16_t x0,
                int8x16_t x1) {
    const int8x16_t xa = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(x0), I));
    const int8x16_t xb = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(x1), I));
    lo = vpadalq_s16(
        lo, vmlal_s8(vmull_s8(vget_low_s8(a), vget_low_s8(xa)), vget_low_s8(b), vget_low_s8(xb)));
    hi = vpadalq_s16(hi, vmlal_high_s8(vmull_high_s8(a, xa), b, xb));
}
#endif

// sum over i of a[i] . (activation word i) + b[i] . (word 4 + i), one int32 lane per row.
int32x4_t slice_dot(const int8x16_t* a, const int8x16_t* b, const int8_t* xq) {
    const int8x16_t x0 = vld1q_s8(xq), x1 = vld1q_s8(xq + 16);
#if defined(__ARM_FEATURE_DOTPROD)
    // sdot by element: 4 bytes of each row times lane i's 4 bytes, like vpdpbusd per row; two
    // chains of four.
    int32x4_t s0 = vdotq_laneq_s32(vdupq_n_s32(0), a[0], x0, 0);
    int32x4_t s1 = vdotq_laneq_s32(vdupq_n_s32(0), b[0], x1, 0);
    s0 = vdotq_laneq_s32(s0, a[1], x0, 1);
    s1 = vdotq_laneq_s32(s1, b[1], x1, 1);
    s0 = vdotq_laneq_s32(s0, a[2], x0, 2);
    s1 = vdotq_laneq_s32(s1, b[2], x1, 2);
    s0 = vdotq_laneq_s32(s0, a[3], x0, 3);
    s1 = vdotq_laneq_s32(s1, b[3], x1, 3);
    return vaddq_s32(s0, s1);
#else
    int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
    widen_word<0>(lo, hi, a[0], b[0], x0, x1);
    widen_word<1>(lo, hi, a[1], b[1], x0, x1);
    widen_word<2>(lo, hi, a[2], b[2], x0, x1);
    widen_word<3>(lo, hi, a[3], b[3], x0, x1);
    return vpaddq_s32(lo, hi);  // rows 4g..4g+3
#endif
}

// Rows r < nr of one token's 16 sums; the group's padding rows are computed but not stored.
void store_rows(float* y, const float32x4_t* v, int nr) {
    float all[kPackRows];
    for (int g = 0; g < 4; g++) vst1q_f32(all + 4 * g, v[g]);
    std::memcpy(y, all, static_cast<size_t>(nr) * sizeof(float));
}

// Tokens per pass: four slices' float accumulators each, 16 registers; the eight operands of a
// slice and the activations take most of the rest.
constexpr int kPackedQuantTokens = 4;

template <class P, int NT>
void packed_tile(int64_t nb, const typename P::Block* w, const uint8_t* x, size_t x_stride,
                 float* y, int64_t y_stride, int nr) {
    // Block columns ahead to prefetch: the group is one contiguous stream.
    constexpr int64_t kAhead = 4;
    float32x4_t acc[NT][4];
    for (int t = 0; t < NT; t++) {
        for (int g = 0; g < 4; g++) acc[t][g] = vdupq_n_f32(0.0f);
    }
    for (int64_t b = 0; b < nb; b++) {
        prefetch_lines<sizeof(typename P::Block)>(reinterpret_cast<const uint8_t*>(w + b + kAhead));
        const block_q8_0c* xb[NT];
        for (int t = 0; t < NT; t++)
            xb[t] = reinterpret_cast<const block_q8_0c*>(x + t * x_stride) + b;
        for (int g = 0; g < 4; g++) {
            int8x16_t op_a[4], op_b[4];
            P::load(w[b], g, op_a, op_b);
            const float32x4_t wd = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(w[b].d + 4 * g)));
            for (int t = 0; t < NT; t++) {
                int32x4_t s = slice_dot(op_a, op_b, xb[t]->qs);
                if constexpr (P::kAddCorrection) s = vaddq_s32(s, vdupq_n_s32(xb[t]->c));
                // The reference's fma(sum, d_w * d_x, acc), row by row.
                acc[t][g] = vfmaq_f32(acc[t][g], vcvtq_f32_s32(s), vmulq_n_f32(wd, xb[t]->d));
            }
        }
    }
    for (int t = 0; t < NT; t++) store_rows(y + t * y_stride, acc[t], nr);
}

// packed_tile<P, NT> for NT = count (1 <= count <= Max). The dotprod translation unit has no
// simd_float.h, whose FloatKernels::with_count does this for the float kernels.
template <class P, int Max = kPackedQuantTokens>
void packed_tile_n(int count, int64_t nb, const typename P::Block* w, const uint8_t* x,
                   size_t x_stride, float* y, int64_t y_stride, int nr) {
    if constexpr (Max > 1) {
        if (count < Max)
            return packed_tile_n<P, Max - 1>(count, nb, w, x, x_stride, y, y_stride, nr);
    }
    packed_tile<P, Max>(nb, w, x, x_stride, y, y_stride, nr);
}

template <class P>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const typename P::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t += kPackedQuantTokens) {
        const int count = nt - t < kPackedQuantTokens ? nt - t : kPackedQuantTokens;
        packed_tile_n<P>(count, n / QK8_0, wb, xb + t * x_stride, x_stride, y + t * y_stride,
                         y_stride, nr);
    }
}

#if !defined(LILA_NEON_DOTPROD_TU)

// quantize_q8_0's bytes (bit-identical to the reference), the scale as float and
// c = -Offset sum(qs).
template <int Offset>
void quantize_q8_0c(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0c*>(vy);
    for (int64_t b = 0; b < n / QK8_0; b++) {
        block_q8_0 q;
        quantize_q8_0(x + b * QK8_0, &q, QK8_0);
        y[b].d = half_to_float(q.d);
        y[b].c = -Offset * (vaddlvq_s8(vld1q_s8(q.qs)) + vaddlvq_s8(vld1q_s8(q.qs + 16)));
        std::memcpy(y[b].qs, q.qs, QK8_0);
    }
}

// ---- F32, F16, BF16 ---------------------------------------------------------------------------
//
// Column c of a group is 16 values, four registers; times the column's activation it is one
// FMA per slice, into partial sum c % 4 as the reference does. Four partials of four slices
// are 16 registers for one token, so a pass takes S slices of NT tokens with S * NT <= 4:
// decode reads each weight line once, prefill reuses each weight register for up to 4 tokens.
template <class L, int NT>
void packed_float_tile(int64_t n, const typename L::Elem* w, const uint8_t* x, size_t x_stride,
                       float* y, int64_t y_stride, int nr) {
    constexpr int S = NT == 1 ? 4 : NT == 2 ? 2 : 1;
    const auto xt = [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride); };
    const auto column = [&](int64_t c, int g) -> float32x4_t {
        return L::load(w + c * kPackRows + 4 * g);
    };
    float32x4_t sums[NT][4];
    for (int g0 = 0; g0 < 4; g0 += S) {
        float32x4_t acc[NT][S][4];
        for (int t = 0; t < NT; t++) {
            for (int s = 0; s < S; s++) {
                for (int k = 0; k < 4; k++) acc[t][s][k] = vdupq_n_f32(0.0f);
            }
        }
        int64_t c = 0;
        for (; c + 4 <= n; c += 4) {
            // The next lines of the group: four columns are 1-4 of them.
            prefetch_lines<4 * kPackRows * sizeof(typename L::Elem)>(
                reinterpret_cast<const uint8_t*>(w + (c + 16) * kPackRows));
            for (int s = 0; s < S; s++) {
                float32x4_t wv[4];
                for (int k = 0; k < 4; k++) wv[k] = column(c + k, g0 + s);
                for (int t = 0; t < NT; t++) {
                    for (int k = 0; k < 4; k++)
                        acc[t][s][k] = vfmaq_n_f32(acc[t][s][k], wv[k], xt(t)[c + k]);
                }
            }
        }
        for (; c < n; c++) {
            for (int s = 0; s < S; s++) {
                const float32x4_t wv = column(c, g0 + s);
                for (int t = 0; t < NT; t++)
                    acc[t][s][c % 4] = vfmaq_n_f32(acc[t][s][c % 4], wv, xt(t)[c]);
            }
        }
        for (int t = 0; t < NT; t++) {
            for (int s = 0; s < S; s++) {
                sums[t][g0 + s] = vaddq_f32(vaddq_f32(acc[t][s][0], acc[t][s][1]),
                                            vaddq_f32(acc[t][s][2], acc[t][s][3]));
            }
        }
    }
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

#endif
