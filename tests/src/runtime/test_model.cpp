// The forward pass against independent implementations (llama2.c run.c and a float32
// PyTorch forward, ../shared/reference/), and the consistency of prefill, decode and cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>

#include "fixtures/stories.h"
#include "src/base/error.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"

namespace lila {
namespace {

using ggml_lite::Type;
using nlohmann::json;

json reference(const std::string& name) {
    return json::parse(test::read_file(test::shared_path("reference/" + name)));
}

std::vector<int32_t> top_k_ids(const float* logits, int64_t n, int k) {
    std::vector<int32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    ids.resize(k);
    return ids;
}

int32_t argmax(const float* logits, int64_t n) {
    return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

SessionParams params(Type kv, int threads = 1) {
    SessionParams p;
    p.n_threads = threads;
    p.kv_type = kv;
    return p;
}

struct ReferenceLogits {
    std::vector<int32_t> ids;
    std::vector<float> last_logits;
    std::vector<std::vector<int32_t>> top5;
};

ReferenceLogits reference_logits() {
    const json seq = reference("stories260K_logits.json")["sequences"][0];
    return {seq["token_ids"].get<std::vector<int32_t>>(),
            seq["last_logits"].get<std::vector<float>>(),
            seq["top5_per_position"].get<std::vector<std::vector<int32_t>>>()};
}

// Largest |a - b| over n values.
float max_abs_diff(const float* a, const float* b, int64_t n) {
    float d = 0;
    for (int64_t i = 0; i < n; i++) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

TEST(Model, LoadsReferenceHyperparameters) {
    auto m = Model::load(test::stories_model(Type::F32));
    EXPECT_EQ(m->hp.n_embd, 64);
    EXPECT_EQ(m->hp.n_layer, 5);
    EXPECT_EQ(m->hp.n_head, 8);
    EXPECT_EQ(m->hp.n_head_kv, 4);
    EXPECT_EQ(m->hp.n_ff, 172);
    EXPECT_EQ(m->hp.n_vocab, 512);
    EXPECT_EQ(m->hp.n_ctx_train, 512);
    EXPECT_EQ(m->output.data, m->tok_embd.data);  // shared classifier
}

// An f32 implementation must match the reference logits within 1e-4 and the top-5 exactly
// (../shared/README.md); with the F32 KV cache lila's F32 model is such an implementation.
TEST(Model, F32MatchesReferenceLogits) {
    const ReferenceLogits ref = reference_logits();
    auto m = Model::load(test::stories_model(Type::F32));
    Session s(*m, params(Type::F32));
    const float* logits = s.eval(ref.ids, /*all_logits=*/true);
    const int64_t nv = m->hp.n_vocab;
    for (size_t t = 0; t < ref.ids.size(); t++) {
        EXPECT_EQ(top_k_ids(logits + t * nv, nv, 5), ref.top5[t]) << "position " << t;
    }
    const float* last = logits + (ref.ids.size() - 1) * nv;
    EXPECT_LT(max_abs_diff(last, ref.last_logits.data(), nv), 1e-4f);
}

// Measured max |logit - reference| at the last position (logits span about -16..+10):
// F16 cache 5.0e-3, F16 weights 1.25e-2, Q8_0 0.27, Q4_0 2.5 (a 64-wide model has little
// redundancy to average out quantization noise). Tolerances are those figures with ~40%
// headroom; the top-1 token must agree at every position.
TEST(Model, CompactTypesStayCloseToReference) {
    const ReferenceLogits ref = reference_logits();
    struct Case {
        Type weights, kv;
        float tol;
    };
    for (const Case c : {Case{Type::F32, Type::F16, 7e-3f}, Case{Type::F16, Type::F16, 0.018f},
                         Case{Type::Q8_0, Type::F16, 0.38f}, Case{Type::Q4_0, Type::F16, 3.5f}}) {
        auto m = Model::load(test::stories_model(c.weights));
        Session s(*m, params(c.kv));
        const int64_t nv = m->hp.n_vocab;
        const float* logits = s.eval(ref.ids, true);
        for (size_t t = 0; t < ref.ids.size(); t++) {
            EXPECT_EQ(argmax(logits + t * nv, nv), ref.top5[t][0])
                << ggml_lite::type_name(c.weights) << " position " << t;
        }
        const float d =
            max_abs_diff(logits + (ref.ids.size() - 1) * nv, ref.last_logits.data(), nv);
        EXPECT_LT(d, c.tol) << ggml_lite::type_name(c.weights);
        std::printf("[ measured ] %s weights, %s cache: max |logit - reference| = %.2e\n",
                    ggml_lite::type_name(c.weights), ggml_lite::type_name(c.kv), d);
    }
}

// Greedy decoding reproduces llama2.c's token ids exactly: 256 positions, or up to and
// including a sampled BOS (the reference lists it).
TEST(Model, GreedyMatchesLlama2c) {
    auto m = Model::load(test::stories_model(Type::F32));
    const Tokenizer& tok = m->tokenizer();
    for (const json& r : reference("stories260K_greedy.json")) {
        const auto want = r["token_ids"].get<std::vector<int32_t>>();
        const int steps = r["steps"].get<int>();
        std::vector<int32_t> ids = tok.encode(r["prompt"].get<std::string>(), true, false);
        ASSERT_EQ(std::vector<int32_t>(want.begin(), want.begin() + ids.size()), ids);

        Session s(*m, params(Type::F32));
        const float* logits = s.eval(ids);
        while (static_cast<int>(ids.size()) <= steps) {
            const int32_t next = argmax(logits, m->hp.n_vocab);
            ids.push_back(next);
            if (next == tok.vocab().bos || static_cast<int>(ids.size()) > steps) break;
            logits = s.eval({&next, 1});
        }
        EXPECT_EQ(ids, want) << r["prompt"];
    }
}

// Prefill of N tokens = N decode steps, and decode after prefill = full recompute. The same
// kernels run in both, on the same quantized activations, so the agreement is tight.
TEST(Model, PrefillEqualsDecodeSteps) {
    const ReferenceLogits ref = reference_logits();
    for (Type type : {Type::F32, Type::Q4_0}) {
        auto m = Model::load(test::stories_model(type));
        const int64_t nv = m->hp.n_vocab, n = static_cast<int64_t>(ref.ids.size());

        Session prefill(*m, params(Type::F16));
        const float* p = prefill.eval(ref.ids, true);
        const std::vector<float> all(p, p + n * nv);

        Session step(*m, params(Type::F16));
        for (int64_t t = 0; t < n; t++) {
            const float* l = step.eval({&ref.ids[t], 1});
            EXPECT_LT(max_abs_diff(l, &all[t * nv], nv), 1e-5f) << "position " << t;
        }

        // Prefill the first half, then decode the rest: equals the full batch.
        Session half(*m, params(Type::F16));
        half.eval(std::span(ref.ids).first(n / 2));
        for (int64_t t = n / 2; t < n; t++) {
            const float* l = half.eval({&ref.ids[t], 1});
            EXPECT_LT(max_abs_diff(l, &all[t * nv], nv), 1e-5f) << "position " << t;
        }
    }
}

// Truncating the cache and re-evaluating gives the logits of a fresh session.
TEST(Model, TruncateAndReevaluate) {
    const ReferenceLogits ref = reference_logits();
    auto m = Model::load(test::stories_model(Type::F32));
    const int64_t nv = m->hp.n_vocab;
    Session s(*m, params(Type::F32));
    s.eval(ref.ids);
    s.truncate(3);
    EXPECT_EQ(s.n_past(), 3);
    const float* again = s.eval(std::span(ref.ids).subspan(3));
    std::vector<float> got(again, again + nv);
    Session fresh(*m, params(Type::F32));
    const float* want = fresh.eval(ref.ids);
    EXPECT_LT(max_abs_diff(got.data(), want, nv), 1e-6f);
}

// Results do not depend on the thread count.
TEST(Model, ThreadCountIndependent) {
    const ReferenceLogits ref = reference_logits();
    auto m = Model::load(test::stories_model(Type::Q8_0));
    const int64_t nv = m->hp.n_vocab, n = static_cast<int64_t>(ref.ids.size());
    Session one(*m, params(Type::F16, 1));
    const float* a = one.eval(ref.ids, true);
    std::vector<float> want(a, a + n * nv);
    for (int threads : {2, 3}) {
        Session s(*m, params(Type::F16, threads));
        const float* b = s.eval(ref.ids, true);
        EXPECT_EQ(0, std::memcmp(b, want.data(), want.size() * sizeof(float))) << threads;
    }
}

TEST(Model, RejectsContextOverflowAndBadIds) {
    auto m = Model::load(test::stories_model(Type::F32));
    SessionParams p = params(Type::F32);
    p.n_ctx = 4;
    Session s(*m, p);
    const std::vector<int32_t> five{1, 2, 3, 4, 5};
    EXPECT_THROW(s.eval(five), Error);
    EXPECT_EQ(s.n_past(), 0);
    const std::vector<int32_t> bad{1, 512};
    EXPECT_THROW(s.eval(bad), Error);
}

}  // namespace
}  // namespace lila
