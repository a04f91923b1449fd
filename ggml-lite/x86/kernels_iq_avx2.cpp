// AVX2 dot products of the grid types (quant.h: IQ1_S ... IQ3_S) against Q8_K, and their
// decoders to levels (TypeKernels::grid_block) from the same chunks. Each step
// decodes 32 values at a time to signed bytes: their grid rows' magnitudes gathered from the
// tables by index (scalar loads: a gather instruction is slower here), their sign bits spread
// to byte masks (IQ1_S, IQ1_M: signed grid values times 8 plus their deltas), and the scales of
// their two halves (IQ2_XXS, IQ2_XS, IQ2_S: decoded once a
// block and stored; IQ2_S's grid indices stored that way were slower to read back than made
// per chunk). The integer sums are exact, so each super-block's sum equals the scalar kernel's
// (dot_grid in kernels_scalar.cpp); the float steps after it are the scalar kernel's, one at a
// time and in its order, so the results are its bits.
//
// Compiled with -mavx2 -mfma -mf16c -ffp-contract=off: the float steps must not fuse.
#include "ggml-lite/x86/kernels_iq_avx2.h"

#include <immintrin.h>

#include <array>
#include <cmath>
#include <cstring>

#include "ggml-lite/iq_grids.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"

namespace ggml_lite {
namespace {

// Four 8-value grid rows, in order.
__m256i rows8(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    return _mm256_setr_epi64x(static_cast<long long>(a), static_cast<long long>(b),
                              static_cast<long long>(c), static_cast<long long>(d));
}

// For byte 8l + j of 32 (j < 7), bit 7l + j of a word broadcast to every 32-bit lane: the byte
// of the word holding it (a pshufb index within the byte's 128-bit lane) and the bit within
// that byte. Byte 8l + 7 takes index 0x80, which pshufb makes 0, so its bit test fails.
struct SevenBits {
    std::array<uint8_t, 32> byte{}, bit{};
};
constexpr SevenBits kSevenBits = [] {
    SevenBits t;
    for (int i = 0; i < 32; i++) {
        const int l = i / 8, j = i % 8, k = 7 * l + j;
        t.byte[i] = j == 7 ? 0x80 : static_cast<uint8_t>(k / 8);
        t.bit[i] = j == 7 ? 0x80 : static_cast<uint8_t>(1 << (k % 8));
    }
    return t;
}();

// Four 7-bit sign fields of a word (bits 7l .. 7l + 6) as even_signs, 8 values each, in the
// top bit of each byte: the seven bits spread to byte masks, the eighth their parity, from
// each 8 bytes' sum (255 per set bit) shifted to the top of the last byte. Fewer instructions
// than four lookups in kEvenSignMask and their inserts.
__m256i even_signs4(uint32_t aux) {
    const __m256i byte =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kSevenBits.byte.data()));
    const __m256i bit = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kSevenBits.bit.data()));
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(aux)), byte);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
    const __m256i parity = _mm256_slli_epi64(_mm256_sad_epu8(set, _mm256_setzero_si256()), 63);
    return _mm256_or_si256(set, parity);
}

// Bit k of s as byte k: 0xff where set, 0 where clear.
__m256i sign_bytes(uint32_t s) {
    const __m256i byte_of_bit = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2,
                                                 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(s)), byte_of_bit);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

// The scales of 32 values' two 16-value halves, ls = 2s + 1, in the two 128-bit lanes.
__m256i half_scales(uint32_t s0, uint32_t s1) {
    return _mm256_setr_m128i(_mm_set1_epi16(static_cast<int16_t>(2 * s0 + 1)),
                             _mm_set1_epi16(static_cast<int16_t>(2 * s1 + 1)));
}

