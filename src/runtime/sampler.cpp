// The sampling chain of llama.cpp's common sampler, without its allocations: the
// candidates live in one array sized at construction, each step shrinks its live prefix.
#include "src/runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "src/base/error.h"

namespace lila {

namespace {

// Higher logit first; equal logits by lower id, so every order is fully determined.
bool before(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// NaN logits (a broken model) would break the sort order; treat them as impossible tokens.
float clean(float logit) {
    return std::isnan(logit) ? -std::numeric_limits<float>::infinity() : logit;
}

}  // namespace

Sampler::Sampler(const SamplerParams& params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
    if (n_vocab <= 0) throw Error("sampler: vocabulary size " + std::to_string(n_vocab));
    if (!(params.repeat_penalty > 0.0f)) {
        throw Error("repeat penalty must be > 0 (got " + std::to_string(params.repeat_penalty) +
                    ")");
    }
    if (params.repeat_last_n < 0) {
        throw Error("repeat-last-n must be >= 0 (got " + std::to_string(params.repeat_last_n) +
                    ")");
    }
    recent_.assign(params.repeat_last_n, 0);
    marks_.assign(n_vocab, 0);
    candidates_.resize(n_vocab);
}

void Sampler::accept(int32_t token) {
    if (token < 0 || token >= n_vocab_) {
        throw Error("sampler: token id " + std::to_string(token) + " is outside the vocabulary");
    }
    if (recent_.empty()) return;
    recent_[recent_next_] = token;
    recent_next_ = (recent_next_ + 1) % recent_.size();
    recent_count_ = std::min(recent_count_ + 1, recent_.size());
}

void Sampler::reset() {
    recent_next_ = recent_count_ = 0;
    rng_.seed(params_.seed);
}

int32_t Sampler::sample(float* logits) {
    if (params_.repeat_penalty != 1.0f) apply_repeat_penalty(logits);
    // Top-k, top-p and min-p all keep the best token, so greedy can skip them.
    if (!(params_.temp > 0.0f)) return argmax(logits);

    for (int32_t i = 0; i < n_vocab_; i++) candidates_[i] = {clean(logits[i]), i};
    n_candidates_ = n_vocab_;
    sorted_ = false;
    top_k();
    top_p();
    min_p();
    return draw();
}

// llama.cpp's penalty: each token seen in the window once, however often it occurs;
// positive logits are divided by the penalty, negative ones multiplied, so both lose.
void Sampler::apply_repeat_penalty(float* logits) {
    if (++mark_ == 0) {  // the stamp wrapped around: old marks could collide
        std::fill(marks_.begin(), marks_.end(), 0);
        mark_ = 1;
    }
    const float penalty = params_.repeat_penalty;
    for (size_t i = 0; i < recent_count_; i++) {
        const int32_t t = recent_[i];
        if (marks_[t] == mark_) continue;
        marks_[t] = mark_;
        logits[t] = logits[t] <= 0.0f ? logits[t] * penalty : logits[t] / penalty;
    }
}

int32_t Sampler::argmax(const float* logits) const {
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab_; i++) {
        if (clean(logits[i]) > clean(logits[best])) best = i;
    }
    return best;
}

void Sampler::sort_candidates() {
    if (sorted_) return;
    std::sort(candidates_.begin(), candidates_.begin() + n_candidates_, before);
    sorted_ = true;
}

void Sampler::top_k() {
    const auto k = static_cast<size_t>(params_.top_k);
    if (params_.top_k <= 0 || k >= n_candidates_) return;
    const auto first = candidates_.begin();
    std::nth_element(first, first + k, first + n_candidates_, before);
    std::sort(first, first + k, before);
    n_candidates_ = k;
    sorted_ = true;
}

// The smallest set of best tokens whose probabilities (at temperature 1) sum to >= p.
void Sampler::top_p() {
    const double p = params_.top_p;
    if (!(p < 1.0) || n_candidates_ <= 1) return;
    sort_candidates();
    const float max = candidates_[0].first;
    if (std::isinf(max)) return;  // every candidate is impossible: nothing to weigh
    double sum = 0.0;
    for (size_t i = 0; i < n_candidates_; i++) sum += std::exp(double(candidates_[i].first) - max);
    double cum = 0.0;
    for (size_t i = 0; i < n_candidates_; i++) {
        cum += std::exp(double(candidates_[i].first) - max) / sum;
        if (cum >= p) {
            n_candidates_ = i + 1;
            return;
        }
    }
}

// Tokens at least min_p times as likely as the best one: logit >= max + log(min_p).
void Sampler::min_p() {
    if (!(params_.min_p > 0.0f) || n_candidates_ <= 1) return;
    float max = candidates_[0].first;
    for (size_t i = 1; i < n_candidates_; i++) max = std::max(max, candidates_[i].first);
    if (std::isinf(max)) return;
    const float threshold = max + std::log(params_.min_p);
    size_t kept = 0;
    for (size_t i = 0; i < n_candidates_; i++) {
        if (candidates_[i].first >= threshold) candidates_[kept++] = candidates_[i];
    }
    n_candidates_ = kept;  // order is kept, so a sorted list stays sorted
}

// Softmax of logits / temp over the candidates, then one uniform draw walked along the
// cumulative sum.
int32_t Sampler::draw() {
    float max = candidates_[0].first;
    for (size_t i = 1; i < n_candidates_; i++) max = std::max(max, candidates_[i].first);
    if (std::isinf(max)) return candidates_[0].second;
    const double inv_temp = 1.0 / params_.temp;
    double sum = 0.0;
    for (size_t i = 0; i < n_candidates_; i++) {
        sum += std::exp((candidates_[i].first - max) * inv_temp);
    }
    const double target = uniform(rng_) * sum;
    double cum = 0.0;
    int32_t last = candidates_[0].second;  // the last token with a nonzero chance
    for (size_t i = 0; i < n_candidates_; i++) {
        const double w = std::exp((candidates_[i].first - max) * inv_temp);
        if (w == 0.0) continue;
        cum += w;
        last = candidates_[i].second;
        if (target < cum) return last;
    }
    return last;  // rounding left `target` just past the total
}

}  // namespace lila
