// The grid types' packed kernels on 4-row stripes (packed.h: block_grid_xxsx4 ...): each x86
// ISA's PackedKernels::gemm and to_grid for the seven grid types, as overrides for its tables
// (the activation quantizer is the table's own). From packed_stripes_avx2.cpp (the avx2 table,
// and compiled again for avx2_vnni) and packed_stripes_avx512.cpp (avx512, avx512_bf16).
#pragma once

#include <span>

#include "ggml-lite/kernels.h"

namespace ggml_lite {
namespace avx2 {
std::span<const PackedOverride> stripe_kernels();
}  // namespace avx2
namespace avx2_vnni {
std::span<const PackedOverride> stripe_kernels();
}  // namespace avx2_vnni
namespace avx512 {
std::span<const PackedOverride> stripe_kernels();
}  // namespace avx512
}  // namespace ggml_lite
