// The per-tensor type rules of the converters (llama.cpp's Q4_K_M mix, fallbacks for rows that
// do not split into blocks), and models written with k-quants running through the forward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "fixtures/stories.h"
#include "src/convert/convert.h"
#include "src/convert/quantize.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"
#include "src/tokenizer/vocab.h"

namespace lila {
namespace {

using ggml_lite::Type;

TEST(TensorTypes, LayerOfName) {
    EXPECT_EQ(tensor_layer("blk.0.attn_v.weight"), 0);
    EXPECT_EQ(tensor_layer("blk.31.ffn_down.weight"), 31);
    EXPECT_EQ(tensor_layer("token_embd.weight"), -1);
    EXPECT_EQ(tensor_layer("blk.x.attn_v.weight"), -1);
    EXPECT_EQ(tensor_layer("blk.12"), -1);
}

// llama.cpp's use_more_bits: 32 layers (Llama 2 7B) give layers 0-3 and 28-31, and every
// third from 6: half of them.
TEST(TensorTypes, MoreBitsLayers) {
    std::set<int64_t> more;
    for (int64_t l = 0; l < 32; l++) {
        if (use_more_bits(l, 32)) more.insert(l);
    }
    EXPECT_EQ(more, (std::set<int64_t>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}));
    more.clear();
    for (int64_t l = 0; l < 22; l++) {  // TinyLlama: n/8 = 2, 7n/8 = 19
        if (use_more_bits(l, 22)) more.insert(l);
    }
    EXPECT_EQ(more, (std::set<int64_t>{0, 1, 4, 7, 10, 13, 16, 19, 20, 21}));
}

// The Q4_K_M mix on Llama 2 7B shapes (4096 wide, FFN 11008: every row splits into 256s).
TEST(TensorTypes, Q4_K_MOnLlamaShapes) {
    const ModelLayout untied{32, false}, tied{32, true};
    const FileType q4km = FileType::Q4_K_M();
    const std::vector<int64_t> square{4096, 4096}, ffn_in{4096, 11008}, ffn_out{11008, 4096};
    const std::vector<int64_t> vocab{4096, 32000}, norm{4096};
    for (int64_t l = 0; l < 32; l++) {
        const std::string b = "blk." + std::to_string(l) + ".";
        const Type more = use_more_bits(l, 32) ? Type::Q6_K : Type::Q4_K;
        EXPECT_EQ(tensor_type(q4km, b + "attn_v.weight", {4096, 1024}, untied), more) << l;
        EXPECT_EQ(tensor_type(q4km, b + "ffn_down.weight", ffn_out, untied), more) << l;
        for (const char* t : {"attn_q.weight", "attn_k.weight", "attn_output.weight"}) {
            EXPECT_EQ(tensor_type(q4km, b + t, square, untied), Type::Q4_K) << b + t;
        }
        EXPECT_EQ(tensor_type(q4km, b + "ffn_gate.weight", ffn_in, untied), Type::Q4_K);
        EXPECT_EQ(tensor_type(q4km, b + "ffn_up.weight", ffn_in, untied), Type::Q4_K);
        EXPECT_EQ(tensor_type(q4km, b + "attn_norm.weight", norm, untied), Type::F32);
        EXPECT_EQ(tensor_type(q4km, b + "attn_q.bias", norm, untied), Type::F32);
    }
    EXPECT_EQ(tensor_type(q4km, "output.weight", vocab, untied), Type::Q6_K);
    EXPECT_EQ(tensor_type(q4km, "token_embd.weight", vocab, untied), Type::Q4_K);
    EXPECT_EQ(tensor_type(q4km, "token_embd.weight", vocab, tied), Type::Q6_K);  // also output
    EXPECT_EQ(tensor_type(q4km, "output_norm.weight", norm, untied), Type::F32);
    EXPECT_EQ(tensor_type(q4km, "rope_freqs.weight", {64}, untied), Type::F32);

    // The single types put every matrix in themselves, the output too.
    for (Type t : {Type::Q4_K, Type::Q6_K, Type::Q4_0, Type::Q8_0, Type::F16, Type::BF16}) {
        EXPECT_EQ(tensor_type(t, "output.weight", vocab, untied), t);
        EXPECT_EQ(tensor_type(t, "blk.0.attn_v.weight", square, untied), t);
        EXPECT_EQ(tensor_type(t, "blk.0.attn_norm.weight", norm, untied), Type::F32);
    }
}

// The other mixes on the same shapes (llama.cpp's llama_tensor_get_type for a 32-layer
// Llama without experts).
TEST(TensorTypes, OtherMixesOnLlamaShapes) {
    const ModelLayout m{32, false};
    const std::vector<int64_t> square{4096, 4096}, ffn_out{11008, 4096}, vocab{4096, 32000};
    const FileType q4ks{Type::Q4_K, Mix::S}, q5ks{Type::Q5_K, Mix::S}, q5km{Type::Q5_K, Mix::M};
    for (int64_t l = 0; l < 32; l++) {
        const std::string b = "blk." + std::to_string(l) + ".";
        EXPECT_EQ(tensor_type(q4ks, b + "attn_v.weight", square, m),
                  l < 4 ? Type::Q5_K : Type::Q4_K);
        EXPECT_EQ(tensor_type(q4ks, b + "ffn_down.weight", ffn_out, m),
                  l < 4 ? Type::Q5_K : Type::Q4_K);
        EXPECT_EQ(tensor_type(q5ks, b + "attn_v.weight", square, m), Type::Q5_K);
        EXPECT_EQ(tensor_type(q5ks, b + "ffn_down.weight", ffn_out, m), Type::Q5_K);
        const Type more = use_more_bits(l, 32) ? Type::Q6_K : Type::Q5_K;
        EXPECT_EQ(tensor_type(q5km, b + "attn_v.weight", square, m), more) << l;
        EXPECT_EQ(tensor_type(q5km, b + "ffn_down.weight", ffn_out, m), more) << l;
        for (FileType ft : {q4ks, q5ks, q5km}) {
            EXPECT_EQ(tensor_type(ft, b + "attn_q.weight", square, m), ft.base);
        }
    }
    for (FileType ft : {q4ks, q5ks, q5km, FileType::Q4_K_M()}) {
        EXPECT_EQ(tensor_type(ft, "output.weight", vocab, m), Type::Q6_K);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", vocab, m), ft.base);
    }
    // A fused QKV projection gets one k-quant more in the _M mixes.
    EXPECT_EQ(tensor_type(FileType::Q4_K_M(), "blk.5.attn_qkv.weight", square, m), Type::Q5_K);
    EXPECT_EQ(tensor_type(q5km, "blk.5.attn_qkv.weight", square, m), Type::Q6_K);
    EXPECT_EQ(tensor_type(q4ks, "blk.5.attn_qkv.weight", square, m), Type::Q4_K);
    for (Type t : {Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q5_K, Type::IQ4_NL, Type::IQ4_XS}) {
        EXPECT_EQ(tensor_type(t, "output.weight", vocab, m), t);
        EXPECT_EQ(tensor_type(t, "blk.0.attn_v.weight", square, m), t);
    }
}

// llama.cpp's file types named as a 32-value-block type or an IQ4 (q4_0 ... iq4_xs, as
// --type names them): the output matrix Q6_K, token_embd the base type; the IQ4s put attn_v
// in Q5_K from 4 query heads per KV head (Llama 3 8B, not Llama 2 7B) and ffn_down in Q5_K in
// the first eighth of the layers. Their pure() files put every matrix in the base type.
TEST(TensorTypes, NamedFileTypesOnLlamaShapes) {
    const ModelLayout mha = model_layout("llama", 32, 32, 32, false);
    const ModelLayout gqa = model_layout("llama", 32, 32, 8, false);
    const std::vector<int64_t> square{4096, 4096}, kv{4096, 1024}, ffn_out{14336, 4096};
    const std::vector<int64_t> vocab{4096, 128256};
    for (Type t : {Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL, Type::IQ4_XS}) {
        const FileType ft = *file_type_from_name(ggml_lite::type_name(t));
        ASSERT_EQ(ft, FileType(t, Mix::Mostly));
        const bool iq4 = t == Type::IQ4_NL || t == Type::IQ4_XS;
        EXPECT_EQ(tensor_type(ft, "output.weight", vocab, gqa), Type::Q6_K);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", vocab, gqa), t);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", vocab, {32, true}), Type::Q6_K);  // tied
        for (int64_t l = 0; l < 32; l++) {
            const std::string b = "blk." + std::to_string(l) + ".";
            EXPECT_EQ(tensor_type(ft, b + "attn_v.weight", kv, gqa), iq4 ? Type::Q5_K : t);
            EXPECT_EQ(tensor_type(ft, b + "attn_v.weight", square, mha), t);
            EXPECT_EQ(tensor_type(ft, b + "ffn_down.weight", ffn_out, gqa),
                      iq4 && l < 4 ? Type::Q5_K : t);
            EXPECT_EQ(tensor_type(ft, b + "attn_output.weight", square, gqa), t);
            EXPECT_EQ(tensor_type(ft, b + "attn_qkv.weight", square, gqa), t);
            EXPECT_EQ(tensor_type(ft.pure(), b + "attn_v.weight", kv, gqa), t);
            EXPECT_EQ(tensor_type(ft.pure(), b + "ffn_down.weight", ffn_out, gqa), t);
        }
        EXPECT_EQ(tensor_type(ft.pure(), "output.weight", vocab, gqa), t);
        // SmolLM2's 576-wide output falls back from Q6_K to Q8_0, as in the k-quant mixes.
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", {576, 49152}, {30, true}), Type::Q8_0);
    }
}

