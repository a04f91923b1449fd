// AVX2 kernels for packed weights (packed.h): Q4_0, Q5_0, IQ4_NL and Q8_0 against block_q8_0c
// activations, Q4_1 and Q5_1 against block_q8_1c, Q4_K, Q5_K, Q6_K and IQ4_XS against Q8_K, F32,
// F16 and BF16 against float activations.
//
// A group is two halves of 8 rows (packed_avx2-inl.h). A half's weight operands are unpacked once
// per block column and serve every token of the tile.
//
// Compiled twice (packed_avx2.h): with -mavx2 -mfma -mf16c for the avx2 table, and with -mavxvnni
// too for the avx2_vnni table, where the 4-byte dots are vpdpbusd (the LILA_AVX2_VNNI blocks).
// Only packed_kernels() and packed_gemm_grid() have external linkage, in each copy's namespace (see
// kernels_avx512.cpp on why nothing else may be shared with the portable code).
#include "ggml-lite/x86/packed_avx2.h"

#include <immintrin.h>

#include <type_traits>

#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/x86/packed_avx2-inl.h"

namespace ggml_lite::LILA_AVX2_NS {
namespace {

// ---- Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and Q8_0 ------------------------------------------------

// Operand i of a half pairs with activation bytes 4i..4i+3, i.e. holds elements 4i..4i+3 of the
// half's rows. Each type differs only in how it makes them from the block column, in which of
// the two dots below reads them, and in its activation block (Q4_1 and Q5_1: block_q8_1c, whose
// s meets the rows' minimums in a second FMA).

// The nibbles of Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL: operand i is the low ones of word i (elements
// 4i..) for i < 4, then the high ones of word i - 4 (16 + 4(i - 4)..).
__m256i nibble_operand(const uint8_t (*qs)[kPackRows][4], int h, int i) {
    const __m256i v =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs[i % 4][kHalfRows * h]));
    return _mm256_and_si256(i < 4 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
}
void packed_nibbles(const uint8_t (*qs)[kPackRows][4], int h, __m256i* op) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) op[i] = nibble_operand(qs, h, i);
}

// Unsigned levels q at most MaxLevel (operand i: op(i); unsigned_dot's from an array) against the
// signed activations, from `init` (block_q8_0c's correction c: c + sum q x is the reference's
// sum (q - offset) x; 0 for Q4_1 and Q5_1).
// vpmaddubsw's int16 pair sums are at most 2 * MaxLevel * 128, so groups of as many as stay
// below 2^15 add up in int16 exactly before one vpmaddwd each widens them: all 8 for 4-bit
// levels (30720), 4 for 5-bit ones (31744).
template <int MaxLevel, class Op>
__m256i unsigned_dot_of(Op op, const int8_t* xq, int32_t init) {
#if defined(LILA_AVX2_VNNI)
    // vpdpbusd: int32 sums, any level to 255. Two chains, each half as long as one.
    __m256i s0 = _mm256_set1_epi32(init), s1 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
        s0 = _mm256_dpbusd_avx_epi32(s0, op(i), word(xq + 4 * i));
        s1 = _mm256_dpbusd_avx_epi32(s1, op(i + 1), word(xq + 4 * i + 4));
    }
    return _mm256_add_epi32(s0, s1);
#else
    constexpr int kGroup = 32767 / (2 * MaxLevel * 128) >= 8 ? 8 : 4;
    static_assert(kGroup * 2 * MaxLevel * 128 < 32768);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i sum = _mm256_set1_epi32(init);
#pragma GCC unroll 2
    for (int g = 0; g < 8; g += kGroup) {
        __m256i s = _mm256_maddubs_epi16(op(g), word(xq + 4 * g));
#pragma GCC unroll 8
        for (int i = g + 1; i < g + kGroup; i++)
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(op(i), word(xq + 4 * i)));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(s, ones));
    }
    return sum;
#endif
}
template <int MaxLevel>
__m256i unsigned_dot(const __m256i* op, const int8_t* xq, int32_t init) {
    return unsigned_dot_of<MaxLevel>([op](int i) { return op[i]; }, xq, init);
}

#if !defined(LILA_AVX2_VNNI)
// Signed levels w (Q8_0): op[i] the values, op[i + 8] their magnitudes. Unsigned w + 128 times a
// signed byte would overflow vpmaddubsw's int16 pair sums, so the sign moves onto the
// activations: |w| times sign(w) x, pairs at most 2 * 128 * 127, each widened to int32 alone.
// That is sum w x directly, which equals the reference's c + sum (w + 128) x: the correction is
// not used. (Not the other way round, as IQ4_NL: a weight byte may be -128, whose negation
// wraps; block_q8_0c's values are within +-127.)
__m256i signed_dot(const __m256i* op, const block_q8_0c& x) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        const __m256i p =
            _mm256_maddubs_epi16(op[i + 8], _mm256_sign_epi8(word(x.qs + 4 * i), op[i]));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return s;
}
#endif

