#include "src/convert/quantize.h"

#include <cctype>

namespace lila {

using ggml_lite::Type;

namespace {

// llama.cpp's rules (llama_tensor_get_type) for its k-quant mixes on a Llama-family model
// without experts: more bits where quantization errors cost most, the output matrix and the
// value and FFN-down projections of some layers.
Type mix_type(FileType ft, const std::string& name, const ModelLayout& model) {
    if (name == "output.weight" || (model.tied_output && name == "token_embd.weight")) {
        return Type::Q6_K;
    }
    const int64_t layer = tensor_layer(name);
    const bool more_bits = layer >= 0 && use_more_bits(layer, model.n_layer);
    const bool q4_k_s = ft.base == Type::Q4_K && ft.mix == Mix::S;
    if (name.find("attn_v.weight") != std::string::npos) {
        if (ft.mix == Mix::M && more_bits) return Type::Q6_K;
        if (q4_k_s && layer >= 0 && layer < 4) return Type::Q5_K;
    } else if (name.find("ffn_down") != std::string::npos) {
        if (ft.mix == Mix::M && more_bits) return Type::Q6_K;
        if (q4_k_s && layer >= 0 && layer < model.n_layer / 8) return Type::Q5_K;
    } else if (name.find("attn_qkv.weight") != std::string::npos && ft.mix == Mix::M) {
        return ft.base == Type::Q4_K ? Type::Q5_K : Type::Q6_K;
    }
    return ft.base;
}

// `type`, or what stands in for it when rows of `row` values do not split into its blocks:
// llama.cpp's fallbacks for the k-quants (to 32-block types of at least their bits), then F16.
Type fitting_type(Type type, int64_t row) {
    if (row % ggml_lite::block_size(type) == 0) return type;
    if (type == Type::Q4_K) type = Type::Q5_0;
    if (type == Type::Q5_K) type = Type::Q5_1;
    if (type == Type::Q6_K) type = Type::Q8_0;
    if (type == Type::IQ4_XS) type = Type::IQ4_NL;
    return row % ggml_lite::block_size(type) == 0 ? type : Type::F16;
}

}  // namespace

int64_t tensor_layer(const std::string& name) {
    constexpr std::string_view prefix = "blk.";
    if (name.compare(0, prefix.size(), prefix) != 0) return -1;
    int64_t layer = 0;
    size_t i = prefix.size();
    for (; i < name.size() && i < prefix.size() + 9; i++) {  // at most 9 digits: no overflow
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) break;
        layer = layer * 10 + (name[i] - '0');
    }
    return i > prefix.size() && i < name.size() && name[i] == '.' ? layer : -1;
}

bool use_more_bits(int64_t layer, int64_t n_layer) {
    return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

Type tensor_type(FileType ft, const std::string& name, const std::vector<int64_t>& shape,
                 const ModelLayout& model) {
    if (shape.size() < 2) return Type::F32;
    return fitting_type(ft.mix != Mix::None ? mix_type(ft, name, model) : ft.base, shape[0]);
}

void quantize_rows(const float* src, Type type, int64_t rows, int64_t cols, int n_threads,
                   std::vector<uint8_t>& out) {
    const size_t row_bytes = ggml_lite::row_size(type, cols);
    out.resize(row_bytes * rows);
    const auto from_float = ggml_lite::traits(type).from_float;
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t r = 0; r < rows; r++) from_float(src + r * cols, out.data() + r * row_bytes, cols);
}

}  // namespace lila
