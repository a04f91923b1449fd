// The Hugging Face converter end to end: an HF export of the stories260K reference model
// converts to the same weights, logits and token ids as its llama2.c original, in one file
// or shards, from F32, F16 or BF16; Llama 3.1 RoPE factors; Qwen2 biases; errors leave no
// output behind. And the tokenizer.json reader on real and hand-made files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <random>

#include "fixtures/hf_export.h"
#include "fixtures/hf_fixture.h"
#include "src/base/error.h"
#include "src/base/utf8.h"
#include "src/convert/convert.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/sentencepiece_model.h"

namespace lila {
namespace {

namespace fs = std::filesystem;
using ggml_lite::Type;
using nlohmann::json;
using Ids = std::vector<int32_t>;

std::string convert_dir(const test::TempDir& dir, FileType type = Type::F32,
                        const char* out = "out.gguf") {
    ConvertOptions opts;
    opts.type = type;
    opts.name = "stories260K";
    convert_hf(dir.path(""), dir.path(out), opts);
    return dir.path(out);
}

// Tensor by tensor, the same names, types, shapes and bytes (or only the matrices' bytes).
void expect_same_tensors(const std::string& a, const std::string& b, bool matrices_only = false) {
    auto fa = GGUFFile::open(a), fb = GGUFFile::open(b);
    ASSERT_EQ(fa->tensors().size(), fb->tensors().size());
    for (const GGUFTensorInfo& t : fa->tensors()) {
        const GGUFTensorInfo* u = fb->find_tensor(t.name);
        ASSERT_NE(u, nullptr) << t.name;
        EXPECT_EQ(t.type, u->type) << t.name;
        EXPECT_EQ(t.shape, u->shape) << t.name;
        ASSERT_EQ(t.nbytes, u->nbytes) << t.name;
        if (matrices_only && t.shape.size() < 2) continue;
        EXPECT_EQ(std::memcmp(t.data, u->data, t.nbytes), 0) << t.name;
    }
}

// All logits of a sequence through the model in FILE (F32 KV cache).
std::vector<float> all_logits(const std::string& file, const Ids& ids) {
    auto m = Model::load(file);
    SessionParams p;
    p.kv_type = Type::F32;
    Session s(*m, p);
    const float* l = s.eval(ids, true);
    return {l, l + ids.size() * m->hp.n_vocab};
}

const test::TempDir& stories_f32_export() {
    static test::TempDir dir;
    static bool written = (test::write_stories_hf(dir), convert_dir(dir), true);
    (void)written;
    return dir;
}

TEST(ConvertHf, StoriesExportMatchesLlama2cConversion) {
    const std::string hf = stories_f32_export().path("out.gguf");
    const std::string ref = test::stories_model(Type::F32);
    expect_same_tensors(hf, ref);

    auto a = GGUFFile::open(hf), b = GGUFFile::open(ref);
    EXPECT_EQ(a->get_string("general.architecture"), "llama");
    for (const auto& [key, value] : b->metadata()) {
        if (key.starts_with("llama.")) {
            EXPECT_EQ(*a->find(key), value) << key;
        }
    }
    EXPECT_EQ(a->get_string("tokenizer.chat_template"), test::kStoriesTemplate);

    const Ids ids = {1, 403, 407, 261, 378, 365, 430, 261, 285, 266, 291, 283, 302, 409, 268};
    const std::vector<float> la = all_logits(hf, ids), lb = all_logits(ref, ids);
    float diff = 0;
    for (size_t i = 0; i < la.size(); i++) diff = std::max(diff, std::fabs(la[i] - lb[i]));
    std::printf("HF export vs llama2.c conversion: max |logit difference| %g over %zu logits\n",
                diff, la.size());
    EXPECT_LE(diff, 1e-5f);
}

// The tokenizer.json path derives its scores from the merges; encodings must still equal
// those of the original llama2.c vocabulary (real SentencePiece scores).
TEST(ConvertHf, StoriesTokenizerMatchesLlama2c) {
    auto hf = Model::load(stories_f32_export().path("out.gguf"));
    auto ref = Model::load(test::stories_model(Type::F32));
    const Vocab &a = hf->tokenizer().vocab(), &b = ref->tokenizer().vocab();
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.types, b.types);
    EXPECT_EQ(a.bos, b.bos);
    EXPECT_EQ(a.eos, b.eos);
    EXPECT_EQ(a.unk, b.unk);
    EXPECT_EQ(a.add_bos, b.add_bos);
    EXPECT_EQ(a.add_space_prefix, b.add_space_prefix);

