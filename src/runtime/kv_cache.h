// The attention KV cache: for every sequence, layer and KV head, the keys and values of
// positions 0..n_ctx-1, stored as F16 (half the memory and bandwidth of F32, llama.cpp's
// default) or F32 (exact). Sequences (the server's slots) each own their cells, so one
// forward pass can extend several conversations at once.
//
// The layout serves the attention kernel (ggml-lite/kernels.h: AttendFn): each (sequence,
// layer, head) owns one contiguous run of keys and one of values, so a decode step streams
// them. Keys are in blocks of kKvBlock positions, dimension-major within a block (the scores
// of a block are one vector FMA per dimension); values are position-major.
#pragma once

#include <cstdint>
#include <vector>

#include "ggml-lite/type.h"
#include "src/runtime/hparams.h"

namespace lila {

class KVCache {
public:
    KVCache(const HParams& hp, int64_t n_ctx, ggml_lite::Type type, int n_seq = 1);

    ggml_lite::Type type() const { return type_; }
    int64_t n_ctx() const { return n_ctx_; }  // positions per sequence
    int n_seq() const { return n_seq_; }
    size_t bytes() const { return k_.size() + v_.size(); }

    // The keys (or values) of KV head `head` in `layer` of sequence `seq`, from position 0,
    // in the layout above.
    const uint8_t* k(int64_t layer, int64_t head, int seq = 0) const {
        return k_.data() + offset(layer, head, seq);
    }
    const uint8_t* v(int64_t layer, int64_t head, int seq = 0) const {
        return v_.data() + offset(layer, head, seq);
    }

    // Writes n rows of kv_dim floats (all heads) for positions pos..pos+n-1 of sequence `seq`
    // in a layer.
    void store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v, int seq = 0);

private:
    size_t offset(int64_t layer, int64_t head, int seq) const {
        return ((static_cast<size_t>(seq) * n_layer_ + layer) * n_head_kv_ + head) * head_bytes_;
    }

    ggml_lite::Type type_;
    int64_t n_ctx_;
    int n_seq_;
    int64_t n_layer_, n_head_kv_, head_dim_;
    size_t elem_;        // bytes per value
    size_t head_bytes_;  // one (sequence, layer, head) run: n_ctx rounded up to whole blocks
    std::vector<uint8_t> k_, v_;
};

}  // namespace lila
