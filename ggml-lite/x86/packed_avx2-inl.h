// What the AVX2 packed-weight translation units share (packed_avx2.cpp, packed_q23_avx2.cpp):
// the layout of a group as two halves, the activation word broadcast, and the k-quant tile loop
// that each k-quant's unit type plugs into.
//
// A 16-row group is two 256-bit halves, rows 0-7 and rows 8-15 of every 64-byte word or
// column, one int32 or float lane per row, so nothing is summed horizontally. AVX2 has no
// vpdpbusd: a 4-byte dot per lane is vpmaddubsw (unsigned weight bytes times the token's
// 4 activation bytes broadcast, int16 pair sums) then vpmaddwd with ones or with the rows'
// scales. The avx2_vnni copies (LILA_AVX2_VNNI, packed_avx2.h) make it one vpdpbusd, exact in
// int32, with no int16 step to widen.
//
// Include only from those translation units (compiled with -mavx2 -mfma -mf16c, and -mavxvnni
// for the avx2_vnni copies): everything here has internal linkage, for the reasons
// simd_float-inl.h gives.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/packed_avx2.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite::LILA_AVX2_NS {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

using FK = FloatKernels<Avx2>;

constexpr int kHalfRows = kPackRows / 2;

// Stores the first nr (<= 8 used) lanes of v: the last group of a matrix has padding rows
// whose results must not be written.
void store_rows(float* y, __m256 v, int nr) {
    if (nr >= kHalfRows) {
        _mm256_storeu_ps(y, v);
    } else {
        const __m256i mask =
            _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(y, mask, v);
    }
}

// The halves a group of nr rows has: one of at most 8 rows skips rows 8-15.
int halves(int nr) {
    return nr > kHalfRows ? 2 : 1;
}

// The magnitudes of 32 activation bytes qs, into mag (the kernels with kMagnitudes).
inline void magnitudes(const int8_t* qs, int8_t* mag) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs));
    _mm256_store_si256(reinterpret_cast<__m256i*>(mag), _mm256_abs_epi8(v));
}

// Whether a kernel's levels take the activations' signs, vpmaddubsw's unsigned operand being the
// activations' magnitudes (IQ4_NL, IQ4_XS), made once per block for every token and half.
template <class P>
constexpr bool kMagnitudes = requires {
    requires P::kMagnitudes;
};

// Activation bytes p[0..3] in every lane: the signed operand that meets 4 bytes of each row.
__m256i word(const int8_t* p) {
    return _mm256_broadcastd_epi32(_mm_loadu_si32(p));
}

// p, as far as the compiler can tell, changed: the loads through it stay where they are written.
// With k_tile's units unrolled, GCC 12 otherwise hoisted a token's 64 activation words out of the
// halves' loop as scalars, spilling them to the stack (bench-kernels matvec/q5_k took 1.45-1.57x
// as long, perf-log.md).
template <class T>
T* opaque(T* p) {
    __asm__("" : "+r"(p));
    return p;
}

// ---- The k-quants ------------------------------------------------------------------------------
//
// A super-block column against Q8_K activations, half by half, in 8 units of 32 values: unit u
// is 8 words (word m pairs with activation bytes 32u + 4m..), unpacked once for all tokens into
// K::kOps operands, K::factors giving word m's two byte operands. A unit's dots add up in groups
// (sum_words: as many words as stay exact in int16, or with vpdpbusd as many as share a scale), and
// one step per group against the rows' scale (in both int16 halves of each lane) gives scale * dot
// in int32. So a super-block's integer sums are exact before its float steps, as the reference's.

constexpr int kUnits = QK_K / 32;

// A 4-byte dot's operands per int32 lane: u unsigned, s signed.
struct Factors {
    __m256i u, s;
};

#if defined(LILA_AVX2_VNNI)
// p plus the dots of f, in int32: vpdpbusd, exact.
__m256i add_dot(__m256i p, Factors f) {
    return _mm256_dpbusd_avx_epi32(p, f.u, f.s);
}
// p's int32 sums times the rows' scales (the high int16 of each lane, sign-extended).
__m256i scaled(__m256i p, __m256i sc) {
    return _mm256_mullo_epi32(p, _mm256_srai_epi32(sc, 16));
}
// Words a group sums: all that share a scale.
template <class K>
constexpr int sum_words() {
    return K::kScaleWords;
}
// The sums a group's words go into: 8 words in two chains, each half as long (bench-kernels
// matmul, one thread: Q4_K 6%, Q5_K 4% faster), fewer in one (Q6_K's 2 words 25% slower in two,
// Q2_K's and Q3_K's 4 level).
template <class K>
constexpr int chains() {
    return sum_words<K>() >= 8 ? 2 : 1;
}
#else
// p plus the dots of f as vpmaddubsw's int16 pair sums: exact while the K's kGroup words add up.
__m256i add_dot(__m256i p, Factors f) {
    return _mm256_add_epi16(p, _mm256_maddubs_epi16(f.u, f.s));
}
// p's int16 pair sums times the rows' scales, widened to int32 (vpmaddwd).
__m256i scaled(__m256i p, __m256i sc) {
    return _mm256_madd_epi16(p, sc);
}
template <class K>
constexpr int sum_words() {
    static_assert(K::kGroup <= K::kScaleWords);
    return K::kGroup;
}
template <class K>
constexpr int chains() {
    return 1;
}
#endif

