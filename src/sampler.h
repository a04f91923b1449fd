// Picks the next token from logits. Same seed + same settings + same logits = same tokens,
// on every platform (the RNG and the uniform draw are lila's own, not std distributions).
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace lila {

struct SamplerParams {
    float temp = 0.8f;            // <= 0: greedy
    int32_t top_k = 40;           // <= 0: off
    float top_p = 0.95f;          // >= 1: off
    float min_p = 0.05f;          // <= 0: off
    float repeat_penalty = 1.0f;  // 1: off
    int32_t repeat_last_n = 64;   // window of recent tokens the penalty applies to
    uint64_t seed = 0;
};

class Sampler {
public:
    Sampler(const SamplerParams& params, int32_t n_vocab);

    // Chooses a token. `logits` (n_vocab) may be modified.
    int32_t sample(float* logits);
    // Records a token as part of the context (prompt or generated), for the repeat penalty.
    void accept(int32_t token);
    void reset();

    const SamplerParams& params() const { return params_; }

private:
    SamplerParams params_;
    int32_t n_vocab_;
    std::mt19937_64 rng_;
    std::deque<int32_t> recent_;
    std::vector<std::pair<float, int32_t>> candidates_;  // scratch, sized once
};

}  // namespace lila
