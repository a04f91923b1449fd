// Perplexity the way llama.cpp's perplexity tool computes it, so figures compare:
// non-overlapping chunks of n_ctx tokens, each evaluated from an empty cache with its first
// token replaced by BOS (when the vocab adds BOS), scoring only the second half of each
// chunk: with n_ctx = 512, positions 256..510 predict tokens 257..511 (255 per chunk).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "src/runtime/model.h"
#include "src/runtime/session.h"

namespace lila {

struct PerplexityParams {
    int64_t n_ctx = 512;
    int64_t n_chunks = -1;  // < 0: all whole chunks in the text
    SessionParams session;  // n_ctx is taken from above
};

struct PerplexityResult {
    double ppl = 0;
    double ppl_err = 0;  // standard error of the mean NLL, times PPL (llama.cpp's "+/-")
    int64_t n_scored = 0;
    std::vector<double> running;  // PPL after each chunk
};

// The negative log-likelihood of every scored token, in order, is passed to `on_token`
// (for KL divergence and tests); `on_chunk` sees the running result after each chunk.
struct PerplexityCallbacks {
    std::function<void(const float* logits, int32_t target)> on_token;
    std::function<void(int64_t chunk, int64_t n_chunks, const PerplexityResult&)> on_chunk;
};

// Error when the text has fewer than 2 * n_ctx tokens (it says how many it has).
PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens,
                            const PerplexityParams& params, const PerplexityCallbacks& cb = {});

// log p(target) under softmax(logits), computed stably in double.
double log_prob(const float* logits, int64_t n_vocab, int32_t target);

}  // namespace lila