// Q5_0 and Q5_1: the fifth bits to bit 4 of the nibbles. Element 4i + k's bit is bit i of byte k
// of the row's word (packed.h), qh the half's 8 words: the word shifted by 4 - i puts operand i's
// at bit 4 of each byte.
__m256i half_fifth_bits(const uint8_t (*qh)[4], int h) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh[kHalfRows * h]));
}
__m256i with_fifth_bits(__m256i nibbles, __m256i qh, int i) {
    const __m256i at4 = i < 4 ? _mm256_slli_epi32(qh, 4 - i) : _mm256_srli_epi32(qh, i - 4);
    return _mm256_or_si256(nibbles, _mm256_and_si256(at4, _mm256_set1_epi8(0x10)));
}

// Q4_0, Q4_1, Q5_0, Q5_1: the nibbles, with the fifth bits where the block has them, dotted
// from block_q8_0c's correction (levels q - 8, q - 16) or from 0 against block_q8_1c (the
// kernel adds the minimums).
template <class B, class A, bool FifthBits>
struct PackedNibbles {
    using Block = B;
    using Act = A;
    static constexpr int kOps = 8;
    static constexpr int kMaxLevel = FifthBits ? 31 : 15;
    static void load(const Block& w, int h, __m256i* op) {
        packed_nibbles(w.qs, h, op);
        if constexpr (FifthBits) {
            const __m256i qh = half_fifth_bits(w.qh, h);
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++) op[i] = with_fifth_bits(op[i], qh, i);
        }
    }
    static __m256i dot(const __m256i* op, const Act& x) {
        int32_t init = 0;
        if constexpr (std::is_same_v<Act, block_q8_0c>) init = x.c;
        return unsigned_dot<kMaxLevel>(op, x.qs, init);
    }
    // One token (packed_decode): each operand made right before its dot, so that the 8 of a
    // half are not held in registers (which AVX2's 16 did not fit beside the fifth bits: GCC
    // spilled them; bench-kernels incache/q5_0 and q5_1, one thread, 13-18% faster so). Flattened:
    // GCC called the dot with the operand maker as an argument in memory otherwise (Q5_1 twice
    // as slow).
    [[gnu::flatten]] static __m256i dot_words(const Block& w, int h,
                                              const Act& x) requires FifthBits {
        int32_t init = 0;
        if constexpr (std::is_same_v<Act, block_q8_0c>) init = x.c;
        const __m256i qh = half_fifth_bits(w.qh, h);
        return unsigned_dot_of<kMaxLevel>(
            [&](int i) { return with_fifth_bits(nibble_operand(w.qs, h, i), qh, i); }, x.qs, init);
    }
};
using PackedQ4 = PackedNibbles<block_q4_0x16, block_q8_0c, false>;
using PackedQ5 = PackedNibbles<block_q5_0x16, block_q8_0c, true>;
using PackedQ4_1 = PackedNibbles<block_q4_1x16, block_q8_1c, false>;
using PackedQ5_1 = PackedNibbles<block_q5_1x16, block_q8_1c, true>;

// IQ4_NL's nibbles (one block column's, or one IQ4_XS sub-block's) looked up in the table of
// signed levels, or (Offset) of the levels plus 128, vpdpbusd's unsigned operand: op[i] elements
// 4i..4i+3.
template <bool Offset>
void iq4nl_levels(const uint8_t (*qs)[kPackRows][4], int h, __m256i* op) {
    __m256i table = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
    if constexpr (Offset)
        table = _mm256_xor_si256(table, _mm256_set1_epi8(static_cast<char>(0x80)));
    packed_nibbles(qs, h, op);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) op[i] = _mm256_shuffle_epi8(table, op[i]);
}

#if defined(LILA_AVX2_VNNI)
// With vpdpbusd, Q8_0 and IQ4_NL take the route of the unsigned levels: their levels plus 128 (Q8_0
// is stored so; IQ4_NL's looked up in the offset table) summed in int32 from block_q8_0c's
// correction c = -128 sum x, which no int16 pair sum limits.
struct PackedIQ4NL {
    using Block = block_iq4_nlx16;
    using Act = block_q8_0c;
    static constexpr int kOps = 8;
    static void load(const Block& w, int h, __m256i* op) { iq4nl_levels<true>(w.qs, h, op); }
    static __m256i dot(const __m256i* op, const block_q8_0c& x) {
        return unsigned_dot<255>(op, x.qs, x.c);
    }
};

