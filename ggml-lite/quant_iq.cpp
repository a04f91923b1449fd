// The grid types (quant.h: IQ1_S ... IQ3_S): super-blocks decoded to grid_levels, and rows
// decoded to floats from them.
#include <cstring>

#include "iq_grids.h"
#include "quant.h"

namespace ggml_lite {
namespace {

// n (8 or 4) magnitudes from a grid row, lowest byte first, negated where `signs` has bit j set.
template <class Row>
void put_signed(Row row, int n, uint32_t signs, int8_t* q) {
    for (int j = 0; j < n; j++) {
        const int m = static_cast<int>((row >> (8 * j)) & 0xff);
        q[j] = static_cast<int8_t>((signs >> j) & 1 ? -m : m);
    }
}

uint32_t le32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// A scale nibble's ls = 2s + 1 for both 16-value halves of sub-block ib (32 values).
void set_sub_scale(GridLevels* out, int ib, uint32_t s) {
    out->ls[2 * ib] = out->ls[2 * ib + 1] = static_cast<uint8_t>(2 * s + 1);
}

}  // namespace

void grid_levels(const block_iq2_xxs& b, GridLevels* out) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint32_t idx = le32(b.qs + 4 * ib), aux = le32(b.qs + 4 * ib + 2);
        for (int l = 0; l < 4; l++) {
            put_signed(iq2xxs_grid[(idx >> (8 * l)) & 0xff], 8, even_signs(aux >> (7 * l)),
                       out->q + 32 * ib + 8 * l);
        }
        set_sub_scale(out, ib, aux >> 28);
    }
}

void grid_levels(const block_iq2_xs& b, GridLevels* out) {
    for (int g = 0; g < QK_K / 8; g++)
        put_signed(iq2xs_grid[b.qs[g] & 511], 8, even_signs(b.qs[g] >> 9), out->q + 8 * g);
    for (int k = 0; k < QK_K / 16; k++)
        out->ls[k] = static_cast<uint8_t>(2 * ((b.scales[k / 2] >> (4 * (k % 2))) & 0x0f) + 1);
}

void grid_levels(const block_iq2_s& b, GridLevels* out) {
    for (int g = 0; g < QK_K / 8; g++) {
        const int idx = b.qs[g] | (((b.qh[g / 4] >> (2 * (g % 4))) & 3) << 8);
        put_signed(iq2s_grid[idx], 8, b.qs[QK_K / 8 + g], out->q + 8 * g);
    }
    for (int k = 0; k < QK_K / 16; k++)
        out->ls[k] = static_cast<uint8_t>(2 * ((b.scales[k / 2] >> (4 * (k % 2))) & 0x0f) + 1);
}

// Two 4-value rows share each byte of signs: the first takes its low nibble.
void grid_levels(const block_iq3_xxs& b, GridLevels* out) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint32_t aux = le32(b.qs + QK_K / 4 + 4 * ib);
        for (int l = 0; l < 4; l++) {
            const uint8_t signs = even_signs(aux >> (7 * l));
            int8_t* q = out->q + 32 * ib + 8 * l;
            put_signed(iq3xxs_grid[b.qs[8 * ib + 2 * l]], 4, signs, q);
            put_signed(iq3xxs_grid[b.qs[8 * ib + 2 * l + 1]], 4, signs >> 4, q + 4);
        }
        set_sub_scale(out, ib, aux >> 28);
    }
}

void grid_levels(const block_iq3_s& b, GridLevels* out) {
    for (int g = 0; g < QK_K / 4; g++) {
        const int idx = b.qs[g] | (((b.qh[g / 8] >> (g % 8)) & 1) << 8);
        put_signed(iq3s_grid[idx], 4, b.signs[g / 2] >> (4 * (g % 2)), out->q + 4 * g);
    }
    for (int ib = 0; ib < QK_K / 32; ib++)
        set_sub_scale(out, ib, (b.scales[ib / 2] >> (4 * (ib % 2))) & 0x0f);
}

