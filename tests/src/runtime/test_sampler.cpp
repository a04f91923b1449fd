// Sampler properties. Every random test uses fixed seeds, so it is deterministic; the
// statistical bounds are set so that a correct sampler passes them with any seed but for
// a one-in-a-thousand chance, and a wrong distribution fails them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "src/base/error.h"
#include "src/runtime/sampler.h"

namespace lila {
namespace {

SamplerParams plain(float temp, uint64_t seed = 1) {
    SamplerParams p;
    p.temp = temp;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

// Logits whose softmax is `probs`.
std::vector<float> logits_of(const std::vector<double>& probs) {
    std::vector<float> l;
    for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
    return l;
}

std::vector<int> histogram(Sampler& s, const std::vector<float>& logits, int n) {
    std::vector<int> counts(logits.size());
    for (int i = 0; i < n; i++) {
        std::vector<float> l = logits;
        counts[s.sample(l.data())]++;
    }
    return counts;
}

// Pearson's chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probs) {
    double n = 0, chi2 = 0;
    for (int c : counts) n += c;
    for (size_t i = 0; i < counts.size(); i++) {
        if (probs[i] == 0) {
            EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
            continue;
        }
        const double e = n * probs[i];
        chi2 += (counts[i] - e) * (counts[i] - e) / e;
    }
    return chi2;
}

// The 0.999 quantile of the chi-square distribution by degrees of freedom (1..5).
constexpr double kChi2Limit[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52};

std::vector<double> softmax(const std::vector<float>& logits, double temp) {
    double max = *std::max_element(logits.begin(), logits.end()), sum = 0;
    std::vector<double> p;
    for (float l : logits) sum += std::exp((l - max) / temp);
    for (float l : logits) p.push_back(std::exp((l - max) / temp) / sum);
    return p;
}

TEST(Sampler, GreedyIsArgmax) {
    for (float temp : {0.0f, -1.0f}) {
        SamplerParams p;  // top-k/top-p/min-p at their defaults change nothing for greedy
        p.temp = temp;
        Sampler s(p, 6);
        std::vector<float> l = {0.1f, 3.0f, -2.0f, 2.9f, std::nanf(""), 3.0f};
        EXPECT_EQ(s.sample(l.data()), 1);  // ties go to the lowest id; NaN never wins
    }
    Sampler s(plain(0), 3);
    std::vector<float> inf = {-INFINITY, -INFINITY, -INFINITY};
    EXPECT_EQ(s.sample(inf.data()), 0);
}

TEST(Sampler, RepeatPenaltyDividesPositiveMultipliesNegative) {
    SamplerParams p = plain(0);
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 3;
    Sampler s(p, 5);
    for (int32_t t : {0, 1, 1, 4}) s.accept(t);  // window of 3: 1, 1, 4
    std::vector<float> l = {2.0f, 3.0f, 2.5f, 1.0f, -1.0f};
    EXPECT_EQ(s.sample(l.data()), 2);
    // Token 1 occurs twice but is penalized once; token 0 left the window.
    EXPECT_EQ(l, (std::vector<float>{2.0f, 1.5f, 2.5f, 1.0f, -2.0f}));

    s.reset();  // forgets the window
    std::vector<float> m = {2.0f, 3.0f, 2.5f, 1.0f, -1.0f};
    EXPECT_EQ(s.sample(m.data()), 1);
}

TEST(Sampler, TopKNeverLeavesTheKBest) {
    const int n_vocab = 1000;
    std::vector<float> logits(n_vocab);
    for (int i = 0; i < n_vocab; i++) logits[i] = std::sin(i * 0.37f) * 4;  // many near-ties
    std::vector<int> order(n_vocab);
    for (int i = 0; i < n_vocab; i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    for (int k : {1, 5, 40}) {
        SamplerParams p = plain(3.0f, 100 + k);  // hot, so the tail would be drawn if allowed
        p.top_k = k;
        Sampler s(p, n_vocab);
        const std::set<int> best(order.begin(), order.begin() + k);
        std::set<int> seen;
        for (int i = 0; i < 20000; i++) {
            std::vector<float> l = logits;
            const int t = s.sample(l.data());
            ASSERT_TRUE(best.count(t)) << "k=" << k << " drew " << t;
            seen.insert(t);
        }
        EXPECT_EQ(seen, best);
    }
}

TEST(Sampler, TopPKeepsTheMinimalNucleus) {
    const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
    struct Case {
        float top_p;
        size_t nucleus;
    };
    for (const Case c : {Case{0.4f, 1}, Case{0.75f, 2}, Case{0.85f, 3}, Case{0.99f, 4}}) {
        SamplerParams p = plain(1.0f, 7);
        p.top_p = c.top_p;
        Sampler s(p, 4);
        const std::vector<int> counts = histogram(s, logits, 20000);
        for (size_t t = 0; t < 4; t++) {
            if (t < c.nucleus) {
                EXPECT_GT(counts[t], 0) << "top_p " << c.top_p << " token " << t;
            } else {
                EXPECT_EQ(counts[t], 0) << "top_p " << c.top_p << " token " << t;
            }
        }
    }
}

TEST(Sampler, MinPThreshold) {
    const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
    struct Case {
        float min_p;
        size_t kept;
    };
    // Kept: probability >= min_p * 0.5.
    for (const Case c : {Case{0.05f, 4}, Case{0.2f, 3}, Case{0.5f, 2}, Case{0.9f, 1}}) {
        SamplerParams p = plain(1.0f, 11);
        p.min_p = c.min_p;
        Sampler s(p, 4);
        const std::vector<int> counts = histogram(s, logits, 20000);
        for (size_t t = 0; t < 4; t++) {
            EXPECT_EQ(counts[t] > 0, t < c.kept) << "min_p " << c.min_p << " token " << t;
        }
    }
}

TEST(Sampler, SameSeedSameTokens) {
    const auto logits = logits_of({0.2, 0.2, 0.2, 0.2, 0.2});
    auto run = [&](uint64_t seed) {
        Sampler s(plain(1.0f, seed), 5);
        std::vector<int32_t> out;
        for (int i = 0; i < 200; i++) {
            std::vector<float> l = logits;
            out.push_back(s.sample(l.data()));
        }
        return out;
    };
    EXPECT_EQ(run(42), run(42));
    EXPECT_NE(run(42), run(43));

    Sampler s(plain(1.0f, 42), 5);
    std::vector<float> l = logits;
    const int32_t first = s.sample(l.data());
    s.reset();  // the random sequence starts over
    l = logits;
    EXPECT_EQ(s.sample(l.data()), first);
    EXPECT_EQ(run(42)[0], first);
}

// The draw is lila's own: these values pin it (mt19937_64 and 53-bit floats), so any change
// that would alter users' seeded outputs shows up here.
TEST(Sampler, UniformDrawIsPinned) {
    std::mt19937_64 rng(0);
    const double u0 = Sampler::uniform(rng);
    EXPECT_EQ(u0, (std::mt19937_64(0)() >> 11) * 0x1.0p-53);
    EXPECT_GE(u0, 0.0);
    EXPECT_LT(u0, 1.0);
    double min = 1, max = 0;
    for (int i = 0; i < 100000; i++) {
        const double u = Sampler::uniform(rng);
        min = std::min(min, u), max = std::max(max, u);
    }
    EXPECT_LT(min, 1e-3);
    EXPECT_GT(max, 1 - 1e-3);
}

// Empirical frequencies against the softmax: chi-square below its 0.999 quantile, for
// plain sampling at several temperatures and for the truncated, renormalized
// distributions of top-k and top-p.
TEST(Sampler, FrequenciesMatchTheDistribution) {
    const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
    const int n = 100000;
    for (float temp : {1.0f, 0.5f, 2.0f}) {
        Sampler s(plain(temp, 2024), 5);
        const double chi2 = chi_square(histogram(s, logits, n), softmax(logits, temp));
        EXPECT_LT(chi2, kChi2Limit[4]) << "temp " << temp;
    }

    // top-k 3 keeps ids 1, 4, 0.
    SamplerParams k3 = plain(1.0f, 99);
    k3.top_k = 3;
    Sampler sk(k3, 5);
    std::vector<double> pk = softmax({1.0f, 2.0f, -INFINITY, -INFINITY, 1.5f}, 1.0);
    EXPECT_LT(chi_square(histogram(sk, logits, n), pk), kChi2Limit[2]);

    // top-p 0.8 at temperature 1: ids 1 (0.41), 4 (0.25), 0 (0.15) cover 0.81.
    SamplerParams p8 = plain(1.0f, 5);
    p8.top_p = 0.8f;
    Sampler sp(p8, 5);
    EXPECT_LT(chi_square(histogram(sp, logits, n), pk), kChi2Limit[2]);

    // Impossible tokens (-inf) are never drawn.
    Sampler si(plain(1.0f, 3), 5);
    const std::vector<float> with_inf = {1.0f, -INFINITY, 0.0f, -INFINITY, 0.5f};
    const auto counts = histogram(si, with_inf, n);
    EXPECT_LT(chi_square(counts, softmax(with_inf, 1.0)), kChi2Limit[2]);
}

TEST(Sampler, DefaultsAreLlamaCpps) {
    const SamplerParams p;
    EXPECT_EQ(p.temp, 0.8f);
    EXPECT_EQ(p.top_k, 40);
    EXPECT_EQ(p.top_p, 0.95f);
    EXPECT_EQ(p.min_p, 0.05f);
    EXPECT_EQ(p.repeat_penalty, 1.0f);
    EXPECT_EQ(p.repeat_last_n, 64);
    Sampler s(p, 3);
    std::vector<float> l = {0.0f, 10.0f, 0.0f};  // min-p leaves only token 1
    for (int i = 0; i < 100; i++) {
        std::vector<float> m = l;
        EXPECT_EQ(s.sample(m.data()), 1);
    }
}

TEST(Sampler, RejectsMeaninglessSettings) {
    SamplerParams p;
    EXPECT_THROW(Sampler(p, 0), Error);
    p.repeat_penalty = 0.0f;
    EXPECT_THROW(Sampler(p, 10), Error);
    p.repeat_penalty = 1.1f;
    p.repeat_last_n = -1;
    EXPECT_THROW(Sampler(p, 10), Error);
    p.repeat_last_n = 0;  // no window: accept() records nothing
    Sampler s(p, 10);
    s.accept(3);
    EXPECT_THROW(s.accept(10), Error);
    EXPECT_THROW(s.accept(-1), Error);
}

}  // namespace
}  // namespace lila
