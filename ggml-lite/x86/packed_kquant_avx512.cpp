// AVX-512 VNNI kernels for packed Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K and Q2_K weights (packed.h:
// block_q4_Kx16, block_q5_Kx16, block_q6_Kx16, block_iq4_xsx16, block_q3_Kx16, block_q2_Kx16)
// and the grid types' decoded levels (block_gridx16) against Q8_K activations.
//
// As for Q4_0: one int32 lane per row, one vpdpbusd advances 16 rows by 4 values with the
// token's 4 activation bytes broadcast from memory. A super-block column is cut into 4 chunks of
// 16 unsigned operands (64 values of every row), unpacked once for all tokens. Each sub-block's
// integer dot is multiplied by its 16 rows' scales (vpmulld) into an exact integer sum per
// super-block, so every result is the scalar reference's bits.
//
// Compiled with -mavx512*: only the entry points have external linkage (see
// kernels_avx512.cpp on why nothing else may be shared with the portable code).
#include "ggml-lite/x86/packed_avx512.h"

#include <immintrin.h>

#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite::avx512 {
namespace {

using FK = FloatKernels<Avx512>;

constexpr int kChunks = 4;     // chunks of a super-block column
constexpr int kChunkOps = 16;  // operands per chunk: 16 words of 4 values

// Chunk c's operands of a type whose levels are stored whole in planes (packed.h: q[group][plane],
// Q3_K, Q5_K, Q6_K): the chunk's Groups / kChunks groups in order, word m of each decoded from
// its planes by decode(plane loader, m), as q3_K_word and its twins take them.
template <int Groups, int Planes, class Decode>
[[gnu::always_inline]] inline void planes_chunk(const uint8_t (&q)[Groups][Planes][kPackRows][4],
                                                int c, __m512i* op, Decode decode) {
    constexpr int kGroups = Groups / kChunks, kWords = kChunkOps / kGroups;
    for (int k = 0; k < kGroups; k++) {
        const auto& planes = q[kGroups * c + k];
#pragma GCC unroll 8
        for (int m = 0; m < kWords; m++)
            op[kWords * k + m] = decode([&](int j) { return _mm512_loadu_si512(planes[j]); }, m);
    }
}

// Q4_K and Q5_K: chunk c holds sub-blocks 2c and 2c + 1, 8 words each (Q4_K's the low and high
// nibbles of qs words 8c..8c+7, Q5_K's their planes: q5_K_word); op[i] pairs with activation
// values 64c + 4i.., contiguous. vpdpbusd adds its four products in int32, so the
// 5-bit levels need no grouping.
template <class B, bool FifthBits>
struct KMin {
    using Block = B;
    static constexpr int kSubs = 2;      // sub-blocks per chunk
    static constexpr int kWords = 8;     // words per sub-block
    static constexpr int kValues = 32;   // values per sub-block
    static constexpr int kDotShift = 0;  // isum is 2^kDotShift times the true sum (Q2K: 64)

