// AVX-512 VNNI kernels for packed 32-value block weights (packed.h: block_q8_0x16, block_q4_0x16,
// block_q5_0x16, block_q4_1x16, block_q5_1x16, block_iq4_nlx16) against block_q8_0c / block_q8_1c
// activations, and for packed F32, F16 and BF16 weights against F32 activations.
//
// Compiled with -mavx512*: only the entry points have external linkage (see
// kernels_avx512.cpp on why nothing else may be shared with the portable code).
#include <immintrin.h>

#include "ggml-lite/cpu.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/packed_avx512.h"
#include "ggml-lite/x86/packed_blocks_avx512-inl.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite::avx512 {
namespace {

using Arch = Avx512;
using FK = FloatKernels<Arch>;

// ---- Packed weights (packed.h) ----------------------------------------------------------------
//
// Sixteen rows per group, one int32 lane per row: a block column is 8 vpdpbusd, each 4 bytes
// of all 16 rows times 4 activation bytes broadcast from memory, then one conversion and one
// FMA per token (two with Q4_1's and Q5_1's minimums). The weight operands (Q4_0's nibbles
// split, Q5_0's with the fifth bits, IQ4_NL's looked up in its table) are loaded once per block
// column for up to kPackTokens tokens, and nothing is summed horizontally.

// One token against G groups (decode; PackedKernels::gemv2 for G = 2), each group's sum as two
// chains of four vpdpbusd per block. The groups' blocks are interleaved: one core reads two
// streams far apart faster than one (a Zen 5 core 23.8 -> 32.3 GB/s in a scratch loop of Q8_0
// block columns, the probe's rate; docs/perf-log.md).
template <class P, int G>
void packed_decode(int64_t nb, const typename P::Block* const* w, const uint8_t* x, float* const* y,
                   const __mmask16* rows, Lead lead) {
    const auto* xa = reinterpret_cast<const typename P::Act*>(x);
    __m512 acc[G];
    for (int g = 0; g < G; g++) acc[g] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            prefetch_block(w[g] + b, lead);
            const BlockColumn<P> c(w[g][b]);
            __m512i s0 = start_sum(xa[b]), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) {
                s0 = _mm512_dpbusd_epi32(s0, c.op[i], act_word(xa[b], i));
                s1 = _mm512_dpbusd_epi32(s1, c.op[i + 4], act_word(xa[b], i + 4));
            }
            acc[g] = finish_block(c, xa[b], _mm512_add_epi32(s0, s1), acc[g]);
        }
    }
    for (int g = 0; g < G; g++) _mm512_mask_storeu_ps(y[g], rows[g], acc[g]);
}

// NT >= 2 tokens against one group.
template <class P, int NT>
void packed_tile(int64_t nb, const typename P::Block* w, const uint8_t* x, size_t x_stride,
                 float* y, int64_t y_stride, __mmask16 rows) {
    // Tokens whose vpdpbusd chains are interleaved: a chain is 8 dependent instructions of
    // latency 5, so four side by side keep both vector ports busy.
    constexpr int kChains = 4;
    using Act = typename P::Act;
    __m512 acc[NT];
    for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        prefetch_block(w + b, Lead::L1AndL2);
        const BlockColumn<P> c(w[b]);
        const auto act = [&](int t) -> const Act& {
            return reinterpret_cast<const Act*>(x + t * x_stride)[b];
        };
        // Unrolled, so that acc[] and s[] live in registers.
#pragma GCC unroll 16
        for (int t0 = 0; t0 < NT; t0 += kChains) {
            constexpr int kMax = kChains;
            __m512i s[kMax];
#pragma GCC unroll 4
            for (int g = 0; g < kMax; g++) {
                if (t0 + g < NT) s[g] = start_sum(act(t0 + g));
            }
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++) {
#pragma GCC unroll 4
                for (int g = 0; g < kMax; g++) {
                    if (t0 + g < NT) {
                        s[g] = _mm512_dpbusd_epi32(s[g], c.op[i], act_word(act(t0 + g), i));
                    }
                }
            }
#pragma GCC unroll 4
            for (int g = 0; g < kMax; g++) {
                if (t0 + g < NT) acc[t0 + g] = finish_block(c, act(t0 + g), s[g], acc[t0 + g]);
            }
        }
    }
    for (int t = 0; t < NT; t++) _mm512_mask_storeu_ps(y + t * y_stride, rows, acc[t]);
}

template <class P>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const __mmask16 rows = row_mask(nr);
    const auto* wb = static_cast<const typename P::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    FK::with_count<kPackTokens>(nt, [&]<int NT>() {
        if constexpr (NT == 1) {
            packed_decode<P, 1>(n / QK8_0, &wb, xb, &y, &rows, pass_lead(1, Pass::Vpdpbusd));
        } else {
            packed_tile<P, NT>(n / QK8_0, wb, xb, x_stride, y, y_stride, rows);
        }
    });
}

template <class P>
void packed_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0, float* y1,
                  int nr0, int nr1) {
    const TwoGroups<typename P::Block, __mmask16> g(w0, w1, y0, y1, row_mask(nr0), row_mask(nr1));
    packed_decode<P, 2>(n / QK8_0, g.w, static_cast<const uint8_t*>(x), g.y, g.rows,
                        pass_lead(1, Pass::Vpdpbusd));
}

