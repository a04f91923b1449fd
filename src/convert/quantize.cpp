#include "src/convert/quantize.h"

#include <cctype>

namespace lila {

using ggml_lite::Type;

namespace {

// llama.cpp's rules (llama_tensor_get_type, without an importance matrix) for its mixes on a
// Llama-family model without experts: more bits where quantization errors cost most, the output
// matrix and the value, FFN-down and attention-output projections of some layers.
Type mix_type(FileType ft, const std::string& name, const ModelLayout& model) {
    if (name == "output.weight" || (model.tied_output && name == "token_embd.weight")) {
        return Type::Q6_K;
    }
    const int64_t layer = tensor_layer(name);
    const bool more_bits = layer >= 0 && use_more_bits(layer, model.n_layer);
    const auto is = [ft](Type base, Mix mix) { return ft == FileType(base, mix); };
    const bool q2_k = ft == FileType::Q2_K();
    const bool q3_k_m = is(Type::Q3_K, Mix::M), q3_k_l = is(Type::Q3_K, Mix::L);
    const bool q4_k_s = is(Type::Q4_K, Mix::S);
    const bool iq4 = is(Type::IQ4_NL, Mix::Mostly) || is(Type::IQ4_XS, Mix::Mostly);
    // The _m mixes of Q4_K and Q5_K (Q3_K_M has rules of its own).
    const bool q45_k_m = is(Type::Q4_K, Mix::M) || is(Type::Q5_K, Mix::M);
    if (name.find("attn_v.weight") != std::string::npos) {
        Type type = ft.base;
        if (q2_k) {
            type = model.n_gqa >= 4 ? Type::Q4_K : Type::Q3_K;
        } else if (q3_k_m) {
            type = layer >= 0 && layer < 2 ? Type::Q5_K : Type::Q4_K;
        } else if (q3_k_l || (iq4 && model.n_gqa >= 4)) {
            type = Type::Q5_K;
        } else if (q45_k_m && more_bits) {
            type = Type::Q6_K;
        } else if (q4_k_s && layer >= 0 && layer < 4) {
            type = Type::Q5_K;
        }
        // A 70B model's attn_v is shared by 8 heads: more bits cost little there.
        if (model.type_70b && (type == Type::Q3_K || type == Type::Q4_K)) type = Type::Q5_K;
        return type;
    }
    if (name.find("ffn_down") != std::string::npos) {
        if (q2_k) return Type::Q3_K;
        if (q3_k_m) return layer >= 0 && layer < model.n_layer / 16 ? Type::Q5_K : Type::Q4_K;
        if (q3_k_l || (iq4 && layer >= 0 && layer < model.n_layer / 8)) return Type::Q5_K;
        if (q45_k_m && more_bits) return Type::Q6_K;
        if (q4_k_s && layer >= 0 && layer < model.n_layer / 8) return Type::Q5_K;
    } else if (name.find("attn_output.weight") != std::string::npos) {
        if (q2_k) return Type::Q3_K;
        if (q3_k_m) return Type::Q4_K;
        if (q3_k_l) return Type::Q5_K;
    } else if (name.find("attn_qkv.weight") != std::string::npos) {
        if (q3_k_m || q3_k_l) return Type::Q4_K;
        if (is(Type::Q4_K, Mix::M)) return Type::Q5_K;
        if (is(Type::Q5_K, Mix::M)) return Type::Q6_K;
    }
    return ft.base;
}

// `type`, or what stands in for it when rows of `row` values do not split into its blocks:
// llama.cpp's fallbacks for the k-quants (to 32-block types of at least their bits; IQ4_NL for
// the 2- and 3-bit ones), then F16.
Type fitting_type(Type type, int64_t row) {
    if (row % ggml_lite::block_size(type) == 0) return type;
    if (type == Type::Q2_K || type == Type::Q3_K || type == Type::IQ4_XS) type = Type::IQ4_NL;
    if (type == Type::Q4_K) type = Type::Q5_0;
    if (type == Type::Q5_K) type = Type::Q5_1;
    if (type == Type::Q6_K) type = Type::Q8_0;
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

ModelLayout model_layout(const std::string& arch, int64_t n_layer, int64_t n_head,
                         int64_t n_head_kv, bool tied_output) {
    ModelLayout m;
    m.n_layer = n_layer;
    m.tied_output = tied_output;
    m.n_gqa = n_head_kv > 0 ? n_head / n_head_kv : 0;
    m.type_70b = n_layer == 80 && ((arch == "llama" && n_head != n_head_kv) || arch == "qwen2" ||
                                   arch == "deci" || arch == "olmo");
    return m;
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
