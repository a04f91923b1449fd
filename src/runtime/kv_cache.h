// The attention KV cache: for every layer and KV head, the keys and values of positions
// 0..n_ctx-1, stored as F16 (half the memory and bandwidth of F32, llama.cpp's default) or
// F32 (exact).
//
// The layout serves the attention kernel (ggml-lite/kernels.h: AttendFn): each (layer, head)
// owns one contiguous run of keys and one of values, so a decode step streams them. Keys are
// in blocks of kKvBlock positions, dimension-major within a block (the scores of a block are
// one vector FMA per dimension); values are position-major.
#pragma once

#include <cstdint>
#include <vector>

#include "ggml-lite/type.h"
#include "src/runtime/hparams.h"

namespace lila {

class KVCache {
public:
    KVCache(const HParams& hp, int64_t n_ctx, ggml_lite::Type type);

    ggml_lite::Type type() const { return type_; }
    int64_t n_ctx() const { return n_ctx_; }
    size_t bytes() const { return k_.size() + v_.size(); }

    // The keys (or values) of KV head `head` in `layer`, from position 0, in the layout above.
    const uint8_t* k(int64_t layer, int64_t head) const { return k_.data() + offset(layer, head); }
    const uint8_t* v(int64_t layer, int64_t head) const { return v_.data() + offset(layer, head); }

    // Writes n rows of kv_dim floats (all heads) for positions pos..pos+n-1 of a layer.
    void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v);

private:
    size_t offset(int64_t layer, int64_t head) const {
        return (static_cast<size_t>(layer) * n_head_kv_ + head) * head_bytes_;
    }

    ggml_lite::Type type_;
    int64_t n_ctx_;
    int64_t n_head_kv_, head_dim_;
    size_t elem_;        // bytes per value
    size_t head_bytes_;  // one (layer, head) run: n_ctx rounded up to whole blocks
    std::vector<uint8_t> k_, v_;
};

}  // namespace lila
