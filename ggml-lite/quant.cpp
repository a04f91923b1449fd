// Scalar reference codecs of the 32-value blocks (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q8_1, IQ4_NL) and
// of IQ4_XS, bit-identical to ggml's quantize_row_*_ref (IQ4_NL and IQ4_XS: quantize_iq4_nl and
// quantize_iq4_xs without an importance matrix, what llama-quantize writes) so files and results
// match llama.cpp. The k-quants are in quant_k.cpp. This file is compiled with -ffp-contract=off
// (ggml-lite/CMakeLists.txt) so no compiler fuses a multiply and an add that ggml rounds
// separately.
#include "quant.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "quant_common.h"

namespace ggml_lite {

namespace {

// x · id, safe to convert to an integer: NaN (a NaN input, or 0 · inf when a block's scale is
// so small that its inverse overflows) counts as 0, and infinities clamp to ±lim. Converting
// those to an integer would be undefined behaviour; every other value is left as it is, so
// results stay ggml's wherever ggml's are defined.
float scaled(float x, float id, float lim) {
    const float v = x * id;
    return std::isnan(v) ? 0.0f : std::clamp(v, -lim, lim);
}

}  // namespace

void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n) {
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) {
            const float a = std::fabs(x[j]);
            amax = amax > a ? amax : a;  // ggml's MAX(amax, a), NaN behaviour included
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; j++) {
            y[b].qs[j] = static_cast<int8_t>(std::round(scaled(x[j], id, 127.0f)));
        }
    }
}

void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK8_0; b++, y += QK8_0) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK8_0; j++) y[j] = static_cast<float>(x[b].qs[j]) * d;
    }
}

void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n) {
    constexpr int half = QK4_0 / 2;
    for (int64_t b = 0; b < n / QK4_0; b++, x += QK4_0) {
        // The signed value of largest magnitude maps to -8, so the full range [-8, 7] is used
        // on the side that needs it most.
        const float d = signed_absmax(x, QK4_0) / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < half; j++) {
            // +8.5 then truncation: round to nearest of the offset value, as ggml does.
            const int lo =
                std::min(15, static_cast<int>(static_cast<int8_t>(scaled(x[j], id, 8.0f) + 8.5f)));
            const int hi = std::min(
                15, static_cast<int>(static_cast<int8_t>(scaled(x[j + half], id, 8.0f) + 8.5f)));
            y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n) {
    constexpr int half = QK4_0 / 2;
    for (int64_t b = 0; b < n / QK4_0; b++, y += QK4_0) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < half; j++) {
            y[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
            y[j + half] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
        }
    }
}

namespace {

// Smallest and largest value of a block: Q4_1's and Q5_1's range.
void block_range(const float* x, int n, float* min, float* max) {
    *min = FLT_MAX;
    *max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < *min) *min = x[j];
        if (x[j] > *max) *max = x[j];
    }
}

// Element j's fifth bit, from the block's qh bytes (a little-endian uint32, as ggml's memcpy).
int fifth_bit(const uint8_t* qh, int j) {
    return (qh[j / 8] >> (j % 8)) & 1;
}

}  // namespace

