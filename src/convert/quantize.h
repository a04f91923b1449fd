// Float weights -> the types a model file stores, as a converter writes them: which type each
// tensor gets (one place for every converter) and the conversion itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml-lite/type.h"
#include "src/io/file_type.h"

namespace lila {

// What the type rules need to know of the model besides a tensor's own name and shape.
struct ModelLayout {
    int64_t n_layer = 0;
    bool tied_output = false;  // no output.weight: token_embd.weight is the output matrix too
};

// The type tensor `name` (GGUF name, e.g. "blk.3.ffn_down.weight", its layer read from the
// "blk.N." prefix) of GGUF shape `shape` (shape[0] the row length) is stored as, for a file
// of type `ft`: llama.cpp's llama_tensor_get_type for the types lila has.
// - 1-D tensors (norms, biases, RoPE factors) stay F32.
// - The mixes (q4_k_s, q4_k_m, q5_k_s, q5_k_m): the output matrix (token_embd when tied) Q6_K;
//   _m: attn_v and ffn_down Q6_K in the layers use_more_bits() picks, attn_qkv one k-quant up;
//   q4_k_s: attn_v Q5_K in layers 0-3, ffn_down Q5_K in the first eighth of the layers; the
//   base type elsewhere.
// - A matrix whose rows do not split into whole blocks falls back as in llama.cpp: Q4_K to
//   Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, IQ4_XS to IQ4_NL, anything still not fitting to F16.
ggml_lite::Type tensor_type(FileType ft, const std::string& name, const std::vector<int64_t>& shape,
                            const ModelLayout& model);

// N of a "blk.N." tensor name; -1 for tensors outside the layers.
int64_t tensor_layer(const std::string& name);

// llama.cpp's choice of the layers that get more bits in its _M mixes: the first and last
// eighth of the layers and every third one between.
bool use_more_bits(int64_t layer, int64_t n_layer);

// Converts `rows` rows of `cols` floats to `type` into `out` (resized), threaded over rows.
void quantize_rows(const float* src, ggml_lite::Type type, int64_t rows, int64_t cols,
                   int n_threads, std::vector<uint8_t>& out);

}  // namespace lila