    // What a super-block column needs besides the quants: its 8 scales as int32 lanes and its
    // 8 mins as int16 pairs (m_2i, m_2i+1) per lane, for vpdpwssd against pairs of
    // activation sums.
    struct Scales {
        __m512i sc[8];
        __m512i min_pairs[4];
    };
    static void scales(const Block& w, Scales& s) {
        __m128i b[K_SCALE_SIZE];
        for (int k = 0; k < K_SCALE_SIZE; k++)
            b[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales[k]));
        __m128i sc[8], m[8];  // the 16 rows' scales and mins, one byte lane per row
        q4_K_scales_mins_rows(b, sc, m);
        for (int j = 0; j < 8; j++) s.sc[j] = _mm512_cvtepu8_epi32(sc[j]);
        for (int i = 0; i < 4; i++) {
            const __m256i pairs = _mm256_set_m128i(_mm_unpackhi_epi8(m[2 * i], m[2 * i + 1]),
                                                   _mm_unpacklo_epi8(m[2 * i], m[2 * i + 1]));
            s.min_pairs[i] = _mm512_cvtepu8_epi16(pairs);
        }
    }
    static void chunk(const Block& w, int c, __m512i* op) {
        if constexpr (FifthBits) {
            planes_chunk(w.q, c, op,
                         [](auto plane, int m) { return q5_K_word<__m512i>(plane, m); });
        } else {
            const __m512i mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 8
            for (int m = 0; m < 8; m++) {
                const __m512i v = _mm512_loadu_si512(w.qs[8 * c + m]);
                op[m] = _mm512_and_si512(v, mask);
                op[8 + m] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
            }
        }
    }
    static int sub(int c, int k) {
        return 2 * c + k;
    }
    static __m512i sub_init(const block_q8_K&, int) {
        return _mm512_setzero_si512();
    }
    static __m512i sub_scale(const Block&, const Scales& s, int sub) {
        return s.sc[sub];
    }
    // The mins: sum_j m_j * (sum of sub-block j's activations), times -dmin * d_x.
    static __m512 finish(const Block& w, const Scales& s, const block_q8_K& x, __m512 acc) {
        alignas(16) int32_t pairs[4];  // sums of 32 activations (at most 4096), two per word
        _mm_store_si128(reinterpret_cast<__m128i*>(pairs), q8_K_sums32(x));
        __m512i msum = _mm512_setzero_si512();
        for (int i = 0; i < 4; i++)
            msum = _mm512_dpwssd_epi32(msum, s.min_pairs[i], _mm512_set1_epi32(pairs[i]));
        const __m512 dmin =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.dmin)));
        return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, _mm512_set1_ps(x.d)),
                                acc);
    }
};

using Q4K = KMin<block_q4_Kx16, false>;
using Q5K = KMin<block_q5_Kx16, true>;

// The types with a scale per 16 values, read per chunk (4 loads), and nothing to add after the
// scaled sums (Q6_K, the grid types' levels): 4 sub-blocks of 4 words a chunk.
struct Sixteens {
    static constexpr int kSubs = 4;
    static constexpr int kWords = 4;
    static constexpr int kValues = 16;
    static constexpr int kDotShift = 0;
    struct Scales {};
    template <class Block>
    static void scales(const Block&, Scales&) {}
    template <class Block>
    static __m512 finish(const Block&, const Scales&, const block_q8_K&, __m512 acc) {
        return acc;
    }
};

// Q6_K: chunk c holds sub-blocks 4c..4c+3, op[4k + m] word m of sub-block 4c + k (q6_K_word).
struct Q6K : Sixteens {
    using Block = block_q6_Kx16;
    static void chunk(const Block& w, int c, __m512i* op) {
        planes_chunk(w.q, c, op, [](auto plane, int m) { return q6_K_word<__m512i>(plane, m); });
    }
    static int sub(int c, int k) { return 4 * c + k; }
    // The levels are q - 32: each sub-block's dot starts at -32 times its activations' sum.
    static __m512i sub_init(const block_q8_K& x, int sub) {
        return _mm512_set1_epi32(-32 * x.bsums[sub]);
    }
    static __m512i sub_scale(const Block& w, const Scales&, int sub) {
        return _mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales[sub])));
    }
};

// IQ4_XS: chunk c holds sub-blocks 2c and 2c + 1, words 4 (2c + k)..+3 each: IQ4_NL's nibbles
// (the low ones values 4i.., the high ones 16 + 4i..) looked up as levels plus 128, vpdpbusd's
// unsigned operand. Each sub-block's dot starts at -128 times its activations' sum (two bsums),
// so it is the signed levels' exact dot before its signed scale multiplies it.
struct IQ4XS {
    using Block = block_iq4_xsx16;
    static constexpr int kSubs = 2;
    static constexpr int kWords = 8;
    static constexpr int kValues = 32;
    static constexpr int kDotShift = 0;