// llama.cpp's Q2_K and Q3_K mixes on the same shapes: Llama 2 7B (no GQA) and, for Q2_K's
// attn_v, Llama 3 8B's 4 query heads per KV head; Llama 2 70B (80 layers, GQA 8) gives attn_v
// Q5_K where they ask for Q3_K or Q4_K.
TEST(TensorTypes, Q2_KAndQ3_KMixesOnLlamaShapes) {
    const ModelLayout m = model_layout("llama", 32, 32, 32, false);
    const ModelLayout gqa = model_layout("llama", 32, 32, 8, false);
    const std::vector<int64_t> square{4096, 4096}, ffn_in{4096, 11008}, ffn_out{11008, 4096};
    const std::vector<int64_t> vocab{4096, 32000};
    const FileType q2k = FileType::Q2_K(), q3ks{Type::Q3_K, Mix::S}, q3km{Type::Q3_K, Mix::M},
                   q3kl{Type::Q3_K, Mix::L};
    EXPECT_EQ(m.n_gqa, 1);
    EXPECT_EQ(gqa.n_gqa, 4);
    for (int64_t l = 0; l < 32; l++) {
        const std::string b = "blk." + std::to_string(l) + ".";
        EXPECT_EQ(tensor_type(q2k, b + "attn_v.weight", square, m), Type::Q3_K);
        EXPECT_EQ(tensor_type(q2k, b + "attn_v.weight", {4096, 1024}, gqa), Type::Q4_K);
        EXPECT_EQ(tensor_type(q2k, b + "ffn_down.weight", ffn_out, m), Type::Q3_K);
        EXPECT_EQ(tensor_type(q2k, b + "attn_output.weight", square, m), Type::Q3_K);
        EXPECT_EQ(tensor_type(q3km, b + "attn_v.weight", square, m),
                  l < 2 ? Type::Q5_K : Type::Q4_K);
        EXPECT_EQ(tensor_type(q3km, b + "ffn_down.weight", ffn_out, m),
                  l < 2 ? Type::Q5_K : Type::Q4_K);  // the first sixteenth
        EXPECT_EQ(tensor_type(q3km, b + "attn_output.weight", square, m), Type::Q4_K);
        for (const char* t : {"attn_v.weight", "ffn_down.weight", "attn_output.weight"}) {
            EXPECT_EQ(tensor_type(q3ks, b + t, t[0] == 'f' ? ffn_out : square, m), Type::Q3_K);
            EXPECT_EQ(tensor_type(q3kl, b + t, t[0] == 'f' ? ffn_out : square, m), Type::Q5_K);
        }
        for (FileType ft : {q3ks, q3km, q3kl}) {
            for (const char* t : {"attn_q.weight", "attn_k.weight", "ffn_gate.weight"}) {
                EXPECT_EQ(tensor_type(ft, b + t, t[0] == 'f' ? ffn_in : square, m), Type::Q3_K);
            }
        }
        EXPECT_EQ(tensor_type(q2k, b + "attn_q.weight", square, m), Type::Q2_K);
        EXPECT_EQ(tensor_type(q2k, b + "ffn_up.weight", ffn_in, m), Type::Q2_K);
    }
    for (FileType ft : {q2k, q3ks, q3km, q3kl}) {
        EXPECT_EQ(tensor_type(ft, "output.weight", vocab, m), Type::Q6_K);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", vocab, m), ft.base);
    }
    EXPECT_EQ(tensor_type(q3km, "blk.5.attn_qkv.weight", square, m), Type::Q4_K);
    EXPECT_EQ(tensor_type(q3kl, "blk.5.attn_qkv.weight", square, m), Type::Q4_K);
    EXPECT_EQ(tensor_type(q2k, "blk.5.attn_qkv.weight", square, m), Type::Q2_K);
    // The plain q3_k: every matrix Q3_K.
    EXPECT_EQ(tensor_type(Type::Q3_K, "output.weight", vocab, m), Type::Q3_K);
    EXPECT_EQ(tensor_type(Type::Q3_K, "blk.0.attn_v.weight", square, m), Type::Q3_K);

    const ModelLayout l70 = model_layout("llama", 80, 64, 8, false);
    EXPECT_TRUE(l70.type_70b);
    EXPECT_FALSE(model_layout("llama", 80, 64, 64, false).type_70b);  // LLaMA 65B
    EXPECT_TRUE(model_layout("qwen2", 80, 64, 8, false).type_70b);
    EXPECT_FALSE(model_layout("qwen3", 80, 64, 8, false).type_70b);
    const std::vector<int64_t> v70{8192, 1024};
    EXPECT_EQ(tensor_type(q2k, "blk.9.attn_v.weight", v70, l70), Type::Q5_K);
    EXPECT_EQ(tensor_type(q3ks, "blk.9.attn_v.weight", v70, l70), Type::Q5_K);
    EXPECT_EQ(tensor_type(q3km, "blk.9.attn_v.weight", v70, l70), Type::Q5_K);
    EXPECT_EQ(tensor_type(FileType::Q4_K_M(), "blk.9.attn_v.weight", v70, l70), Type::Q6_K);
    EXPECT_EQ(tensor_type(FileType::Q4_K_M(), "blk.10.attn_v.weight", v70, l70), Type::Q5_K);
    EXPECT_EQ(tensor_type(q2k, "blk.9.ffn_down.weight", {28672, 8192}, l70), Type::Q3_K);
}