    std::ifstream in(test::shared_path("data/tinystories/tinystories_val.txt"));
    std::mt19937 rng(1);
    size_t checked = 0;
    for (std::string line; checked < 1000 && std::getline(in, line);) {
        if (line.empty()) continue;
        const size_t cut = rng() % line.size();
        for (const std::string& t : {line, line.substr(cut), line + "  x\n\t" + line.substr(cut)}) {
            ASSERT_EQ(hf->tokenizer().encode(t, true, true), ref->tokenizer().encode(t, true, true))
                << t;
            checked++;
        }
    }
    std::printf("HF tokenizer.json vocabulary: %zu texts tokenized as llama2.c's\n", checked);
}

TEST(ConvertHf, ShardedCheckpoint) {
    test::TempDir dir;
    test::write_stories_hf(dir, Type::F32, 4);
    EXPECT_TRUE(fs::exists(dir.path("model-00004-of-00004.safetensors")));
    EXPECT_FALSE(fs::exists(dir.path("model.safetensors")));
    expect_same_tensors(convert_dir(dir), test::stories_model(Type::F32));
}

// F16/BF16 checkpoints: converting matrices to the same type keeps the bytes; F32 output
// (norms always) is what rounding the F32 original gives.
TEST(ConvertHf, HalfPrecisionInputs) {
    for (Type type : {Type::F16, Type::BF16}) {
        test::TempDir dir;
        test::write_stories_hf(dir, type);
        expect_same_tensors(convert_dir(dir, type),
                            convert_dir(stories_f32_export(), type, "half.gguf"), true);

        auto f32 = GGUFFile::open(convert_dir(dir, Type::F32, "f32.gguf"));
        auto ref = GGUFFile::open(test::stories_model(Type::F32));
        for (const GGUFTensorInfo& t : ref->tensors()) {
            const GGUFTensorInfo* u = f32->find_tensor(t.name);
            ASSERT_NE(u, nullptr);
            ASSERT_EQ(u->type, Type::F32);
            const auto* want = static_cast<const float*>(t.data);
            const auto* got = static_cast<const float*>(u->data);
            std::vector<uint8_t> half(t.n_elements() * 2);
            std::vector<float> rounded(t.n_elements());
            ggml_lite::traits(type).from_float(want, half.data(), t.n_elements());
            ggml_lite::traits(type).to_float(half.data(), rounded.data(), t.n_elements());
            EXPECT_EQ(std::memcmp(got, rounded.data(), rounded.size() * 4), 0) << t.name;
        }
    }
}

TEST(ConvertHf, QuantizedOutputRuns) {
    test::TempDir dir;
    test::write_stories_hf(dir);
    const std::string q = convert_dir(dir, Type::Q8_0);
    expect_same_tensors(q, test::stories_model(Type::Q8_0));
}

// --- failures ---------------------------------------------------------------------------

// Converting DIR fails with a message containing `want`, and leaves no output behind.
void expect_convert_error(const test::TempDir& dir, const std::string& want) {
    const std::string out = dir.path("out.gguf");
    try {
        convert_dir(dir);
        ADD_FAILURE() << "no error, wanted: " << want;
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".tmp"));
}

void edit_config(const test::TempDir& dir, const std::function<void(json&)>& edit) {
    json c = json::parse(test::read_file(dir.path("config.json")));
    edit(c);
    test::write_json(dir.path("config.json"), c);
}

