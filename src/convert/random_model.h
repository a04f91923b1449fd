// Models with random weights at the shapes of real ones, in their architectures' GGUF layout
// (llama.cpp's keys and tensors): for benchmarks (speed depends on shapes and types, not on
// what the weights learned), for tests at realistic sizes, and for cross-checks with other
// runtimes on the same file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/convert/convert.h"

namespace lila {

struct ModelPreset {
    const char* name;
    const char* arch;  // general.architecture (src/runtime/arch.h)
    int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
    int64_t head_dim = 0;  // 0: n_embd / n_head
    int64_t rope_dim = 0;  // 0: head_dim
    float rope_theta = 10000.0f;
    float norm_eps = 1e-5f;
    bool tied = false;      // no output.weight: the embedding table is the LM head
    bool qkv_bias = false;  // attn_q/k/v.bias (Qwen2)
    int64_t window = 0;     // {arch}.attention.sliding_window; 0: not written
    // Phi-3's LongRoPE: rope_factors_long/short and the context they switch at (0: none).
    int64_t n_ctx_orig = 0;
    // Granite's multipliers (written for "granite" only).
    float embedding_scale = 1.0f, residual_scale = 1.0f, attention_scale = 1.0f, logit_scale = 1.0f;
};

// The presets, e.g. "qwen3-0.6b" (qwen3: vocab 151936, width 1024, 28 layers, 16 heads, 8 KV
// heads of 128, ffn 3072, tied embeddings).
const std::vector<ModelPreset>& model_presets();
// The preset named `name`; Error listing the presets for an unknown one.
const ModelPreset& model_preset(const std::string& name);

struct RandomModelOptions {
    uint64_t seed = 1;
    // The final norm's weights 10 / (0.02 sqrt(n_embd)) rather than 1: logits spread by
    // about 10 rather than 0.02 sqrt(n_embd), so greedy choices have wide margins and a block
    // computed wrongly changes the tokens, where near-uniform predictions would hide it. (A
    // larger LM head would do the same, but when it is the embedding table the input token
    // would then drown what the blocks add.)
    bool confident = false;
    // The vocabulary: a tokenizer.json (or the directory holding it) or a GGUF model's;
    // empty: a synthetic SentencePiece-style one. Padded with unused tokens to the preset's
    // vocabulary size, as llama.cpp's converter pads; the file's chat template comes along.
    std::string tokenizer;
};

// Writes a GGUF model of `preset` with weights drawn uniformly with standard deviation 0.02
// (norms 1, Phi-3's RoPE factors a ramp from 1), deterministic for a given seed.
void write_random_model(const ModelPreset& preset, const std::string& out,
                        const ConvertOptions& opts, const RandomModelOptions& random = {},
                        const GGUFWriter::Progress& progress = {});

}  // namespace lila
