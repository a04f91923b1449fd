// Every architecture of src/runtime/arch.h on a tiny random model in llama.cpp's GGUF layout
// (tests/fixtures/arch_models.h): logits against ik_llama.cpp's (llama.cpp's for OLMo 2) on
// the same files (tests/data/arch/, made as docs/architectures.md says), prefill against
// decode, thread counts, and files that lack a tensor their architecture needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "fixtures/arch_models.h"
#include "src/base/error.h"
#include "src/io/gguf.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"

namespace lila {
namespace {

using ggml_lite::Type;
using nlohmann::json;

// The token ids every test feeds: 12 positions, past every sliding window of the presets.
const std::vector<int32_t> kTokens = {1, 17, 300, 45, 45, 2, 99, 250, 383, 7, 128, 64};

SessionParams params(Type kv, int threads = 1, int64_t n_ctx = 0) {
    SessionParams p;
    p.n_threads = threads;
    p.kv_type = kv;
    p.n_ctx = n_ctx;
    return p;
}

std::vector<std::string> arch_names() {
    std::vector<std::string> names;
    for (const ModelPreset& p : test::tiny_arch_presets()) names.push_back(p.name);
    return names;
}

class Arch : public ::testing::TestWithParam<std::string> {};

TEST_P(Arch, LoadsAndNamesItsArchitecture) {
    auto m = Model::load(test::tiny_arch_model(GetParam()));
    EXPECT_EQ(std::string(m->arch->name), GetParam());
    EXPECT_EQ(static_cast<int64_t>(m->layers.size()), m->hp.n_layer);
}

// The logits of the test sequence against those ik_llama.cpp computed on the same file, with
// an F16 cache (ik_llama.cpp takes F32 only with flash attention); llama.cpp's for OLMo 2,
// which ik_llama.cpp lacks, and Granite, whose residual scale ik_llama.cpp applies to the
// whole residual stream. tests/data/arch/ARCH.json holds the top 5 ids at every position, the
// logits of every 12th id, and the tolerance: 3e-3 where the runtimes' float sums in other
// orders (and GELU's and tanh's approximations) differ by up to 1.2e-3, 5e-2 for OLMo 2, where
// llama.cpp rounds queries to F16 for the scores and differs by 1.9e-2 on logits of +-35
// (docs/architectures.md).
void expect_reference_logits(const std::string& model, const std::string& reference,
                             int64_t n_ctx = 256) {
    const json ref = json::parse(test::read_file("tests/data/arch/" + reference + ".json"));
    ASSERT_EQ(ref["token_ids"].get<std::vector<int32_t>>(), kTokens);
    auto m = Model::load(model);
    Session s(*m, params(Type::F16, 1, n_ctx));
    const int64_t nv = m->hp.n_vocab;
    const float* logits = s.eval(kTokens, true);
    const auto sampled = ref["sampled_ids"].get<std::vector<int32_t>>();
    const float tolerance = ref["tolerance"].get<float>();
    for (size_t t = 0; t < kTokens.size(); t++) {
        const float* l = logits + t * nv;
        std::vector<int32_t> top(nv);
        for (int32_t i = 0; i < nv; i++) top[i] = i;
        std::partial_sort(top.begin(), top.begin() + 5, top.end(),
                          [&](int32_t a, int32_t b) { return l[a] > l[b]; });
        top.resize(5);
        EXPECT_EQ(top, ref["top5"][t].get<std::vector<int32_t>>()) << "position " << t;
        for (size_t j = 0; j < sampled.size(); j++) {
            EXPECT_NEAR(l[sampled[j]], ref["logits"][t][j].get<float>(), tolerance)
                << "position " << t << " id " << sampled[j];
        }
    }
}

TEST_P(Arch, MatchesLlamaCpp) {
    expect_reference_logits(test::tiny_arch_model(GetParam()), GetParam());
}

// A batch of N tokens gives the logits of N single-token steps, and of a half batch followed
// by steps: the cache, the windows and the RoPE positions agree however tokens arrive.
TEST_P(Arch, PrefillEqualsDecodeSteps) {
    auto m = Model::load(test::tiny_arch_model(GetParam()));
    const int64_t nv = m->hp.n_vocab, n = static_cast<int64_t>(kTokens.size());
    Session prefill(*m, params(Type::F32));
    const float* p = prefill.eval(kTokens, true);
    const std::vector<float> all(p, p + n * nv);
    Session step(*m, params(Type::F32));
    for (int64_t t = 0; t < n; t++) {
        const float* l = step.eval({&kTokens[t], 1});
        for (int64_t i = 0; i < nv; i++) {
            ASSERT_NEAR(l[i], all[t * nv + i], 1e-4f * (1.0f + std::fabs(all[t * nv + i])))
                << "position " << t << " token " << i;
        }
    }
}

TEST_P(Arch, ThreadCountIndependent) {
    auto m = Model::load(test::tiny_arch_model(GetParam()));
    const int64_t nv = m->hp.n_vocab, n = static_cast<int64_t>(kTokens.size());
    Session one(*m, params(Type::F16, 1));
    const float* a = one.eval(kTokens, true);
    const std::vector<float> want(a, a + n * nv);
    Session two(*m, params(Type::F16, 2));
    const float* b = two.eval(kTokens, true);
    EXPECT_EQ(0, std::memcmp(b, want.data(), want.size() * sizeof(float)));
}

// The tiny models run every step on one thread (too little work to share out). This one is
// wide enough, and its prompt long enough, that the matmuls, the attention and the per-token
// steps (norms, rotation, cache stores, activation) are shared among 2 and 3 threads: the
// logits must still be those of one thread, bit for bit.
TEST(ArchWide, ThreadCountIndependent) {
    const ModelPreset p = test::tiny_preset("qwen2", [](ModelPreset& w) {
        w.n_embd = 1024;
        w.n_ff = 1024;
        w.n_layer = 1;
        w.n_head = 8;
        w.n_head_kv = 4;
        w.n_ctx = 512;
        w.qkv_bias = true;
    });
    test::TempDir dir;
    ConvertOptions opts;
    opts.type = Type::Q8_0;
    write_random_model(p, dir.path("wide.gguf"), opts, {});
    auto m = Model::load(dir.path("wide.gguf"));
    std::vector<int32_t> tokens(320);
    for (size_t i = 0; i < tokens.size(); i++) tokens[i] = static_cast<int32_t>(i * 7 % 384);
    const int64_t nv = m->hp.n_vocab;
    Session one(*m, params(Type::F16, 1));
    const float* a = one.eval(tokens, true);
    const std::vector<float> want(a, a + tokens.size() * nv);
    for (int threads : {2, 3}) {
        Session s(*m, params(Type::F16, threads));
        const float* b = s.eval(tokens, true);
        EXPECT_EQ(0, std::memcmp(b, want.data(), want.size() * sizeof(float))) << threads;
    }
}

// A copy of `src` at `out` with `edit` applied to its metadata and without tensor `drop`.
std::string edited(const std::string& src, const std::string& out,
                   const std::function<void(GGUFWriter&)>& edit, const std::string& drop = "") {
    const auto f = GGUFFile::open(src);
    GGUFWriter w;
    for (const auto& [key, value] : f->metadata()) w.set(key, value);
    edit(w);
    for (const GGUFTensorInfo& t : f->tensors()) {
        if (t.name == drop) continue;
        w.add_tensor(t.name, t.type, t.shape, [&t](std::vector<uint8_t>& bytes) {
            const auto* p = static_cast<const uint8_t*>(t.data);
            bytes.assign(p, p + t.nbytes);
        });
    }
    w.write(out);
    return out;
}

void expect_load_error(const std::string& path, const std::string& what) {
    try {
        Model::load(path);
        ADD_FAILURE() << "no error; expected " << what;
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
}

TEST(ArchFiles, MissingTensorsOfAVariantAreNamed) {
    test::TempDir dir;
    const auto none = [](GGUFWriter&) {};
    for (const auto& [arch, tensor] : std::vector<std::pair<std::string, std::string>>{
             {"qwen3", "blk.1.attn_k_norm.weight"},
             {"gemma2", "blk.3.post_ffw_norm.weight"},
             {"gemma3", "blk.0.attn_q_norm.weight"},
             {"olmo2", "blk.1.post_attention_norm.weight"},
             {"phi3", "blk.0.ffn_up.weight"}}) {
        SCOPED_TRACE(arch);
        const std::string path = dir.path(arch + ".gguf");
        expect_load_error(edited(test::tiny_arch_model(arch), path, none, tensor),
                          "missing tensor " + tensor);
    }
    // Phi-3 without its fused attn_qkv needs separate projections.
    expect_load_error(
        edited(test::tiny_arch_model("phi3"), dir.path("qkv.gguf"), none, "blk.1.attn_qkv.weight"),
        "missing tensor blk.1.attn_q.weight");
}

TEST(ArchFiles, UnknownArchitectureListsTheSupportedOnes) {
    test::TempDir dir;
    const std::string path =
        edited(test::tiny_arch_model("llama"), dir.path("m.gguf"),
               [](GGUFWriter& w) { w.set("general.architecture", GGUFValue::string("mamba")); });
    expect_load_error(path,
                      "unsupported architecture 'mamba' (supported: llama, qwen2, qwen3, "
                      "gemma2, gemma3, phi3, smollm3, granite, olmo2)");
}

TEST(ArchFiles, RejectsWhatItWouldComputeWrongly) {
    test::TempDir dir;
    expect_load_error(edited(test::tiny_arch_model("qwen3"), dir.path("yarn.gguf"),
                             [](GGUFWriter& w) {
                                 w.set("qwen3.rope.scaling.type", GGUFValue::string("yarn"));
                                 w.set("qwen3.rope.scaling.factor", GGUFValue::f32(4.0));
                             }),
                      "RoPE scaling 'yarn' is not supported");
    const std::string granite = test::tiny_arch_model("granite");
    const auto f = GGUFFile::open(granite);
    GGUFWriter w;
    for (const auto& [key, value] : f->metadata()) {
        if (key != "granite.residual_scale") w.set(key, value);
    }
    for (const GGUFTensorInfo& t : f->tensors()) {
        w.add_tensor(t.name, t.type, t.shape, [&t](std::vector<uint8_t>& bytes) {
            const auto* p = static_cast<const uint8_t*>(t.data);
            bytes.assign(p, p + t.nbytes);
        });
    }
    const std::string path = dir.path("granite.gguf");
    w.write(path);
    expect_load_error(path, "missing metadata key granite.residual_scale");
}

// Phi-3's LongRoPE: the long factors past the original context (ik_llama.cpp's logits, as
// above, for a full-width RoPE: its phi3 takes factors only for that), the short ones within.
TEST(ArchFiles, LongRopeFactorsAreChosenByContext) {
    test::TempDir dir;
    ModelPreset p = test::tiny_arch_presets()[5];
    ASSERT_STREQ(p.arch, "phi3");
    p.rope_dim = 0;
    p.n_ctx_orig = 128;
    ConvertOptions opts;
    opts.type = Type::F32;
    opts.name = "tiny model";
    RandomModelOptions r;
    r.confident = true;
    const std::string path = dir.path("phi3-longrope.gguf");
    write_random_model(p, path, opts, r);
    expect_reference_logits(path, "phi3-longrope", 256);
    auto m = Model::load(path);
    EXPECT_EQ(&m->rope_factors(256), &m->rope_factors_long);
    EXPECT_EQ(&m->rope_factors(128), &m->rope_factors_short);
    EXPECT_NEAR(m->rope_attn_factor, std::sqrt(1 + std::log(8.0) / std::log(128.0)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(All, Arch, ::testing::ValuesIn(arch_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lila