struct PackedQ8 {
    using Block = block_q8_0x16;
    using Act = block_q8_0c;
    static constexpr int kOps = 8;
    static void load(const Block& w, int h, __m256i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++)
            op[m] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs[m][kHalfRows * h]));
    }
    static __m256i dot(const __m256i* op, const block_q8_0c& x) {
        return unsigned_dot<255>(op, x.qs, x.c);
    }
};
#else
// IQ4_NL: the nibbles looked up in the table of signed levels, which take the activations'
// signs: vpmaddubsw's unsigned operand is the activations' magnitudes (packed_tile makes them
// once per block for all tokens and both halves), so the 8 level operands stay in registers.
// The levels' magnitudes are at most 127, so the pair sums are at most 2 * 128 * 127 (for any
// activation byte), each widened to int32 alone; the correction is not used.
struct PackedIQ4NL {
    using Block = block_iq4_nlx16;
    using Act = block_q8_0c;
    static constexpr int kOps = 8;
    static constexpr bool kMagnitudes = true;
    static void load(const Block& w, int h, __m256i* op) { iq4nl_levels<false>(w.qs, h, op); }
    static __m256i dot(const __m256i* op, const block_q8_0c& x, const int8_t* mag) {
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m256i p = _mm256_maddubs_epi16(word(mag + 4 * i),
                                                   _mm256_sign_epi8(op[i], word(x.qs + 4 * i)));
            s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
        }
        return s;
    }
};

// Q8_0: stored as w + 128; the offset undone (w = stored ^ 0x80).
struct PackedQ8 {
    using Block = block_q8_0x16;
    using Act = block_q8_0c;
    static constexpr int kOps = 16;  // the signed values, then their magnitudes
    static void load(const Block& w, int h, __m256i* op) {
        const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) {
            const __m256i v =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs[m][kHalfRows * h]));
            op[m] = _mm256_xor_si256(v, offset);
            op[m + 8] = _mm256_abs_epi8(op[m]);
        }
    }
    static __m256i dot(const __m256i* op, const block_q8_0c& x) {
        return signed_dot(op, x);
    }
};

#endif

// The AVX2 block kernels lead into L1, 8 block columns ahead: each reads a 64-byte word in two
// halves, a group half at a time. One token's pass leads kFarAhead into L2 as well where this
// CPU's policy says (cpu.h: avx2_block_l2; the lead into L2 alone was 7% slower, Q8_0 on a Zen 5);
// prefill leads into L1 only (with both, level on a Zen 3 and on the Intel Xeon).
constexpr Lead kTileLead = Lead::L1;
Lead decode_lead() {
    return prefetch_policy().avx2_block_l2 ? Lead::L1AndL2 : Lead::L1;
}

// Half h of a block column (rows 8h..8h + 7): the rows' scales and (Q4_1, Q5_1) minimums.
template <class P>
struct HalfScales {
    static constexpr bool kMin = std::is_same_v<typename P::Act, block_q8_1c>;
    __m256 d, m;
    HalfScales(const typename P::Block& w, int h)
        : d(_mm256_cvtph_ps(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.d + kHalfRows * h)))),
          m(_mm256_setzero_ps()) {
        if constexpr (kMin) {
            m = _mm256_cvtph_ps(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.m + kHalfRows * h)));
        }
    }
};

// acc plus a half's term for token xa from its integer sum isum and s, the half's scales.
template <class P>
__m256 add_sum(__m256i isum, const HalfScales<P>& s, const typename P::Act& xa, __m256 acc) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(s.d, _mm256_set1_ps(xa.d)), acc);
    if constexpr (HalfScales<P>::kMin) acc = _mm256_fmadd_ps(s.m, _mm256_set1_ps(xa.s), acc);
    return acc;
}
// The same from op, the half's operands (P::load), unpacked once for every token they meet, and
// mag the token's activations' magnitudes (where P takes them).
template <class P>
__m256 add_token(const __m256i* op, const HalfScales<P>& s, const typename P::Act& xa,
                 const int8_t* mag, __m256 acc) {
    if constexpr (kMagnitudes<P>) {
        return add_sum(P::dot(op, xa, mag), s, xa, acc);
    } else {
        return add_sum(P::dot(op, xa), s, xa, acc);
    }
}

