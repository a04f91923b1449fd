// llama2.c checkpoints (Karpathy's run.c format) -> GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "src/convert/convert.h"

namespace lila {

// The header of a llama2.c checkpoint: seven int32s.
struct Llama2cConfig {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    bool shared_classifier;  // a negative vocab_size in the file means an unshared classifier
};

// Converts CHECKPOINT + TOKENIZER (llama2.c tokenizer.bin) into a GGUF file at OUT (written
// atomically). Error naming the file on a truncated or inconsistent checkpoint/tokenizer.
void convert_llama2c(const std::string& checkpoint, const std::string& tokenizer,
                     const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress = {});

// Reads and validates just the header (for `lila info`-style inspection and tests).
Llama2cConfig read_llama2c_config(const std::string& checkpoint);

}  // namespace lila