// A half's scales as row bytes: half_bytes reads half h's 8 bytes of a scale row (one per row)
// into bytes 0-7 and again 8-15 of both 128-bit lanes; two_rows puts two scale rows' in bytes
// 0-7 and 8-15. Each 128-bit lane then holds what its 4 int32 lanes need, so spreading a row's byte
// to its lane (twice, pairs) is one in-lane vpshufb. Widening 8 bytes of one lane to the 16 of
// a vector instead (vpmovzxbw, vpmovsxbw: across lanes) took 2.5 times as long on a Zen 3, and
// was most of what the scales cost (kernels.md, "The k-quants' scales").
inline __m256i half_bytes(const void* row, int h) {
    const auto* p = static_cast<const uint8_t*>(row) + kHalfRows * h;
    return _mm256_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i two_rows(__m256i a, __m256i b) {
    return _mm256_unpacklo_epi64(a, b);
}

// The int16s of vpshufb(v, spread) for signed or unsigned bytes: a signed byte goes through
// as its value plus 128, taken off in int16 (two steps on any ALU port where a sign-extending
// shuffle needs a second on the shuffle ports, which the scales and the levels crowd).
template <bool Signed>
__m256i widen_bytes(__m256i v, __m256i spread) {
    if constexpr (Signed) {
        const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
        return _mm256_sub_epi16(_mm256_shuffle_epi8(_mm256_xor_si256(v, bias), spread),
                                _mm256_set1_epi16(128));
    } else {
        return _mm256_shuffle_epi8(v, spread);
    }
}

// Byte r + First of each lane (row r's byte of a half_bytes or two_rows vector: First 0 or 8) in
// both int16 halves of int32 lane r: a vpmaddwd factor that scales both int16 sums of the lane.
template <bool Signed, int First = 0>
__m256i twice(__m256i v) {
    constexpr char a = First, b = First + 1, c = First + 2, d = First + 3;
    return widen_bytes<Signed>(
        v, _mm256_setr_epi8(a, -1, a, -1, b, -1, b, -1, c, -1, c, -1, d, -1, d, -1,  //
                            a + 4, -1, a + 4, -1, b + 4, -1, b + 4, -1, c + 4, -1, c + 4, -1, d + 4,
                            -1, d + 4, -1));
}

// The int16 pair (byte r, byte 8 + r) of a two_rows vector in int32 lane r: the rows' factors
// of two sub-blocks, against a pair of activation sums.
template <bool Signed>
__m256i pairs(__m256i v) {
    return widen_bytes<Signed>(
        v, _mm256_setr_epi8(0, -1, 8, -1, 1, -1, 9, -1, 2, -1, 10, -1, 3, -1, 11, -1,  //
                            4, -1, 12, -1, 5, -1, 13, -1, 6, -1, 14, -1, 7, -1, 15, -1));
}

// sum_i pairs[i] . (word i of p), the words being int16 pairs of activation sums.
template <int N>
__m256i pair_dot(const __m256i* pairs, const int32_t* p) {
    __m256i sum = _mm256_madd_epi16(pairs[0], _mm256_set1_epi32(p[0]));
    for (int i = 1; i < N; i++)
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs[i], _mm256_set1_epi32(p[i])));
    return sum;
}

// sum_g pairs[g] . (bsum_2g, bsum_2g+1): the rows' int16 pairs of factors against a token's Q8_K
// sums of 16 values (each at most 16 * 128), two per int32 word.
inline __m256i bsum_dot(const __m256i* pairs, const block_q8_K& x) {
    int32_t sums[8];
    __builtin_memcpy(sums, x.bsums, sizeof sums);
    return pair_dot<8>(pairs, sums);
}

