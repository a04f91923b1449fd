// A Llama-family model bound to the tensors of a memory-mapped GGUF file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ggml-lite/ops.h"
#include "src/io/gguf.h"
#include "src/runtime/hparams.h"
#include "src/tokenizer/tokenizer.h"

namespace lila {

struct Layer {
    std::vector<float> attn_norm, ffn_norm;  // small: dequantized at load
    std::vector<float> bq, bk, bv;           // Qwen2-style biases; empty when absent
    ggml_lite::Matrix wq, wk, wv, wo;
    ggml_lite::Matrix w1, w2, w3;  // gate, down, up: out = w2 · (silu(w1·x) ⊙ w3·x)
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

    HParams hp;
    ggml_lite::Matrix tok_embd;  // n_vocab rows of n_embd
    std::vector<Layer> layers;
    std::vector<float> output_norm;
    ggml_lite::Matrix output;              // the LM head; tok_embd when the embeddings are tied
    std::vector<float> rope_freq_factors;  // Llama 3.1 long-context scaling; empty when absent

private:
    std::unique_ptr<GGUFFile> file_;
    std::unique_ptr<Tokenizer> tokenizer_;
    ggml_lite::PackedBuffer packed_;  // what the matrices' `packed` point into
};

}  // namespace lila
