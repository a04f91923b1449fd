// The avx512_bf16 table's BF16 activations (packed.h: bf16_activations_ref's bits), which the amx
// table's chunked ones (packed_amx.cpp) share past their last whole chunk.
#pragma once

#include <cstdint>

namespace ggml_lite::avx512_bf16 {

void bf16_activations(const float* x, void* y, int64_t n);

}  // namespace ggml_lite::avx512_bf16
