// Picks the next token from logits. Same seed + same settings + same logits = same tokens,
// on every platform (the RNG and the uniform draw are lila's own, not std distributions).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace lila {

// Defaults are llama.cpp's (common_params_sampling), and so is the order the steps run in:
// repetition penalty -> top-k -> top-p -> min-p -> temperature -> random draw.
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
    // Error for settings that have no meaning (repeat_penalty <= 0, repeat_last_n < 0,
    // n_vocab <= 0). Allocates all it needs here: sample() and accept() never allocate.
    Sampler(const SamplerParams& params, int32_t n_vocab);

    // Chooses a token. `logits` (n_vocab) may be modified.
    int32_t sample(float* logits);
    // Records a token as part of the context (prompt or generated), for the repeat penalty.
    void accept(int32_t token);
    // Forgets the accepted tokens and restarts the random sequence from the seed.
    void reset();

    const SamplerParams& params() const { return params_; }

    // A uniform double in [0, 1) from 53 random bits: the one draw sample() makes.
    static double uniform(std::mt19937_64& rng) { return (rng() >> 11) * 0x1.0p-53; }

private:
    void apply_repeat_penalty(float* logits);
    int32_t argmax(const float* logits) const;
    void top_k();
    void sort_candidates();
    void top_p();
    void min_p();
    int32_t draw();

    SamplerParams params_;
    int32_t n_vocab_;
    std::mt19937_64 rng_;
    std::vector<int32_t> recent_;  // ring buffer of the last repeat_last_n accepted tokens
    size_t recent_next_ = 0;       // where the next accepted token goes
    size_t recent_count_ = 0;      // how many slots hold tokens
    std::vector<uint32_t> marks_;  // per token: the sample() call that last penalized it
    uint32_t mark_ = 0;
    std::vector<std::pair<float, int32_t>> candidates_;  // (logit, id), sized once
    size_t n_candidates_ = 0;                            // the live prefix of candidates_
    bool sorted_ = false;                                // live candidates in descending order
};

}  // namespace lila
