// The AVX2 tables' packed-weight kernels (PackedKernels::gemm and gemv2, kernels.h). Their
// translation units (packed_avx2.cpp, packed_q23_avx2.cpp) are compiled twice
// (ggml-lite/CMakeLists.txt): as they are for the avx2 table, and with -mavxvnni and
// LILA_AVX2_VNNI for the avx2_vnni table, where a 4-byte dot is one vpdpbusd
// (packed_avx2-inl.h). Each copy has a namespace of its own, LILA_AVX2_NS inside them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ggml-lite/kernels.h"

#if defined(LILA_AVX2_VNNI)
#define LILA_AVX2_NS avx2_vnni
#else
#define LILA_AVX2_NS avx2
#endif

namespace ggml_lite {

// Each copy's gemm and gemv2 of every packed type (the activation quantizers are the avx2
// table's: kernels_avx2.cpp), and its Kernels::grid_gemm (packed.h: block_gridx16).
namespace avx2 {
std::span<const PackedOverride> packed_kernels();
void packed_gemm_grid(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
}  // namespace avx2
namespace avx2_vnni {
std::span<const PackedOverride> packed_kernels();
void packed_gemm_grid(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
}  // namespace avx2_vnni

namespace LILA_AVX2_NS {

// Q3_K and Q2_K, from packed_q23_avx2.cpp (Q2_K's gemv2: k_gemv2).
void packed_gemm_q3_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemm_q2_K(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
void packed_gemv2_q2_K(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                       float* y1, int nr0, int nr1);

}  // namespace LILA_AVX2_NS
}  // namespace ggml_lite