TEST(ConvertHf, UnknownArchitectureListsSupported) {
    test::TempDir dir;
    test::write_stories_hf(dir);
    edit_config(dir, [](json& c) { c["architectures"] = {"GPT2LMHeadModel"}; });
    for (const char* s :
         {"GPT2LMHeadModel", "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"}) {
        expect_convert_error(dir, s);
    }
    edit_config(dir, [](json& c) { c.erase("architectures"); });
    expect_convert_error(dir, "LlamaForCausalLM");
}

TEST(ConvertHf, CorruptCheckpointLeavesNoOutput) {
    test::TempDir dir;
    test::write_stories_hf(dir);
    const std::string good = test::read_file(dir.path("model.safetensors"));
    std::mt19937 rng(5);
    for (int i = 0; i < 20; i++) {
        test::write_bytes(dir.path("model.safetensors"), good.substr(0, rng() % good.size()));
        expect_convert_error(dir, "model.safetensors");
    }
    // An existing output survives a failed conversion untouched.
    test::write_bytes(dir.path("out.gguf"), "precious");
    EXPECT_THROW(convert_dir(dir), Error);
    EXPECT_EQ(test::read_file(dir.path("out.gguf")), "precious");
}

TEST(ConvertHf, InconsistentCheckpoints) {
    test::TempDir dir;
    test::write_stories_hf(dir);
    edit_config(dir, [](json& c) { c["intermediate_size"] = 100; });
    expect_convert_error(dir, "mlp.gate_proj.weight has shape [172, 64]");
    edit_config(dir,
                [](json& c) { c["intermediate_size"] = 172, c["tie_word_embeddings"] = false; });
    expect_convert_error(dir, "missing tensor lm_head.weight");
    edit_config(dir, [](json& c) {
        c["tie_word_embeddings"] = true;
        c["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
    });
    expect_convert_error(dir, "rope_scaling type 'yarn'");
    edit_config(dir, [](json& c) { c.erase("rope_scaling"), c["hidden_size"] = "64"; });
    expect_convert_error(dir, "hidden_size");
    edit_config(dir, [](json& c) { c["hidden_size"] = 64, c.erase("num_hidden_layers"); });
    expect_convert_error(dir, "missing num_hidden_layers");
    edit_config(dir, [](json& c) { c["num_hidden_layers"] = 5; });

    auto tensors = test::stories_hf_tensors(Type::F32);
    tensors.push_back(
        {"model.layers.0.self_attn.o_proj.bias", Type::F32, {64}, std::vector<float>(64)});
    test::write_checkpoint(dir, tensors);
    expect_convert_error(dir, "o_proj.bias is not part of a supported model");
    tensors.pop_back();
    tensors.erase(tensors.begin() + 3);
    test::write_checkpoint(dir, tensors);
    expect_convert_error(dir, "missing tensor model.layers.0.self_attn.k_proj.weight");
    fs::remove(dir.path("config.json"));
    expect_convert_error(dir, "config.json");
}

// --- architecture variants ----------------------------------------------------------------

// A small random model (tok512's tokenizer) of the given shape, with q/k/v biases if asked.
std::vector<test::StTensor> random_model(const test::TempDir& dir, json config, bool biases) {
    const int64_t dim = config["hidden_size"], n_head = config["num_attention_heads"];
    const int64_t head = config.value("head_dim", dim / n_head);
    const int64_t q_dim = n_head * head, kv_dim = int64_t(config["num_key_value_heads"]) * head;
    const int64_t ff = config["intermediate_size"], vocab = config["vocab_size"];
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<test::StTensor> t;
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<float> v(n);
        for (float& x : v)
            x = shape.size() == 1 && !name.ends_with("bias") ? 1.0f + normal(rng) : normal(rng);
        t.push_back({name, Type::F32, shape, v});
    };
    add("model.embed_tokens.weight", {vocab, dim});
    add("model.layers.0.input_layernorm.weight", {dim});
    add("model.layers.0.self_attn.q_proj.weight", {q_dim, dim});
    add("model.layers.0.self_attn.k_proj.weight", {kv_dim, dim});
    add("model.layers.0.self_attn.v_proj.weight", {kv_dim, dim});
    if (biases) {
        add("model.layers.0.self_attn.q_proj.bias", {q_dim});
        add("model.layers.0.self_attn.k_proj.bias", {kv_dim});
        add("model.layers.0.self_attn.v_proj.bias", {kv_dim});
    }
    add("model.layers.0.self_attn.o_proj.weight", {dim, q_dim});
    add("model.layers.0.post_attention_layernorm.weight", {dim});
    add("model.layers.0.mlp.gate_proj.weight", {ff, dim});
    add("model.layers.0.mlp.up_proj.weight", {ff, dim});
    add("model.layers.0.mlp.down_proj.weight", {dim, ff});
    add("model.norm.weight", {dim});
    if (!config.value("tie_word_embeddings", false)) add("lm_head.weight", {vocab, dim});
    test::write_checkpoint(dir, t);
    test::write_json(dir.path("config.json"), config);
    test::write_json(dir.path("tokenizer.json"), test::spm_tokenizer_json(read_llama2c_tokenizer(
                                                     test::stories_tokenizer(), 512)));
    return t;
}

