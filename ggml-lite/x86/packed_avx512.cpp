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

// l1_lead: whether the weights are also prefetched into L1 (cpu.h: PrefetchPolicy::block_l1).
template <class P, int NT>
void packed_tile(int64_t nb, const typename P::Block* w, const uint8_t* x, size_t x_stride,
                 float* y, int64_t y_stride, __mmask16 rows, bool l1_lead) {
    // Blocks ahead to prefetch into L1 and kFarAhead bytes ahead into L2: the group is one
    // contiguous stream, but the lead keeps enough lines in flight when one thread streams
    // alone.
    constexpr int64_t kAhead = 8;
    // Tokens whose vpdpbusd chains are interleaved: a chain is 8 dependent instructions of
    // latency 5, so four side by side keep both vector ports busy.
    constexpr int kChains = 4;
    __m512 acc[NT];
    for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const auto* wb = reinterpret_cast<const uint8_t*>(w + b);
        if (l1_lead)
            prefetch_lines<sizeof(typename P::Block)>(wb + kAhead * sizeof(typename P::Block));
        prefetch_lines<sizeof(typename P::Block), 2>(wb + kFarAhead);
        __m512i op[8];
        P::load(w[b], op);
        const __m512 wd =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].d)));
        using Act = typename P::Act;
        constexpr bool kMin = std::is_same_v<Act, block_q8_1c>;
        const auto act = [&](int t) -> const Act& {
            return reinterpret_cast<const Act*>(x + t * x_stride)[b];
        };
        const auto word = [&](int t, int i) {
            int32_t v;
            __builtin_memcpy(&v, act(t).qs + 4 * i, 4);
            return _mm512_set1_epi32(v);
        };
        // The integer sum starts from the correction; block_q8_1c has none.
        const auto start = [&](int t) {
            if constexpr (kMin) {
                return _mm512_setzero_si512();
            } else {
                return _mm512_set1_epi32(act(t).c);
            }
        };
        const __m512 wm = [&] {  // the rows' minimums (Q4_1, Q5_1)
            if constexpr (kMin) {
                return _mm512_cvtph_ps(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].m)));
            } else {
                return _mm512_setzero_ps();
            }
        }();
        const auto finish = [&](int t, __m512i sum) {
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum),
                                     _mm512_mul_ps(wd, _mm512_set1_ps(act(t).d)), acc[t]);
            if constexpr (kMin) acc[t] = _mm512_fmadd_ps(wm, _mm512_set1_ps(act(t).s), acc[t]);
        };
        if constexpr (NT == 1) {
            // One token: its sum as two chains of four.
            __m512i s0 = start(0), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) {
                s0 = _mm512_dpbusd_epi32(s0, op[i], word(0, i));
                s1 = _mm512_dpbusd_epi32(s1, op[i + 4], word(0, i + 4));
            }
            finish(0, _mm512_add_epi32(s0, s1));
        } else {
            // Unrolled, so that acc[] and s[] live in registers.
#pragma GCC unroll 16
            for (int t0 = 0; t0 < NT; t0 += kChains) {
                constexpr int kMax = kChains;
                __m512i s[kMax];
#pragma GCC unroll 4
                for (int g = 0; g < kMax; g++) {
                    if (t0 + g < NT) s[g] = start(t0 + g);
                }
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
#pragma GCC unroll 4
                    for (int g = 0; g < kMax; g++) {
                        if (t0 + g < NT) s[g] = _mm512_dpbusd_epi32(s[g], op[i], word(t0 + g, i));
                    }
                }
#pragma GCC unroll 4
                for (int g = 0; g < kMax; g++) {
                    if (t0 + g < NT) finish(t0 + g, s[g]);
                }
            }
        }
    }
    for (int t = 0; t < NT; t++) _mm512_mask_storeu_ps(y + t * y_stride, rows, acc[t]);
}

template <class P>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wb = static_cast<const typename P::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    const bool l1_lead = prefetch_policy().block_l1;
    FK::with_count<kPackTokens>(nt, [&]<int NT>() {
        packed_tile<P, NT>(n / QK8_0, wb, xb, x_stride, y, y_stride, rows, l1_lead);
    });
}

