// A Llama-family model bound to the tensors of a memory-mapped GGUF file, with its
// architecture's description (arch.h) and the values of its block variants.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ggml-lite/ops.h"
#include "src/io/gguf.h"
#include "src/runtime/arch.h"
#include "src/runtime/hparams.h"
#include "src/tokenizer/tokenizer.h"

namespace lila {

struct Layer {
    // Small: dequantized at load. Empty when the architecture has none (arch.h).
    std::vector<float> attn_norm, ffn_norm;            // before each sublayer
    std::vector<float> post_attn_norm, post_ffn_norm;  // on each sublayer's output
    std::vector<float> q_norm, k_norm;                 // per head or over the projection
    std::vector<float> bq, bk, bv;                     // Qwen2-style biases
    // Matrices of a fused attn_qkv or gate/up ffn_up are row ranges of it.
    ggml_lite::Matrix wq, wk, wv, wo;
    ggml_lite::Matrix w1, w2, w3;  // gate, down, up: out = w2 · (act(w1·x) ⊙ w3·x)
    bool sliding = false;          // attends to the last n_swa positions only
    bool rope = true;              // queries and keys get RoPE
    bool local_rope = false;       // with the sliding layers' RoPE base (Gemma 3)
};

class Model {
public:
    // Throws Error naming the file on anything missing, inconsistent or unsupported.
    // With `pack`, the weight matrices the active kernels have a packed layout for are
    // rearranged once into it (ggml-lite/ops.h: pack_weights): a copy of those matrices in
    // memory, made in about the time it takes to read them.
    static std::unique_ptr<Model> load(const std::string& path, bool pack = true);

    const GGUFFile& file() const { return *file_; }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    std::string name() const;          // general.name, else the file's base name
    std::string type_summary() const;  // the weight type of most matrices, e.g. "q4_0"
    size_t weight_bytes() const;       // bytes of all tensors: what a decode step streams

    // The RoPE frequency divisors for a context of n_ctx positions: Phi-3's long factors past
    // its original context, its short ones within it, else rope_freq_factors (empty: none).
    const std::vector<float>& rope_factors(int64_t n_ctx) const;

    const Arch* arch = nullptr;  // never null once loaded
    HParams hp;
    ggml_lite::Matrix tok_embd;  // n_vocab rows of n_embd
    std::vector<Layer> layers;
    std::vector<float> output_norm;
    ggml_lite::Matrix output;  // the LM head; tok_embd when the embeddings are tied
    // Divides RoPE frequencies: Llama 3.1's rope_freqs.weight, times a linear scaling factor
    // (rope.scaling.factor); empty when neither applies.
    std::vector<float> rope_freq_factors;
    // Phi-3's LongRoPE: per-frequency divisors for long and short contexts, the context they
    // switch at, and the factor cos and sin are multiplied by (rope.scaling.attn_factor).
    std::vector<float> rope_factors_long, rope_factors_short;
    int64_t n_ctx_orig = 0;
    float rope_attn_factor = 1.0f;
    float rope_theta_local = 0.0f;  // RoPE base of layers with local_rope

    // Block variants with this file's values (arch.h says which apply).
    float embd_scale = 1.0f;      // embeddings are multiplied by it
    float residual_scale = 1.0f;  // each sublayer's output, before it joins the residual
    float attn_scale = 1.0f;      // attention scores are q·k times it
    float attn_softcap = 0.0f;    // 0: none
    float logit_scale = 1.0f;     // logits are multiplied by it
    float final_softcap = 0.0f;   // 0: none
    int64_t n_swa = 0;            // window of the sliding layers

private:
    std::unique_ptr<GGUFFile> file_;
    std::unique_ptr<Tokenizer> tokenizer_;
    ggml_lite::PackedBuffer packed_;  // what the matrices' `packed` point into
};

}  // namespace lila
