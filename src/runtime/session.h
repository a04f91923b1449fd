// Conversations with a model: the KV cache and the scratch memory of the forward pass.
// A session holds n_seq sequences, each with its own KV cells (the server's slots); one
// forward pass can extend several of them, so the weights stream once for all (continuous
// batching). All buffers are sized at construction, so evaluating tokens allocates nothing
// (except when more tokens or rows of logits are asked for at once than before).
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
    int64_t n_batch = 512;    // prompt tokens evaluated per forward pass (at most n_ctx * n_seq)
    int n_threads = 1;        // decoding (one token at a time)
    int n_threads_batch = 0;  // prompts (several tokens at a time); 0: n_threads
    ggml_lite::Type kv_type = ggml_lite::Type::F16;
    int n_seq = 1;  // sequences, each with n_ctx positions of KV cache
};

// One token of a batch, appended to its sequence at that sequence's next position.
struct BatchToken {
    int32_t id;
    int seq = 0;          // whose KV cells it extends and attends to
    bool logits = false;  // whether its logits are returned
};

class Session {
public:
    Session(const Model& model, const SessionParams& params);

    // Appends each token to its sequence, in batch order, at positions n_past(seq)..: runs
    // them through the model (n_batch tokens per pass over the weights) and stores their K/V
    // in the sequence's cells. A token attends only to its own sequence, so its logits do not
    // depend on what else is in the batch. Returns the logits of the tokens with `logits` set
    // (one row of n_vocab floats each, in batch order), valid until the next call. Error,
    // with nothing evaluated, when a sequence would overflow its context or an id or sequence
    // is out of range.
    const float* eval_batch(std::span<const BatchToken> batch);

    // The calls below work on sequence 0.
    // Appends `tokens` at positions n_past()..: runs them through the model and stores their
    // K/V in the cache. Returns the logits (n_vocab floats) of the last token, or with
    // all_logits those of every token (tokens.size() × n_vocab), valid until the next call.
    // Error when the tokens do not fit in the context or an id is out of range.
    const float* eval(std::span<const int32_t> tokens, bool all_logits = false);
    // As eval, returning the logits of tokens[first..] ((tokens.size() - first) × n_vocab, the
    // first row for tokens[first]); the others never go through the LM head (perplexity
    // scores only the second half of a chunk). 0 <= first < tokens.size().
    const float* eval_from(std::span<const int32_t> tokens, int64_t first);

    int64_t n_past(int seq = 0) const { return n_past_.at(seq); }
    int64_t n_ctx() const { return cache_.n_ctx(); }  // positions per sequence
    int n_seq() const { return cache_.n_seq(); }
    int64_t n_batch() const { return n_batch_; }  // tokens per pass through the weights
    // Forgets positions n.. of a sequence (n <= n_past(seq)), e.g. to drop the last turn of a
    // chat, or all of them (n = 0) to start another conversation in its cells.
    void truncate(int64_t n, int seq = 0);
    const Model& model() const { return model_; }
    const KVCache& cache() const { return cache_; }
    int n_threads() const { return n_threads_; }
    int n_threads_batch() const { return n_threads_batch_; }

private:
    void forward(const BatchToken* batch, int64_t n, float* logits);
    void attention(const BatchToken* batch, int64_t layer, int64_t n);
    void norm_qk(const Layer& L, float* qt, float* kt) const;
    // f(t) for each token t < n, the tokens shared out on the pass's team of threads where n
    // rows of `width` values are worth it (prefill's norms, rotations, activations).
    template <class F>
    void for_tokens(int64_t n, int64_t width, F&& f) {
        const int threads = ggml_lite::threads_for_work(n * width, ctx_.n_threads);
        ggml_lite::parallel(ctx_, threads, [&](int ith, int nth) {
            for (int64_t t = n * ith / nth; t < n * (ith + 1) / nth; t++) f(t);
        });
    }

    const Model& model_;
    int64_t n_batch_;
    int n_threads_, n_threads_batch_;
    KVCache cache_;
    std::vector<int64_t> n_past_;     // per sequence: positions in the cache
    std::vector<int64_t> seq_count_;  // per sequence: tokens of the batch being checked
    std::vector<BatchToken> single_;  // eval()'s tokens as a batch of sequence 0
    ggml_lite::Context ctx_;

    // Activations of a batch, one row per token (names as in llama2.c's run.c).
    std::vector<int64_t> pos;    // position of each token in its sequence [n_batch]
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