json small_config(const char* arch) {
    return {{"architectures", {arch}},  {"hidden_size", 64},
            {"intermediate_size", 96},  {"num_hidden_layers", 1},
            {"num_attention_heads", 4}, {"num_key_value_heads", 2},
            {"vocab_size", 512},        {"max_position_embeddings", 256},
            {"rms_norm_eps", 1e-6},     {"rope_theta", 1000000.0}};
}

// Every class converts to the GGUF it was exported from (fixtures/hf_export.h): llama.cpp's
// architecture, its keys ({arch}.*) with their values, and every tensor's name, shape and
// bytes: q/k rows permuted for NORM RoPE only, Qwen2's biases kept, Gemma's norms 1 + w,
// Phi-3's fused projections and LongRoPE factors.
TEST(ConvertHf, EveryArchitectureRoundTrips) {
    for (const ModelPreset& p : test::tiny_arch_presets()) {
        SCOPED_TRACE(p.name);
        test::TempDir dir;
        test::export_tiny_hf(p.name, dir);
        const std::string out = convert_dir(dir);
        const std::string& original = test::tiny_arch_model(p.name);
        expect_same_tensors(out, original);
        auto a = GGUFFile::open(out), b = GGUFFile::open(original);
        EXPECT_EQ(a->get_string("general.architecture"), p.arch);
        const std::string prefix = std::string(p.arch) + ".";
        auto arch_keys = [&](const GGUFFile& f) {
            std::map<std::string, GGUFValue> keys;
            for (const auto& [key, value] : f.metadata()) {
                if (key.starts_with(prefix)) keys[key] = value;
            }
            return keys;
        };
        const auto ka = arch_keys(*a), kb = arch_keys(*b);
        for (const auto& [key, value] : kb) {
            EXPECT_TRUE(ka.count(key) && ka.at(key) == value) << key;
        }
        EXPECT_EQ(ka.size(), kb.size());
        EXPECT_EQ(all_logits(out, {1, 5, 9, 200}), all_logits(original, {1, 5, 9, 200}));
    }
}