void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n) {
    constexpr int half = QK4_1 / 2;
    for (int64_t b = 0; b < n / QK4_1; b++, x += QK4_1) {
        float min, max;
        block_range(x, QK4_1, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(min);
        for (int j = 0; j < half; j++) {
            // +0.5 then truncation: x - min >= 0, so this rounds to nearest as ggml does.
            const int lo = std::min(
                15, static_cast<int>(static_cast<int8_t>(scaled(x[j] - min, id, 15.0f) + 0.5f)));
            const int hi = std::min(
                15,
                static_cast<int>(static_cast<int8_t>(scaled(x[j + half] - min, id, 15.0f) + 0.5f)));
            y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n) {
    constexpr int half = QK4_1 / 2;
    for (int64_t b = 0; b < n / QK4_1; b++, y += QK4_1) {
        const float d = fp16_to_fp32(x[b].d);
        const float m = fp16_to_fp32(x[b].m);
        for (int j = 0; j < half; j++) {
            y[j] = static_cast<float>(x[b].qs[j] & 0x0f) * d + m;
            y[j + half] = static_cast<float>(x[b].qs[j] >> 4) * d + m;
        }
    }
}

void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n) {
    constexpr int half = QK5_0 / 2;
    for (int64_t b = 0; b < n / QK5_0; b++, x += QK5_0) {
        // As Q4_0: the signed value of largest magnitude maps to -16.
        const float d = signed_absmax(x, QK5_0) / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        std::memset(y[b].qh, 0, sizeof y[b].qh);
        for (int j = 0; j < half; j++) {
            const int lo = std::min(
                31, static_cast<int>(static_cast<int8_t>(scaled(x[j], id, 16.0f) + 16.5f)));
            const int hi = std::min(
                31, static_cast<int>(static_cast<int8_t>(scaled(x[j + half], id, 16.0f) + 16.5f)));
            y[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
            y[b].qh[j / 8] |= static_cast<uint8_t>((lo >> 4) << (j % 8));
            y[b].qh[(j + half) / 8] |= static_cast<uint8_t>((hi >> 4) << (j % 8));
        }
    }
}

void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n) {
    constexpr int half = QK5_0 / 2;
    for (int64_t b = 0; b < n / QK5_0; b++, y += QK5_0) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < half; j++) {
            const int lo = (x[b].qs[j] & 0x0f) | (fifth_bit(x[b].qh, j) << 4);
            const int hi = (x[b].qs[j] >> 4) | (fifth_bit(x[b].qh, j + half) << 4);
            y[j] = static_cast<float>(lo - 16) * d;
            y[j + half] = static_cast<float>(hi - 16) * d;
        }
    }
}

void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n) {
    constexpr int half = QK5_1 / 2;
    for (int64_t b = 0; b < n / QK5_1; b++, x += QK5_1) {
        float min, max;
        block_range(x, QK5_1, &min, &max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(min);
        std::memset(y[b].qh, 0, sizeof y[b].qh);
        for (int j = 0; j < half; j++) {
            // ggml does not clamp to 31: (x - min) / d is at most 31 up to rounding.
            const int lo = static_cast<uint8_t>(scaled(x[j] - min, id, 31.0f) + 0.5f);
            const int hi = static_cast<uint8_t>(scaled(x[j + half] - min, id, 31.0f) + 0.5f);
            y[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
            y[b].qh[j / 8] |= static_cast<uint8_t>(((lo >> 4) & 1) << (j % 8));
            y[b].qh[(j + half) / 8] |= static_cast<uint8_t>(((hi >> 4) & 1) << (j % 8));
        }
    }
}

void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n) {
    constexpr int half = QK5_1 / 2;
    for (int64_t b = 0; b < n / QK5_1; b++, y += QK5_1) {
        const float d = fp16_to_fp32(x[b].d);
        const float m = fp16_to_fp32(x[b].m);
        for (int j = 0; j < half; j++) {
            const int lo = (x[b].qs[j] & 0x0f) | (fifth_bit(x[b].qh, j) << 4);
            const int hi = (x[b].qs[j] >> 4) | (fifth_bit(x[b].qh, j + half) << 4);
            y[j] = static_cast<float>(lo) * d + m;
            y[j + half] = static_cast<float>(hi) * d + m;
        }
    }
}

void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t n) {
    for (int64_t b = 0; b < n / QK8_1; b++, x += QK8_1) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_1; j++) {
            const float a = std::fabs(x[j]);
            amax = amax > a ? amax : a;
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < QK8_1; j++) {
            y[b].qs[j] = static_cast<int8_t>(std::round(scaled(x[j], id, 127.0f)));
            sum += y[b].qs[j];
        }
        y[b].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

void dequantize_row_q8_1(const block_q8_1* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK8_1; b++, y += QK8_1) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK8_1; j++) y[j] = static_cast<float>(x[b].qs[j]) * d;
    }
}

// ---- IQ4_NL ---------------------------------------------------------------------------------

