// The grid types' packed stripes (packed.h: block_grid_xxsx4 ...) against Q8_K: one
// super-block column of 4 rows a step. Per sub-block (32 values), the 4 rows' 16 sign bytes
// come from one load (and for the coded signs of IQ2_XXS, IQ2_XS and IQ3_XXS two operations)
// and their scales from a few instructions for all 4 rows; then per row the grid magnitudes are
// looked up, and their signs put on them or on the activations, as the ISA does best. Included by
// packed_stripes_avx2.cpp and packed_stripes_avx512.cpp, each compiled with its ISA's flags,
// which give Rows (levels: the 4 rows' signed levels of a sub-block; dots: their exact dots with
// 32 activations, transpose_sum'd; operands and signed_dots: the same dots for decode, the
// signs applied where the ISA applies them); everything here is in an anonymous namespace, so
// each file has its own copy.
//
// A type is a Stripe: its x4 block and file block, and magnitudes (row i's 32 grid magnitudes
// of sub-block ib, value 0 in byte 0), signs (the 16 sign bytes, byte 4i + l bit k set where
// value 8l + k of row i is negated) and scales (ls = 2s + 1 as int32: lane i row i's of values
// 0..15, lane 4 + i its of values 16..31). IQ1_S and IQ1_M, whose levels are signed already,
// give levels (the 4 rows' 8g + delta) instead of magnitudes and signs.
//
// The integer sums are exact and the float step is the scalar twin's (kernels_scalar.cpp:
// packed_gemm_stripes): sum = fma(isum, (d kScale) d_x, sum), row by row in 4 lanes, so the
// results are its bits, whatever nr and nt are.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "ggml-lite/fp16.h"
#include "ggml-lite/iq_grids.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"

namespace ggml_lite {
namespace {

inline __m128i load16(const void* p) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

// grid_signs on 16 codes at once. Bit 0 of each byte is cleared first, so the 16-bit shift
// moves no scale or index bit into the byte below.
inline __m128i decode_signs(__m128i codes) {
    const __m128i c = _mm_and_si128(codes, _mm_set1_epi8(static_cast<char>(0xfe)));
    return _mm_xor_si128(c, _mm_srli_epi16(c, 1));
}

// 4 rows' s (int32 lanes) as ls = 2s + 1.
inline __m128i odd_scales(__m128i s) {
    return _mm_add_epi32(_mm_slli_epi32(s, 1), _mm_set1_epi32(1));
}

// 4 rows' scale nibbles s (one byte per row, shifted right by `shift` first) as ls = 2s + 1.
inline __m128i nibble_scales(const uint8_t* bytes, int shift) {
    const __m128i b = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(grid_le32(bytes))));
    return odd_scales(_mm_and_si128(_mm_srli_epi32(b, shift), _mm_set1_epi32(15)));
}

// Byte j of 32 picks byte 4i + j / 8 of 16 (pshufb indexes within each 128-bit half, and both
// halves hold the 16 bytes): kRowBytes[i] spreads row i's 4 bytes of a sub-block (sign bytes,
// IQ1's deltas) over its 4 groups of 8 values.
constexpr auto kRowBytes = [] {
    std::array<std::array<uint8_t, 32>, 4> t{};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 32; j++) t[i][j] = static_cast<uint8_t>(4 * i + j / 8);
    return t;
}();

inline __m256i row_bytes(__m256i sixteen, int i) {
    return _mm256_shuffle_epi8(
        sixteen, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kRowBytes[i].data())));
}

// IQ2_XS's and IQ2_S's scales: a byte per row, its low nibble values 0..15, high 16..31.
inline __m256i half_scales(const uint8_t* bytes) {
    return _mm256_setr_m128i(nibble_scales(bytes, 0), nibble_scales(bytes, 4));
}