// One token against G groups (decode; PackedKernels::gemv2 for G = 2), the groups' block
// columns interleaved: one core reads two streams far apart faster than one (kernels.md,
// "Decode reads two streams per core").
template <class P, int G>
void packed_decode(int64_t nb, const typename P::Block* const* w, const uint8_t* x, float* const* y,
                   const int* nr) {
    const auto* xa = reinterpret_cast<const typename P::Act*>(x);
    __m256 acc[G][2];
    for (int g = 0; g < G; g++) acc[g][0] = acc[g][1] = _mm256_setzero_ps();
    const Lead lead = decode_lead();
    for (int64_t b = 0; b < nb; b++) {
        alignas(32) int8_t mag[32];
        if constexpr (kMagnitudes<P>) magnitudes(xa[b].qs, mag);
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            prefetch_block(w[g] + b, lead);
            for (int h = 0; h < halves(nr[g]); h++) {
                if constexpr (requires { P::dot_words(w[g][b], h, xa[b]); }) {
                    acc[g][h] = add_sum(P::dot_words(w[g][b], h, xa[b]), HalfScales<P>(w[g][b], h),
                                        xa[b], acc[g][h]);
                } else {
                    __m256i op[P::kOps];
                    P::load(w[g][b], h, op);
                    acc[g][h] = add_token(op, HalfScales<P>(w[g][b], h), xa[b], mag, acc[g][h]);
                }
            }
        }
    }
    for (int g = 0; g < G; g++) {
        for (int h = 0; h < halves(nr[g]); h++)
            store_rows(y[g] + kHalfRows * h, acc[g][h], nr[g] - kHalfRows * h);
    }
}

// NT >= 2 tokens against one group. Each tile its own function: inlined, all 15 into gemm's
// dispatch, bench-kernels' avx2-packed 2048x2048x64 ran about 2% (Q4_0) and 7% (Q4_1) slower than
// with each apart (3 alternating rounds).
template <class P, int NT>
__attribute__((noinline)) void packed_tile(int64_t nb, const typename P::Block* w, const uint8_t* x,
                                           size_t x_stride, float* y, int64_t y_stride, int nr) {
    using Act = typename P::Act;
    // The accumulators live in memory: a token's pass loads and stores its one vector, and the
    // registers go to the half's weight operands, which serve every token.
    __m256 acc[NT][2];
    for (int t = 0; t < NT; t++) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        prefetch_block(w + b, kTileLead);
        const uint8_t* xb = x + b * sizeof(Act);
        const auto xt = [&](int t) -> const Act& {
            return *reinterpret_cast<const Act*>(xb + t * x_stride);
        };
        alignas(32) int8_t mag[kMagnitudes<P> ? NT : 1][32];
        if constexpr (kMagnitudes<P>) {
            for (int t = 0; t < NT; t++) magnitudes(xt(t).qs, mag[t]);
        }
        for (int h = 0; h < halves(nr); h++) {
            __m256i op[P::kOps];
            P::load(w[b], h, op);
            const HalfScales<P> hs(w[b], h);
            // One token at a time: unrolled, the compiler hoists every token's activation
            // words out of the halves and spills them. The token's block address is stepped by
            // x_stride, as an integer (past the last token a pointer would point outside the
            // activations): indexed as xt(t), GCC 12 kept this loop's pointers on the stack in
            // 44 of the 90 tiles, a store and a reload every token (bench-kernels tile/q4_0
            // 11-14% faster without, tile/q5_0 3-23%; PERF.md).
            uintptr_t xp = reinterpret_cast<uintptr_t>(xb);
#pragma GCC unroll 1
            for (int t = 0; t < NT; t++, xp += x_stride) {
                const Act& xa = *reinterpret_cast<const Act*>(xp);
                acc[t][h] = add_token(op, hs, xa, mag[kMagnitudes<P> ? t : 0], acc[t][h]);
            }
        }
    }
    for (int t = 0; t < NT; t++) {
        for (int h = 0; h < halves(nr); h++)
            store_rows(y + t * y_stride + kHalfRows * h, acc[t][h], nr - kHalfRows * h);
    }
}

template <class P>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const typename P::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    FK::with_count<kPackTokens>(nt, [&]<int NT>() {
        if constexpr (NT == 1) {
            packed_decode<P, 1>(n / QK8_0, &wb, xb, &y, &nr);
        } else {
            packed_tile<P, NT>(n / QK8_0, wb, xb, x_stride, y, y_stride, nr);
        }
    });
}

template <class P>
void packed_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0, float* y1,
                  int nr0, int nr1) {
    const TwoGroups<typename P::Block, int> g(w0, w1, y0, y1, nr0, nr1);
    packed_decode<P, 2>(n / QK8_0, g.w, static_cast<const uint8_t*>(x), g.y, g.rows);
}

// ---- Q4_K, Q5_K, Q6_K and IQ4_XS (k_tile: packed_avx2-inl.h) ---------------------------------

