// Float weights -> the types a model file stores, as a converter writes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml-lite/type.h"

namespace lila {

// The type a tensor is stored as when `want` is asked for: 1-D tensors (norms, biases) stay
// F32; a matrix whose rows do not split into whole blocks of `want` falls back to F16.
ggml_lite::Type storage_type(ggml_lite::Type want, const std::vector<int64_t>& shape);

// Converts `rows` rows of `cols` floats to `type` into `out` (resized), threaded over rows.
void quantize_rows(const float* src, ggml_lite::Type type, int64_t rows, int64_t cols,
                   int n_threads, std::vector<uint8_t>& out);

// llama.cpp's general.file_type for a model whose matrices are mostly `type`.
uint32_t gguf_file_type(ggml_lite::Type type);

}  // namespace lila