template <int Indices, class FileBlock>
struct XxsStripe {
    using Quad = block_grid_xxsx4<Indices>;
    using Block = FileBlock;
    static __m128i signs(const Quad& w, int ib) { return decode_signs(load16(w.signs[ib])); }
    // Bit 0 of byte 4i + l is bit l of row i's s: weighed by 2, 4, 8, 16 and summed per row.
    static __m256i scales(const Quad& w, int ib) {
        const __m128i bits = _mm_and_si128(load16(w.signs[ib]), _mm_set1_epi8(1));
        const __m128i pairs = _mm_maddubs_epi16(bits, _mm_set1_epi32(0x10080402));
        const __m128i ls =
            _mm_add_epi32(_mm_madd_epi16(pairs, _mm_set1_epi16(1)), _mm_set1_epi32(1));
        return _mm256_broadcastsi128_si256(ls);
    }
};

struct Iq2XxsStripe : XxsStripe<4, block_iq2_xxs> {
    static __m256i magnitudes(const Quad& w, int ib, int i) {
        const uint8_t* g = w.grid[ib][i];
        const auto m = [&](int l) { return static_cast<long long>(iq2xxs_grid[g[l]]); };
        return _mm256_setr_epi64x(m(0), m(1), m(2), m(3));
    }
};

struct Iq3XxsStripe : XxsStripe<8, block_iq3_xxs> {
    static __m256i magnitudes(const Quad& w, int ib, int i) {
        const uint8_t* g = w.grid[ib][i];
        const auto m = [&](int j) { return static_cast<int>(iq3xxs_grid[g[j]]); };
        return _mm256_setr_epi32(m(0), m(1), m(2), m(3), m(4), m(5), m(6), m(7));
    }
};

struct Iq2XsStripe {
    using Quad = block_iq2_xsx4;
    using Block = block_iq2_xs;
    static __m256i magnitudes(const Quad& w, int ib, int i) {
        const uint16_t* q = w.qs[ib][i];
        const auto m = [&](int l) { return static_cast<long long>(iq2xs_grid[q[l] & 511]); };
        return _mm256_setr_epi64x(m(0), m(1), m(2), m(3));
    }
    // The codes are the high bytes of the 16 words (rows 0 and 1 in the first 16 bytes).
    static __m128i signs(const Quad& w, int ib) {
        const __m128i lo = _mm_srli_epi16(load16(w.qs[ib][0]), 8);
        const __m128i hi = _mm_srli_epi16(load16(w.qs[ib][2]), 8);
        return decode_signs(_mm_packus_epi16(lo, hi));
    }
    static __m256i scales(const Quad& w, int ib) { return half_scales(w.scales[ib]); }
};

struct Iq2SStripe {
    using Quad = block_iq2_sx4;
    using Block = block_iq2_s;
    static __m256i magnitudes(const Quad& w, int ib, int i) {
        const uint8_t* g = w.grid[ib][i];
        const uint32_t qh = w.qh[ib][i];
        const auto m = [&](int l) {
            return static_cast<long long>(iq2s_grid[g[l] | ((qh >> (2 * l)) & 3) << 8]);
        };
        return _mm256_setr_epi64x(m(0), m(1), m(2), m(3));
    }
    static __m128i signs(const Quad& w, int ib) { return load16(w.signs[ib]); }
    static __m256i scales(const Quad& w, int ib) { return half_scales(w.scales[ib]); }
};

