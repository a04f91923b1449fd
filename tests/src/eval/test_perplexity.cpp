// Perplexity against an independent computation of llama.cpp's method, and KL divergence.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/stories.h"
#include "src/base/error.h"
#include "src/eval/kl_divergence.h"
#include "src/eval/perplexity.h"

namespace lila {
namespace {

using ggml_lite::Type;

std::vector<int32_t> tinystories_tokens(const Model& m, size_t max_bytes) {
    const std::string text =
        test::read_file(test::shared_path("data/tinystories/tinystories_val.txt"))
            .substr(0, max_bytes);
    return m.tokenizer().encode(text, true, false);
}

PerplexityParams small_params(int64_t n_ctx, int64_t n_chunks) {
    PerplexityParams p;
    p.n_ctx = n_ctx;
    p.n_chunks = n_chunks;
    p.session.kv_type = Type::F32;
    return p;
}

// The method written out plainly: per chunk a fresh cache, BOS first, one token at a time
// (the decode path, not the batched one), log-softmax in double, second half scored.
double reference_ppl(const Model& m, const std::vector<int32_t>& tokens, int64_t n_ctx,
                     int64_t n_chunks, int64_t* n_scored) {
    double nll = 0;
    *n_scored = 0;
    for (int64_t c = 0; c < n_chunks; c++) {
        SessionParams sp;
        sp.n_ctx = n_ctx;
        sp.kv_type = Type::F32;
        Session s(m, sp);
        for (int64_t j = 0; j < n_ctx - 1; j++) {
            const int32_t tok = j == 0 ? m.tokenizer().vocab().bos : tokens[c * n_ctx + j];
            const float* logits = s.eval({&tok, 1});
            if (j < n_ctx / 2) continue;
            double sum = 0;
            for (int64_t i = 0; i < m.hp.n_vocab; i++) sum += std::exp(double(logits[i]));
            nll -= double(logits[tokens[c * n_ctx + j + 1]]) - std::log(sum);
            ++*n_scored;
        }
    }
    return std::exp(nll / *n_scored);
}

TEST(Perplexity, MatchesIndependentComputation) {
    auto m = Model::load(test::stories_model(Type::F32));
    const auto tokens = tinystories_tokens(*m, 20000);
    const PerplexityResult r = perplexity(*m, tokens, small_params(128, 4));
    int64_t n_ref = 0;
    const double ref = reference_ppl(*m, tokens, 128, 4, &n_ref);
    EXPECT_EQ(r.n_scored, n_ref);
    EXPECT_EQ(r.n_scored, 4 * 63);  // positions 64..126 of each chunk predict 65..127
    EXPECT_EQ(r.running.size(), 4u);
    // Batched prefill vs one token at a time differ by float rounding only (~1e-6).
    EXPECT_NEAR(r.ppl, ref, 1e-4 * ref);
    EXPECT_GT(r.ppl_err, 0);
    EXPECT_LT(r.ppl, 20);  // the model was trained on this kind of text
}

TEST(Perplexity, ScoresHalfOfEachChunkOf512) {
    auto m = Model::load(test::stories_model(Type::Q8_0));
    const auto tokens = tinystories_tokens(*m, 8000);
    ASSERT_GE(tokens.size(), 1024u);
    const PerplexityResult r = perplexity(*m, tokens, small_params(512, 2));
    EXPECT_EQ(r.n_scored, 2 * 255);  // llama.cpp: 255 tokens per chunk at n_ctx 512
}

TEST(Perplexity, ShortTextSaysHowManyTokensItNeeds) {
    auto m = Model::load(test::stories_model(Type::F32));
    const auto tokens = m->tokenizer().encode("Once upon a time", true, false);
    try {
        perplexity(*m, tokens, small_params(512, -1));
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("has " + std::to_string(tokens.size()) + " tokens"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("at least 1024"), std::string::npos) << e.what();
    }
}

KLStats kl_against_f32(Type type, const test::TempDir& dir) {
    const std::string base = dir.path("base.kld");
    const PerplexityParams p = small_params(128, 6);
    auto f32 = Model::load(test::stories_model(Type::F32));
    const auto tokens = tinystories_tokens(*f32, 30000);
    {
        KLBaseWriter w(base, f32->hp.n_vocab);
        perplexity(*f32, tokens, p, {[&](const float* l, int32_t t) { w.add(l, t); }, {}});
        w.finish();
    }
    auto m = Model::load(test::stories_model(type));
    KLComparer cmp(base);
    const PerplexityResult r =
        perplexity(*m, tokens, p, {[&](const float* l, int32_t t) { cmp.add(l, t); }, {}});
    const KLStats s = cmp.stats();
    EXPECT_NEAR(s.ppl, r.ppl, 1e-6 * r.ppl);
    return s;
}

TEST(KLDivergence, ModelAgainstItselfIsZero) {
    test::TempDir dir;
    const KLStats s = kl_against_f32(Type::F32, dir);
    EXPECT_LT(s.kld_max, 1e-6);
    EXPECT_EQ(s.same_top, 1.0);
    EXPECT_NEAR(s.ppl / s.ppl_base, 1.0, 1e-6);
}

TEST(KLDivergence, Q8_0IsCloserThanQ4_0) {
    test::TempDir dir;
    const KLStats q8 = kl_against_f32(Type::Q8_0, dir);
    const KLStats q4 = kl_against_f32(Type::Q4_0, dir);
    EXPECT_GT(q8.kld_mean, 0);
    EXPECT_LT(q8.kld_mean, q4.kld_mean);
    EXPECT_GE(q8.same_top, q4.same_top);
    EXPECT_LE(q8.kld_median, q8.kld_p90);
    EXPECT_LE(q8.kld_p90, q8.kld_max);
}

TEST(KLDivergence, RejectsCorruptBaseFile) {
    test::TempDir dir;
    const std::string path = dir.path("bad.kld");
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs("LILAKLD1garbage", f);
    std::fclose(f);
    EXPECT_THROW(KLComparer{path}, Error);
    EXPECT_THROW(KLComparer{dir.path("missing.kld")}, Error);
}

}  // namespace
}  // namespace lila