// The scales of IQ2_XS's and IQ2_S's 16-value halves, ls = 2s + 1 from the nibbles of their 8
// scale bytes (low nibble first), made once a block: a chunk then broadcasts two of them.
struct HalfScales16 {
    alignas(32) int16_t ls[QK_K / 16];
    explicit HalfScales16(const uint8_t* scales) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales));
        const __m128i low = _mm_and_si128(b, _mm_set1_epi8(0x0f));
        const __m128i high = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
        const __m256i s = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(low, high));
        _mm256_store_si256(reinterpret_cast<__m256i*>(ls),
                           _mm256_add_epi16(_mm256_add_epi16(s, s), _mm256_set1_epi16(1)));
    }
    __m256i chunk(int ib) const {
        return _mm256_setr_m128i(_mm_set1_epi16(ls[2 * ib]), _mm_set1_epi16(ls[2 * ib + 1]));
    }
};

// One 32-value chunk of a super-block: its signed levels and the halves' scales.
struct Chunk {
    __m256i q;
    __m256i scale;
};

// Grid magnitudes negated where the top bit of `neg`'s byte is set: magnitudes are never 0, so
// sign() by neg | 1 negates those and keeps the rest.
__m256i signed_levels(__m256i mag, __m256i neg) {
    return _mm256_sign_epi8(mag, _mm256_or_si256(neg, _mm256_set1_epi8(1)));
}

// IQ1's levels 8g + delta from grid values g in {-1, 0, 1} and deltas of +-1.
__m256i iq1_levels(__m256i g, __m256i delta) {
    return _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), delta);
}

// Per type, made from one block (what all its chunks share): Chunk chunk(int ib) for values
// 32ib .. 32ib + 31 (quant.h layouts).
// The scale nibble is the top of each chunk's 8 bytes: ls = 2s + 1 for all 8 chunks in four
// instructions a half, once a block, then one broadcast a chunk.
struct IQ2XXS {
    using Block = block_iq2_xxs;
    const Block& b;
    alignas(32) uint64_t ls[QK_K / 32];
    explicit IQ2XXS(const Block& block) : b(block) {
        for (int half = 0; half < 2; half++) {
            const __m256i s = _mm256_srli_epi64(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 16 * half)), 60);
            _mm256_store_si256(reinterpret_cast<__m256i*>(ls + 4 * half),
                               _mm256_add_epi64(_mm256_add_epi64(s, s), _mm256_set1_epi64x(1)));
        }
    }
    Chunk chunk(int ib) const {
        const uint32_t idx = grid_le32(b.qs + 4 * ib), aux = grid_le32(b.qs + 4 * ib + 2);
        return {signed_levels(rows8(iq2xxs_grid[idx & 0xff], iq2xxs_grid[(idx >> 8) & 0xff],
                                    iq2xxs_grid[(idx >> 16) & 0xff], iq2xxs_grid[idx >> 24]),
                              even_signs4(aux)),
                _mm256_set1_epi16(static_cast<int16_t>(ls[ib]))};
    }
};

struct IQ2XS {
    using Block = block_iq2_xs;
    const Block& b;
    HalfScales16 scales{b.scales};
    Chunk chunk(int ib) const {
        uint64_t q;  // the four groups' 16-bit fields, one load
        std::memcpy(&q, b.qs + 4 * ib, sizeof q);
        const auto index = [q](int l) { return (q >> (16 * l)) & 511; };
        const auto signs = [q](int l) { return kEvenSignMask[(q >> (16 * l + 9)) & 127]; };
        return {signed_levels(rows8(iq2xs_grid[index(0)], iq2xs_grid[index(1)],
                                    iq2xs_grid[index(2)], iq2xs_grid[index(3)]),
                              rows8(signs(0), signs(1), signs(2), signs(3))),
                scales.chunk(ib)};
    }
};

struct IQ2S {
    using Block = block_iq2_s;
    const Block& b;
    HalfScales16 scales{b.scales};
    Chunk chunk(int ib) const {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[ib];
        return {signed_levels(
                    rows8(iq2s_grid[q[0] | (h & 3) << 8], iq2s_grid[q[1] | (h & 0x0c) << 6],
                          iq2s_grid[q[2] | (h & 0x30) << 4], iq2s_grid[q[3] | (h & 0xc0) << 2]),
                    sign_bytes(grid_le32(b.qs + QK_K / 8 + 4 * ib))),
                scales.chunk(ib)};
    }
};