struct Iq3SStripe {
    using Quad = block_iq3_sx4;
    using Block = block_iq3_s;
    // Value j's magnitudes: the grid row at the 9-bit index g[j] | (bit j of qh) << 8.
    static __m256i magnitudes(const Quad& w, int ib, int i) {
        const uint8_t* g = w.grid[ib][i];
#if defined(__AVX512VL__)
        // Both candidate rows of each index from one load at its low byte (iq3s_grid_pairs),
        // and one vpermd picks between them under qh as a mask. With the indices computed in
        // general registers (as on AVX2 below), GCC parks them in xmm16-31, a move out and one
        // back each, and the one-token pass ran at half the speed it has without the ninth bit
        // (on a Zen 4: bench-kernels incache/iq3_s 1 thread 5-9 -> 7-11 G MAC/s, IQ3_S decode
        // 1.5-1.8x; docs/PERF.md).
        const auto m = [&](int j) { return static_cast<long long>(iq3s_grid_pairs[g[j]]); };
        const __m512i rows = _mm512_setr_epi64(m(0), m(1), m(2), m(3), m(4), m(5), m(6), m(7));
        const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
        const __m256i pick = _mm256_mask_add_epi32(low, w.qh[ib][i], low, _mm256_set1_epi32(1));
        return _mm512_castsi512_si256(_mm512_permutexvar_epi32(_mm512_castsi256_si512(pick), rows));
#else
        const uint32_t qh = w.qh[ib][i];
        const auto m = [&](int j) {
            return static_cast<int>(iq3s_grid[g[j] | ((qh >> j) & 1) << 8]);
        };
        return _mm256_setr_epi32(m(0), m(1), m(2), m(3), m(4), m(5), m(6), m(7));
#endif
    }
    static __m128i signs(const Quad& w, int ib) {
        return load16(w.signs[ib]);
    }
    static __m256i scales(const Quad& w, int ib) {
        return _mm256_broadcastsi128_si256(nibble_scales(w.scales[ib / 2], 4 * (ib % 2)));
    }
};

// IQ1's levels 8g + delta of the 4 rows of sub-block ib: each group's grid row (8 values g of -1,
// 0, 1) times 8 by vpsignb, plus its delta, the Stripe's deltas (16 bytes of -1 or 1, byte
// 4i + l row i's group l) spread over the row's values. The grid indices are computed in general
// registers, where the lookups need them (made in a vector and moved there: 10-15% slower).
template <class S>
inline void iq1_levels(const typename S::Quad& w, int ib, __m256i* q) {
    const __m256i deltas = _mm256_broadcastsi128_si256(S::deltas(w, ib));
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        const auto g = [&](int l) {
            return static_cast<long long>(iq1s_grid[S::index(w, ib, i, l)]);
        };
        const __m256i rows = _mm256_setr_epi64x(g(0), g(1), g(2), g(3));
        q[i] = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), rows), row_bytes(deltas, i));
    }
}

// Deltas as bytes: -1 where a byte of `bytes` has the bit that `bit`'s byte has, else 1.
inline __m128i deltas_where(__m128i bytes, __m128i bit) {
    return _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(bytes, bit), bit), _mm_set1_epi8(1));
}

struct Iq1SStripe {
    using Quad = block_iq1_sx4;
    using Block = block_iq1_s;
    // Group l's top index bits are bits 3l .. 3l + 2 of the row's word.
    static uint32_t index(const Quad& w, int ib, int i, int l) {
        return w.qs[ib][i][l] | ((w.qh[ib][i] >> (3 * l)) & 7u) << 8;
    }
    // Row i's delta is the top bit of its word (the high byte's bit 7), for all 4 groups.
    static __m128i deltas(const Quad& w, int ib) {
        const __m128i words = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.qh[ib]));
        const __m128i pick = _mm_setr_epi8(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7);
        return deltas_where(_mm_shuffle_epi8(words, pick), _mm_set1_epi8(static_cast<char>(0x80)));
    }
    static void levels(const Quad& w, int ib, __m256i* q) { iq1_levels<Iq1SStripe>(w, ib, q); }
    static __m256i scales(const Quad& w, int ib) {
        const __m128i words =
            _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.qh[ib])));
        return _mm256_broadcastsi128_si256(
            odd_scales(_mm_and_si128(_mm_srli_epi32(words, 12), _mm_set1_epi32(7))));
    }
};

