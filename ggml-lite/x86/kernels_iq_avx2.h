// The grid types' quantized dot products (IQ1_S ... IQ3_S against Q8_K, TypeKernels::vec_dot
// and gemm_tile, kernels.h) and decoders (TypeKernels::grid_block) in 256-bit AVX2, in a
// translation unit of their own. The AVX2 and AVX-512 tables both use them: a grid step is table
// lookups and byte work that 512-bit registers would not shorten.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite {
struct GridLevels;  // quant.h
}

namespace ggml_lite::avx2 {

#define LILA_GRID_KERNELS(name)                                                         \
    float vec_dot_##name(int64_t n, const void* w, const void* x);                      \
    void gemm_tile_##name(int64_t n, const void* w, size_t w_stride, const void* x,     \
                          size_t x_stride, float* y, int64_t y_stride, int nr, int nt); \
    void grid_block_##name(const void* src, int64_t i, GridLevels* levels, float* d);
LILA_GRID_KERNELS(iq2_xxs)
LILA_GRID_KERNELS(iq2_xs)
LILA_GRID_KERNELS(iq2_s)
LILA_GRID_KERNELS(iq3_xxs)
LILA_GRID_KERNELS(iq3_s)
LILA_GRID_KERNELS(iq1_s)
LILA_GRID_KERNELS(iq1_m)
#undef LILA_GRID_KERNELS

}  // namespace ggml_lite::avx2