struct IQ3XXS {
    using Block = block_iq3_xxs;
    const Block& b;
    Chunk chunk(int ib) const {
        const uint8_t* q = b.qs + 8 * ib;
        const uint32_t aux = grid_le32(b.qs + QK_K / 4 + 4 * ib);
        const __m256i mag = _mm256_setr_epi32(
            static_cast<int>(iq3xxs_grid[q[0]]), static_cast<int>(iq3xxs_grid[q[1]]),
            static_cast<int>(iq3xxs_grid[q[2]]), static_cast<int>(iq3xxs_grid[q[3]]),
            static_cast<int>(iq3xxs_grid[q[4]]), static_cast<int>(iq3xxs_grid[q[5]]),
            static_cast<int>(iq3xxs_grid[q[6]]), static_cast<int>(iq3xxs_grid[q[7]]));
        return {signed_levels(mag, even_signs4(aux)), half_scales(aux >> 28, aux >> 28)};
    }
};

struct IQ3S {
    using Block = block_iq3_s;
    const Block& b;
    Chunk chunk(int ib) const {
        const uint8_t* q = b.qs + 8 * ib;
        const uint32_t h = b.qh[ib];
        int g[8];
        for (int l = 0; l < 8; l++) g[l] = static_cast<int>(iq3s_grid[q[l] | ((h >> l) & 1) << 8]);
        const uint32_t s = (b.scales[ib / 2] >> (4 * (ib % 2))) & 0x0f;
        return {signed_levels(_mm256_setr_epi32(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]),
                              sign_bytes(grid_le32(b.signs + 4 * ib))),
                half_scales(s, s)};
    }
};

// IQ1_S: one delta and one scale for all 32 values.
struct IQ1S {
    using Block = block_iq1_s;
    const Block& b;
    Chunk chunk(int ib) const {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[ib];
        const __m256i g =
            rows8(iq1s_grid[q[0] | (h & 7) << 8], iq1s_grid[q[1] | (h >> 3 & 7) << 8],
                  iq1s_grid[q[2] | (h >> 6 & 7) << 8], iq1s_grid[q[3] | (h >> 9 & 7) << 8]);
        const uint32_t s = (h >> 12) & 7;
        return {iq1_levels(g, _mm256_set1_epi8(static_cast<char>(h & 0x8000 ? -1 : 1))),
                half_scales(s, s)};
    }
};

// IQ1_M: nibble l of the chunk's two qh bytes holds group l's top index bits and delta sign
// (bit 3 of the nibble); a scale for each 16 values. The deltas as bytes: each group's 8 bytes take
// the qh byte of its nibble, tested for that bit (-1 where set, else 1).
struct IQ1M {
    using Block = block_iq1_m;
    const Block& b;
    Chunk chunk(int ib) const {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[2 * ib] | b.qh[2 * ib + 1] << 8;
        const auto row = [&](int l) { return iq1s_grid[q[l] | (h >> (4 * l) & 7) << 8]; };
        const __m256i byte_of_group =
            _mm256_setr_epi64x(0, 0, 0x0101010101010101, 0x0101010101010101);
        const __m256i bit =
            _mm256_setr_epi64x(0x0808080808080808, static_cast<long long>(0x8080808080808080ull),
                               0x0808080808080808, static_cast<long long>(0x8080808080808080ull));
        const __m256i v =
            _mm256_shuffle_epi8(_mm256_set1_epi16(static_cast<int16_t>(h)), byte_of_group);
        const __m256i delta =
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit), _mm256_set1_epi8(1));
        const uint32_t sc = b.scales[2 * (ib / 2)] | b.scales[2 * (ib / 2) + 1] << 8;
        const int shift = 6 * (ib % 2);
        return {iq1_levels(rows8(row(0), row(1), row(2), row(3)), delta),
                half_scales(sc >> shift & 7, sc >> (shift + 3) & 7)};
    }
};