    struct Scales {
        __m512i sc[8];
    };
    static void scales(const Block& w, Scales& s) {
        __m128i l[4], h[2], sc[8];
        for (int k = 0; k < 4; k++)
            l[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales_l[k]));
        for (int k = 0; k < 2; k++)
            h[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales_h[k]));
        iq4_xs_scales_rows(l, h, sc);
        for (int j = 0; j < 8; j++) s.sc[j] = _mm512_cvtepi8_epi32(sc[j]);
    }
    static void chunk(const Block& w, int c, __m512i* op) {
        const __m512i table = iq4nl_table_u8(), mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) {
            const int k = m / 4, i = m % 4;
            const __m512i v = _mm512_loadu_si512(w.qs[8 * c + m]);
            op[8 * k + i] = _mm512_shuffle_epi8(table, _mm512_and_si512(v, mask));
            op[8 * k + 4 + i] =
                _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), mask));
        }
    }
    static int sub(int c, int k) {
        return 2 * c + k;
    }
    static __m512i sub_init(const block_q8_K& x, int sub) {
        return _mm512_set1_epi32(-128 * (x.bsums[2 * sub] + x.bsums[2 * sub + 1]));
    }
    static __m512i sub_scale(const Block&, const Scales& s, int sub) {
        return s.sc[sub];
    }
    static __m512 finish(const Block&, const Scales&, const block_q8_K&, __m512 acc) {
        return acc;
    }
};

// Q2_K: chunk c holds sub-blocks 4c..4c+3, values 64c.., units 2c and 2c + 1 (32 values each:
// unit u is 128h + 32k + l with h = u / 4, k = u % 4, its levels bits 2k and 2k + 1 of qs words
// 8h..8h+7); op[8k' + m] is word m of unit 2c + k' (sub-block 4c + 2k' + m / 4). The levels are
// masked where they lie, not shifted down, so the operand is 4^k q: one instruction an operand
// where a shift and a mask took two. Q2K's sub_scale multiplies unit k's scale by 4^(3-k), so
// every sub-block's product, and the super-block's sum, is 64 times the true one (kDotShift).
void two_bit_chunk(const uint8_t (*qs)[kPackRows][4], int c, __m512i* op) {
    const int h = c / 2, k0 = 2 * (c % 2);
    const __m512i mask0 = _mm512_set1_epi8(static_cast<char>(3 << 2 * k0));
    const __m512i mask1 = _mm512_set1_epi8(static_cast<char>(3 << 2 * (k0 + 1)));
#pragma GCC unroll 8
    for (int m = 0; m < 8; m++) {
        const __m512i q = _mm512_loadu_si512(qs[8 * h + m]);
        op[m] = _mm512_and_si512(q, mask0);
        op[8 + m] = _mm512_and_si512(q, mask1);
    }
}

// Q3_K: levels q - 4 (q < 8), signed 6-bit scales decoded from the 12 bytes per row in registers.
struct Q3K {
    using Block = block_q3_Kx16;
    static constexpr int kSubs = 4;
    static constexpr int kWords = 4;
    static constexpr int kValues = 16;
    static constexpr int kDotShift = 0;

    // The 16 sub-blocks' scales as bytes, sc[j][r] of sub-block j and row r, each widened to
    // int32 lanes where it is used (16 registers of them spilled anyway).
    struct Scales {
        alignas(64) int8_t sc[16][kPackRows];
    };
    // Bytes 0-3, 4-7 and 8-11 of the rows' scales, one 128-bit lane per byte: scale 4i + j
    // (i < 4, j < 4) has its low 4 bits in byte j (i even) or j + 4 (i odd), the high nibble for
    // i >= 2, and its top 2 in byte 8 + j, bits 2i.
    static void scales(const Block& w, Scales& s) {
        const __m512i b0 = _mm512_loadu_si512(w.scales[0]), b4 = _mm512_loadu_si512(w.scales[4]);
        const __m512i b8 = _mm512_loadu_si512(w.scales[8]);
        const __m512i low4 = _mm512_set1_epi8(0x0f), low2 = _mm512_set1_epi8(3);
        const __m512i offset = _mm512_set1_epi8(32);
        for (int i = 0; i < 4; i++) {
            const __m512i lo = i % 2 ? b4 : b0;
            const __m512i nib = _mm512_and_si512(i >= 2 ? _mm512_srli_epi16(lo, 4) : lo, low4);
            const __m512i top =
                _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(b8, 2 * i), low2), 4);
            _mm512_store_si512(s.sc[4 * i], _mm512_sub_epi8(_mm512_or_si512(nib, top), offset));
        }
    }
    static void chunk(const Block& w, int c, __m512i* op) {
        planes_chunk(w.q, c, op, [](auto plane, int m) { return q3_K_word<__m512i>(plane, m); });
    }
    static int sub(int c, int k) { return 4 * c + k; }
    static __m512i sub_init(const block_q8_K& x, int sub) {
        return _mm512_set1_epi32(-4 * x.bsums[sub]);
    }
    static __m512i sub_scale(const Block&, const Scales& s, int sub) {
        return _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(s.sc[sub])));
    }
    static __m512 finish(const Block&, const Scales&, const block_q8_K&, __m512 acc) { return acc; }
};