// A checkpoint whose settings llama.cpp fixes differently is refused, naming the setting.
TEST(ConvertHf, RefusesVariantsLlamaCppWouldRunDifferently) {
    auto expect_refused = [](const std::string& arch, const std::function<void(json&)>& edit,
                             const std::string& what) {
        SCOPED_TRACE(arch);
        test::TempDir dir;
        test::export_tiny_hf(arch, dir);
        edit_config(dir, edit);
        try {
            convert_dir(dir);
            ADD_FAILURE() << "no error; expected " << what;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    expect_refused(
        "gemma3", [](json& c) { c["sliding_window_pattern"] = 4; }, "Gemma 3's");
    expect_refused(
        "smollm3",
        [](json& c) {
            c["no_rope_layers"] = {1, 1, 0, 0};
        },
        "no_rope_layers");
    expect_refused(
        "granite", [](json& c) { c.erase("logits_scaling"); }, "missing logits_scaling");
    expect_refused(
        "gemma2", [](json& c) { c["hidden_activation"] = "gelu"; },
        "not supported (gelu_pytorch_tanh)");
    expect_refused(
        "phi3",
        [](json& c) {
            c["original_max_position_embeddings"] = 128;
            c["rope_scaling"] = {{"type", "longrope"},
                                 {"long_factor", {1.0, 2.0}},
                                 {"short_factor", {1, 1, 1, 1, 1, 1}}};
        },
        "long_factor has 2 factors for 6 frequencies");
    expect_refused(
        "qwen3",
        [](json& c) {
            c["rope_scaling"] = {{"rope_type", "yarn"}};
        },
        "rope_scaling type 'yarn' is not supported");
    expect_refused(
        "gemma2", [](json& c) { c["query_pre_attn_scalar"] = 256; },
        "query_pre_attn_scalar 256.0 (llama.cpp scales queries by 1/sqrt(32)");
    expect_refused(
        "gemma3", [](json& c) { c.erase("query_pre_attn_scalar"); }, "query_pre_attn_scalar 256.0");
    expect_refused(
        "gemma3",
        [](json& c) {
            c["layer_types"] = json::array();
            for (int l = 0; l < 7; l++) c["layer_types"].push_back("sliding_attention");
        },
        "layer_types: layer 5 is \"sliding_attention\", llama.cpp's gemma3 runs full_attention");
    expect_refused(
        "qwen2",
        [](json& c) {
            c["layer_types"] = {"full_attention", "sliding_attention"};
        },
        "layer_types: layer 1 is \"sliding_attention\", llama.cpp's qwen2 runs full_attention");
    expect_refused(
        "qwen3", [](json& c) { c["use_sliding_window"] = true; },
        "use_sliding_window: llama.cpp's qwen3 runs full attention on every layer");
    expect_refused(
        "gemma3",
        [](json& c) {
            c["rope_parameters"] = {
                {"full_attention", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}},
                {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 20000.0}}}};
        },
        "rope_parameters.sliding_attention: a RoPE base other than llama.cpp's 10000.0");
}

// LongRoPE's attention factor: computed from the context lengths, or the checkpoint's own.
TEST(ConvertHf, LongRopeAttentionFactor) {
    for (const bool given : {false, true}) {
        test::TempDir dir;
        fs::copy("tests/data/hf/phi3", dir.path(""), fs::copy_options::recursive);
        if (given) edit_config(dir, [](json& c) { c["rope_scaling"]["attention_factor"] = 1.25; });
        const auto f = GGUFFile::open(convert_dir(dir));
        const double computed = std::sqrt(1 + std::log(256.0 / 128.0) / std::log(128.0));
        EXPECT_NEAR(*f->get_float("phi3.rope.scaling.attn_factor"), given ? 1.25 : computed, 1e-6);
    }
}

// transformers 5 keeps partial_rotary_factor and original_max_position_embeddings with the
// RoPE settings.
TEST(ConvertHf, Phi3SettingsInRopeParameters) {
    test::TempDir dir;
    fs::copy("tests/data/hf/phi3", dir.path(""), fs::copy_options::recursive);
    edit_config(dir, [](json& c) {
        c["rope_parameters"] = c["rope_scaling"];
        for (const char* key : {"partial_rotary_factor", "original_max_position_embeddings"}) {
            c["rope_parameters"][key] = c[key];
            c.erase(key);
        }
        c.erase("rope_scaling");
    });
    const auto f = GGUFFile::open(convert_dir(dir));
    EXPECT_EQ(f->get_int("phi3.rope.dimension_count"), 12);
    EXPECT_EQ(f->get_int("phi3.rope.scaling.original_context_length"), 128);
}

// transformers 5 writes Gemma 3's RoPE settings per layer type, without rope_theta: the
// global layers' base is the model's.
TEST(ConvertHf, Gemma3RopeParametersPerLayerType) {
    test::TempDir dir;
    test::export_tiny_hf("gemma3", dir);
    edit_config(dir, [](json& c) {
        c.erase("rope_theta");
        c.erase("rope_local_base_freq");
        c["rope_parameters"] = {
            {"full_attention", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}},
            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
    });
    EXPECT_EQ(GGUFFile::open(convert_dir(dir))->get_float("gemma3.rope.freq_base"), 1000000.0);
}

