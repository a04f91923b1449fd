// Quantization quality: the KL divergence between a base model's next-token distributions
// (saved to a file by one run) and another model's on the same text (a second run).
//
// Base file (little-endian): magic "LILAKLD1", u32 n_vocab, u32 top_k, u64 n_tokens, then
// per scored token: i32 target, f32 log p(target), top_k × (i32 id, f32 log p), the base
// model's most likely tokens in descending order. Keeping the top 32 instead of all n_vocab
// log-probs makes the file ~260 bytes per token instead of 2 × n_vocab; KL is computed over
// those tokens plus one bucket for the rest of the distribution, which by the log-sum
// inequality is a (tight, since the tail mass is small) lower bound of the exact KL.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace lila {

class KLBaseWriter {
public:
    static constexpr int kTopK = 32;
    KLBaseWriter(const std::string& path, int64_t n_vocab);  // writes PATH.tmp
    ~KLBaseWriter();
    void add(const float* logits, int32_t target);
    void finish();  // header count patched, PATH.tmp renamed to PATH

private:
    std::string path_;
    int64_t n_vocab_;
    uint64_t n_tokens_ = 0;
    FILE* f_ = nullptr;
    std::vector<std::pair<float, int32_t>> scratch_;
};

struct KLStats {
    double ppl_base = 0, ppl = 0;
    double kld_mean = 0, kld_err = 0;
    double kld_max = 0, kld_p99_9 = 0, kld_p99 = 0, kld_p90 = 0, kld_median = 0, kld_p10 = 0,
           kld_min = 0;
    double same_top = 0, same_top_err = 0;  // fraction of tokens whose argmax agrees
    int64_t n_tokens = 0;
};

class KLComparer {
public:
    explicit KLComparer(const std::string& base_path);  // Error on a bad or truncated file
    int64_t n_vocab() const { return n_vocab_; }
    // The next scored token of the run being compared; Error when the texts differ.
    void add(const float* logits, int32_t target);
    KLStats stats() const;  // Error when fewer tokens were compared than the base has

private:
    std::string path_;
    int64_t n_vocab_ = 0, top_k_ = 0;
    uint64_t n_tokens_ = 0, seen_ = 0;
    std::vector<uint8_t> data_;
    std::vector<double> kld_;
    double nll_base_ = 0, nll_ = 0;
    int64_t same_top_ = 0;
};

}  // namespace lila