// Q2_K: levels q (q < 4), the 4-bit scale the low nibble of the row's byte, the min the high one.
struct Q2K {
    using Block = block_q2_Kx16;
    static constexpr int kSubs = 4;
    static constexpr int kWords = 4;
    static constexpr int kValues = 16;
    static constexpr int kDotShift = 6;

    // The mins as int16 pairs (m_2i, m_2i+1) per lane, for vpdpwssd against bsums pairs.
    struct Scales {
        __m512i min_pairs[8];
    };
    // Sub-blocks 2i and 2i + 1 are 32 bytes, row by row: widened to words, the high nibble is
    // the word shifted by 4, and one permutation pairs each row's two.
    static void scales(const Block& w, Scales& s) {
        const __m512i pair_rows =
            _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                             22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        for (int i = 0; i < 8; i++) {
            const __m512i b = _mm512_cvtepu8_epi16(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.scales[2 * i])));
            s.min_pairs[i] = _mm512_permutexvar_epi16(pair_rows, _mm512_srli_epi16(b, 4));
        }
    }
    static void chunk(const Block& w, int c, __m512i* op) { two_bit_chunk(w.qs, c, op); }
    static int sub(int c, int k) { return 4 * c + k; }
    static __m512i sub_init(const block_q8_K&, int) { return _mm512_setzero_si512(); }
    // Sub-block j is in unit j / 2, bits 2k of its bytes with k = j / 2 % 4 (two_bit_chunk).
    static __m512i sub_scale(const Block& w, const Scales&, int sub) {
        const __m512i sc = _mm512_and_si512(
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales[sub]))),
            _mm512_set1_epi32(0x0f));
        return _mm512_sll_epi32(sc, _mm_cvtsi32_si128(2 * (3 - sub / 2 % 4)));
    }
    // The mins: sum_g m_g bsum_g, times -dmin * d_x.
    static __m512 finish(const Block& w, const Scales& s, const block_q8_K& x, __m512 acc) {
        __m512i msum = _mm512_setzero_si512();
        for (int i = 0; i < 8; i++) {  // bsums 2i and 2i + 1 as one word, broadcast from memory
            const __m512i pair = _mm512_broadcastd_epi32(_mm_loadu_si32(x.bsums + 2 * i));
            msum = _mm512_dpwssd_epi32(msum, s.min_pairs[i], pair);
        }
        const __m512 dmin =
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.dmin)));
        return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, _mm512_set1_ps(x.d)),
                                acc);
    }
};

// The grid types' decoded levels (block_gridx16): chunk c is words 16c..16c+15, sub-blocks
// 4c..4c+3 of 4 words each, the levels plus 64 as they are stored.
struct Grid : Sixteens {
    using Block = block_gridx16;
    static void chunk(const Block& w, int c, __m512i* op) {
#pragma GCC unroll 16
        for (int i = 0; i < kChunkOps; i++) op[i] = _mm512_loadu_si512(w.qs[16 * c + i]);
    }
    static int sub(int c, int k) {
        return 4 * c + k;
    }
    static __m512i sub_init(const block_q8_K& x, int sub) {
        return _mm512_set1_epi32(-kGridOffset * x.bsums[sub]);
    }
    static __m512i sub_scale(const Block& w, const Scales&, int sub) {
        return _mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales[sub])));
    }
};

// The 16 rows' d as floats: fp16 in the files' types, float in the grid types' decoded levels.
__m512 row_d(const fp16_t (&d)[kPackRows]) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
}
__m512 row_d(const float (&d)[kPackRows]) {
    return _mm512_loadu_ps(d);
}

