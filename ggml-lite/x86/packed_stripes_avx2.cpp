// The grid types' packed stripes in AVX2 (packed_stripes-inl.h): each row's sign bits
// spread to byte masks by pshufb and a compare, the levels' products with the activations exact
// in vpmaddubsw (|x| times the level signed by x: at most 2 * 128 * 62 a pair). Compiled twice, as
// packed_avx2.cpp is (packed_avx2.h): for the avx2 table, and with AVX-VNNI for the avx2_vnni
// table, whose vpdpbusd replaces a row's vpmaddubsw and vpmaddwd.
#include <immintrin.h>

#include "ggml-lite/x86/packed_avx2.h"
#include "ggml-lite/x86/packed_stripes-inl.h"
#include "ggml-lite/x86/packed_stripes.h"

namespace ggml_lite {
namespace {

struct Avx2Rows {
    template <class S>
    static void levels(const typename S::Quad& w, int ib, __m128i signs, __m256i* q) {
        const __m256i s = _mm256_broadcastsi128_si256(signs);
        const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m256i neg = _mm256_cmpeq_epi8(_mm256_and_si256(row_bytes(s, i), bit), bit);
            q[i] = _mm256_sign_epi8(S::magnitudes(w, ib, i),
                                    _mm256_or_si256(neg, _mm256_set1_epi8(1)));
        }
    }
    // Decode signs the magnitudes once a sub-block, as prefill does: signing the activations
    // instead, row by row, saved nothing here and cost IQ3_XXS 13% (in cache).
    struct Signs {};
    template <class S>
    static void operands(const typename S::Quad& w, int ib, __m256i* q, Signs&) {
        levels<S>(w, ib, S::signs(w, ib), q);
    }
    static __m256i signed_dots(const __m256i* q, const Signs&, __m256i y) {
        return dots(q, y);
    }
    static __m256i dots(const __m256i* q, __m256i y) {
        const __m256i ay = _mm256_abs_epi8(y);
#if defined(LILA_AVX2_VNNI)
        const auto dot = [&](__m256i qi) {
            return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), ay, _mm256_sign_epi8(qi, y));
        };
#else
        const __m256i one = _mm256_set1_epi16(1);
        const auto dot = [&](__m256i qi) {
            return _mm256_madd_epi16(_mm256_maddubs_epi16(ay, _mm256_sign_epi8(qi, y)), one);
        };
#endif
        return transpose_sum(dot(q[0]), dot(q[1]), dot(q[2]), dot(q[3]));
    }
};

}  // namespace

namespace LILA_AVX2_NS {

std::span<const PackedOverride> stripe_kernels() {
    return kStripeKernels<Avx2Rows>;
}

}  // namespace LILA_AVX2_NS
}  // namespace ggml_lite
