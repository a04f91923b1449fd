// The AVX2 table's packed Q3_K and Q2_K kernels (PackedKernels::gemm, kernels.h), in a
// translation unit of their own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite::avx2 {

void packed_gemm_q3_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q2_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);

}  // namespace ggml_lite::avx2