// Q4_K and Q5_K: unit u is sub-block u: Q4_K's the low (u even) or high nibbles of words
// 8 (u / 2)..+7, Q5_K's its planes' words (q5_K_word). Pair sums are at most 2 * 15 * 128 (4-bit
// levels), so all 8 add up in int16, or 2 * 31 * 128 (5-bit), so 4.
template <class B, bool FifthBits>
struct KMin : UnsignedLevels {
    using Block = B;
    static constexpr int kGroup = FifthBits ? 4 : 8;
    static_assert(kGroup * 2 * (FifthBits ? 31 : 15) * 128 < 32768);
    static constexpr int kScaleWords = 8;
    // Q5_K's one token half by half: with both halves at each word, bench-kernels matvec/q5_k
    // took 1.1-1.2x as long (incache level).
    static constexpr bool kHalfByHalf = FifthBits;
    // Half h's scales (sc[j] for vpmaddwd) and mins as pairs (m_2i, m_2i+1).
    struct Scales {
        __m256i sc[8];
        __m256i min_pairs[4];
        Scales(const Block& w, int h) {
            __m256i b[K_SCALE_SIZE];
            for (int k = 0; k < K_SCALE_SIZE; k++) b[k] = half_bytes(w.scales[k], h);
            __m256i s[8], m[8];  // the 8 rows' scales and mins, one byte lane per row
            q4_K_scales_mins_rows(b, s, m);
            for (int j = 0; j < 8; j++) sc[j] = twice<false>(s[j]);
            for (int i = 0; i < 4; i++)
                min_pairs[i] = pairs<false>(two_rows(m[2 * i], m[2 * i + 1]));
        }
    };
    static __m256i word(const Block& w, int h, int u, int m) {
        if constexpr (FifthBits) {
            return q5_K_word<__m256i>(
                [&](int k) {
                    return _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(w.q[u][k][kHalfRows * h]));
                },
                m);
        } else {
            const __m256i v = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(w.qs[8 * (u / 2) + m][kHalfRows * h]));
            return _mm256_and_si256(u % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0x0f));
        }
    }
    static __m256i scale(const Scales& s, int u, int) { return s.sc[u]; }
    static __m256i init(const Scales&, const block_q8_K&) { return _mm256_setzero_si256(); }
    // The mins: sum_j m_j * (sum of sub-block j's 32 activations, at most 4096: pairs of
    // bsums), times -dmin * d_x.
    static __m256 finish(const Block& w, int h, const Scales& s, const block_q8_K& x, __m256 acc) {
        alignas(16) int32_t sums[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(sums), q8_K_sums32(x));
        const __m256 dmin =
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.dmin + 8 * h)));
        return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(pair_dot<4>(s.min_pairs, sums)),
                                _mm256_mul_ps(dmin, _mm256_set1_ps(x.d)), acc);
    }
};
using Q4K = KMin<block_q4_Kx16, false>;
using Q5K = KMin<block_q5_Kx16, true>;

// Half h's 16 scales (signed bytes, one per 16 values) for vpmaddwd, and as pairs (sc_2i,
// sc_2i+1): Q6_K's, and the grid types' ls (at most 31).
template <class Block>
struct Scales16 {
    __m256i sc[16];
    __m256i sc_pairs[8];
    Scales16(const Block& w, int h) {
        __m256i b[16];
        for (int g = 0; g < 16; g++) {
            b[g] = half_bytes(w.scales[g], h);
            sc[g] = twice<true>(b[g]);
        }
        for (int i = 0; i < 8; i++) sc_pairs[i] = pairs<true>(two_rows(b[2 * i], b[2 * i + 1]));
    }
};

// Q6_K: unit u is sub-blocks 2u and 2u + 1, their planes' words (q6_K_word). Pair sums reach
// 2 * 63 * 128, so only two words add up in int16.
struct Q6K : OffsetLevels16<5> {
    using Block = block_q6_Kx16;
    static constexpr int kGroup = 2;
    static constexpr int kScaleWords = 4;
    using Scales = Scales16<Block>;
    static __m256i word(const Block& w, int h, int u, int m) {
        const auto& planes = w.q[2 * u + m / 4];
        return q6_K_word<__m256i>(
            [&](int j) {
                return _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(planes[j][kHalfRows * h]));
            },
            m % 4);
    }
};

// The grid types' decoded levels (block_gridx16): unit u is words 8u..8u+7 as stored (levels
// plus 64), sub-blocks 2u and 2u + 1. Pair sums reach 2 * 126 * 128, so each word's stay apart
// in int16.
struct Grid : OffsetLevels16<6> {
    using Block = block_gridx16;
    static constexpr int kGroup = 1;
    static_assert(2 * 126 * 128 < 32768 && 1 << 6 == kGridOffset);
    static constexpr int kScaleWords = 4;
    using Scales = Scales16<Block>;
    static void unit(const Block& w, int h, int u, __m256i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) {
            op[m] = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(w.qs[8 * u + m][kHalfRows * h]));
        }
    }
};

