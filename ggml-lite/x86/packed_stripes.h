// The grid types' packed kernels on 4-row stripes (packed.h: block_grid_xxsx4 ...): each x86
// ISA's PackedKernels::gemm and to_grid for IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S, as
// overrides for its tables (the activation quantizer is the table's own). From
// packed_stripes_avx2.cpp (the avx2 and avx2_vnni tables) and packed_stripes_avx512.cpp (avx512,
// avx512_bf16).
#pragma once

#include <span>

#include "ggml-lite/kernels.h"

namespace ggml_lite {
namespace avx2 {
std::span<const PackedOverride> stripe_kernels();
}  // namespace avx2
namespace avx512 {
std::span<const PackedOverride> stripe_kernels();
}  // namespace avx512
}  // namespace ggml_lite