TEST(ConvertHf, MistralAndHeadDim) {
    test::TempDir dir;
    json c = small_config("MistralForCausalLM");
    c["head_dim"] = 32;  // wider heads than hidden_size / heads, as Mistral Nemo / Qwen3
    random_model(dir, c, false);
    const std::string out = convert_dir(dir);
    auto f = GGUFFile::open(out);
    EXPECT_EQ(f->get_int("llama.attention.key_length"), 32);
    EXPECT_EQ(f->get_int("llama.rope.dimension_count"), 32);
    auto m = Model::load(out);
    EXPECT_EQ(m->hp.head_dim, 32);
    EXPECT_EQ(m->hp.q_dim(), 128);
}

// Llama 3.1's "llama3" RoPE scaling: rope_freqs.weight as llama.cpp computes it.
TEST(ConvertHf, Llama3RopeFactors) {
    test::TempDir dir;
    json c = small_config("LlamaForCausalLM");
    c["hidden_size"] = 256, c["num_attention_heads"] = 2, c["num_key_value_heads"] = 1;
    c["rope_theta"] = 500000.0;
    c["rope_scaling"] = {{"factor", 8.0},
                         {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 8192},
                         {"rope_type", "llama3"}};
    random_model(dir, c, false);
    const std::string out = convert_dir(dir);
    auto f = GGUFFile::open(out);
    const GGUFTensorInfo* t = f->find_tensor("rope_freqs.weight");
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->shape, (std::vector<int64_t>{64}));
    const auto* got = static_cast<const float*>(t->data);
    int interpolated = 0;
    for (int i = 0; i < 64; i++) {
        const double freq = 1.0 / std::pow(500000.0, 2.0 * i / 128.0);
        const double wavelen = 2 * std::numbers::pi / freq;
        double want = wavelen < 2048 ? 1 : wavelen > 8192 ? 8 : 0;
        if (want == 0) {
            const double smooth = (8192 / wavelen - 1) / 3;
            want = 1 / ((1 - smooth) / 8 + smooth);
            interpolated++;
        }
        EXPECT_NEAR(got[i], want, 1e-5 * want) << i;
    }
    EXPECT_GT(interpolated, 3);
    EXPECT_EQ(Model::load(out)->rope_freq_factors.size(), 64u);
}

// A Llama 3.2-style directory: byte-level tokenizer files, tied embeddings, 128256 tokens.
TEST(ConvertHf, Llama3Directory) {
    test::TempDir dir;
    json c = small_config("LlamaForCausalLM");
    c["vocab_size"] = 128256, c["tie_word_embeddings"] = true;
    random_model(dir, c, false);
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
        fs::copy_file(test::shared_path(std::string("tokenizers/llama3/") + f), dir.path(f),
                      fs::copy_options::overwrite_existing);
    }
    test::write_json(dir.path("generation_config.json"),
                     {{"eos_token_id", {128001, 128008, 128009}}});
    const std::string out = convert_dir(dir, Type::Q8_0);
    auto f = GGUFFile::open(out);
    EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f->get_string("tokenizer.ggml.pre"), "llama-bpe");
    EXPECT_EQ(f->get_string_array("tokenizer.ggml.merges")->size(), 280147u);
    EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id"), 128000);
    EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id"), 128001);
    EXPECT_EQ(f->get_int("tokenizer.ggml.eot_token_id"), 128009);
    EXPECT_EQ(f->get_bool("tokenizer.ggml.add_bos_token"), true);
    EXPECT_NE(f->get_string("tokenizer.chat_template")->find("<|eot_id|>"), std::string::npos);
    EXPECT_EQ(f->find_tensor("output.weight"), nullptr);

    auto m = Model::load(out);
    EXPECT_EQ(m->output.data, m->tok_embd.data);
    const Ids ids = m->tokenizer().encode("Hello", m->tokenizer().vocab().add_bos, false);
    EXPECT_EQ(ids, (Ids{128000, 9906}));
}