// Rows that do not split into 256-value super-blocks fall back as in llama.cpp: Q4_K to Q5_0,
// Q5_K to Q5_1, Q6_K to Q8_0, and what does not split into 32-blocks either to F16
// (stories260K: 64-wide, FFN 172).
TEST(TensorTypes, Fallbacks) {
    const ModelLayout m{5, true};
    for (FileType ft : {FileType(Type::Q4_K), FileType(Type::Q5_K), FileType(Type::Q6_K),
                        FileType::Q4_K_M(), FileType(Type::Q5_K, Mix::M)}) {
        const Type base = ft.base == Type::Q4_K   ? Type::Q5_0
                          : ft.base == Type::Q5_K ? Type::Q5_1
                                                  : Type::Q8_0;
        // Layer 4 of 5 and the tied output get Q6_K in the _M mixes.
        const Type more = ft.mix == Mix::M ? Type::Q8_0 : base;
        EXPECT_EQ(tensor_type(ft, "blk.0.attn_q.weight", {64, 64}, m), base);
        EXPECT_EQ(tensor_type(ft, "blk.4.attn_v.weight", {64, 32}, m), more);
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_down.weight", {172, 64}, m), Type::F16);
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_up.weight", {64, 172}, m), base);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", {64, 512}, m), more);
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_up.weight", {576, 1536}, m), base);  // SmolLM
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_down.weight", {1536, 576}, m), ft.base);
    }
    EXPECT_EQ(tensor_type(Type::IQ4_XS, "blk.0.attn_q.weight", {64, 64}, m), Type::IQ4_NL);
    // Q2_K and Q3_K to IQ4_NL; the output matrix to Q8_0 (SmolLM2's 576-wide rows).
    for (FileType ft : {FileType::Q2_K(), FileType(Type::Q3_K), FileType(Type::Q3_K, Mix::M)}) {
        EXPECT_EQ(tensor_type(ft, "blk.0.attn_q.weight", {576, 576}, m), Type::IQ4_NL);
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_down.weight", {1536, 576}, m),
                  ft.mix == Mix::M ? Type::Q4_K : Type::Q3_K);  // layer 0 of 5: 0 >= 5 / 16
        EXPECT_EQ(tensor_type(ft, "blk.0.ffn_down.weight", {172, 64}, m), Type::F16);
        EXPECT_EQ(tensor_type(ft, "token_embd.weight", {576, 49152}, m),
                  ft.mix == Mix::None ? Type::IQ4_NL : Type::Q8_0);
    }
    EXPECT_EQ(tensor_type(Type::IQ4_XS, "blk.0.ffn_down.weight", {172, 64}, m), Type::F16);
    EXPECT_EQ(tensor_type(Type::Q4_0, "blk.0.ffn_down.weight", {172, 64}, m), Type::F16);
    EXPECT_EQ(tensor_type(Type::F32, "blk.0.ffn_down.weight", {172, 64}, m), Type::F32);
}