struct Iq1MStripe {
    using Quad = block_iq1_mx4;
    using Block = block_iq1_m;
    // Group l's top index bits are the low 3 of nibble l of the row's word.
    static uint32_t index(const Quad& w, int ib, int i, int l) {
        return w.qs[ib][i][l] | ((w.qh[ib][i] >> (4 * l)) & 7u) << 8;
    }
    // Group l's delta is bit 3 of nibble l: bit 3 or 7 of the row's byte l / 2.
    static __m128i deltas(const Quad& w, int ib) {
        const __m128i words = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.qh[ib]));
        const __m128i pick = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
        return deltas_where(_mm_shuffle_epi8(words, pick),
                            _mm_set1_epi16(static_cast<short>(0x8008)));
    }
    static void levels(const Quad& w, int ib, __m256i* q) { iq1_levels<Iq1MStripe>(w, ib, q); }
    // Sub-block ib's s are bits 6(ib % 2) .. + 2 (values 0..15) and + 3 .. + 5 of word ib / 2.
    static __m256i scales(const Quad& w, int ib) {
        const __m128i words = _mm_srli_epi32(
            _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.scales[ib / 2]))),
            6 * (ib % 2));
        const __m128i seven = _mm_set1_epi32(7);
        return _mm256_setr_m128i(odd_scales(_mm_and_si128(words, seven)),
                                 odd_scales(_mm_and_si128(_mm_srli_epi32(words, 3), seven)));
    }
};

// The 4 rows' d: the fp16 field, or IQ1_M's, whose nibble k of row i tops scales[k][i].
template <class Quad>
inline __m128 stripe_d(const Quad& w) {
    return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.d)));
}
inline __m128 stripe_d(const block_iq1_mx4& w) {
    const __m256i n =
        _mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.scales)), 12);
    // Lanes 0..3: nibbles 0 | 2 << 8 of rows 0..3; lanes 4..7: 1 | 3 << 8.
    const __m128i x =
        _mm_or_si128(_mm256_castsi256_si128(n), _mm_slli_epi16(_mm256_extracti128_si256(n, 1), 8));
    return _mm_cvtph_ps(_mm_or_si128(x, _mm_slli_epi16(_mm_srli_si128(x, 8), 4)));
}

// IQ1_S and IQ1_M give their signed levels; the others magnitudes and signs.
template <class S>
constexpr bool kSignedLevels = requires(const typename S::Quad& w, __m256i* q) {
    S::levels(w, 0, q);
};

// The 4 rows' signed levels of sub-block ib (prefill's decoding, to_grid).
template <class Rows, class S>
inline void stripe_levels(const typename S::Quad& w, int ib, __m256i* q) {
    if constexpr (kSignedLevels<S>)
        S::levels(w, ib, q);
    else
        Rows::template levels<S>(w, ib, S::signs(w, ib), q);
}

// The 4 rows' operands of sub-block ib and their dots with 32 activations (decode): IQ1's signed
// levels, or what Rows::operands makes of the grid magnitudes and signs for its signed_dots.
template <class Rows, class S>
struct SubBlock {
    __m256i q[4];
    typename Rows::Signs signs;
    SubBlock(const typename S::Quad& w, int ib) {
        if constexpr (kSignedLevels<S>)
            S::levels(w, ib, q);
        else
            Rows::template operands<S>(w, ib, q, signs);
    }
    __m256i dots(__m256i y) const {
        if constexpr (kSignedLevels<S>)
            return Rows::dots(q, y);
        else
            return Rows::signed_dots(q, signs, y);
    }
};

// Four rows' 8 int32 partial sums each as [r0, r1, r2, r3] in each 128-bit half, the half
// summing the values of its own half (values 0..15 and 16..31 of the sub-block).
inline __m256i transpose_sum(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
    const __m256i s01 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(s0, s1), _mm256_unpackhi_epi32(s0, s1));
    const __m256i s23 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(s2, s3), _mm256_unpackhi_epi32(s2, s3));
    return _mm256_add_epi32(_mm256_unpacklo_epi64(s01, s23), _mm256_unpackhi_epi64(s01, s23));
}

