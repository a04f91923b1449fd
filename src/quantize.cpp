#include "quantize.h"

namespace lila {

using ggml_lite::Type;

Type storage_type(Type want, const std::vector<int64_t>& shape) {
    if (shape.size() < 2) return Type::F32;
    if (shape[0] % ggml_lite::block_size(want) != 0) return Type::F16;
    return want;
}

void quantize_rows(const float* src, Type type, int64_t rows, int64_t cols, int n_threads,
                   std::vector<uint8_t>& out) {
    const size_t row_bytes = ggml_lite::row_size(type, cols);
    out.resize(row_bytes * rows);
    const auto from_float = ggml_lite::traits(type).from_float;
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t r = 0; r < rows; r++) from_float(src + r * cols, out.data() + r * row_bytes, cols);
}

uint32_t gguf_file_type(Type type) {
    switch (type) {
        case Type::F32: return 0;
        case Type::F16: return 1;
        case Type::Q4_0: return 2;
        case Type::Q8_0: return 7;
        case Type::BF16: return 32;
    }
    return 0;
}

}  // namespace lila
