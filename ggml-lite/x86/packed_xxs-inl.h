// IQ2_XXS's and IQ3_XXS's packed stripes (packed.h: block_grid_xxsx4) against Q8_K: one
// super-block column of 4 rows a step, each sub-block's 16 sign bytes decoded and its 4 scales
// made by one instruction sequence for the 4 rows, then per row the grid magnitudes looked up,
// negated where the signs say, and multiplied exactly by the activations. Included by
// packed_xxs_avx2.cpp and packed_xxs_avx512.cpp, each compiled with its ISA's flags, which give
// the per-row step (Rows::dots); everything here is in an anonymous namespace, so each file has
// its own copy.
//
// The integer sums are exact and the float step is the scalar twin's (kernels_scalar.cpp:
// packed_gemm_xxs): sum = fma(isum, (d kScale) d_x, sum), row by row in 4 lanes, so the results
// are its bits, whatever nr and nt are.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "ggml-lite/fp16.h"
#include "ggml-lite/iq_grids.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"

namespace ggml_lite {
namespace {

// The 32 grid magnitudes of row i's sub-block ib, value 0 in byte 0.
inline __m256i xxs_magnitudes(const block_iq2_xxsx4& w, int ib, int i) {
    const uint8_t* g = w.grid[ib][i];
    const auto m = [&](int j) { return static_cast<long long>(iq2xxs_grid[g[j]]); };
    return _mm256_setr_epi64x(m(0), m(1), m(2), m(3));
}
inline __m256i xxs_magnitudes(const block_iq3_xxsx4& w, int ib, int i) {
    const uint8_t* g = w.grid[ib][i];
    const auto m = [&](int j) { return static_cast<int>(iq3xxs_grid[g[j]]); };
    return _mm256_setr_epi32(m(0), m(1), m(2), m(3), m(4), m(5), m(6), m(7));
}

// A sub-block's 16 sign bytes (byte 4i + l: row i's values 8l..8l + 7) decoded, grid_signs on
// each: bit k of byte 4i + l set where value 8l + k of row i is negated. Bit 0 of each byte is
// cleared first, so the 16-bit shift moves no scale bit into the byte below.
inline __m128i xxs_signs(__m128i codes) {
    const __m128i c = _mm_and_si128(codes, _mm_set1_epi8(static_cast<char>(0xfe)));
    return _mm_xor_si128(c, _mm_srli_epi16(c, 1));
}

// The 4 rows' scales ls = 2s + 1 of a sub-block as int32 lanes: bit 0 of byte 4i + l is bit l
// of row i's s, weighed by 2, 4, 8, 16 and summed per row.
inline __m128i xxs_scales(__m128i codes) {
    const __m128i bits = _mm_and_si128(codes, _mm_set1_epi8(1));
    const __m128i pairs = _mm_maddubs_epi16(bits, _mm_set1_epi32(0x10080402));
    return _mm_add_epi32(_mm_madd_epi16(pairs, _mm_set1_epi16(1)), _mm_set1_epi32(1));
}

// Four rows' 8 int32 partial sums each as [r0, r1, r2, r3] in both 128-bit halves, each half
// summing the values of its own half (the caller adds the halves).
inline __m256i xxs_transpose_sum(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
    const __m256i s01 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(s0, s1), _mm256_unpackhi_epi32(s0, s1));
    const __m256i s23 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(s2, s3), _mm256_unpackhi_epi32(s2, s3));
    return _mm256_add_epi32(_mm256_unpacklo_epi64(s01, s23), _mm256_unpackhi_epi64(s01, s23));
}

// One super-block column of a stripe against one token's block: the 4 rows' sums advanced.
template <class Rows, class Quad, class Block>
inline __m128 xxs_step(const Quad& w, const block_q8_K& x, __m128 acc) {
    __m256i isum = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 32 * ib));
        const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.signs[ib]));
        const __m256i dots = Rows::dots(w, ib, y, xxs_signs(codes));
        isum = _mm256_add_epi32(
            isum, _mm256_mullo_epi32(_mm256_broadcastsi128_si256(xxs_scales(codes)), dots));
    }
    const __m128i i4 =
        _mm_add_epi32(_mm256_castsi256_si128(isum), _mm256_extracti128_si256(isum, 1));
    const __m128 d = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.d)));
    const __m128 scale = _mm_mul_ps(_mm_mul_ps(d, _mm_set1_ps(Block::kScale)), _mm_set1_ps(x.d));
    return _mm_fmadd_ps(_mm_cvtepi32_ps(i4), scale, acc);
}

// A stripe's nb super-block columns against one token: its 4 rows' sums. Not inlined into the
// loops over stripes and tokens, whose pointers and counts left the step too few general
// registers (GCC then parked the grid indices in vector registers, IQ2_XXS 25% slower).
template <class Rows, class Quad, class Block>
[[gnu::noinline]] __m128 xxs_stripe(const Quad* stripe, int64_t nb, const block_q8_K* xb) {
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; b++) acc = xxs_step<Rows, Quad, Block>(stripe[b], xb[b], acc);
    return acc;
}

// PackedKernels::gemm of a group of stripes: stripe by stripe, token by token, so a token reads
// its stripe front to back.
template <class Rows, class Quad, class Block>
void xxs_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y, int64_t y_stride,
              int nr, int nt) {
    const auto* quads = static_cast<const Quad*>(w);
    const int64_t nb = n / QK_K;
    for (int k = 0; 4 * k < nr; k++) {
        const Quad* stripe = quads + k * nb;
        const int rows = std::min(4, nr - 4 * k);
        for (int t = 0; t < nt; t++) {
            const auto* xb =
                reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(x) + t * x_stride);
            alignas(16) float out[4];
            _mm_store_ps(out, xxs_stripe<Rows, Quad, Block>(stripe, nb, xb));
            for (int i = 0; i < rows; i++) y[t * y_stride + 4 * k + i] = out[i];
        }
    }
}

}  // namespace
}  // namespace ggml_lite
