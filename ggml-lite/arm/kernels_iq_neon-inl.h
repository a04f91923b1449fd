// The NEON dot products of the grid types (quant.h: IQ1_S ... IQ3_S) against Q8_K, in both
// NEON tables (sdot where +dotprod). Each step decodes 32 values at a time to signed bytes:
// their grid rows' magnitudes loaded by index, their sign bits as byte masks (a 128-entry
// table of the even-sign patterns, or each sign byte's bits tested; IQ1_S, IQ1_M: signed grid
// values times 8 plus their deltas), and the scales of their
// two 16-value halves. The integer sums are exact, and the float step after each super-block
// is dot_grid's expression (kernels_scalar.cpp), so the results are the scalar kernel's bits.
//
// Include only from the end of kernels_neon-inl.h, whose dot_bytes and half_to_float it uses;
// both NEON tables add kGridTypes after kIntegerTypes.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "ggml-lite/iq_grids.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

// Two 8-byte rows as one vector, the first in the low half.
uint8x16_t rows2(uint64_t a, uint64_t b) {
    return vcombine_u8(vcreate_u8(a), vcreate_u8(b));
}

// Bits 0-15 of s as byte masks (0xff where set): byte k takes the byte of s holding bit k.
uint8x16_t sign_bytes(uint32_t s) {
    static constexpr uint8_t kByte[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    const uint8x16_t v = vqtbl1q_u8(vreinterpretq_u8_u32(vdupq_n_u32(s)), vld1q_u8(kByte));
    return vtstq_u8(v, vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201)));
}

// 32 values of a super-block: the signed levels of each 16-value half, and their scales
// ls = 2s + 1.
struct GridChunk {
    int8x16_t q[2];
    int32_t ls[2];
};

// Grid magnitudes (|q| <= 62) negated where neg is 0xff: (m ^ neg) - neg.
int8x16_t signed_levels(uint8x16_t mag, uint8x16_t neg) {
    return vreinterpretq_s8_u8(vsubq_u8(veorq_u8(mag, neg), neg));
}

// Per type: GridChunk chunk(const Block&, int ib) for values 32ib .. 32ib + 31 (quant.h).
struct NeonIQ2XXS {
    using Block = block_iq2_xxs;
    static GridChunk chunk(const Block& b, int ib) {
        const uint32_t idx = grid_le32(b.qs + 4 * ib), aux = grid_le32(b.qs + 4 * ib + 2);
        const int32_t ls = static_cast<int32_t>(2 * (aux >> 28) + 1);
        return {{signed_levels(rows2(iq2xxs_grid[idx & 0xff], iq2xxs_grid[(idx >> 8) & 0xff]),
                               rows2(kEvenSignMask[aux & 127], kEvenSignMask[(aux >> 7) & 127])),
                 signed_levels(
                     rows2(iq2xxs_grid[(idx >> 16) & 0xff], iq2xxs_grid[idx >> 24]),
                     rows2(kEvenSignMask[(aux >> 14) & 127], kEvenSignMask[(aux >> 21) & 127]))},
                {ls, ls}};
    }
};

struct NeonIQ2XS {
    using Block = block_iq2_xs;
    static GridChunk chunk(const Block& b, int ib) {
        const uint16_t* q = b.qs + 4 * ib;
        const auto row = [q](int l) { return iq2xs_grid[q[l] & 511]; };
        const auto signs = [q](int l) { return kEvenSignMask[q[l] >> 9]; };
        return {{signed_levels(rows2(row(0), row(1)), rows2(signs(0), signs(1))),
                 signed_levels(rows2(row(2), row(3)), rows2(signs(2), signs(3)))},
                {2 * (b.scales[ib] & 0x0f) + 1, 2 * (b.scales[ib] >> 4) + 1}};
    }
};

struct NeonIQ2S {
    using Block = block_iq2_s;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[ib];
        const uint32_t s = grid_le32(b.qs + QK_K / 8 + 4 * ib);
        return {
            {signed_levels(rows2(iq2s_grid[q[0] | (h & 3) << 8], iq2s_grid[q[1] | (h & 0x0c) << 6]),
                           sign_bytes(s)),
             signed_levels(
                 rows2(iq2s_grid[q[2] | (h & 0x30) << 4], iq2s_grid[q[3] | (h & 0xc0) << 2]),
                 sign_bytes(s >> 16))},
            {2 * (b.scales[ib] & 0x0f) + 1, 2 * (b.scales[ib] >> 4) + 1}};
    }
};

// Four-value rows, two to an 8-byte half.
uint64_t rows4(uint32_t a, uint32_t b) {
    return a | static_cast<uint64_t>(b) << 32;
}

struct NeonIQ3XXS {
    using Block = block_iq3_xxs;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 8 * ib;
        const uint32_t aux = grid_le32(b.qs + QK_K / 4 + 4 * ib);
        const auto row = [q](int l) {
            return rows4(iq3xxs_grid[q[2 * l]], iq3xxs_grid[q[2 * l + 1]]);
        };
        const int32_t ls = static_cast<int32_t>(2 * (aux >> 28) + 1);
        return {{signed_levels(rows2(row(0), row(1)),
                               rows2(kEvenSignMask[aux & 127], kEvenSignMask[(aux >> 7) & 127])),
                 signed_levels(rows2(row(2), row(3)), rows2(kEvenSignMask[(aux >> 14) & 127],
                                                            kEvenSignMask[(aux >> 21) & 127]))},
                {ls, ls}};
    }
};