// Tokens per pass over a stripe: each sub-block's levels are made once for all of them.
constexpr int kStripeTokens = 4;

// One super-block column of a stripe against NT tokens' blocks: the 4 rows' sums advanced.
template <class Rows, class S, int NT>
inline void stripe_step(const typename S::Quad& w, const block_q8_K* const* x, int64_t b,
                        __m128* acc) {
    __m256i isum[NT];
    for (int t = 0; t < NT; t++) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const SubBlock<Rows, S> sub(w, ib);
        const __m256i ls = S::scales(w, ib);
        for (int t = 0; t < NT; t++) {
            const __m256i y =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t][b].qs + 32 * ib));
            isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(ls, sub.dots(y)));
        }
    }
    const __m128 d = _mm_mul_ps(stripe_d(w), _mm_set1_ps(S::Block::kScale));
    for (int t = 0; t < NT; t++) {
        const __m128i i4 =
            _mm_add_epi32(_mm256_castsi256_si128(isum[t]), _mm256_extracti128_si256(isum[t], 1));
        acc[t] = _mm_fmadd_ps(_mm_cvtepi32_ps(i4), _mm_mul_ps(d, _mm_set1_ps(x[t][b].d)), acc[t]);
    }
}

// A stripe's nb super-block columns against NT tokens: its 4 rows' sums, token t's at
// y[t * y_stride], the first `rows` of them. Not inlined into the loops over stripes and
// tokens, whose pointers and counts left the step too few general registers (GCC then parked
// the grid indices in vector registers, IQ2_XXS 25% slower).
template <class Rows, class S, int NT>
[[gnu::noinline]] void stripe_sums(const typename S::Quad* stripe, int64_t nb,
                                   const block_q8_K* const* x, float* y, int64_t y_stride,
                                   int rows) {
    __m128 acc[NT];
    for (int t = 0; t < NT; t++) acc[t] = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; b++) stripe_step<Rows, S, NT>(stripe[b], x, b, acc);
    for (int t = 0; t < NT; t++) {
        alignas(16) float out[4];
        _mm_store_ps(out, acc[t]);
        for (int i = 0; i < rows; i++) y[t * y_stride + i] = out[i];
    }
}

// PackedKernels::gemm of a group of stripes: stripe by stripe, kStripeTokens tokens at a time,
// so a pass reads its stripe front to back.
template <class Rows, class S>
void stripes_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                  int64_t y_stride, int nr, int nt) {
    const auto* quads = static_cast<const typename S::Quad*>(w);
    const int64_t nb = n / QK_K;
    const block_q8_K* xt[kPackTokens];
    for (int t = 0; t < nt; t++) {
        xt[t] = reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(x) + t * x_stride);
    }
    for (int k = 0; 4 * k < nr; k++) {
        const int rows = std::min(4, nr - 4 * k);
        for (int t = 0; t < nt; t += kStripeTokens) {
            const auto* stripe = quads + k * nb;
            float* out = y + t * y_stride + 4 * k;
            switch (std::min(kStripeTokens, nt - t)) {
                case 1:
                    stripe_sums<Rows, S, 1>(stripe, nb, xt + t, out, y_stride, rows);
                    break;
                case 2:
                    stripe_sums<Rows, S, 2>(stripe, nb, xt + t, out, y_stride, rows);
                    break;
                case 3:
                    stripe_sums<Rows, S, 3>(stripe, nb, xt + t, out, y_stride, rows);
                    break;
                default:
                    stripe_sums<Rows, S, 4>(stripe, nb, xt + t, out, y_stride, rows);
            }
        }
    }
}

