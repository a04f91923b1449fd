// Quantized block layouts (identical to ggml's) and their scalar reference codecs.
#pragma once

#include <cstdint>

#include "fp16.h"

namespace ggml_lite {

constexpr int QK8_0 = 32;
struct block_q8_0 {
    fp16_t d;  // scale: max|x| / 127
    int8_t qs[QK8_0];
};
static_assert(sizeof(block_q8_0) == 34);

constexpr int QK4_0 = 32;
struct block_q4_0 {
    fp16_t d;                // scale: (value of max magnitude) / -8
    uint8_t qs[QK4_0 / 2];   // byte j: element j in the low nibble, j+16 in the high; value d*(q-8)
};
static_assert(sizeof(block_q4_0) == 18);

// Scalar reference codecs; n is a multiple of the block size.
void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n);
void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n);
void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n);
void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n);

}  // namespace ggml_lite
