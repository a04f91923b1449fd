// A conversation with a model: the KV cache and the scratch memory of the forward pass.
// All buffers are sized at construction, so evaluating tokens allocates nothing (except
// the logits buffer when more rows of logits are asked for than before).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ggml-lite/ops.h"
#include "src/runtime/kv_cache.h"
#include "src/runtime/model.h"

namespace lila {

struct SessionParams {
    int64_t n_ctx = 0;        // 0: the model's training context
    int64_t n_batch = 512;    // prompt tokens evaluated per forward pass
    int n_threads = 1;        // decoding (one token at a time)
    int n_threads_batch = 0;  // prompts (several tokens at a time); 0: n_threads
    ggml_lite::Type kv_type = ggml_lite::Type::F16;
};

class Session {
public:
    Session(const Model& model, const SessionParams& params);

    // Appends `tokens` at positions n_past()..: runs them through the model and stores their
    // K/V in the cache. Returns the logits (n_vocab floats) of the last token, or with
    // all_logits those of every token (tokens.size() × n_vocab), valid until the next call.
    // Error when the tokens do not fit in the context or an id is out of range.
    const float* eval(std::span<const int32_t> tokens, bool all_logits = false);
    // As eval, returning the logits of tokens[first..] ((tokens.size() - first) × n_vocab, the
    // first row for tokens[first]); the others never go through the LM head (perplexity
    // scores only the second half of a chunk). 0 <= first < tokens.size().
    const float* eval_from(std::span<const int32_t> tokens, int64_t first);

    int64_t n_past() const { return n_past_; }
    int64_t n_ctx() const { return cache_.n_ctx(); }
    // Forgets positions n.. (n <= n_past()), e.g. to drop the last turn of a chat.
    void truncate(int64_t n);
    const Model& model() const { return model_; }
    const KVCache& cache() const { return cache_; }
    int n_threads() const { return n_threads_; }
    int n_threads_batch() const { return n_threads_batch_; }

private:
    void forward(const int32_t* tokens, int64_t n, float* logits, int64_t first_logit);
    void attention(int64_t layer, int64_t n);
    void norm_qk(const Layer& L, int64_t n);

    const Model& model_;
    int64_t n_batch_;
    int n_threads_, n_threads_batch_;
    KVCache cache_;
    int64_t n_past_ = 0;
    ggml_lite::Context ctx_;

    // Activations of a batch, one row per token (names as in llama2.c's run.c).
    std::vector<float> x;        // residual stream      [n_batch][n_embd]
    std::vector<float> xb;       // normed / sublayer out [n_batch][n_embd]
    std::vector<float> xb2;      // post-normed out      [n_batch][n_embd] (post-norm archs)
    std::vector<float> q;        // queries              [n_batch][q_dim]
    std::vector<float> k, v;     // new keys, values     [n_batch][kv_dim]
    std::vector<float> xq;       // attention output     [n_batch][q_dim]
    std::vector<float> hb, hb2;  // FFN hidden           [n_batch][n_ff]
    std::vector<float> att;      // scores, per thread   [threads][n_head / n_head_kv][n_ctx]
    int64_t att_stride_;         // floats of att per thread
    std::vector<float> rope_cos, rope_sin;              //          [n_batch][rope_dim/2]
    std::vector<float> rope_cos_local, rope_sin_local;  // of layers with local_rope (Gemma 3)
    const std::vector<float>* rope_factors_;            // for this context (Model::rope_factors)
    std::vector<float> logits;
};

}  // namespace lila