// IQ4_XS: unit u is sub-block u, IQ4_NL's nibbles of words 4u..4u+3 looked up in its table
// (iq4nl_levels), under a signed scale per sub-block.
struct IQ4XS {
    using Block = block_iq4_xsx16;
    static constexpr int kScaleWords = 8;
    static constexpr int kOps = 8;
    struct Scales {
        __m256i sc[8];
        Scales(const Block& w, int h) {
            __m256i l[4], hi[2], s[8];  // the 8 rows' bytes, one byte lane per row
            for (int k = 0; k < 4; k++) l[k] = half_bytes(w.scales_l[k], h);
            for (int k = 0; k < 2; k++) hi[k] = half_bytes(w.scales_h[k], h);
            iq4_xs_scales_rows(l, hi, s);
            for (int j = 0; j < 8; j++) sc[j] = twice<true>(s[j]);
        }
    };
#if defined(LILA_AVX2_VNNI)
    // The unsigned route, as Q8_0's and IQ4_NL's: the levels plus 128 (at most 241), each
    // sub-block's int32 sum 128 times its activations' sum too big. init takes
    // 128 sum_u sc_u (bsum_2u + bsum_2u+1) off from the start, sc[u] (sc_u in both int16 halves)
    // being the pair for the two bsums of sub-block u. Every partial sum stays below 2^31
    // (8 * 32 * 241 * 128 * 32).
    static void unit(const Block& w, int h, int u, __m256i* op) {
        iq4nl_levels<true>(w.qs + 4 * u, h, op);
    }
    static Factors factors(const __m256i* op, int m, __m256i xw) {
        return {op[m], xw};
    }
    static __m256i init(const Scales& s, const block_q8_K& x) {
        return offset_start<7>(s.sc, x);
    }
#else
    // Both factors signed: the activations' magnitudes (made once per super-block: kMagnitudes)
    // are vpmaddubsw's unsigned operand and the levels take their signs, one step per word and
    // token: exact for every Q8_K byte, -128 too (whose magnitude only the unsigned operand
    // holds). Pair sums reach 2 * 128 * 127, which no second one may join in int16: each meets
    // the rows' signed scale alone.
    static constexpr int kGroup = 1;
    static constexpr bool kMagnitudes = true;
    static void unit(const Block& w, int h, int u, __m256i* op) {
        iq4nl_levels<false>(w.qs + 4 * u, h, op);
    }
    static Factors factors(const __m256i* op, int m, __m256i xw, __m256i mw) {
        return {mw, _mm256_sign_epi8(op[m], xw)};
    }
    static __m256i init(const Scales&, const block_q8_K&) {
        return _mm256_setzero_si256();
    }
#endif
    static __m256i scale(const Scales& s, int u, int) {
        return s.sc[u];
    }
    static __m256 finish(const Block&, int, const Scales&, const block_q8_K&, __m256 acc) {
        return acc;
    }
};

// ---- F32, F16, BF16 ---------------------------------------------------------------------------
//
// A 4-column block of the group is 16 rows of 4 values (packed.h): one vector is row pair p's,
// lane 4i + k = row 2p + i, column c + k, the reference's partial sum k. A token's x[c..c + 3] in
// both 128-bit lanes is one load (vbroadcastf128) for every row pair, so a pass of RP row pairs
// against NT tokens is RP weight loads and NT broadcasts per RP * NT FMAs. One token takes all 8
// pairs in one pass (decode: the weights stream once); more tokens go 2 pairs at a time,
// kFloatTokens at a time, kFloatChunk columns at a time: the chunk's weights and every token's
// activations stay in L1 across the passes, the partial sums in memory between chunks.

constexpr int kFloatTokens = 6;  // 2 row pairs x 6 tokens: 12 accumulators per pass
constexpr int kFloatPairs = 2;
constexpr int kGroupPairs = kPackRows / 2;
constexpr int64_t kFloatChunk = 256;  // 8 KiB of F16 weights, 16 KiB of activations

