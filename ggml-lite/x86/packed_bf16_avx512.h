// What the amx table (packed_amx.cpp) takes from the avx512_bf16 one: its BF16 activations
// (packed.h: bf16_activations_ref's bits), which the chunked ones share past their last whole
// chunk, and its vdpbf16ps kernels reading chunked activations, for fewer than 16 tokens.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite::avx512_bf16 {

void bf16_activations(const float* x, void* y, int64_t n);
void packed_gemm_bf16_chunked(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                              int64_t y_stride, int nr, int nt);
void packed_gemv2_bf16_chunked(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                               float* y1, int nr0, int nr1);

}  // namespace ggml_lite::avx512_bf16