struct NeonIQ3S {
    using Block = block_iq3_s;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 8 * ib;
        const uint32_t h = b.qh[ib];
        const auto row = [q, h](int l) {
            return rows4(iq3s_grid[q[2 * l] | ((h >> (2 * l)) & 1) << 8],
                         iq3s_grid[q[2 * l + 1] | ((h >> (2 * l + 1)) & 1) << 8]);
        };
        const uint32_t s = grid_le32(b.signs + 4 * ib);
        const int32_t ls =
            static_cast<int32_t>(2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0x0f) + 1);
        return {{signed_levels(rows2(row(0), row(1)), sign_bytes(s)),
                 signed_levels(rows2(row(2), row(3)), sign_bytes(s >> 16))},
                {ls, ls}};
    }
};

// IQ1's levels 8g + delta of two 8-value rows of iq1s_grid (g in {-1, 0, 1}), each with its
// delta's sign (true: -1).
int8x16_t iq1_levels(uint64_t g0, uint64_t g1, bool neg0, bool neg1) {
    const auto delta = [](bool neg) { return neg ? ~0ull : 0x0101010101010101ull; };
    return vaddq_s8(vshlq_n_s8(vreinterpretq_s8_u8(rows2(g0, g1)), 3),
                    vreinterpretq_s8_u8(rows2(delta(neg0), delta(neg1))));
}

// IQ1_S: one delta and one scale for all 32 values.
struct NeonIQ1S {
    using Block = block_iq1_s;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[ib];
        const auto row = [q, h](int l) { return iq1s_grid[q[l] | (h >> (3 * l) & 7) << 8]; };
        const bool neg = (h & 0x8000) != 0;
        const auto ls = static_cast<int32_t>(2 * ((h >> 12) & 7) + 1);
        return {{iq1_levels(row(0), row(1), neg, neg), iq1_levels(row(2), row(3), neg, neg)},
                {ls, ls}};
    }
};

// IQ1_M: nibble l of the chunk's two qh bytes holds group l's top index bits and delta sign; a
// scale for each 16 values.
struct NeonIQ1M {
    using Block = block_iq1_m;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[2 * ib] | b.qh[2 * ib + 1] << 8;
        const auto row = [q, h](int l) { return iq1s_grid[q[l] | (h >> (4 * l) & 7) << 8]; };
        const auto neg = [h](int l) { return (h >> (4 * l + 3) & 1) != 0; };
        const uint32_t sc = b.scales[2 * (ib / 2)] | b.scales[2 * (ib / 2) + 1] << 8;
        const int shift = 6 * (ib % 2);
        return {{iq1_levels(row(0), row(1), neg(0), neg(1)),
                 iq1_levels(row(2), row(3), neg(2), neg(3))},
                {static_cast<int32_t>(2 * (sc >> shift & 7) + 1),
                 static_cast<int32_t>(2 * (sc >> (shift + 3) & 7) + 1)}};
    }
};

// A block's d: its fp16 field, IQ1_M's assembled from its scales.
template <class Block>
float block_d(const Block& w) {
    return half_to_float(w.d);
}
float block_d(const block_iq1_m& w) {
    return half_to_float(iq1_m_d(w));
}

template <class T>
struct NeonGridStep : SuperBlockStep<typename T::Block> {
    using Block = typename T::Block;
    struct Acc {
        float s = 0.0f;
        float total() const { return s; }
    };
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const GridChunk c = T::chunk(w, ib);
            for (int h = 0; h < 2; h++) {
                for (int t = 0; t < NT; t++) {
                    const int8x16_t xq = vld1q_s8(x[t]->qs + 32 * ib + 16 * h);
                    sum[t] = vmlaq_n_s32(sum[t], dot_bytes(vdupq_n_s32(0), c.q[h], xq), c.ls[h]);
                }
            }
        }
        const float d = block_d(w) * Block::kScale;
        for (int t = 0; t < NT; t++)
            acc[t].s = std::fma(static_cast<float>(vaddvq_s32(sum[t])), d * x[t]->d, acc[t].s);
    }
};

constexpr TypeOverride kGridTypes[] = {
    {Type::IQ2_XXS, QuantTiles<NeonGridStep<NeonIQ2XXS>>::kernels()},
    {Type::IQ2_XS, QuantTiles<NeonGridStep<NeonIQ2XS>>::kernels()},
    {Type::IQ2_S, QuantTiles<NeonGridStep<NeonIQ2S>>::kernels()},
    {Type::IQ3_XXS, QuantTiles<NeonGridStep<NeonIQ3XXS>>::kernels()},
    {Type::IQ3_S, QuantTiles<NeonGridStep<NeonIQ3S>>::kernels()},
    {Type::IQ1_S, QuantTiles<NeonGridStep<NeonIQ1S>>::kernels()},
    {Type::IQ1_M, QuantTiles<NeonGridStep<NeonIQ1M>>::kernels()},
};

}  // namespace
}  // namespace ggml_lite