// Columns [c0, c1) of row pairs p0..p0 + RP - 1 against NT tokens, of G groups (G = 2 only for
// one token's pass over all row pairs: PackedKernels::gemv2, the groups' blocks interleaved, two
// streams far apart). The partial sums start from sums[t * RP + p] past the first chunk and are
// left there before the last one (c1 < n); the last stores the rows. The lead pass (the chunk's
// first) fetches the next chunk into L2.
template <class P, int NT, int RP, int G = 1>
void packed_float_tile(int64_t n, int64_t c0, int64_t c1, const typename P::Elem* const* w,
                       const uint8_t* x, size_t x_stride, float (*sums)[8], float* const* y,
                       int64_t y_stride, int p0, const int* nr, bool lead) {
    static_assert(G == 1 || (NT == 1 && RP == kGroupPairs));
    using Elem = typename P::Elem;
    // The fixed-count loops are unrolled so that acc[] lives in registers: GCC 12 otherwise
    // stores every accumulator to the stack at every step. (Two groups' 16 accumulators do not
    // all fit: a few spill, well within the time a step waits on memory.)
    __m256 acc[G][NT][RP];
#pragma GCC unroll 2
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
            for (int p = 0; p < RP; p++)
                acc[g][t][p] = c0 == 0 ? _mm256_setzero_ps() : _mm256_load_ps(sums[t * RP + p]);
        }
    }
    // One 4-column block of group g (16 rows of 4 values at wb) against the tokens' 4
    // activations at xc(t).
    const auto step = [&](int g, const Elem* wb, auto xc) {
        __m256 wv[RP];
#pragma GCC unroll 16
        for (int p = 0; p < RP; p++) wv[p] = P::load(wb + 8 * (p0 + p));
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            const __m256 xv = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(xc(t)));
#pragma GCC unroll 16
            for (int p = 0; p < RP; p++) acc[g][t][p] = _mm256_fmadd_ps(wv[p], xv, acc[g][t][p]);
        }
    };
    // One 4-column block of every group at column c, with or without the lead pass's prefetches.
    // This and `columns` are always inlined: GCC otherwise called them out of line for some
    // tiles, their accumulators in memory.
    const auto block = [&]<bool kLead>(int64_t c) __attribute__((always_inline)) {
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            // The pass that streams the group once (one token) fetches 2 KiB ahead into L1, a
            // lead on top of the hardware prefetchers. Not kFarAhead into L2 as well: with it,
            // BF16 decode at 2 threads read 16.0 and 15.9 t/s against 19.2 and 18.6 without, F16
            // level (a Zen 3, two alternated rounds).
            // With more tokens, a chunk's first pass fetches the same block of the next chunk
            // into L2 (past the last, the next group's first; a prefetch never faults), and the
            // other passes find their slice in cache. Without it every chunk's first pass waited
            // on memory, and bench-kernels' 2048x2048x64 ran 25-35% slower for F16 and BF16,
            // about 12% for F32 (perf-log.md).
            const auto* wb = w[g] + c * kPackRows;
            if constexpr (RP == kGroupPairs) {
                prefetch_float_block(wb, Lead::L1);
            } else if constexpr (kLead) {
                prefetch_lines<4 * kPackRows * sizeof(Elem), 2>(
                    reinterpret_cast<const uint8_t*>(wb + kFloatChunk * kPackRows));
            }
            step(g, wb,
                 [&](int t) { return reinterpret_cast<const float*>(x + t * x_stride) + c; });
        }
    };
    // The columns: one loop for the lead pass and one for the others, so that no step tests
    // `lead`, and one group's two blocks an iteration (15 scalar steps per 24 FMAs where one
    // block took 11 per 12). Two groups' pass (gemv2) takes one block an iteration: two, its
    // spilled accumulators took twice the stores, and F16 decode 4% longer (bench-kernels matvec).
    const auto columns = [&]<bool kLead>() __attribute__((always_inline)) {
        int64_t c = c0;
        if constexpr (G == 1) {
#pragma GCC unroll 2
            for (; c + 4 <= c1; c += 4) block.template operator()<kLead>(c);
        } else {
            for (; c + 4 <= c1; c += 4) block.template operator()<kLead>(c);
        }
        return c;
    };
    const int64_t c =
        lead ? columns.template operator()<true>() : columns.template operator()<false>();
    if (c < c1) {
        for (int g = 0; g < G; g++) {
            const FloatTail<Elem, NT> tail(n, w[g], x, x_stride);
            step(g, tail.w, [&](int t) { return tail.x[t]; });
        }
    }
    if constexpr (G == 1) {
        if (c1 < n) {
#pragma GCC unroll 16
            for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
                for (int p = 0; p < RP; p++) _mm256_store_ps(sums[t * RP + p], acc[0][t][p]);
            }
            return;
        }
    }
    // Per 4 row pairs: two horizontal adds make (p0 + p1) + (p2 + p3) of rows 0, 2, 4, 6 in the
    // low lane and 1, 3, 5, 7 in the high one; a permutation puts the rows in order.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            for (int p = 0; p < RP && 2 * (p0 + p) < nr[g]; p += 4) {
                const __m256 h01 = _mm256_hadd_ps(acc[g][t][p], acc[g][t][p + 1]);
                __m256 h23 = h01;
                if constexpr (RP > 2) h23 = _mm256_hadd_ps(acc[g][t][p + 2], acc[g][t][p + 3]);
                const __m256 sum = _mm256_permutevar8x32_ps(_mm256_hadd_ps(h01, h23), order);
                const int row = 2 * (p0 + p), rows = RP > 2 ? 8 : 4;
                store_rows(y[g] + t * y_stride + row, sum, nr[g] - row < rows ? nr[g] - row : rows);
            }
        }
    }
}