namespace {

// 8 values of an iq1s_grid row as levels 8g + delta (delta +-1).
void put_iq1(uint64_t row, bool negative_delta, int8_t* q) {
    for (int j = 0; j < 8; j++) {
        const auto g = static_cast<int8_t>((row >> (8 * j)) & 0xff);
        q[j] = static_cast<int8_t>(8 * g + (negative_delta ? -1 : 1));
    }
}

uint16_t le16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

}  // namespace

void grid_levels(const block_iq1_s& b, GridLevels* out) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint32_t h = b.qh[ib];
        for (int l = 0; l < 4; l++) {
            const uint32_t idx = b.qs[4 * ib + l] | ((h >> (3 * l)) & 7) << 8;
            put_iq1(iq1s_grid[idx], (h & 0x8000) != 0, out->q + 32 * ib + 8 * l);
        }
        set_sub_scale(out, ib, (h >> 12) & 7);
    }
}

void grid_levels(const block_iq1_m& b, GridLevels* out) {
    for (int g = 0; g < QK_K / 8; g++) {
        const uint32_t nibble = (b.qh[g / 2] >> (4 * (g % 2))) & 0x0f;
        put_iq1(iq1s_grid[b.qs[g] | (nibble & 7) << 8], (nibble & 8) != 0, out->q + 8 * g);
    }
    for (int k = 0; k < QK_K / 16; k++) {
        const uint32_t word = le16(b.scales + 2 * (k / 4));
        out->ls[k] = static_cast<uint8_t>(2 * ((word >> (3 * (k % 4))) & 7) + 1);
    }
}

fp16_t iq1_m_d(const block_iq1_m& b) {
    uint32_t d = 0;
    for (int w = 0; w < 4; w++) d |= (le16(b.scales + 2 * w) >> 12) << (4 * w);
    return static_cast<fp16_t>(d);
}

void set_iq1_m_d(block_iq1_m* b, fp16_t d) {
    for (int w = 0; w < 4; w++) {
        uint8_t& top = b->scales[2 * w + 1];
        top = static_cast<uint8_t>((top & 0x0f) | ((d >> (4 * w)) & 0x0f) << 4);
    }
}

float grid_d(const block_iq2_xxs& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq2_xs& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq2_s& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq3_xxs& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq3_s& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq1_s& b) {
    return fp16_to_fp32(b.d);
}
float grid_d(const block_iq1_m& b) {
    return fp16_to_fp32(iq1_m_d(b));
}

namespace {

// ggml's float steps: its per-sub-block factor d * (s + 1/2) * 2 kScale rounds as (d * ls) *
// kScale does, since doubling is exact, then one product per value. (IQ1's d * ls * (g + delta)
// rounds as (d * ls / 8) * 8 (g + delta): scaling by 8 is exact too.)
template <class Block>
void dequantize_grid(const Block* x, float* y, int64_t n) {
    GridLevels v;
    for (int64_t i = 0; i < n / QK_K; i++) {
        grid_levels(x[i], &v);
        const float d = grid_d(x[i]);
        for (int k = 0; k < QK_K / 16; k++) {
            const float dl = d * static_cast<float>(v.ls[k]) * Block::kScale;
            for (int l = 0; l < 16; l++) y[16 * k + l] = dl * static_cast<float>(v.q[16 * k + l]);
        }
        y += QK_K;
    }
}

}  // namespace

void dequantize_row_iq2_xxs(const block_iq2_xxs* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq2_xs(const block_iq2_xs* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq2_s(const block_iq2_s* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq3_xxs(const block_iq3_xxs* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq3_s(const block_iq3_s* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq1_s(const block_iq1_s* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}
void dequantize_row_iq1_m(const block_iq1_m* x, float* y, int64_t n) {
    dequantize_grid(x, y, n);
}

}  // namespace ggml_lite