// A Q4_K_M file is named by its file type (lila info, bench, the load line), not by its
// majority tensor type, which is Q4_K as in an all-Q4_K file.
TEST(ConvertHf, Q4_K_MIsNamedByItsFileType) {
    test::TempDir dir;
    json c = small_config("LlamaForCausalLM");
    c["hidden_size"] = 256, c["intermediate_size"] = 512;
    random_model(dir, c, false);
    EXPECT_EQ(Model::load(convert_dir(dir, FileType::Q4_K_M(), "m.gguf"))->type_summary(),
              "q4_k_m");
    EXPECT_EQ(Model::load(convert_dir(dir, Type::Q4_K, "k.gguf"))->type_summary(), "q4_k");
}

// --- tokenizer.json reader --------------------------------------------------------------

TEST(HfTokenizer, Llama2WithoutTokenizerModel) {
    test::TempDir dir;
    fs::copy_file(test::shared_path("tokenizers/llama2/tokenizer.json"),
                  dir.path("tokenizer.json"));
    const Vocab hf = read_hf_tokenizer(dir.path("")).vocab;
    const Vocab sp =
        read_sentencepiece_model(test::shared_path("tokenizers/llama2/tokenizer.model"));
    EXPECT_EQ(hf.tokens, sp.tokens);
    EXPECT_EQ(hf.types, sp.types);
    EXPECT_EQ(hf.bos, 1);
    EXPECT_EQ(hf.eos, 2);
    EXPECT_EQ(hf.unk, 0);
    EXPECT_TRUE(hf.add_bos);
    EXPECT_TRUE(hf.add_space_prefix);

    auto tok = Tokenizer::create(hf);
    std::ifstream in(test::shared_path("reference/tokenizer_llama2_sample.jsonl"));
    size_t n = 0, matched = 0;
    for (std::string line; std::getline(in, line);) {
        const json l = json::parse(line);
        const Ids ids = tok->encode(l["text"].get<std::string>(), false, false);
        EXPECT_EQ(ids, l["ids"].get<Ids>()) << l["text"];
        matched += ids == l["ids"].get<Ids>(), n++;
    }
    std::printf("llama2 samples from tokenizer.json alone: %zu / %zu exact\n", matched, n);
}

TEST(HfTokenizer, PrefersTokenizerModelScores) {
    const Vocab hf = read_hf_tokenizer(test::shared_path("tokenizers/llama2")).vocab;
    const Vocab sp =
        read_sentencepiece_model(test::shared_path("tokenizers/llama2/tokenizer.model"));
    EXPECT_EQ(hf.tokens, sp.tokens);
    EXPECT_EQ(hf.types, sp.types);
    for (int32_t i = 3; i < sp.size(); i++) ASSERT_EQ(hf.scores[i], sp.scores[i]) << i;
}

// A byte-level tokenizer.json: the 256 byte characters, "Ġ t" merged, and `extra` JSON.
json byte_level_json(const json& pre_tokenizer) {
    json vocab = json::object();
    uint32_t next = 256;
    for (int b = 0; b < 256; b++) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
        std::string t;
        utf8_append(t, printable ? uint32_t(b) : next++);
        vocab[t] = b;
    }
    vocab["\xC4\xA0t"] = 256;
    return {{"model",
             {{"type", "BPE"},
              {"vocab", vocab},
              {"merges", json::array({json::array({"\xC4\xA0", "t"})})}}},
            {"pre_tokenizer", pre_tokenizer},
            {"added_tokens", json::array()}};
}

json split(const std::string& regex) {
    return {{"type", "Split"},
            {"pattern", {{"Regex", regex}}},
            {"behavior", "Isolated"},
            {"invert", false}};
}
const json kByteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};