template <class P>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const auto* wc = static_cast<const typename P::Elem*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    if (nt == 1) {
        packed_float_tile<P, 1, kGroupPairs>(n, 0, n, &wc, xb, x_stride, nullptr, &y, y_stride, 0,
                                             &nr, false);
        return;
    }
    // The partial sums of every row pair and token between chunks.
    alignas(32) float sums[kGroupPairs / kFloatPairs][kPackTokens * kFloatPairs][8];
    for (int64_t c0 = 0; c0 < n; c0 += kFloatChunk) {
        const int64_t c1 = n - c0 > kFloatChunk ? c0 + kFloatChunk : n;
        for (int p = 0; 2 * p < nr; p += kFloatPairs) {
            for (int t = 0; t < nt; t += kFloatTokens) {
                float* yt = y + t * y_stride;
                FK::with_count<kFloatTokens>(nt - t < kFloatTokens ? nt - t : kFloatTokens,
                                             [&]<int NT>() {
                                                 packed_float_tile<P, NT, kFloatPairs>(
                                                     n, c0, c1, &wc, xb + t * x_stride, x_stride,
                                                     sums[p / kFloatPairs] + t * kFloatPairs, &yt,
                                                     y_stride, p, &nr, p == 0 && t == 0);
                                             });
            }
        }
    }
}

template <class P>
void packed_float_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                        float* y1, int nr0, int nr1) {
    const TwoGroups<typename P::Elem, int> g(w0, w1, y0, y1, nr0, nr1);
    packed_float_tile<P, 1, kGroupPairs, 2>(n, 0, n, g.w, static_cast<const uint8_t*>(x), 0,
                                            nullptr, g.y, 0, 0, g.rows, false);
}

// The entry points, in one table: the gemm of every packed type, and gemv2 where one token
// streams two row groups side by side faster than one (kernels.md, "Decode reads two streams per
// core"). Of the k-quants, Q2_K, Q4_K and Q6_K: Q5_K and IQ4_XS were slower with two and Q3_K
// level (perf-log.md, 2026-12-07).
template <class P>
constexpr PackedKernels block_kernels() {
    return {nullptr, packed_gemm<P>, packed_gemv2<P>};
}
template <class P>
constexpr PackedKernels float_kernels() {
    return {nullptr, packed_float_gemm<P>, packed_float_gemv2<P>};
}

constexpr PackedOverride kPacked[] = {
    {Type::F32, float_kernels<LoadF32<Avx2>>()},
    {Type::F16, float_kernels<LoadF16<Avx2>>()},
    {Type::BF16, float_kernels<LoadBF16<Avx2>>()},
    {Type::Q8_0, block_kernels<PackedQ8>()},
    {Type::Q4_0, block_kernels<PackedQ4>()},
    {Type::Q5_0, block_kernels<PackedQ5>()},
    {Type::IQ4_NL, block_kernels<PackedIQ4NL>()},
    {Type::Q4_1, block_kernels<PackedQ4_1>()},
    {Type::Q5_1, block_kernels<PackedQ5_1>()},
    {Type::Q4_K, {nullptr, k_gemm<Q4K>, k_gemv2<Q4K>}},
    {Type::Q5_K, {nullptr, k_gemm<Q5K>}},
    {Type::Q6_K, {nullptr, k_gemm<Q6K>, k_gemv2<Q6K>}},
    {Type::IQ4_XS, {nullptr, k_gemm<IQ4XS>}},
    {Type::Q3_K, {nullptr, packed_gemm_q3_K}},
    {Type::Q2_K, {nullptr, packed_gemm_q2_K, packed_gemv2_q2_K}},
};

}  // namespace

std::span<const PackedOverride> packed_kernels() {
    return kPacked;
}

void packed_gemm_grid(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    k_gemm<Grid>(n, w, x, x_stride, y, y_stride, nr, nt);
}

}  // namespace ggml_lite::LILA_AVX2_NS