namespace {

// The level of kvalues_iq4nl nearest to v (the lower one on a tie), as ggml's best_index_int8.
int nearest_nl_level(float v) {
    if (v <= kvalues_iq4nl[0]) return 0;
    if (v >= kvalues_iq4nl[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < kvalues_iq4nl[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return v - kvalues_iq4nl[hi - 1] < kvalues_iq4nl[hi] - v ? hi - 1 : hi;
}

// sum w q x and sum w q^2 over a block at inverse scale id, w = x^2.
void nl_sums(const float* x, float id, float* sumqx, float* sumq2) {
    *sumqx = *sumq2 = 0;
    for (int j = 0; j < QK4_NL; j++) {
        const float q = kvalues_iq4nl[nearest_nl_level(id * x[j])];
        const float w = x[j] * x[j];
        *sumqx += w * q * x[j];
        *sumq2 += w * q * q;
    }
}

// The scale of a 32-value block (0 for an all-zero one): first the scale that puts the value of
// largest magnitude at magnitude 127, then 15 spacings around it, each with its weighted
// least-squares scale (ggml's quantize_row_iq4_nl_impl with ntry 7, per block).
float nl_block_scale(const float* x) {
    constexpr int ntry = 7;
    const float max = signed_absmax(x, 32);
    if (std::fabs(max) < kGroupMaxEps) return 0;
    float sumqx, sumq2;
    nl_sums(x, 1 / (-max / kvalues_iq4nl[0]), &sumqx, &sumq2);
    float d = sumqx / sumq2;
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; itry++) {
        nl_sums(x, (itry + kvalues_iq4nl[0]) / max, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// Levels of 32 values against the float scale d (not its fp16, as ggml), packed as Q4_0's.
void nl_levels(const float* x, float d, uint8_t* qs) {
    const float id = d ? 1 / d : 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = static_cast<uint8_t>(nearest_nl_level(id * x[j]) |
                                     (nearest_nl_level(id * x[j + 16]) << 4));
    }
}

}  // namespace

void quantize_row_iq4_nl(const float* x, block_iq4_nl* y, int64_t n) {
    // An all-zero block keeps d = 0 and the levels nearest 0, as ggml writes it.
    for (int64_t b = 0; b < n / QK4_NL; b++, x += QK4_NL) {
        const float d = nl_block_scale(x);
        y[b].d = fp32_to_fp16(d);
        nl_levels(x, d, y[b].qs);
    }
}

void dequantize_row_iq4_nl(const block_iq4_nl* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK4_NL; b++, y += QK4_NL) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < QK4_NL / 2; j++) {
            y[j] = d * kvalues_iq4nl[x[b].qs[j] & 0x0f];
            y[j + QK4_NL / 2] = d * kvalues_iq4nl[x[b].qs[j] >> 4];
        }
    }
}

void quantize_row_iq4_xs(const float* x, block_iq4_xs* y, int64_t n) {
    float scales[QK_K / 32];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        // Each 32-value block's scale as IQ4_NL's, then all in 6 signed bits against the one of
        // largest magnitude, which maps to -32 (d = -0 for an all-zero super-block, as ggml).
        for (int ib = 0; ib < QK_K / 32; ib++) scales[ib] = nl_block_scale(x + 32 * ib);
        const float max_scale = signed_absmax(scales, QK_K / 32);
        const float d = -max_scale / 32;
        y[b].d = fp32_to_fp16(d);
        const float id = d ? 1 / d : 0;
        y[b].scales_h = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const int l = std::max(-32, std::min(31, nearest_int(id * scales[ib])));
            // Levels against the block's scale as stored, with the float d.
            nl_levels(x + 32 * ib, d * l, y[b].qs + 16 * ib);
            const int u = l + 32;
            if (ib % 2 == 0) {
                y[b].scales_l[ib / 2] = static_cast<uint8_t>(u & 0x0f);
            } else {
                y[b].scales_l[ib / 2] |= static_cast<uint8_t>((u & 0x0f) << 4);
            }
            y[b].scales_h |= static_cast<uint16_t>((u >> 4) << (2 * ib));
        }
    }
}

int iq4_xs_scale(const block_iq4_xs& x, int ib) {
    return (((x.scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f) |
            (((x.scales_h >> (2 * ib)) & 3) << 4)) -
           32;
}

void dequantize_row_iq4_xs(const block_iq4_xs* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        for (int ib = 0; ib < QK_K / 32; ib++, y += 32) {
            const float dl = d * iq4_xs_scale(x[b], ib);
            const uint8_t* qs = x[b].qs + 16 * ib;
            for (int j = 0; j < 16; j++) {
                y[j] = dl * kvalues_iq4nl[qs[j] & 0x0f];
                y[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}

}  // namespace ggml_lite
