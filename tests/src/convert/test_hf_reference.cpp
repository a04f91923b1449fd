// Every Hugging Face class lila converts, against a reference that is not lila: a tiny
// checkpoint per class in tests/data/hf/ARCH/ (config.json, model.safetensors in BF16,
// tokenizer.json) with reference.json, the outputs of transformers' forward pass for it in
// float32, as a plain PyTorch transcription of transformers' modeling code computes them
// (made outside the project as docs/architectures.md says). lila converts each checkpoint to
// F32 and runs it: logits of a 12-token sequence, the prompt's token ids, and 32 greedy
// tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/convert/convert.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"
#include "test_util.h"

namespace lila {
namespace {

using ggml_lite::Type;
using nlohmann::json;
using Ids = std::vector<int32_t>;

// Both sides compute in float32 from the same BF16 weights; they differ in summation order
// (blocked dot products here, BLAS in PyTorch) and in the approximations of exp, tanh and
// GELU. On logits spread by about 10 (at most 50 in magnitude) that gives at most 5.4e-5
// (docs/architectures.md has each class's figure); 1e-3 leaves room for other compilers and
// ISAs and is still below what a wrong setting moves (2e-2 for Gemma 2's attention soft-cap
// at 40 instead of 50, whole units for a window or RoPE off by one).
constexpr float kTolerance = 1e-3f;

int32_t argmax(const float* l, int64_t n) {
    return int32_t(std::max_element(l, l + n) - l);
}

// A context of 64 holds the greedy run (6 + 32 tokens) and stays within Phi-3's original
// context of 128, so lila, which picks LongRoPE's factors by the context size as llama.cpp
// does, takes the short ones that transformers takes for sequences up to 128 tokens.
SessionParams f32_cache() {
    SessionParams p;
    p.kv_type = Type::F32;
    p.n_threads = 1;
    p.n_ctx = 64;
    return p;
}

class HfReference : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        const std::string src = "tests/data/hf/" + GetParam();
        ref_ = json::parse(test::read_file(src + "/reference.json"));
        ConvertOptions opts;
        opts.type = Type::F32;
        convert_hf(src, dir_.path("model.gguf"), opts);
        model_ = Model::load(dir_.path("model.gguf"));
    }

    test::TempDir dir_;
    json ref_;
    std::unique_ptr<Model> model_;
};

TEST_P(HfReference, LogitsMatchTransformers) {
    const Ids tokens = ref_["token_ids"].get<Ids>();
    const auto sampled = ref_["sampled_ids"].get<Ids>();
    const int64_t nv = model_->hp.n_vocab;
    Session s(*model_, f32_cache());
    const float* logits = s.eval(tokens, true);
    for (size_t t = 0; t < tokens.size(); t++) {
        const float* l = logits + t * nv;
        Ids top(nv);
        for (int32_t i = 0; i < nv; i++) top[i] = i;
        std::partial_sort(top.begin(), top.begin() + 5, top.end(),
                          [&](int32_t a, int32_t b) { return l[a] > l[b]; });
        top.resize(5);
        EXPECT_EQ(top, ref_["top5"][t].get<Ids>()) << "position " << t;
        for (size_t j = 0; j < sampled.size(); j++) {
            EXPECT_NEAR(l[sampled[j]], ref_["logits"][t][j].get<float>(), kTolerance)
                << "position " << t << " id " << sampled[j];
        }
    }
}

// The prompt's ids from lila's tokenizer, then greedy decoding one token at a time through
// the KV cache (the reference recomputes the whole sequence at each step).
TEST_P(HfReference, GreedyTokensMatchTransformers) {
    const Ids prompt = model_->tokenizer().encode(ref_["prompt"].get<std::string>(), false, false);
    ASSERT_EQ(prompt, ref_["prompt_ids"].get<Ids>());
    const Ids want = ref_["greedy"].get<Ids>();
    const int64_t nv = model_->hp.n_vocab;
    Session s(*model_, f32_cache());
    const float* l = s.eval(prompt);
    Ids got;
    while (got.size() < want.size()) {
        got.push_back(argmax(l, nv));
        l = s.eval({&got.back(), 1});
    }
    EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Classes, HfReference,
                         ::testing::Values("llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3",
                                           "smollm3", "granite", "olmo2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lila
