// The shape of a Llama-family model: what the KV cache, the forward pass and the converters
// need to know of it, without the weights (model.h binds those).
#pragma once

#include <cstdint>

namespace lila {

struct HParams {
    int64_t n_vocab = 0;
    int64_t n_embd = 0;  // model width (llama2.c: dim)
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;    // < n_head: grouped-query attention
    int64_t n_ff = 0;         // SwiGLU hidden width
    int64_t n_ctx_train = 0;  // context length the model was trained for
    int64_t head_dim = 0;
    int64_t rope_dim = 0;  // leading dims of each head that RoPE rotates
    float norm_eps = 1e-5f;
    float rope_theta = 10000.0f;

    int64_t kv_dim() const { return n_head_kv * head_dim; }
    int64_t q_dim() const { return n_head * head_dim; }
};

}  // namespace lila