// Float weights: a 4-column block of the group is 16 rows of 4 values (packed.h), four vectors:
// lane 4i + k of vector q = row 4q + i, column c + k, the reference's partial sum k. A token's
// x[c..c + 3] in every 128-bit lane is one load (vbroadcastf32x4) for the four vectors, so a
// pass of all 16 rows against NT tokens is 4 weight loads and NT broadcasts per 4 NT FMAs.
// Tokens per pass: 24 accumulators, 4 weight vectors and a broadcast in 32 registers.
constexpr int kFloatTokens = 6;

// NT tokens against G groups (G = 2 only for one token: PackedKernels::gemv2, the groups'
// blocks interleaved, two streams far apart). lead: how the pass prefetches the weights
// (pass_lead).
template <class P, int NT, int G>
void packed_float_tile(int64_t n, const typename P::Elem* const* w, const uint8_t* x,
                       size_t x_stride, float* const* y, int64_t y_stride, const __mmask16* rows,
                       Lead lead) {
    static_assert(G == 1 || NT == 1);
    using Elem = typename P::Elem;
    // The fixed-count loops are unrolled so that acc[] lives in registers: GCC 12 otherwise
    // stores every accumulator to the stack at every step.
    __m512 acc[G][NT][4];
#pragma GCC unroll 16
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
            for (int q = 0; q < 4; q++) acc[g][t][q] = _mm512_setzero_ps();
        }
    }
    // One 4-column block of group g (16 rows of 4 values at wb) against the tokens' 4
    // activations at xc(t).
    const auto step = [&](int g, const Elem* wb, auto xc) {
        __m512 wv[4];
#pragma GCC unroll 16
        for (int q = 0; q < 4; q++) wv[q] = P::load(wb + 16 * q);
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            const __m512 xv = _mm512_broadcast_f32x4(_mm_loadu_ps(xc(t)));
#pragma GCC unroll 16
            for (int q = 0; q < 4; q++) acc[g][t][q] = _mm512_fmadd_ps(wv[q], xv, acc[g][t][q]);
        }
    };
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            // Every line 2 KiB ahead into L1 and kFarAhead into L2: a lead on top of the
            // hardware prefetchers.
            const auto* wb = w[g] + c * kPackRows;
            prefetch_float_block(wb, lead);
            step(g, wb,
                 [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride) + c; });
        }
    }
    if (c < n) {
        for (int g = 0; g < G; g++) {
            const FloatTail<Elem, NT> tail(n, w[g], x, x_stride);
            step(g, tail.w, [&](int t) { return tail.x[t]; });
        }
    }
    // Two in-lane pair sums make (p0 + p1) + (p2 + p3) with lane 4i + q = row 4q + i; one
    // permutation puts the rows in order.
    const auto pair_sums = [](__m512 a, __m512 b) {
        return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    };
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            const __m512 sum = pair_sums(pair_sums(acc[g][t][0], acc[g][t][1]),
                                         pair_sums(acc[g][t][2], acc[g][t][3]));
            _mm512_mask_storeu_ps(y[g] + t * y_stride, rows[g], _mm512_permutexvar_ps(order, sum));
        }
    }
}

template <class P>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const __mmask16 rows = row_mask(nr);
    const auto* wc = static_cast<const typename P::Elem*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    const Lead lead = pass_lead(nt, Pass::Fma);
    for (int t = 0; t < nt; t += kFloatTokens) {
        float* yt = y + t * y_stride;
        FK::with_count<kFloatTokens>(nt - t < kFloatTokens ? nt - t : kFloatTokens, [&]<int NT>() {
            packed_float_tile<P, NT, 1>(n, &wc, xb + t * x_stride, x_stride, &yt, y_stride, &rows,
                                        lead);
        });
    }
}

template <class P>
void packed_float_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                        float* y1, int nr0, int nr1) {
    const TwoGroups<typename P::Elem, __mmask16> g(w0, w1, y0, y1, row_mask(nr0), row_mask(nr1));
    packed_float_tile<P, 1, 2>(n, g.w, static_cast<const uint8_t*>(x), 0, g.y, 0, g.rows,
                               pass_lead(1, Pass::Fma));
}

}  // namespace

void packed_gemm_q8_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ8>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_q8_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_gemv2<PackedQ8>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_q4_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ4>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_q4_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_gemv2<PackedQ4>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_q5_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ5>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_q5_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_gemv2<PackedQ5>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_iq4_nl(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                        int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedIQ4NL>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_iq4_nl(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                         float* y1, int nr0, int nr1) {
    packed_gemv2<PackedIQ4NL>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_q4_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ4_1>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_q4_1(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_gemv2<PackedQ4_1>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_q5_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ5_1>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_q5_1(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_gemv2<PackedQ5_1>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_f32(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadF32<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_f32(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                      float* y1, int nr0, int nr1) {
    packed_float_gemv2<LoadF32<Arch>>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_f16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadF16<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_f16(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                      float* y1, int nr0, int nr1) {
    packed_float_gemv2<LoadF16<Arch>>(n, w0, w1, x, y0, y1, nr0, nr1);
}

void packed_gemm_bf16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadBF16<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_bf16(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    packed_float_gemv2<LoadBF16<Arch>>(n, w0, w1, x, y0, y1, nr0, nr1);
}

}  // namespace ggml_lite::avx512
