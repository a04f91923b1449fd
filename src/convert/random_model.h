// Models with random weights at the shapes of real ones: for benchmarks (speed depends on
// shapes and types, not on what the weights learned) and for tests at realistic sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/convert/convert.h"

namespace lila {

struct ModelPreset {
    const char* name;
    int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
};

// The presets, e.g. "tinyllama-1.1b" (vocab 32000, width 2048, 22 layers, 32 heads, 4 KV
// heads, ffn 5632).
const std::vector<ModelPreset>& model_presets();

// Writes a GGUF model of the named preset with weights drawn uniformly with standard
// deviation 0.02 (norms 1), deterministic for a given seed. Error for an unknown preset.
void write_random_model(const std::string& preset, const std::string& out,
                        const ConvertOptions& opts, uint64_t seed = 1,
                        const GGUFWriter::Progress& progress = {});

}  // namespace lila