TEST(HfTokenizer, DetectsPreTokenizers) {
    const std::string qwen2 =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const json smollm = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Digits"}, {"individual_digits", true}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}}};
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"type", "Sequence"}, {"pretokenizers", {split(qwen2), kByteLevel}}}, "qwen2"},
        {smollm, "smollm"},
        {{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}, "gpt-2"},
    };
    for (const auto& [pre, name] : cases) {
        test::TempDir dir;
        test::write_json(dir.path("tokenizer.json"), byte_level_json(pre));
        const Vocab v = read_hf_tokenizer(dir.path("")).vocab;
        EXPECT_EQ(v.model, "gpt2");
        EXPECT_EQ(v.pre, name);
        EXPECT_EQ(v.merges, (std::vector<std::string>{"\xC4\xA0 t"}));
        EXPECT_FALSE(v.add_bos);
        EXPECT_EQ(Tokenizer::create(v)->encode(" t", false, false), (Ids{256}));
    }
    test::TempDir dir;
    test::write_json(
        dir.path("tokenizer.json"),
        byte_level_json({{"type", "Sequence"}, {"pretokenizers", {split("\\w+"), kByteLevel}}}));
    try {
        read_hf_tokenizer(dir.path(""));
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not those of a model llama.cpp knows"),
                  std::string::npos)
            << e.what();
    }
}

TEST(HfTokenizer, AddedTokensSpecialIdsAndTemplates) {
    test::TempDir dir;
    json tok = byte_level_json({{"type", "ByteLevel"}, {"use_regex", true}});
    tok["added_tokens"] = {{{"id", 257}, {"content", "<|endoftext|>"}, {"special", true}},
                           {{"id", 258}, {"content", "<|im_start|>"}, {"special", false}},
                           {{"id", 259}, {"content", "<|im_end|>"}, {"special", true}},
                           {{"id", 261}, {"content", "<think>"}, {"special", false}}};
    test::write_json(dir.path("tokenizer.json"), tok);
    test::write_json(
        dir.path("tokenizer_config.json"),
        {{"eos_token", {{"content", "<|im_end|>"}}},
         {"bos_token", nullptr},
         {"chat_template",
          {{{"name", "tool_use"}, {"template", "T"}}, {{"name", "default"}, {"template", "D"}}}}});
    test::write_json(dir.path("generation_config.json"), {{"pad_token_id", 257}});
    const HfTokenizer hf = read_hf_tokenizer(dir.path(""), 300);
    const Vocab& v = hf.vocab;
    ASSERT_EQ(v.size(), 300);
    EXPECT_EQ(v.types[257], TokenType::Control);
    EXPECT_EQ(v.types[258], TokenType::Control);  // looks special: "<|...|>"
    EXPECT_EQ(v.types[261], TokenType::UserDefined);
    EXPECT_EQ(v.tokens[260], "[PAD260]");
    EXPECT_EQ(v.types[260], TokenType::Unused);
    EXPECT_EQ(v.tokens[299], "[PAD299]");
    EXPECT_EQ(v.eos, 259);
    EXPECT_EQ(v.eot, 259);
    EXPECT_EQ(v.bos, -1);
    EXPECT_EQ(v.pad, 257);
    EXPECT_EQ(hf.chat_template, "D");
    auto t = Tokenizer::create(v);
    EXPECT_EQ(t->encode("<|im_end|><think>", false, true), (Ids{259, 261}));
    EXPECT_EQ(t->decode(Ids{261}), "<think>");

    EXPECT_THROW(read_hf_tokenizer(dir.path(""), 200), Error);  // more tokens than rows
}

TEST(HfTokenizer, MalformedFiles) {
    test::TempDir dir;
    EXPECT_THROW(read_hf_tokenizer(dir.path("")), Error);  // no tokenizer.json
    for (const std::string& bad :
         {std::string("{"), std::string("[]"),
          std::string(R"({"model": {"type": "Unigram", "vocab": []}})"),
          std::string(R"({"model": {"type": "BPE", "vocab": {"a": -1}}})"),
          std::string(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}})"),
          std::string(R"({"model": {"type": "BPE", "byte_fallback": "yes"}})")}) {
        test::write_bytes(dir.path("tokenizer.json"), bad);
        EXPECT_THROW(read_hf_tokenizer(dir.path("")), Error) << bad;
    }
}

}  // namespace
}  // namespace lila
