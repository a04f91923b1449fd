// The AVX-512 table's packed-weight kernels (PackedKernels::gemm, kernels.h): the 32-value block
// types and the float types in packed_avx512.cpp, the super-block types in
// packed_kquant_avx512.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite::avx512 {

void packed_gemm_q8_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q4_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q5_0(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_iq4_nl(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                        int64_t y_stride, int nr, int nt);
void packed_gemm_q4_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q5_1(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
// PackedKernels::gemv2 of the 32-value block types and the float types.
void packed_gemv2_q8_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
void packed_gemv2_q4_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
void packed_gemv2_q5_0(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
void packed_gemv2_iq4_nl(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                         float* y1, int nr0, int nr1);
void packed_gemv2_q4_1(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
void packed_gemv2_q5_1(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
void packed_gemm_f32(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt);
void packed_gemm_f16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                     int64_t y_stride, int nr, int nt);
void packed_gemm_bf16(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemv2_f32(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                      float* y1, int nr0, int nr1);
void packed_gemv2_f16(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                      float* y1, int nr0, int nr1);
void packed_gemv2_bf16(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);
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
// The grid types' decoded levels (packed.h: block_gridx16): Kernels::grid_gemm.
void packed_gemm_grid(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);

}  // namespace ggml_lite::avx512
