#include "src/eval/kl_divergence.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "src/base/error.h"
#include "src/io/mapped_file.h"

namespace lila {

namespace {

constexpr char kMagic[8] = {'L', 'I', 'L', 'A', 'K', 'L', 'D', '1'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8;

// log-softmax normaliser: log sum exp(logits).
double log_sum_exp(const float* logits, int64_t n) {
    const float max = *std::max_element(logits, logits + n);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += std::exp(double(logits[i]) - max);
    return max + std::log(sum);
}

}  // namespace

KLBaseWriter::KLBaseWriter(const std::string& path, int64_t n_vocab)
    : path_(path), n_vocab_(n_vocab), scratch_(n_vocab) {
    f_ = std::fopen((path + ".tmp").c_str(), "wb");
    if (!f_) throw Error(path + ".tmp: cannot create: " + std::strerror(errno));
    const uint32_t nv = static_cast<uint32_t>(n_vocab), k = kTopK;
    const uint64_t zero = 0;
    std::fwrite(kMagic, 1, 8, f_);
    std::fwrite(&nv, 4, 1, f_);
    std::fwrite(&k, 4, 1, f_);
    std::fwrite(&zero, 8, 1, f_);
}

KLBaseWriter::~KLBaseWriter() {
    if (f_) {
        std::fclose(f_);
        std::remove((path_ + ".tmp").c_str());
    }
}

void KLBaseWriter::add(const float* logits, int32_t target) {
    const double lse = log_sum_exp(logits, n_vocab_);
    for (int64_t i = 0; i < n_vocab_; i++) scratch_[i] = {logits[i], static_cast<int32_t>(i)};
    const int k = static_cast<int>(std::min<int64_t>(kTopK, n_vocab_));
    std::partial_sort(scratch_.begin(), scratch_.begin() + k, scratch_.end(), [](auto& a, auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    const float lp_target = static_cast<float>(logits[target] - lse);
    std::fwrite(&target, 4, 1, f_);
    std::fwrite(&lp_target, 4, 1, f_);
    for (int i = 0; i < kTopK; i++) {
        const auto [logit, id] = i < k ? scratch_[i] : std::pair<float, int32_t>{-INFINITY, -1};
        const float lp = static_cast<float>(logit - lse);
        std::fwrite(&id, 4, 1, f_);
        std::fwrite(&lp, 4, 1, f_);
    }
    n_tokens_++;
}

void KLBaseWriter::finish() {
    std::fseek(f_, 16, SEEK_SET);
    std::fwrite(&n_tokens_, 8, 1, f_);
    const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
    std::fclose(f_);
    f_ = nullptr;
    if (!ok || std::rename((path_ + ".tmp").c_str(), path_.c_str()) != 0) {
        std::remove((path_ + ".tmp").c_str());
        throw Error(path_ + ": cannot write: " + std::strerror(errno));
    }
}

KLComparer::KLComparer(const std::string& path) : path_(path) {
    const std::string bytes = read_file(path);
    data_.assign(bytes.begin(), bytes.end());
    uint32_t nv = 0, k = 0;
    if (data_.size() < kHeaderBytes || std::memcmp(data_.data(), kMagic, 8) != 0) {
        throw Error(path + ": not a lila KL-divergence base file");
    }
    std::memcpy(&nv, data_.data() + 8, 4);
    std::memcpy(&k, data_.data() + 12, 4);
    std::memcpy(&n_tokens_, data_.data() + 16, 8);
    n_vocab_ = nv;
    top_k_ = k;
    const size_t record = 8 + 8 * size_t(k);
    if (k == 0 || k > 4096 || n_tokens_ > (data_.size() - kHeaderBytes) / record ||
        data_.size() != kHeaderBytes + n_tokens_ * record) {
        throw Error(path + ": truncated or corrupt KL-divergence base file");
    }
    kld_.reserve(n_tokens_);
}

void KLComparer::add(const float* logits, int32_t target) {
    if (seen_ >= n_tokens_) throw Error(path_ + ": the base run scored fewer tokens than this one");
    const size_t record = 8 + 8 * size_t(top_k_);
    const uint8_t* r = data_.data() + kHeaderBytes + seen_ * record;
    int32_t base_target;
    float base_lp;
    std::memcpy(&base_target, r, 4);
    std::memcpy(&base_lp, r + 4, 4);
    if (base_target != target) {
        throw Error(path_ + ": token " + std::to_string(seen_) +
                    " differs from the base run: a different text, context size or tokenizer");
    }
    const double lse = log_sum_exp(logits, n_vocab_);
    double kl = 0, p_top = 0, q_top = 0;
    for (int64_t i = 0; i < top_k_; i++) {
        int32_t id;
        float lp;
        std::memcpy(&id, r + 8 + 8 * i, 4);
        std::memcpy(&lp, r + 12 + 8 * i, 4);
        if (id < 0 || id >= n_vocab_) continue;
        const double lq = logits[id] - lse, p = std::exp(double(lp));
        kl += p * (lp - lq);
        p_top += p;
        q_top += std::exp(lq);
    }
    const double p_rest = std::max(0.0, 1.0 - p_top), q_rest = std::max(1e-30, 1.0 - q_top);
    if (p_rest > 1e-12) kl += p_rest * (std::log(p_rest) - std::log(q_rest));
    kld_.push_back(std::max(0.0, kl));

    int32_t base_top;
    std::memcpy(&base_top, r + 8, 4);
    same_top_ += (std::max_element(logits, logits + n_vocab_) - logits) == base_top;
    nll_base_ -= base_lp;
    nll_ -= logits[target] - lse;
    seen_++;
}

KLStats KLComparer::stats() const {
    if (seen_ != n_tokens_ || seen_ < 2) {
        throw Error(path_ + ": the base run scored " + std::to_string(n_tokens_) +
                    " tokens, this one " + std::to_string(seen_));
    }
    KLStats s;
    const double n = double(seen_);
    s.n_tokens = static_cast<int64_t>(seen_);
    s.ppl_base = std::exp(nll_base_ / n);
    s.ppl = std::exp(nll_ / n);
    double sum = 0, sum2 = 0;
    for (double k : kld_) sum += k, sum2 += k * k;
    s.kld_mean = sum / n;
    s.kld_err = std::sqrt(std::max(0.0, sum2 / n - s.kld_mean * s.kld_mean) / (n - 1));
    std::vector<double> sorted = kld_;
    std::sort(sorted.begin(), sorted.end());
    auto pct = [&](double p) { return sorted[static_cast<size_t>(p * (sorted.size() - 1) + 0.5)]; };
    s.kld_min = sorted.front();
    s.kld_max = sorted.back();
    s.kld_p99_9 = pct(0.999);
    s.kld_p99 = pct(0.99);
    s.kld_p90 = pct(0.90);
    s.kld_median = pct(0.5);
    s.kld_p10 = pct(0.10);
    s.same_top = same_top_ / n;
    s.same_top_err = std::sqrt(s.same_top * (1 - s.same_top) / (n - 1));
    return s;
}

}  // namespace lila
