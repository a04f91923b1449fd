// Scalar reference codecs for the quantized blocks, bit-identical to ggml's
// quantize_row_q8_0_ref / quantize_row_q4_0_ref so files and results match llama.cpp.
#include "quant.h"

#include <algorithm>
#include <cmath>

namespace ggml_lite {

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
        for (int j = 0; j < QK8_0; j++) y[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
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
        float amax = 0.0f;
        float max = 0.0f;
        for (int j = 0; j < QK4_0; j++) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < half; j++) {
            // +8.5 then truncation: round to nearest of the offset value, as ggml does.
            const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
            const int hi =
                std::min(15, static_cast<int>(static_cast<int8_t>(x[j + half] * id + 8.5f)));
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

}  // namespace ggml_lite