// A block's d: its fp16 field, IQ1_M's assembled from its scales.
template <class Block>
float block_d(const Block& w) {
    return _cvtsh_ss(w.d);
}
float block_d(const block_iq1_m& w) {
    return _cvtsh_ss(iq1_m_d(w));
}

int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

template <class T>
struct GridStep : SuperBlockStep<typename T::Block> {
    using Block = typename T::Block;
    // The scalar kernel's s = fma(float(isum), (d kScale) d_x, s) a super-block, with each
    // super-block's integer sums held back one step: its reduction then runs after the next
    // block's work, when its inputs are long done, instead of delaying the step's end. Same
    // operations in the same order (the first step adds 0 * 0 to s = 0), so the same bits.
    struct Acc {
        float s = 0.0f;
        __m256i pending = _mm256_setzero_si256();
        float pending_d = 0.0f;
        float total() const {
            return std::fma(static_cast<float>(hsum_i32(pending)), pending_d, s);
        }
    };
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = _mm256_setzero_si256();
        const T block{w};
#pragma GCC unroll 1
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const Chunk c = block.chunk(ib);
            // Signed levels |q| <= 62 against |x| <= 128 (x as unsigned after abs): the pair sums
            // stay within int16, and -128 in x is no special case.
            for (int t = 0; t < NT; t++) {
                const __m256i xq =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t]->qs + 32 * ib));
                const __m256i p =
                    _mm256_maddubs_epi16(_mm256_abs_epi8(xq), _mm256_sign_epi8(c.q, xq));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(p, c.scale));
            }
        }
        const float d = block_d(w) * Block::kScale;
        for (int t = 0; t < NT; t++) {
            acc[t].s = acc[t].total();
            acc[t].pending = sum[t];
            acc[t].pending_d = d * x[t]->d;
        }
    }
};

// TypeTraits::grid_block's output from the chunks' levels and scales (each chunk's two halves'
// scales are the low int16 of its 128-bit lanes).
template <class T>
void grid_block(const void* src, int64_t i, GridLevels* levels, float* d) {
    const typename T::Block& w = static_cast<const typename T::Block*>(src)[i];
    const T block{w};
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const Chunk c = block.chunk(ib);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(levels->q + 32 * ib), c.q);
        levels->ls[2 * ib] = static_cast<uint8_t>(_mm256_extract_epi16(c.scale, 0));
        levels->ls[2 * ib + 1] = static_cast<uint8_t>(_mm256_extract_epi16(c.scale, 8));
    }
    *d = block_d(w) * T::Block::kScale;
}

}  // namespace

namespace avx2 {

#define LILA_GRID_KERNELS(name, T)                                                            \
    float vec_dot_##name(int64_t n, const void* w, const void* x) {                           \
        return QuantTiles<GridStep<T>>::vec_dot(n, w, x);                                     \
    }                                                                                         \
    void gemm_tile_##name(int64_t n, const void* w, size_t w_stride, const void* x,           \
                          size_t x_stride, float* y, int64_t y_stride, int nr, int nt) {      \
        QuantTiles<GridStep<T>>::gemm_tile(n, w, w_stride, x, x_stride, y, y_stride, nr, nt); \
    }                                                                                         \
    void grid_block_##name(const void* src, int64_t i, GridLevels* levels, float* d) {        \
        grid_block<T>(src, i, levels, d);                                                     \
    }
LILA_GRID_KERNELS(iq2_xxs, IQ2XXS)
LILA_GRID_KERNELS(iq2_xs, IQ2XS)
LILA_GRID_KERNELS(iq2_s, IQ2S)
LILA_GRID_KERNELS(iq3_xxs, IQ3XXS)
LILA_GRID_KERNELS(iq3_s, IQ3S)
LILA_GRID_KERNELS(iq1_s, IQ1S)
LILA_GRID_KERNELS(iq1_m, IQ1M)
#undef LILA_GRID_KERNELS

}  // namespace avx2
}  // namespace ggml_lite