// PackedKernels::to_grid: a group's 4 stripes decoded to block_gridx16 columns (packed.h), the
// levels of the decode step plus kGridOffset; word m of 4 rows' levels is 16 contiguous bytes
// there, so the 4 rows' vectors are transposed as words and stored 16 bytes at a time.
template <class Rows, class S>
void stripes_to_grid(int64_t n, const void* w, void* dst) {
    const auto* quads = static_cast<const typename S::Quad*>(w);
    auto* out = static_cast<block_gridx16*>(dst);
    const int64_t nb = n / QK_K;
    const __m256i offset = _mm256_set1_epi8(kGridOffset);
    const auto store = [](uint8_t* p, __m128i v) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    };
    for (int64_t b = 0; b < nb; b++) {
        block_gridx16& g = out[b];
        for (int k = 0; k < kPackRows / 4; k++) {
            const typename S::Quad& quad = quads[k * nb + b];
            _mm_storeu_ps(g.d + 4 * k, _mm_mul_ps(stripe_d(quad), _mm_set1_ps(S::Block::kScale)));
            for (int ib = 0; ib < QK_K / 32; ib++) {
                __m256i q[4];
                stripe_levels<Rows, S>(quad, ib, q);
                for (__m256i& v : q) v = _mm256_add_epi8(v, offset);
                const __m256i ab_lo = _mm256_unpacklo_epi32(q[0], q[1]);
                const __m256i ab_hi = _mm256_unpackhi_epi32(q[0], q[1]);
                const __m256i cd_lo = _mm256_unpacklo_epi32(q[2], q[3]);
                const __m256i cd_hi = _mm256_unpackhi_epi32(q[2], q[3]);
                // Words m and m + 4 of the 4 rows, in the low and high halves.
                const __m256i words[4] = {
                    _mm256_unpacklo_epi64(ab_lo, cd_lo), _mm256_unpackhi_epi64(ab_lo, cd_lo),
                    _mm256_unpacklo_epi64(ab_hi, cd_hi), _mm256_unpackhi_epi64(ab_hi, cd_hi)};
                for (int m = 0; m < 4; m++) {
                    store(g.qs[8 * ib + m][4 * k], _mm256_castsi256_si128(words[m]));
                    store(g.qs[8 * ib + m + 4][4 * k], _mm256_extracti128_si256(words[m], 1));
                }
                alignas(32) int32_t ls[8];
                _mm256_store_si256(reinterpret_cast<__m256i*>(ls), S::scales(quad, ib));
                for (int i = 0; i < 4; i++) {
                    g.scales[2 * ib][4 * k + i] = static_cast<uint8_t>(ls[i]);
                    g.scales[2 * ib + 1][4 * k + i] = static_cast<uint8_t>(ls[4 + i]);
                }
            }
        }
    }
}

// The stripe types' packed kernels with Rows, as table overrides (packed_stripes.h).
template <class Rows>
constexpr PackedOverride kStripeKernels[] = {
    {Type::IQ2_XXS,
     {nullptr, stripes_gemm<Rows, Iq2XxsStripe>, nullptr, stripes_to_grid<Rows, Iq2XxsStripe>}},
    {Type::IQ2_XS,
     {nullptr, stripes_gemm<Rows, Iq2XsStripe>, nullptr, stripes_to_grid<Rows, Iq2XsStripe>}},
    {Type::IQ2_S,
     {nullptr, stripes_gemm<Rows, Iq2SStripe>, nullptr, stripes_to_grid<Rows, Iq2SStripe>}},
    {Type::IQ3_XXS,
     {nullptr, stripes_gemm<Rows, Iq3XxsStripe>, nullptr, stripes_to_grid<Rows, Iq3XxsStripe>}},
    {Type::IQ3_S,
     {nullptr, stripes_gemm<Rows, Iq3SStripe>, nullptr, stripes_to_grid<Rows, Iq3SStripe>}},
    {Type::IQ1_S,
     {nullptr, stripes_gemm<Rows, Iq1SStripe>, nullptr, stripes_to_grid<Rows, Iq1SStripe>}},
    {Type::IQ1_M,
     {nullptr, stripes_gemm<Rows, Iq1MStripe>, nullptr, stripes_to_grid<Rows, Iq1MStripe>}},
};

}  // namespace
}  // namespace ggml_lite
