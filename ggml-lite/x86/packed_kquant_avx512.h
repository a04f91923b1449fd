// The AVX-512 table's packed Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K and Q2_K kernels (PackedKernels::gemm,
// kernels.h), in a translation unit of their own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite::avx512 {

void packed_gemm_q4_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q5_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q6_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_iq4_xs(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                        int64_t y_stride, int nr, int nt);
void packed_gemm_q3_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q2_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);

}  // namespace ggml_lite::avx512