// Where the levels carry an offset of 2^Shift, a super-block's sum starts from -2^Shift
// sum_g sc_g bsum_g (sc_pairs: the rows' scales of the bsums' values), which takes the offset's
// share off before the units add theirs.
template <int Shift>
__m256i offset_start(const __m256i* sc_pairs, const block_q8_K& x) {
    return _mm256_sub_epi32(_mm256_setzero_si256(),
                            _mm256_slli_epi32(bsum_dot(sc_pairs, x), Shift));
}

// The unsigned operands of most k-quants: op[m] is word m's levels, times the activation word
// xw.
struct UnsignedLevels {
    static constexpr int kOps = 8;
    static Factors factors(const __m256i* op, int m, __m256i xw) { return {op[m], xw}; }
};

// The steps of the k-quants with a signed scale per 16 values (Scales::sc[16] for vpmaddwd and
// sc_pairs[8], the pairs (sc_2i, sc_2i+1)) and levels q - 2^Shift (Q6_K: 32, Q3_K: 4).
template <int Shift>
struct OffsetLevels16 : UnsignedLevels {
    // Words m < 4 are sub-block 2u, the others 2u + 1.
    template <class Scales>
    static __m256i scale(const Scales& s, int u, int m) {
        return s.sc[2 * u + m / 4];
    }
    template <class Scales>
    static __m256i init(const Scales& s, const block_q8_K& x) {
        return offset_start<Shift>(s.sc_pairs, x);
    }
    template <class Block, class Scales>
    static __m256 finish(const Block&, int, const Scales&, const block_q8_K&, __m256 acc) {
        return acc;
    }
};

// Eight rows' d as floats: fp16 in the files' types, float in the grid types' decoded levels.
inline __m256 half_d(const fp16_t* d) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
}
inline __m256 half_d(const float* d) {
    return _mm256_loadu_ps(d);
}

// Whether K makes its operands one word at a time (word(w, h, u, m)) rather than a unit at once.
template <class K>
constexpr bool kHasWord = requires(const typename K::Block& w) {
    K::word(w, 0, 0, 0);
};

// Whether K asks for its one-token tile a half at a time (kPaired).
template <class K>
constexpr bool kHalfByHalf = requires {
    requires K::kHalfByHalf;
};

// Unit u's K::kOps operands: K's unit, or its words one by one.
template <class K>
void unit_operands(const typename K::Block& w, int h, int u, __m256i* op) {
    if constexpr (kHasWord<K>) {
#pragma GCC unroll 8
        for (int m = 0; m < K::kOps; m++) op[m] = K::word(w, h, u, m);
    } else {
        K::unit(w, h, u, op);
    }
}

// Whether K's one-token tile takes both halves together (k_tile's column_paired): a K with words
// and unsigned activations (column_paired has no magnitudes), unless it sets kHalfByHalf.
template <class K>
constexpr bool kPaired = kHasWord<K> && !kMagnitudes<K> && !kHalfByHalf<K>;

