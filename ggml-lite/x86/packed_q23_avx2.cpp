// AVX2 kernels for packed Q3_K and Q2_K weights (packed.h: block_q3_Kx16, block_q2_Kx16) against
// Q8_K activations, on packed_avx2-inl.h's k-quant tile.
//
// Unit u (32 values, 128H + 32k + l with H = u / 4, k = u % 4) is, for Q2_K, bits 2k and 2k + 1
// of qs words 8H..8H+7; for Q3_K, its three planes (q3_K_word). A scale covers 16 values, 4
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

// Half h's bytes of scale rows k and k2 (two_rows).
__m256i scale_rows(const uint8_t (*scales)[kPackRows], int k, int k2, int h) {
    return two_rows(half_bytes(scales[k], h), half_bytes(scales[k2], h));
}

// Q3_K: levels q - 4, signed 6-bit scales decoded in registers, two sub-blocks at a time.
struct Q3K : OffsetLevels16<2> {
    using Block = block_q3_Kx16;
    static constexpr int kGroup = 4;
    static constexpr int kScaleWords = 4;
    // Half by half: both halves at each word, bench-kernels incache/q3_k took 1.15x as long.
    static constexpr bool kHalfByHalf = true;
    struct Scales {
        __m256i sc[16];
        __m256i sc_pairs[8];
        // Scale j's low 4 bits are in byte j % 8 (the high nibble for j >= 8), its top 2 in byte
        // 8 + j % 4, bits 2 (j / 4): for scales 2p and 2p + 1, bytes (2p % 8, 2p % 8 + 1) and
        // (8 + 2p % 4, 9 + 2p % 4).
        Scales(const Block& w, int h) {
            const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(3);
            const __m256i offset = _mm256_set1_epi16(32);
            __m256i lo[4], top[2];
            for (int i = 0; i < 4; i++) lo[i] = scale_rows(w.scales, 2 * i, 2 * i + 1, h);
            for (int i = 0; i < 2; i++) top[i] = scale_rows(w.scales, 8 + 2 * i, 9 + 2 * i, h);
            for (int p = 0; p < 8; p++) {
                const __m256i l = lo[p % 4];
                const __m256i nib = (p < 4 ? l : _mm256_srli_epi16(l, 4)) & low4;
                const __m256i hi = _mm256_srli_epi16(top[p % 2], 2 * (p / 2)) & low2;
                // The scales plus 32 (6 bits, unsigned); the offset comes off in int16.
                const __m256i v = nib | _mm256_slli_epi16(hi, 4);
                sc[2 * p] = _mm256_sub_epi16(twice<false>(v), offset);
                sc[2 * p + 1] = _mm256_sub_epi16(twice<false, 8>(v), offset);
                sc_pairs[p] = _mm256_sub_epi16(pairs<false>(v), offset);
            }
        }
    };
    static __m256i word(const Block& w, int h, int u, int m) {
        return q3_K_word<__m256i>(
            [&](int j) {
                return _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(w.q[u][j][kHalfRows * h]));
            },
            m);
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
            const __m256i low4 = _mm256_set1_epi16(0x0f);
            for (int p = 0; p < 8; p++) {
                const __m256i v = scale_rows(w.scales, 2 * p, 2 * p + 1, h);
                sc[2 * p] = twice<false>(v) & low4;
                sc[2 * p + 1] = twice<false, 8>(v) & low4;
                // A zero-extended byte's high nibble is the int16 shifted right by 4.
                min_pairs[p] = _mm256_srli_epi16(pairs<false>(v), 4);
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

void packed_gemv2_q2_K(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1) {
    k_gemv2<Q2K>(n, w0, w1, x, y0, y1, nr0, nr1);
}

}  // namespace ggml_lite::LILA_AVX2_NS