// The reference model at q4_k_m: every matrix falls back (64-wide rows), Q4_K to Q5_0 and Q6_K
// to Q8_0 (the tied output, attn_v and ffn_down of layers 2 and 4); ffn_down (172 wide) is F16
// as in every type. What is Q8_0 or F16 is the Q8_0 conversion's bytes.
TEST(Convert, StoriesQ4_K_MFallsBack) {
    test::TempDir dir;
    ConvertOptions opts;
    opts.type = FileType::Q4_K_M();
    const std::string out = dir.path("q4km.gguf");
    convert_llama2c(test::stories_checkpoint(), test::stories_tokenizer(), out, opts);
    const auto a = GGUFFile::open(out);
    const auto b = GGUFFile::open(test::stories_model(Type::Q8_0));
    EXPECT_EQ(a->get_int("general.file_type"), 15);
    ASSERT_EQ(a->tensors().size(), b->tensors().size());
    int q5_0 = 0;
    for (size_t i = 0; i < a->tensors().size(); i++) {
        const GGUFTensorInfo &t = a->tensors()[i], &u = b->tensors()[i];
        EXPECT_EQ(t.name, u.name);
        if (t.type == Type::Q5_0) {
            EXPECT_EQ(u.type, Type::Q8_0) << t.name;
            q5_0++;
            continue;
        }
        EXPECT_EQ(t.type, u.type) << t.name;
        ASSERT_EQ(t.nbytes, u.nbytes) << t.name;
        EXPECT_EQ(std::memcmp(t.data, u.data, t.nbytes), 0) << t.name;
    }
    EXPECT_GT(q5_0, 0);
    EXPECT_EQ(a->find_tensor("blk.0.attn_q.weight")->type, Type::Q5_0);
    EXPECT_EQ(a->find_tensor("blk.2.attn_v.weight")->type, Type::Q8_0);
    EXPECT_EQ(a->find_tensor("token_embd.weight")->type, Type::Q8_0);
}