// Each k-quant K gives Block, kGroup (words whose vpmaddubsw sums add up in int16 exactly, at
// most 4 where a scale covers 16 values), kScaleWords (consecutive words under one scale), kOps
// and factors (UnsignedLevels' or its own), a Scales type constructed from (block column, half),
// unit(w, h, u, op) (unit u's kOps operands) or word(w, h, u, m) (operand m alone), scale(s, u,
// m0) (the factor of the group from word m0), init(s, x) (a token's integer sum before the
// units) and finish(w, h, s, x, acc) (the float steps after the scales'). A K with kMagnitudes
// (signed levels) gets factors(op, m, xw, mw) with mw the activation word's magnitudes, which
// k_tile makes once per super-block for all tokens and both halves (one token's in registers,
// word by word).
//
// One token (decode) takes a K's words one at a time, each made right where its dot takes it,
// so that only one lives: made a unit at a time, Q3_K's, Q5_K's and Q6_K's 8 operands and the
// second bit planes they come from crowded AVX2's 16 registers, and the compiler spilled them
// (bench-kernels incache, one thread: Q3_K 8-10%, Q5_K 5-11%, Q6_K 4-10% faster by word, Q4_K,
// whose word is Q5_K's without the fifth bits, level; Q2_K level and IQ4_XS 14-27% slower by
// word, so those two keep their units). Tiles of several tokens make a unit once for all of
// them, and one token against a kPaired K takes both halves at each word (column_paired).
//
// G groups (wg[g], yg[g], nrg[g]) take turns a super-block column at a time: with G = 2 one token
// streams two places of the matrix (gemv2), each group's sums in gemm's order. One column of one
// group at a time, so the registers hold one group's work, as with G = 1: with the two groups'
// units interleaved (tried 2026-12-06), the second group's operands crowded the first's out.
template <class K, int NT, int G = 1>
void k_tile(int64_t nb, const typename K::Block* const* wg, const uint8_t* x, size_t x_stride,
            float* const* yg, int64_t y_stride, const int* nrg) {
    const auto act = [&](int t, int64_t b) -> const block_q8_K& {
        return reinterpret_cast<const block_q8_K*>(x + t * x_stride)[b];
    };
    // The super-block column kFarAhead bytes ahead into L2, an eighth in each unit of the first
    // half: a lead on top of the hardware prefetchers, spread over the work. (Three columns
    // ahead into L1 at once, 35-53 prefetcht0 in a burst, stalled a Zen 4 core, whose miss
    // buffers they filled: AVX2 Q6_K decode ran at 25% of the probe; with the next column into
    // L1 as well as this, no faster than this alone. docs/perf-log.md.)
    using Block = typename K::Block;
    constexpr size_t kEighth = (sizeof(Block) + 8 * 64 - 1) / (8 * 64) * 64;
    // The tokens' magnitudes made once per super-block (kMagnitudes, more than one token).
    constexpr bool kMagArray = kMagnitudes<K> && NT > 1;
    using Magnitudes = int8_t[kMagArray ? NT : 1][kMagArray ? QK_K : 1];
    constexpr int kWords = sum_words<K>(), kChains = chains<K>();
    // Unit u's share of the lead for the column at wb.
    const auto lead = [](const Block* wb, int u) __attribute__((always_inline)) {
        prefetch_lines<kEighth, 2>(reinterpret_cast<const uint8_t*>(wb) + u * kEighth + kFarAhead);
    };
    // isum plus a group's sums p (its chains) times the rows' scale.
    const auto add_group =
        [](__m256i isum, const __m256i* p, __m256i scale) __attribute__((always_inline)) {
        __m256i sum = p[0];
        if constexpr (kChains == 2) sum = _mm256_add_epi32(p[0], p[1]);
        return _mm256_add_epi32(isum, scaled(sum, scale));
    };
    // acc plus half h's integer sum isum against token xb, times d_w (wd) and d_x, then K's float
    // steps.
    const auto add_half =
        [](const Block& wb, int h, const typename K::Scales& s, const block_q8_K& xb, __m256 wd,
           __m256i isum, __m256 acc) __attribute__((always_inline)) {
        acc =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(wd, _mm256_set1_ps(xb.d)), acc);
        return K::finish(wb, h, s, xb, acc);
    };
    // Column b of one group (its blocks w, rows nr) into that group's sums.
    const auto column = [&](const Block* w, int nr, auto& acc, int64_t b)
        __attribute__((always_inline)) {
        alignas(32) Magnitudes mag;
        if constexpr (kMagArray) {
            for (int t = 0; t < NT; t++) {
                for (int i = 0; i < QK_K; i += 32) magnitudes(act(t, b).qs + i, mag[t] + i);
            }
        }
        for (int h = 0; h < halves(nr); h++) {
            const typename K::Scales s(w[b], h);
            __m256i isum[NT];
            for (int t = 0; t < NT; t++) isum[t] = K::init(s, act(t, b));
#pragma GCC unroll 8
            // Unrolled, so that a unit's activation bytes and scales are fixed offsets: rolled,
            // the index arithmetic of the activations and scales cost as much as the vector work
            // (bench-kernels incache, one token: Q6_K 25%, Q4_K and Q2_K 11% faster unrolled).
            for (int u = 0; u < kUnits; u++) {
                if (h == 0) lead(w + b, u);
                constexpr bool kByWord = NT == 1 && kHasWord<K>;
                __m256i op[kByWord ? 1 : K::kOps];
                if constexpr (!kByWord) {
                    unit_operands<K>(w[b], h, u, op);
                }
                // One token at a time, its sum in memory: unrolled, the tokens' sums and
                // activation words crowd the unit's operands out of the registers.
#pragma GCC unroll 1
                for (int t = 0; t < NT; t++) {
                    const int8_t* xq = opaque(act(t, b).qs);
#pragma GCC unroll 8
                    for (int m0 = 0; m0 < 8; m0 += kWords) {
                        __m256i p[kChains] = {};
#pragma GCC unroll 8
                        for (int m = m0; m < m0 + kWords; m++) {
                            const int at = 32 * u + 4 * m;
                            __m256i& pc = p[m % kChains];
                            int o = m;  // word m's operand: op[o]
                            if constexpr (kByWord) {
                                op[0] = K::word(w[b], h, u, m);
                                o = 0;
                            }
                            if constexpr (kMagnitudes<K> && NT == 1) {
                                // One token: its magnitudes in registers. Read back from memory
                                // right after they were made, IQ4_XS decode took 1.5x as long
                                // (bench-kernels matvec, perf-log.md).
                                const __m256i xw = word(xq + at);
                                pc = add_dot(pc, K::factors(op, o, xw, _mm256_abs_epi8(xw)));
                            } else if constexpr (kMagArray) {
                                pc = add_dot(pc,
                                             K::factors(op, o, word(xq + at), word(mag[t] + at)));
                            } else {
                                pc = add_dot(pc, K::factors(op, o, word(xq + at)));
                            }
                        }
                        isum[t] = add_group(isum[t], p, K::scale(s, u, m0));
                    }
                }
            }
            const __m256 wd = half_d(w[b].d + kHalfRows * h);
            for (int t = 0; t < NT; t++)
                acc[t][h] = add_half(w[b], h, s, act(t, b), wd, isum[t], acc[t][h]);
        }
    };
    // One token against a kPaired K (decode): both halves at each word, so that one activation
    // broadcast serves 16 rows (bench-kernels incache/q4_k 0.9x the time; Q6_K tg32 1.10x at 1
    // thread, 1.19x at 2, Q4_K's within the noise); otherwise column's lead and steps. A last
    // group of at most 8 rows has zero rows for its second half: computed, not stored. (KP:
    // instantiated only where called, for a kPaired K. The same code as a function template of its
    // own made Q6_K's gemv2 1.6x slower, bench-kernels matvec/q6_k.)
    const auto column_paired = [&]<class KP = K>(const typename KP::Block* w, auto& acc, int64_t b)
        __attribute__((always_inline)) {
        const typename KP::Scales s[2] = {{w[b], 0}, {w[b], 1}};
        const block_q8_K& xb = act(0, b);
        const int8_t* xq = opaque(xb.qs);
        __m256i isum[2] = {KP::init(s[0], xb), KP::init(s[1], xb)};
#pragma GCC unroll 8
        for (int u = 0; u < kUnits; u++) {
            lead(w + b, u);
#pragma GCC unroll 8
            for (int m0 = 0; m0 < 8; m0 += kWords) {
                __m256i p[2][kChains] = {};
#pragma GCC unroll 8
                for (int m = m0; m < m0 + kWords; m++) {
                    const __m256i xw = word(xq + 32 * u + 4 * m);
                    for (int h = 0; h < 2; h++) {
                        const __m256i op = KP::word(w[b], h, u, m);
                        p[h][m % kChains] = add_dot(p[h][m % kChains], KP::factors(&op, 0, xw));
                    }
                }
                for (int h = 0; h < 2; h++)
                    isum[h] = add_group(isum[h], p[h], KP::scale(s[h], u, m0));
            }
        }
        for (int h = 0; h < 2; h++)
            acc[0][h] =
                add_half(w[b], h, s[h], xb, half_d(w[b].d + kHalfRows * h), isum[h], acc[0][h]);
    };
    __m256 accg[G][NT][2];
    for (int g = 0; g < G; g++) {
        for (int t = 0; t < NT; t++) accg[g][t][0] = accg[g][t][1] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int g = 0; g < G; g++) {
            if constexpr (NT == 1 && kPaired<K>) {
                column_paired(wg[g], accg[g], b);
            } else {
                column(wg[g], nrg[g], accg[g], b);
            }
        }
    }
    for (int g = 0; g < G; g++) {
        for (int t = 0; t < NT; t++) {
            for (int h = 0; h < halves(nrg[g]); h++)
                store_rows(yg[g] + t * y_stride + kHalfRows * h, accg[g][t][h],
                           nrg[g] - kHalfRows * h);
        }
    }
}

template <class K>
void k_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y, int64_t y_stride,
            int nr, int nt) {
    const auto* wb = static_cast<const typename K::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    FK::with_count<kPackTokens>(
        nt, [&]<int NT>() { k_tile<K, NT>(n / QK_K, &wb, xb, x_stride, &y, y_stride, &nr); });
}

// PackedKernels::gemv2: one token against two groups (Q2_K, Q4_K and Q6_K: packed_avx2.cpp).
template <class K>
void k_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0, float* y1,
             int nr0, int nr1) {
    const TwoGroups<typename K::Block, int> g(w0, w1, y0, y1, nr0, nr1);
    k_tile<K, 1, 2>(n / QK_K, g.w, static_cast<const uint8_t*>(x), 0, g.y, 0, g.rows);
}

}  // namespace
}  // namespace ggml_lite::LILA_AVX2_NS