// Float weights: a 4-column block of the group is 16 rows of 4 values (packed.h), four vectors:
// lane 4i + k of vector q = row 4q + i, column c + k, the reference's partial sum k. A token's
// x[c..c + 3] in every 128-bit lane is one load (vbroadcastf32x4) for the four vectors, so a
// pass of all 16 rows against NT tokens is 4 weight loads and NT broadcasts per 4 NT FMAs.
// Tokens per pass: 24 accumulators, 4 weight vectors and a broadcast in 32 registers.
constexpr int kFloatTokens = 6;

// prefetch: whether the pass prefetches the weights (cpu.h: PrefetchPolicy::float_decode).
template <class P, int NT>
void packed_float_tile(int64_t n, const typename P::Elem* w, const uint8_t* x, size_t x_stride,
                       float* y, int64_t y_stride, __mmask16 rows, bool prefetch) {
    using Elem = typename P::Elem;
    // The fixed-count loops are unrolled so that acc[] lives in registers: GCC 12 otherwise
    // stores every accumulator to the stack at every step.
    __m512 acc[NT][4];
#pragma GCC unroll 16
    for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
        for (int q = 0; q < 4; q++) acc[t][q] = _mm512_setzero_ps();
    }
    // One 4-column block (16 rows of 4 values at wb) against the tokens' 4 activations at xc(t).
    const auto step = [&](const Elem* wb, auto xc) {
        __m512 wv[4];
#pragma GCC unroll 16
        for (int q = 0; q < 4; q++) wv[q] = P::load(wb + 16 * q);
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            const __m512 xv = _mm512_broadcast_f32x4(_mm_loadu_ps(xc(t)));
#pragma GCC unroll 16
            for (int q = 0; q < 4; q++) acc[t][q] = _mm512_fmadd_ps(wv[q], xv, acc[t][q]);
        }
    };
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        // Every line 2 KiB ahead into L1 and kFarAhead into L2: a lead on top of the hardware
        // prefetchers.
        const auto* wb = w + c * kPackRows;
        if (prefetch) prefetch_float_block(wb);
        step(wb, [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride) + c; });
    }
    if (c < n) {
        const FloatTail<Elem, NT> tail(n, w, x, x_stride);
        step(tail.w, [&](int t) { return tail.x[t]; });
    }
    // Two in-lane pair sums make (p0 + p1) + (p2 + p3) with lane 4i + q = row 4q + i; one
    // permutation puts the rows in order.
    const auto pair_sums = [](__m512 a, __m512 b) {
        return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    };
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
#pragma GCC unroll 16
    for (int t = 0; t < NT; t++) {
        const __m512 sum =
            pair_sums(pair_sums(acc[t][0], acc[t][1]), pair_sums(acc[t][2], acc[t][3]));
        _mm512_mask_storeu_ps(y + t * y_stride, rows, _mm512_permutexvar_ps(order, sum));
    }
}

template <class P>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wc = static_cast<const typename P::Elem*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    const bool prefetch = nt > 1 || prefetch_policy().float_decode;
    for (int t = 0; t < nt; t += kFloatTokens) {
        FK::with_count<kFloatTokens>(nt - t < kFloatTokens ? nt - t : kFloatTokens, [&]<int NT>() {
            packed_float_tile<P, NT>(n, wc, xb + t * x_stride, x_stride, y + t * y_stride, y_stride,
                                     rows, prefetch);
        });
    }
}

}  // namespace

void packed_gemm_q8_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ8>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q4_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ4>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q5_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ5>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_iq4_nl(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                        int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedIQ4NL>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q4_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ4_1>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q5_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_gemm<PackedQ5_1>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_f32(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadF32<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_f16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadF16<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_bf16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    packed_float_gemm<LoadBF16<Arch>>(n, w, x, x_stride, y, y_stride, nr, nt);
}

}  // namespace ggml_lite::avx512
