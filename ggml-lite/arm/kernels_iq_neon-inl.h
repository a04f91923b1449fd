// The NEON dot products of the grid types (quant.h: IQ2_XXS ... IQ3_S) against Q8_K, in both
// NEON tables (sdot where +dotprod). Each step decodes 32 values at a time to signed bytes:
// their grid rows' magnitudes loaded by index, their sign bits as byte masks (a 128-entry
// table of the even-sign patterns, or each sign byte's bits tested), and the scales of their
// two 16-value halves. The integer sums are exact, and the float step after each super-block
// is dot_grid's expression (kernels_scalar.cpp), so the results are the scalar kernel's bits.
//
// Include only from the end of kernels_neon-inl.h, whose dot_bytes and half_to_float it uses;
// both NEON tables add kGridTypes after kIntegerTypes.
#pragma once

#include <arm_neon.h>

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

// 32 values of a super-block: magnitudes and sign masks of each 16-value half, and their
// scales ls = 2s + 1.
struct GridChunk {
    uint8x16_t mag[2];
    uint8x16_t neg[2];
    int32_t ls[2];
};

// Per type: GridChunk chunk(const Block&, int ib) for values 32ib .. 32ib + 31 (quant.h).
struct NeonIQ2XXS {
    using Block = block_iq2_xxs;
    static GridChunk chunk(const Block& b, int ib) {
        const uint32_t idx = grid_le32(b.qs + 4 * ib), aux = grid_le32(b.qs + 4 * ib + 2);
        const int32_t ls = static_cast<int32_t>(2 * (aux >> 28) + 1);
        return {{rows2(iq2xxs_grid[idx & 0xff], iq2xxs_grid[(idx >> 8) & 0xff]),
                 rows2(iq2xxs_grid[(idx >> 16) & 0xff], iq2xxs_grid[idx >> 24])},
                {rows2(kEvenSignMask[aux & 127], kEvenSignMask[(aux >> 7) & 127]),
                 rows2(kEvenSignMask[(aux >> 14) & 127], kEvenSignMask[(aux >> 21) & 127])},
                {ls, ls}};
    }
};

struct NeonIQ2XS {
    using Block = block_iq2_xs;
    static GridChunk chunk(const Block& b, int ib) {
        const uint16_t* q = b.qs + 4 * ib;
        const auto row = [q](int l) { return iq2xs_grid[q[l] & 511]; };
        const auto signs = [q](int l) { return kEvenSignMask[q[l] >> 9]; };
        return {{rows2(row(0), row(1)), rows2(row(2), row(3))},
                {rows2(signs(0), signs(1)), rows2(signs(2), signs(3))},
                {2 * (b.scales[ib] & 0x0f) + 1, 2 * (b.scales[ib] >> 4) + 1}};
    }
};

struct NeonIQ2S {
    using Block = block_iq2_s;
    static GridChunk chunk(const Block& b, int ib) {
        const uint8_t* q = b.qs + 4 * ib;
        const uint32_t h = b.qh[ib];
        const uint32_t s = grid_le32(b.qs + QK_K / 8 + 4 * ib);
        return {{rows2(iq2s_grid[q[0] | (h & 3) << 8], iq2s_grid[q[1] | (h & 0x0c) << 6]),
                 rows2(iq2s_grid[q[2] | (h & 0x30) << 4], iq2s_grid[q[3] | (h & 0xc0) << 2])},
                {sign_bytes(s), sign_bytes(s >> 16)},
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
        return {{rows2(row(0), row(1)), rows2(row(2), row(3))},
                {rows2(kEvenSignMask[aux & 127], kEvenSignMask[(aux >> 7) & 127]),
                 rows2(kEvenSignMask[(aux >> 14) & 127], kEvenSignMask[(aux >> 21) & 127])},
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
        return {{rows2(row(0), row(1)), rows2(row(2), row(3))},
                {sign_bytes(s), sign_bytes(s >> 16)},
                {ls, ls}};
    }
};

template <class T>
struct NeonGridStep : SuperBlockStep<typename T::Block> {
    using Block = typename T::Block;
    struct Acc {
        float s = 0.0f;
        float total() const { return Block::kScale * s; }
    };
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
        int32x4_t sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = vdupq_n_s32(0);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const GridChunk c = T::chunk(w, ib);
            for (int h = 0; h < 2; h++) {
                // Signed levels |q| <= 62: (m ^ neg) - neg negates where neg is 0xff.
                const int8x16_t q =
                    vreinterpretq_s8_u8(vsubq_u8(veorq_u8(c.mag[h], c.neg[h]), c.neg[h]));
                for (int t = 0; t < NT; t++) {
                    const int8x16_t xq = vld1q_s8(x[t]->qs + 32 * ib + 16 * h);
                    sum[t] = vmlaq_n_s32(sum[t], dot_bytes(vdupq_n_s32(0), q, xq), c.ls[h]);
                }
            }
        }
        const float d = half_to_float(w.d);
        for (int t = 0; t < NT; t++)
            acc[t].s += d * x[t]->d * static_cast<float>(vaddvq_s32(sum[t]));
    }
};

constexpr TypeOverride kGridTypes[] = {
    {Type::IQ2_XXS, QuantTiles<NeonGridStep<NeonIQ2XXS>>::kernels()},
    {Type::IQ2_XS, QuantTiles<NeonGridStep<NeonIQ2XS>>::kernels()},
    {Type::IQ2_S, QuantTiles<NeonGridStep<NeonIQ2S>>::kernels()},
    {Type::IQ3_XXS, QuantTiles<NeonGridStep<NeonIQ3XXS>>::kernels()},
    {Type::IQ3_S, QuantTiles<NeonGridStep<NeonIQ3S>>::kernels()},
};

}  // namespace
}  // namespace ggml_lite