// A small model whose rows split into super-blocks (width 256, FFN 512, 2 layers: layer 1
// gets the extra bits), random weights, the reference model's vocabulary.
class KQuantModel : public ::testing::Test {
protected:
    static constexpr int64_t kLayers = 2, kEmbd = 256, kFf = 512, kHeads = 4, kKvHeads = 2;

    static std::string write(const test::TempDir& dir, FileType type) {
        const auto vocab = Vocab::from_gguf(*GGUFFile::open(test::stories_model(Type::F32)));
        HParams hp;
        hp.n_vocab = vocab.size();
        hp.n_embd = kEmbd, hp.n_layer = kLayers, hp.n_head = kHeads, hp.n_head_kv = kKvHeads;
        hp.n_ff = kFf, hp.n_ctx_train = 64;
        hp.head_dim = hp.rope_dim = kEmbd / kHeads;
        GGUFWriter w;
        set_model_metadata(w, "llama", hp, "k-quant test", type);
        vocab.to_gguf(w);
        ConvertOptions opts;
        opts.type = type;
        const ModelLayout layout = model_layout("llama", kLayers, kHeads, kKvHeads, false);
        uint32_t seed = 1;
        auto add = [&](const std::string& name, int64_t rows, int64_t cols) {
            add_float_tensor(w, name, rows, cols, opts, layout,
                             [rows, cols, s = seed++](std::vector<float>& f) {
                                 std::mt19937 rng(s);
                                 std::normal_distribution<float> g(0.0f, rows == 1 ? 0.1f : 0.05f);
                                 f.resize(static_cast<size_t>(rows * cols));
                                 for (float& v : f) v = (rows == 1 ? 1.0f : 0.0f) + g(rng);
                                 return f.data();
                             });
        };
        const int64_t kv = hp.kv_dim();
        add("token_embd.weight", hp.n_vocab, kEmbd);
        for (int64_t l = 0; l < kLayers; l++) {
            const std::string b = "blk." + std::to_string(l) + ".";
            add(b + "attn_norm.weight", 1, kEmbd);
            add(b + "attn_q.weight", kEmbd, kEmbd);
            add(b + "attn_k.weight", kv, kEmbd);
            add(b + "attn_v.weight", kv, kEmbd);
            add(b + "attn_output.weight", kEmbd, kEmbd);
            add(b + "ffn_norm.weight", 1, kEmbd);
            add(b + "ffn_gate.weight", kFf, kEmbd);
            add(b + "ffn_down.weight", kEmbd, kFf);
            add(b + "ffn_up.weight", kFf, kEmbd);
        }
        add("output_norm.weight", 1, kEmbd);
        add("output.weight", hp.n_vocab, kEmbd);
        const std::string path = dir.path(file_type_name(type) + ".gguf");
        w.write(path);
        return path;
    }

