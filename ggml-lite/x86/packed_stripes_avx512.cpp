// The grid types' packed stripes with AVX-512VL and VNNI on 256-bit vectors
// (packed_stripes-inl.h): each row's 32 decoded sign bits are a mask register, under which
// decode negates the activations, and vpdpbusd sums the magnitudes times them, exactly.
#include <immintrin.h>

#include "ggml-lite/x86/packed_stripes-inl.h"
#include "ggml-lite/x86/packed_stripes.h"

namespace ggml_lite {
namespace {

struct Avx512Rows {
    struct Signs {
        __mmask32 row[4];
    };
    static Signs masks(__m128i signs) {
        alignas(16) uint32_t bits[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(bits), signs);
        return {{_cvtu32_mask32(bits[0]), _cvtu32_mask32(bits[1]), _cvtu32_mask32(bits[2]),
                 _cvtu32_mask32(bits[3])}};
    }
    static __m256i negate(__m256i v, __mmask32 k) {
        return _mm256_mask_sub_epi8(v, k, _mm256_setzero_si256(), v);
    }
    template <class S>
    static void levels(const typename S::Quad& w, int ib, __m128i signs, __m256i* q) {
        const Signs s = masks(signs);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) q[i] = negate(S::magnitudes(w, ib, i), s.row[i]);
    }
    // Decode puts the signs on the activations (Q8_K's are -127..127, so a negated one is a byte
    // too): one operation a row and token, where signing the magnitudes and multiplying them by
    // the activations' magnitudes signed by the activations takes two (IQ2_XXS 7% faster in
    // cache; on AVX2 the same change gained nothing).
    template <class S>
    static void operands(const typename S::Quad& w, int ib, __m256i* m, Signs& s) {
        s = masks(S::signs(w, ib));
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) m[i] = S::magnitudes(w, ib, i);
    }
    static __m256i signed_dots(const __m256i* m, const Signs& s, __m256i y) {
        const __m256i zero = _mm256_setzero_si256();
        return transpose_sum(_mm256_dpbusd_epi32(zero, m[0], negate(y, s.row[0])),
                             _mm256_dpbusd_epi32(zero, m[1], negate(y, s.row[1])),
                             _mm256_dpbusd_epi32(zero, m[2], negate(y, s.row[2])),
                             _mm256_dpbusd_epi32(zero, m[3], negate(y, s.row[3])));
    }
    static __m256i dots(const __m256i* q, __m256i y) {
        const __m256i ay = _mm256_abs_epi8(y), zero = _mm256_setzero_si256();
        return transpose_sum(_mm256_dpbusd_epi32(zero, ay, _mm256_sign_epi8(q[0], y)),
                             _mm256_dpbusd_epi32(zero, ay, _mm256_sign_epi8(q[1], y)),
                             _mm256_dpbusd_epi32(zero, ay, _mm256_sign_epi8(q[2], y)),
                             _mm256_dpbusd_epi32(zero, ay, _mm256_sign_epi8(q[3], y)));
    }
};

}  // namespace

namespace avx512 {

std::span<const PackedOverride> stripe_kernels() {
    return kStripeKernels<Avx512Rows>;
}

}  // namespace avx512
}  // namespace ggml_lite
