// The attention KV cache: for every layer and position, the K and V rows of all KV heads
// (n_head_kv × head_dim values each), stored as F16 (half the memory and bandwidth of F32,
// llama.cpp's default) or F32 (exact).
#pragma once

#include <cstdint>
#include <vector>

#include "ggml-lite/type.h"
#include "model.h"

namespace lila {

class KVCache {
public:
    KVCache(const HParams& hp, int64_t n_ctx, ggml_lite::Type type);

    ggml_lite::Type type() const { return type_; }
    int64_t n_ctx() const { return n_ctx_; }
    size_t bytes() const { return k_.size() + v_.size(); }
    size_t row_bytes() const { return row_bytes_; }

    // The K (or V) row of `layer` at position `pos`: kv_dim values of type().
    uint8_t* k(int64_t layer, int64_t pos) { return k_.data() + offset(layer, pos); }
    uint8_t* v(int64_t layer, int64_t pos) { return v_.data() + offset(layer, pos); }
    const uint8_t* k(int64_t layer, int64_t pos) const { return k_.data() + offset(layer, pos); }
    const uint8_t* v(int64_t layer, int64_t pos) const { return v_.data() + offset(layer, pos); }

    // Writes n rows of kv_dim floats for positions pos..pos+n-1 of a layer.
    void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v);

private:
    size_t offset(int64_t layer, int64_t pos) const {
        return (static_cast<size_t>(layer) * n_ctx_ + pos) * row_bytes_;
    }

    ggml_lite::Type type_;
    int64_t n_ctx_;
    int64_t kv_dim_;
    size_t row_bytes_;
    std::vector<uint8_t> k_, v_;
};

}  // namespace lila