    static SessionParams params(int threads) {
        SessionParams p;
        p.n_threads = threads;
        return p;
    }

    const std::vector<int32_t> ids_ = {1, 300, 27, 511, 42, 7, 99, 128, 256, 3, 64, 200};
};

TEST_F(KQuantModel, Q4_K_MTypesInTheFile) {
    test::TempDir dir;
    const auto f = GGUFFile::open(write(dir, FileType::Q4_K_M()));
    EXPECT_EQ(f->get_int("general.file_type"), 15);
    auto type_of = [&](const char* name) { return f->find_tensor(name)->type; };
    EXPECT_EQ(type_of("token_embd.weight"), Type::Q4_K);
    EXPECT_EQ(type_of("output.weight"), Type::Q6_K);
    EXPECT_EQ(type_of("blk.0.attn_v.weight"), Type::Q4_K);  // use_more_bits(0, 2): no
    EXPECT_EQ(type_of("blk.1.attn_v.weight"), Type::Q6_K);  // 1 >= 7 * 2 / 8: yes
    EXPECT_EQ(type_of("blk.0.ffn_down.weight"), Type::Q4_K);
    EXPECT_EQ(type_of("blk.1.ffn_down.weight"), Type::Q6_K);
    EXPECT_EQ(type_of("blk.1.attn_q.weight"), Type::Q4_K);
    EXPECT_EQ(type_of("blk.1.ffn_norm.weight"), Type::F32);
}

// A mix is named by its file type where its base type has most of the bytes (lila info, bench,
// the load line). Q4_K_S, Q5_K_S and Q3_K_S share their ids with the one-type q4_k, q5_k and
// q3_k files, told apart by their tensors.
TEST_F(KQuantModel, MixesNamedByFileType) {
    test::TempDir dir;
    for (const auto& [type, name] : {std::pair{FileType(Type::Q3_K, Mix::M), "q3_k_m"},
                                     {FileType(Type::Q3_K, Mix::L), "q3_k_l"},
                                     {FileType(Type::Q5_K, Mix::M), "q5_k_m"},
                                     {FileType::Q2_K(), "q2_k"},
                                     {FileType(Type::Q4_K, Mix::S), "q4_k_s"},
                                     {FileType(Type::Q5_K, Mix::S), "q5_k_s"},
                                     {FileType(Type::Q3_K, Mix::S), "q3_k_s"},
                                     {FileType(Type::Q4_K), "q4_k"},
                                     {FileType(Type::Q5_K), "q5_k"}}) {
        EXPECT_EQ(Model::load(write(dir, type))->type_summary(), name) << name;
    }
}

