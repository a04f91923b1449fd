// Model conversion into lila's (and llama.cpp's) GGUF format.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ggml-lite/type.h"
#include "gguf.h"
#include "model.h"

namespace lila {

struct ConvertOptions {
    ggml_lite::Type type = ggml_lite::Type::F32;  // for matrices; see storage_type()
    int n_threads = 1;
    std::string name;  // general.name; empty: keep the input's, or its file name
};

// Writes general.* and llama.* metadata for a model of shape `hp` whose matrices are `type`.
void set_llama_metadata(GGUFWriter& w, const HParams& hp, const std::string& name,
                        ggml_lite::Type type);

// Supplies a tensor's values as floats when the writer asks for them: returns rows × cols
// floats, either in place (a mapped checkpoint) or filled into `scratch`.
using FloatSource = std::function<const float*(std::vector<float>& scratch)>;

// Adds a tensor of `rows` × `cols` (1 row: a 1-D tensor) stored as
// storage_type(opts.type, shape), converted from the source's floats one tensor at a time.
void add_float_tensor(GGUFWriter& w, const std::string& name, int64_t rows, int64_t cols,
                      const ConvertOptions& opts, FloatSource source);

// Re-encodes every tensor of a GGUF model at opts.type (1-D tensors stay F32), keeping all
// metadata. Output written atomically.
void requantize_gguf(const std::string& in, const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress = {});

}  // namespace lila
