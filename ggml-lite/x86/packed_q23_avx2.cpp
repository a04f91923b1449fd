// AVX2 kernels for packed Q3_K and Q2_K weights (packed.h: block_q3_Kx16, block_q2_Kx16) against
// Q8_K activations, on packed_avx2-inl.h's k-quant tile.
//
// Unit u (32 values, 128H + 32k + l with H = u / 4, k = u % 4) is bits 2k and 2k + 1 of qs words
// 8H..8H+7; Q3_K adds its hmask bit (bit u of hmask word m) as 4. A scale covers 16 values, 4
// words: pair sums are at most 2 * 7 * 128, so the 4 words of a sub-block add up in int16 exactly.
//
// Compiled twice, as packed_avx2.cpp is (packed_avx2.h): only the two entry points have external
// linkage, in each copy's namespace (see kernels_avx512.cpp on why nothing else may be shared
// with the portable code).
#include <immintrin.h>

#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/x86/packed_avx2-inl.h"

namespace ggml_lite::LILA_AVX2_NS {
namespace {

// Word m of unit u: its 2-bit fields of half h as unsigned bytes.
__m256i two_bit_word(const uint8_t (*qs)[kPackRows][4], int h, int u, int m) {
    const __m256i q =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs[8 * (u / 4) + m][kHalfRows * h]));
    return _mm256_and_si256(_mm256_srli_epi16(q, 2 * (u % 4)), _mm256_set1_epi8(3));
}

// The scales of sub-blocks 2p and 2p + 1 of 8 rows (bytes 0-7 and 8-15 of v): sc[0] and sc[1]
// each scale in both halves of its row's lane (a vpmaddwd factor); row_pairs the pair
// (s_2p, s_2p+1) per lane (against a pair of bsums).
template <bool Signed>
void twice_pair(__m128i v, __m256i* sc) {
    sc[0] = twice<Signed>(v);
    sc[1] = twice<Signed>(_mm_unpackhi_epi64(v, v));
}
template <bool Signed>
__m256i row_pairs(__m128i v) {
    return pairs<Signed>(v, _mm_srli_si128(v, 8));
}

// Half h's bytes of scale bytes k and k2 of a block column: 8 rows each.
__m128i two_rows(const uint8_t (*scales)[kPackRows], int k, int k2, int h) {
    return _mm_unpacklo_epi64(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales[k] + kHalfRows * h)),
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales[k2] + kHalfRows * h)));
}

// Q3_K: levels q - 4, signed 6-bit scales decoded in registers, two sub-blocks at a time.
struct Q3K : OffsetLevels16<2> {
    using Block = block_q3_Kx16;
    static constexpr int kGroup = 4;
    static constexpr int kScaleWords = 4;
    struct Scales {
        __m256i sc[16];
        __m256i sc_pairs[8];
        // Scale j's low 4 bits are in byte j % 8 (the high nibble for j >= 8), its top 2 in byte
        // 8 + j % 4, bits 2 (j / 4): for scales 2p and 2p + 1, bytes (2p % 8, 2p % 8 + 1) and
        // (8 + 2p % 4, 9 + 2p % 4).
        Scales(const Block& w, int h) {
            const __m128i low4 = _mm_set1_epi8(0x0f), low2 = _mm_set1_epi8(3);
            __m128i lo[4], top[2];
            for (int i = 0; i < 4; i++) lo[i] = two_rows(w.scales, 2 * i, 2 * i + 1, h);
            for (int i = 0; i < 2; i++) top[i] = two_rows(w.scales, 8 + 2 * i, 9 + 2 * i, h);
            for (int p = 0; p < 8; p++) {
                const __m128i l = lo[p % 4];
                const __m128i nib = _mm_and_si128(p < 4 ? l : _mm_srli_epi16(l, 4), low4);
                const __m128i hi = _mm_and_si128(_mm_srli_epi16(top[p % 2], 2 * (p / 2)), low2);
                const __m128i v =
                    _mm_sub_epi8(_mm_or_si128(nib, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
                twice_pair<true>(v, sc + 2 * p);
                sc_pairs[p] = row_pairs<true>(v);
            }
        }
    };
    static __m256i word(const Block& w, int h, int u, int m) {
        // Bit u of each hmask byte moved to bit 2 (16-bit shifts keep it in its byte).
        const __m256i hm =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.hmask[m][kHalfRows * h]));
        const __m256i at2 = u >= 2 ? _mm256_srli_epi16(hm, u - 2) : _mm256_slli_epi16(hm, 2 - u);
        return _mm256_or_si256(two_bit_word(w.qs, h, u, m),
                               _mm256_and_si256(at2, _mm256_set1_epi8(4)));
    }
};

// Q2_K: levels q, a 4-bit scale (low nibble) and min (high nibble) per 16 values.
struct Q2K : UnsignedLevels {
    using Block = block_q2_Kx16;
    static constexpr int kGroup = 4;
    static constexpr int kScaleWords = 4;
    struct Scales {
        __m256i sc[16];
        __m256i min_pairs[8];
        Scales(const Block& w, int h) {
            const __m128i low4 = _mm_set1_epi8(0x0f);
            for (int p = 0; p < 8; p++) {
                const __m128i v = two_rows(w.scales, 2 * p, 2 * p + 1, h);
                twice_pair<false>(_mm_and_si128(v, low4), sc + 2 * p);
                min_pairs[p] = row_pairs<false>(_mm_and_si128(_mm_srli_epi16(v, 4), low4));
            }
        }
    };
    static void unit(const Block& w, int h, int u, __m256i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) op[m] = two_bit_word(w.qs, h, u, m);
    }
    static __m256i scale(const Scales& s, int u, int m) {
        return s.sc[2 * u + m / 4];
    }
    static __m256i init(const Scales&, const block_q8_K&) {
        return _mm256_setzero_si256();
    }
    // The mins: sum_g m_g bsum_g, times -dmin * d_x.
    static __m256 finish(const Block& w, int h, const Scales& s, const block_q8_K& x, __m256 acc) {
        const __m256 dmin = _mm256_cvtph_ps(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.dmin + kHalfRows * h)));
        return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(bsum_dot(s.min_pairs, x)),
                                _mm256_mul_ps(dmin, _mm256_set1_ps(x.d)), acc);
    }
};

}  // namespace

void packed_gemm_q3_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    k_gemm<Q3K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemm_q2_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt) {
    k_gemm<Q2K>(n, w, x, x_stride, y, y_stride, nr, nt);
}

}  // namespace ggml_lite::LILA_AVX2_NS