// lead: whether the tile prefetches its weights (pass_lead, as gemm asks it).
template <class K, int NT>
void tile(int64_t nb, const typename K::Block* w, const uint8_t* x, size_t x_stride, float* y,
          int64_t y_stride, __mmask16 rows, bool lead) {
    using Block = typename K::Block;
    const auto act = [&](int t, int64_t b) -> const block_q8_K& {
        return reinterpret_cast<const block_q8_K*>(x + t * x_stride)[b];
    };
    __m512 acc[NT];
    for (int t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        typename K::Scales s;
        K::scales(w[b], s);
        __m512i isum[NT];
        for (int t = 0; t < NT; t++) isum[t] = _mm512_setzero_si512();
        for (int c = 0; c < kChunks; c++) {
            // A quarter of the next super-block column (2-3 KiB ahead) into L1, and a quarter
            // of the column kFarAhead bytes ahead into L2, spread over the work: a lead on top
            // of the hardware prefetchers.
            constexpr size_t kQuarter = sizeof(Block) / kChunks;
            const char* here = reinterpret_cast<const char*>(w + b) + c * kQuarter;
            if (lead) {
#pragma GCC unroll 16
                for (size_t off = 0; off < kQuarter; off += 64) {
                    _mm_prefetch(here + sizeof(Block) + off, _MM_HINT_T0);
                    _mm_prefetch(here + kFarAhead + off, _MM_HINT_T1);
                }
            }
            __m512i op[kChunkOps];
            K::chunk(w[b], c, op);
            __m512i sc[K::kSubs];
#pragma GCC unroll 4
            for (int k = 0; k < K::kSubs; k++) sc[k] = K::sub_scale(w[b], s, K::sub(c, k));
            // Token by token, all of the chunk's sub-blocks: the token's sum (in memory: NT of
            // them do not fit the registers beside the operands) is read and written once per
            // chunk, not once per sub-block, and the sub-blocks' chains overlap. Bench-kernels
            // matmul 2048x2048x64, 1 thread: Q3_K +20%, Q6_K +12%, Q2_K, Q5_K, IQ4_XS +5%.
            for (int t = 0; t < NT; t++) {
                __m512i part = _mm512_setzero_si512();
#pragma GCC unroll 4
                for (int k = 0; k < K::kSubs; k++) {
                    const int8_t* xq = act(t, b).qs + K::kValues * K::sub(c, k);
                    __m512i dot = K::sub_init(act(t, b), K::sub(c, k));
#pragma GCC unroll 8
                    for (int i = 0; i < K::kWords; i++) {
                        int32_t v;
                        __builtin_memcpy(&v, xq + 4 * i, 4);
                        dot = _mm512_dpbusd_epi32(dot, op[K::kWords * k + i], _mm512_set1_epi32(v));
                    }
                    part = _mm512_add_epi32(part, _mm512_mullo_epi32(dot, sc[k]));
                }
                isum[t] = _mm512_add_epi32(isum[t], part);
            }
        }
        const __m512 wd = row_d(w[b].d);
        for (int t = 0; t < NT; t++) {
            const block_q8_K& xb = act(t, b);
            if constexpr (K::kDotShift != 0) isum[t] = _mm512_srai_epi32(isum[t], K::kDotShift);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]),
                                     _mm512_mul_ps(wd, _mm512_set1_ps(xb.d)), acc[t]);
            acc[t] = K::finish(w[b], s, xb, acc[t]);
        }
    }
    for (int t = 0; t < NT; t++) _mm512_mask_storeu_ps(y + t * y_stride, rows, acc[t]);
}

template <class K>
void gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y, int64_t y_stride,
          int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wb = static_cast<const typename K::Block*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    // Both leads whenever the pass leads at all: decode_l1 was measured on the 32-value blocks
    // and BF16 only.
    const bool lead = pass_lead(nt, Pass::Vpdpbusd) != Lead::None;
    FK::with_count<kPackTokens>(
        nt, [&]<int NT>() { tile<K, NT>(n / QK_K, wb, xb, x_stride, y, y_stride, rows, lead); });
}

}  // namespace

void packed_gemm_q4_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Q4K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q5_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Q5K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q6_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Q6K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_iq4_xs(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                        int64_t y_stride, int nr, int nt) {
    gemm<IQ4XS>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q3_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Q3K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q2_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Q2K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_grid(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    gemm<Grid>(n, w, x, x_stride, y, y_stride, nr, nt);
}

}  // namespace ggml_lite::avx512