// The k-quant models load and run: logits near the F32 model's, prefill equal to decode steps
// and the same bits for any thread count. A random 2-layer model multiplies the weights'
// relative error about fourfold into its logits, whatever the type; measured (RMS logit error
// over RMS logit): Q8_0 0.026, Q6_K 0.075, Q4_K_M 0.231, Q4_K 0.249, Q4_0 0.315, Q3_K_M 0.382,
// Q3_K 0.557, Q2_K 0.727.
TEST_F(KQuantModel, ForwardPass) {
    test::TempDir dir;
    auto f32 = Model::load(write(dir, Type::F32));
    Session ref(*f32, params(1));
    const int64_t nv = f32->hp.n_vocab, n = static_cast<int64_t>(ids_.size());
    const float* r = ref.eval(ids_, true);
    const std::vector<float> want(r, r + n * nv);
    double energy = 0.0;
    for (float v : want) energy += static_cast<double>(v) * v;

    struct Case {
        FileType type;
        double max_rel;  // bound on RMS(logits - F32 logits) / RMS(F32 logits)
    };
    std::vector<double> rels;
    // The first kOrdered in order of bits; then the other types, which run on their scalar
    // kernels (and unpacked in prefill).
    constexpr size_t kOrdered = 5;
    for (const Case& c :
         {Case{Type::Q8_0, 0.04}, Case{Type::Q6_K, 0.11}, Case{FileType::Q4_K_M(), 0.32},
          Case{Type::Q4_K, 0.35}, Case{Type::Q4_0, 0.45}, Case{{Type::Q5_K, Mix::M}, 0.25},
          Case{{Type::Q4_K, Mix::S}, 0.35}, Case{Type::Q5_0, 0.25}, Case{Type::Q5_1, 0.25},
          Case{Type::Q4_1, 0.4}, Case{Type::IQ4_NL, 0.4}, Case{Type::IQ4_XS, 0.4},
          Case{Type::Q3_K, 0.65}, Case{{Type::Q3_K, Mix::M}, 0.45}, Case{FileType::Q2_K(), 0.85}}) {
        auto m = Model::load(write(dir, c.type));
        const std::string name = file_type_name(c.type);
        Session s(*m, params(2));
        const float* p = s.eval(ids_, true);
        const std::vector<float> all(p, p + n * nv);
        double err = 0.0;
        for (size_t i = 0; i < all.size(); i++) err += (all[i] - want[i]) * (all[i] - want[i]);
        rels.push_back(std::sqrt(err / energy));
        std::printf("[ measured ] %s: RMS logit error / RMS logit = %.4f\n", name.c_str(),
                    rels.back());
        EXPECT_LT(rels.back(), c.max_rel) << name;

        Session step(*m, params(1));
        for (int64_t t = 0; t < n; t++) {
            const float* l = step.eval({&ids_[t], 1});
            ASSERT_EQ(std::memcmp(l, &all[t * nv], nv * sizeof(float)), 0) << name << ' ' << t;
        }
        Session three(*m, params(3));
        const float* q = three.eval(ids_, true);
        EXPECT_EQ(std::memcmp(q, all.data(), all.size() * sizeof(float)), 0) << name;
    }
    // More bits, less error: Q8_0 < Q6_K < Q4_K_M < Q4_K < Q4_0.
    for (size_t i = 1; i < kOrdered; i++) EXPECT_LT(rels[i - 1], rels[i]) << i;
}

// Re-quantizing an F32 GGUF gives what converting to the same file type directly gives.
// (The GGUF input's layout, head counts included, is read from its keys and tensors.)
TEST_F(KQuantModel, RequantizeEqualsDirectConversion) {
    test::TempDir dir;
    const std::string f32 = write(dir, Type::F32);
    for (const auto& [type, id] : {std::pair{FileType::Q4_K_M(), 15}, {FileType::Q2_K(), 10}}) {
        const std::string direct = write(dir, type);
        ConvertOptions opts;
        opts.type = type;
        const std::string requantized = dir.path("requantized.gguf");
        requantize_gguf(f32, requantized, opts);
        const auto a = GGUFFile::open(requantized), b = GGUFFile::open(direct);
        EXPECT_EQ(a->get_int("general.file_type"), id);
        ASSERT_EQ(a->tensors().size(), b->tensors().size());
        for (const GGUFTensorInfo& t : a->tensors()) {
            const GGUFTensorInfo* u = b->find_tensor(t.name);
            ASSERT_NE(u, nullptr) << t.name;
            EXPECT_EQ(t.type, u->type) << t.name;
            ASSERT_EQ(t.nbytes, u->nbytes) << t.name;
            EXPECT_EQ(std::memcmp(t.data, u->data, t.nbytes), 0) << t.name;
        }
    }
}

}  // namespace
}  // namespace lila
