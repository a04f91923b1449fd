// The grid types' packed stripes with AVX-512VL and VNNI on 256-bit vectors
// (packed_stripes-inl.h): each row's 32 decoded sign bits are a mask register, under which the
// magnitudes are negated, and vpdpbusd sums |x| times the level signed by x, exactly.
#include <immintrin.h>

#include "ggml-lite/x86/packed_stripes-inl.h"
#include "ggml-lite/x86/packed_stripes.h"

namespace ggml_lite {
namespace {

struct Avx512Rows {
    template <class S>
    static void levels(const typename S::Quad& w, int ib, __m128i signs, __m256i* q) {
        alignas(16) uint32_t bits[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(bits), signs);
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m256i m = S::magnitudes(w, ib, i);
            q[i] = _mm256_mask_sub_epi8(m, _cvtu32_mask32(bits[i]), _mm256_setzero_si256(), m);
        }
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
