// Model conversion into lila's (and llama.cpp's) GGUF format.
#pragma once

#include <string>

#include "ggml-lite/type.h"
#include "gguf.h"

namespace lila {

struct ConvertOptions {
    ggml_lite::Type type = ggml_lite::Type::F32;  // for matrices; see storage_type()
    int n_threads = 1;
    std::string name;  // general.name; empty: keep the input's, or its file name
};

// Re-encodes every tensor of a GGUF model at opts.type (1-D tensors stay F32), keeping all
// metadata. Output written atomically.
void requantize_gguf(const std::string& in, const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress = {});

}  // namespace lila
