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
    // llama.cpp's n_gqa(): query heads per KV head, n_head / n_head_kv (0 when unknown).
    int64_t n_gqa = 0;
    // llama.cpp's model type 70B (LLM_TYPE_70B), whose attn_v, 8x smaller than attn_q, gets more
    // bits.
    bool type_70b = false;
};

// The layout of a model of architecture `arch` (GGUF's general.architecture): llama.cpp calls
// 80-layer llama (with GQA), qwen2, deci and olmo models 70B.
ModelLayout model_layout(const std::string& arch, int64_t n_layer, int64_t n_head,
                         int64_t n_head_kv, bool tied_output);

// The type tensor `name` (GGUF name, e.g. "blk.3.ffn_down.weight", its layer read from the
// "blk.N." prefix) of GGUF shape `shape` (shape[0] the row length) is stored as, for a file
// of type `ft`: llama.cpp's llama_tensor_get_type for the types lila has.
// - 1-D tensors (norms, biases, RoPE factors) stay F32.
// - The mixes (q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, and q4_0, q4_1,
//   q5_0, q5_1, iq4_nl, iq4_xs unless pure), for a model without experts: the output matrix
//   (token_embd when tied) Q6_K; iq4_nl, iq4_xs: attn_v Q5_K from 4 query heads per KV head,
//   ffn_down Q5_K in the first eighth of the layers; _m: attn_v and ffn_down Q6_K in the
//   layers use_more_bits() picks, attn_qkv one k-quant up; q4_k_s: attn_v Q5_K in layers 0-3,
//   ffn_down Q5_K in the first eighth of the layers; q2_k: attn_v Q3_K (Q4_K from 4 query heads
//   per KV head), ffn_down and attn_output Q3_K; q3_k_m: attn_v Q5_K in layers 0-1, else Q4_K,
//   ffn_down Q5_K in the first sixteenth, else Q4_K, attn_output and attn_qkv Q4_K; q3_k_l:
//   attn_v, ffn_down and attn_output Q5_K, attn_qkv Q4_K; a 70B model's attn_v Q5_K where
//   these ask for Q3_K or Q4_K; the base type elsewhere.
// - A matrix whose rows do not split into whole blocks falls back as in llama.cpp: the output
//   matrix to Q8_0, Q2_K and Q3_K to IQ4_NL, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, IQ4_XS to
//   IQ4_NL, anything still not fitting to F16.
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
