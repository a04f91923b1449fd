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

// The 8 unsigned operands of a block column; operand i pairs with activation bytes 4i..4i+3,
// i.e. holds elements 4i..4i+3 of every row. Each type differs only in how it makes them from
// the block column and in its activation block: block_q8_0c, whose correction c undoes the
// offset, or block_q8_1c (Q4_1, Q5_1), whose s meets the rows' minimums.

// The nibbles of Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL: the low ones of words 0-3 (elements 4m..),
// then the high ones (16 + 4m..).
void packed_nibbles(const uint8_t (*qs)[kPackRows][4], __m512i* op) {
    const __m512i mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        const __m512i v = _mm512_loadu_si512(qs[m]);
        op[m] = _mm512_and_si512(v, mask);
        op[m + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
    }
}

// Q5_0 and Q5_1: the fifth bits to bit 4 of the nibbles. Element 4i + k's bit is bit i of byte k
// of the row's word (packed.h): the word shifted by 4 - i puts operand i's at bit 4 of each byte,
// and one ternary-logic step ors it in (0xf8: op | (shifted & bit4)).
void add_packed_fifth_bits(const uint8_t (*qh)[4], __m512i* op) {
    const __m512i v = _mm512_loadu_si512(qh);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        const __m512i at4 = i < 4 ? _mm512_slli_epi32(v, 4 - i) : _mm512_srli_epi32(v, i - 4);
        op[i] = _mm512_ternarylogic_epi32(op[i], at4, bit4, 0xf8);
    }
}

// Q4_0, Q4_1, Q5_0, Q5_1: the nibbles, with the fifth bits where the block has them.
template <class B, class A, bool FifthBits>
struct PackedNibbles {
    using Block = B;
    using Act = A;
    static void load(const Block& w, __m512i* op) {
        packed_nibbles(w.qs, op);
        if constexpr (FifthBits) add_packed_fifth_bits(w.qh, op);
    }
};
using PackedQ4 = PackedNibbles<block_q4_0x16, block_q8_0c, false>;
using PackedQ5 = PackedNibbles<block_q5_0x16, block_q8_0c, true>;
using PackedQ4_1 = PackedNibbles<block_q4_1x16, block_q8_1c, false>;
using PackedQ5_1 = PackedNibbles<block_q5_1x16, block_q8_1c, true>;

// IQ4_NL: the nibbles looked up in the table of levels plus 128.
struct PackedIQ4NL {
    using Block = block_iq4_nlx16;
    using Act = block_q8_0c;
    static void load(const Block& w, __m512i* op) {
        const __m512i table = iq4nl_table_u8();
        packed_nibbles(w.qs, op);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) op[i] = _mm512_shuffle_epi8(table, op[i]);
    }
};

struct PackedQ8 {  // stored as w + 128 already
    using Block = block_q8_0x16;
    using Act = block_q8_0c;
    static void load(const Block& w, __m512i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) op[m] = _mm512_loadu_si512(w.qs[m]);
    }
};

// The weight side of block column w: its 8 operands, the rows' scales and (Q4_1, Q5_1) minimums.
template <class P>
struct BlockColumn {
    __m512i op[8];
    __m512 d, m;
    explicit BlockColumn(const typename P::Block& w) {
        P::load(w, op);
        d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.d)));
        if constexpr (std::is_same_v<typename P::Act, block_q8_1c>) {
            m = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.m)));
        }
    }
};

// The activation block's word i (bytes 4i..4i + 3) in every lane.
template <class Act>
__m512i act_word(const Act& a, int i) {
    int32_t v;
    __builtin_memcpy(&v, a.qs + 4 * i, 4);
    return _mm512_set1_epi32(v);
}

// A token's integer sum starts from the correction; block_q8_1c has none.
template <class Act>
__m512i start_sum(const Act& a) {
    if constexpr (std::is_same_v<Act, block_q8_1c>) {
        return _mm512_setzero_si512();
    } else {
        return _mm512_set1_epi32(a.c);
    }
}

// acc plus the block's term for the token whose integer dot is sum.
template <class P>
__m512 finish_block(const BlockColumn<P>& c, const typename P::Act& a, __m512i sum, __m512 acc) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(c.d, _mm512_set1_ps(a.d)), acc);
    if constexpr (std::is_same_v<typename P::Act, block_q8_1c>) {
        acc = _mm512_fmadd_ps(c.m, _mm512_set1_ps(a.s), acc);
    }
    return acc;
}

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
