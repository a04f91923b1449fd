// The grid types' quantized dot products (IQ1_S ... IQ3_S against Q8_K, TypeKernels::vec_dot
// and gemm_tile, kernels.h) and decoders (TypeKernels::grid_block) in 256-bit AVX2, in a
// translation unit of their own. The AVX2 and AVX-512 tables both use them: a grid step is table
// lookups and byte work that 512-bit registers would not shorten.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggml-lite/kernels.h"

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

// The grid types' rows of the avx2 and avx512 tables (kernels_avx2.cpp, kernels_avx512.cpp).
inline constexpr TypeOverride kGridTypes[] = {
    {Type::IQ2_XXS, {vec_dot_iq2_xxs, nullptr, gemm_tile_iq2_xxs, grid_block_iq2_xxs}},
    {Type::IQ2_XS, {vec_dot_iq2_xs, nullptr, gemm_tile_iq2_xs, grid_block_iq2_xs}},
    {Type::IQ2_S, {vec_dot_iq2_s, nullptr, gemm_tile_iq2_s, grid_block_iq2_s}},
    {Type::IQ3_XXS, {vec_dot_iq3_xxs, nullptr, gemm_tile_iq3_xxs, grid_block_iq3_xxs}},
    {Type::IQ3_S, {vec_dot_iq3_s, nullptr, gemm_tile_iq3_s, grid_block_iq3_s}},
    {Type::IQ1_S, {vec_dot_iq1_s, nullptr, gemm_tile_iq1_s, grid_block_iq1_s}},
    {Type::IQ1_M, {vec_dot_iq1_m, nullptr, gemm_tile_iq1_m, grid_block_iq1_m}},
};

}  // namespace ggml_lite::avx2
