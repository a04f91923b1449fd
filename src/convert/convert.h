// Model conversion into lila's (and llama.cpp's) GGUF format.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ggml-lite/type.h"
#include "src/convert/quantize.h"
#include "src/io/gguf.h"
#include "src/runtime/hparams.h"

namespace lila {

struct ConvertOptions {
    FileType type = ggml_lite::Type::F32;  // for matrices; see tensor_type()
    int n_threads = 1;
    std::string name;  // general.name; empty: keep the input's, or its file name
};

// Writes general.* and the architecture's hyperparameter keys ({arch}.block_count, ...; the
// head size as attention.key_length/value_length when it is not n_embd / n_head) for a model
// of shape `hp` written as file type `type`.
void set_model_metadata(GGUFWriter& w, const std::string& arch, const HParams& hp,
                        const std::string& name, FileType type);

// Supplies a tensor's values as floats when the writer asks for them: returns rows × cols
// floats, either in place (a mapped checkpoint) or filled into `scratch`.
using FloatSource = std::function<const float*(std::vector<float>& scratch)>;

// Adds a tensor of `rows` × `cols` (1 row: a 1-D tensor) stored as
// tensor_type(opts.type, name, shape, model), converted from the source's floats one tensor at
// a time.
void add_float_tensor(GGUFWriter& w, const std::string& name, int64_t rows, int64_t cols,
                      const ConvertOptions& opts, const ModelLayout& model, FloatSource source);

// Converts the Hugging Face model directory DIR (config.json, model.safetensors or shards
// with model.safetensors.index.json, tokenizer.json, tokenizer_config.json, ...) into a GGUF
// file at OUT, written atomically, with the architecture, keys and tensor names llama.cpp's
// converter writes: LlamaForCausalLM (Llama 2/3/3.1/3.2, TinyLlama, SmolLM; "llama3" RoPE
// scaling becomes rope_freqs.weight) and MistralForCausalLM as "llama", Qwen2ForCausalLM as
// "qwen2", Qwen3ForCausalLM as "qwen3", Gemma2ForCausalLM and Gemma3ForCausalLM (text) as
// "gemma2"/"gemma3" (norms stored as 1 + w), Phi3ForCausalLM as "phi3" (fused projections,
// partial and LongRoPE), SmolLM3ForCausalLM as "smollm3", GraniteForCausalLM as "granite" and
// Olmo2ForCausalLM as "olmo2". q/k rows are permuted into GGUF's interleaved pairs for the
// NORM-RoPE architectures only (src/runtime/arch.h). Error naming the file for a missing,
// corrupt or unsupported part; no OUT is left behind then.
void convert_hf(const std::string& dir, const std::string& out, const ConvertOptions& opts,
                const GGUFWriter::Progress& progress = {});

// Re-encodes every tensor of a GGUF model as tensor_type() picks for opts.type (1-D tensors
// stay F32), keeping all metadata. Output written atomically.
void requantize_gguf(const std::string& in, const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress = {});

}  // namespace lila
