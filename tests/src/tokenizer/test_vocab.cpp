// Vocab <-> tokenizer.ggml.* metadata: round trips, llama.cpp's value types and defaults, and
// rejection of inconsistent vocabularies.
#include <gtest/gtest.h>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/io/gguf.h"
#include "src/tokenizer/vocab.h"
#include "test_util.h"

namespace lila {
namespace {

Vocab llama_vocab() {
    Vocab v;
    v.model = "llama";
    v.pre = "default";
    v.tokens = {"<unk>",
                "<s>",
                "</s>",
                "<0x0A>",
                "\xe2\x96\x81"
                "the",
                "\xe2\x96\x81"
                "a",
                "ab"};
    v.scores = {0, 0, 0, 0, -1.5f, -2.25f, -3};
    v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control,    TokenType::Byte,
               TokenType::Normal,  TokenType::Normal,  TokenType::UserDefined};
    v.unk = 0, v.bos = 1, v.eos = 2;
    v.add_bos = true;
    v.add_eos = true;
    v.add_space_prefix = false;
    return v;
}

Vocab gpt2_vocab() {
    Vocab v;
    v.model = "gpt2";
    v.pre = "llama-bpe";
    v.tokens = {"a", "b", "ab", "\xc4\xa0", "<|begin_of_text|>", "<|eot_id|>", "<|pad|>"};
    v.types = {TokenType::Normal,  TokenType::Normal,  TokenType::Normal, TokenType::Normal,
               TokenType::Control, TokenType::Control, TokenType::Unused};
    v.merges = {"a b", "\xc4\xa0 a"};
    v.bos = 4, v.eos = 5, v.eot = 5, v.pad = 6;
    v.add_bos = true;
    v.add_eos = false;
    v.add_space_prefix = false;
    return v;
}

void expect_same(const Vocab& a, const Vocab& b) {
    EXPECT_EQ(a.model, b.model);
    EXPECT_EQ(a.pre, b.pre);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.scores, b.scores);
    EXPECT_EQ(a.types, b.types);
    EXPECT_EQ(a.merges, b.merges);
    EXPECT_EQ(a.bos, b.bos);
    EXPECT_EQ(a.eos, b.eos);
    EXPECT_EQ(a.eot, b.eot);
    EXPECT_EQ(a.unk, b.unk);
    EXPECT_EQ(a.pad, b.pad);
    EXPECT_EQ(a.add_bos, b.add_bos);
    EXPECT_EQ(a.add_eos, b.add_eos);
    EXPECT_EQ(a.add_space_prefix, b.add_space_prefix);
}

class VocabGGUF : public ::testing::Test {
protected:
    test::TempDir dir_;
    std::string path_ = dir_.path("vocab.gguf");

    std::unique_ptr<GGUFFile> write(const GGUFWriter& w) {
        w.write(path_);
        return GGUFFile::open(path_);
    }

    std::unique_ptr<GGUFFile> write_vocab(const Vocab& v) {
        GGUFWriter w;
        v.to_gguf(w);
        return write(w);
    }

    // Metadata with the given keys set on top of a minimal valid "llama" vocabulary.
    std::unique_ptr<GGUFFile> write_keys(std::vector<std::pair<std::string, GGUFValue>> kvs) {
        GGUFWriter w;
        w.set("tokenizer.ggml.model", GGUFValue::string("llama"));
        w.set("tokenizer.ggml.tokens", GGUFValue::array_string({"<unk>", "<s>", "</s>", "x"}));
        for (auto& [k, v] : kvs) w.set(k, std::move(v));
        return write(w);
    }

    void expect_rejected(std::vector<std::pair<std::string, GGUFValue>> kvs,
                         const std::string& what) {
        auto f = write_keys(std::move(kvs));
        try {
            Vocab::from_gguf(*f);
            ADD_FAILURE() << "no error; expected " << what;
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).rfind(path_ + ": ", 0), 0u) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    }
};

TEST_F(VocabGGUF, LlamaRoundTrips) {
    auto f = write_vocab(llama_vocab());
    expect_same(Vocab::from_gguf(*f), llama_vocab());
}

TEST_F(VocabGGUF, Gpt2RoundTrips) {
    auto f = write_vocab(gpt2_vocab());
    expect_same(Vocab::from_gguf(*f), gpt2_vocab());
}

// llama.cpp reads scores and token types as raw f32 and i32 arrays and ids as u32.
TEST_F(VocabGGUF, WritesLlamaCppValueTypes) {
    auto f = write_vocab(llama_vocab());
    auto type_of = [&](const char* key) {
        const GGUFValue* v = f->find(key);
        EXPECT_NE(v, nullptr) << key;
        return v ? std::make_pair(v->type, v->is_array() ? v->elem_type : v->type)
                 : std::make_pair(GGUFType::ARRAY, GGUFType::ARRAY);
    };
    using T = GGUFType;
    EXPECT_EQ(type_of("tokenizer.ggml.model"), std::make_pair(T::STRING, T::STRING));
    EXPECT_EQ(type_of("tokenizer.ggml.tokens"), std::make_pair(T::ARRAY, T::STRING));
    EXPECT_EQ(type_of("tokenizer.ggml.scores"), std::make_pair(T::ARRAY, T::FLOAT32));
    EXPECT_EQ(type_of("tokenizer.ggml.token_type"), std::make_pair(T::ARRAY, T::INT32));
    EXPECT_EQ(type_of("tokenizer.ggml.bos_token_id"), std::make_pair(T::UINT32, T::UINT32));
    EXPECT_EQ(type_of("tokenizer.ggml.add_bos_token"), std::make_pair(T::BOOL, T::BOOL));
    EXPECT_EQ(f->find("tokenizer.ggml.eot_token_id"), nullptr);  // none: not written
    EXPECT_EQ(f->find("tokenizer.ggml.merges"), nullptr);
}

TEST_F(VocabGGUF, LlamaDefaultsAreLlamaCpps) {
    Vocab v = Vocab::from_gguf(*write_keys({}));
    EXPECT_EQ(v.size(), 4);
    EXPECT_EQ(v.types, std::vector<TokenType>(4, TokenType::Normal));
    EXPECT_TRUE(v.scores.empty());
    EXPECT_EQ(v.unk, 0);
    EXPECT_EQ(v.bos, 1);
    EXPECT_EQ(v.eos, 2);
    EXPECT_EQ(v.eot, -1);
    EXPECT_EQ(v.pad, -1);
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    EXPECT_TRUE(v.add_space_prefix);
}

TEST_F(VocabGGUF, Gpt2DefaultsAreLlamaCpps) {
    auto gpt2 = [](std::vector<std::pair<std::string, GGUFValue>> more) {
        more.emplace_back("tokenizer.ggml.model", GGUFValue::string("gpt2"));
        more.emplace_back("tokenizer.ggml.merges", GGUFValue::array_string({"x x"}));
        return more;
    };
    Vocab v = Vocab::from_gguf(*write_keys(gpt2({})));
    EXPECT_EQ(v.bos, -1);
    EXPECT_EQ(v.eos, -1);
    EXPECT_EQ(v.unk, -1);
    EXPECT_FALSE(v.add_bos);
    EXPECT_FALSE(v.add_space_prefix);
    EXPECT_EQ(v.merges, std::vector<std::string>{"x x"});

    v = Vocab::from_gguf(
        *write_keys(gpt2({{"tokenizer.ggml.add_bos_token", GGUFValue::boolean(true)},
                          {"tokenizer.ggml.bos_token_id", GGUFValue::u32(3)}})));
    EXPECT_TRUE(v.add_bos);
    EXPECT_EQ(v.bos, 3);
}

TEST_F(VocabGGUF, AcceptsAnyIntegerTypeForIds) {
    Vocab v = Vocab::from_gguf(*write_keys({
        {"tokenizer.ggml.eos_token_id", GGUFValue::i32(3)},
        {"tokenizer.ggml.token_type", GGUFValue::array_int(GGUFType::UINT8, {2, 3, 3, 6})},
    }));
    EXPECT_EQ(v.eos, 3);
    EXPECT_EQ(v.types[3], TokenType::Byte);
}

TEST_F(VocabGGUF, RejectsInconsistentVocabularies) {
    using V = GGUFValue;
    expect_rejected({{"tokenizer.ggml.scores", V::array_f32({0, 0, 0})}},
                    "tokenizer.ggml.scores: 3 entries for 4 tokens");
    expect_rejected({{"tokenizer.ggml.token_type", V::array_i32({1, 1, 1, 1, 1})}},
                    "tokenizer.ggml.token_type: 5 entries for 4 tokens");
    expect_rejected({{"tokenizer.ggml.token_type", V::array_i32({1, 1, 7, 1})}},
                    "tokenizer.ggml.token_type: token 2 has type 7 (expected 1 to 6)");
    expect_rejected({{"tokenizer.ggml.token_type", V::array_i32({0, 1, 1, 1})}},
                    "token 0 has type 0");
    expect_rejected({{"tokenizer.ggml.tokens", V::array_string({})}},
                    "tokenizer.ggml.tokens: no tokens");
    expect_rejected({{"tokenizer.ggml.tokens", V::array_i32({1})}},
                    "key tokenizer.ggml.tokens: expected an array of strings");
    expect_rejected({{"tokenizer.ggml.add_bos_token", V::u32(1)}},
                    "key tokenizer.ggml.add_bos_token: expected a bool");
    expect_rejected({{"tokenizer.ggml.model", V::string("gpt2")}},
                    "missing metadata key tokenizer.ggml.merges");
}

// llama.cpp writes -1 for "no such token" (llama-convert-llama2c-to-ggml's padding id is
// 4294967295) and ignores any id outside the vocabulary, keeping its default: so does lila,
// with a warning that names the file and the key.
TEST_F(VocabGGUF, OutOfRangeSpecialIdsAreIgnoredWithAWarning) {
    std::vector<std::string> warnings;
    const WarningSink previous =
        set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    Vocab v = Vocab::from_gguf(*write_keys({
        {"tokenizer.ggml.padding_token_id", GGUFValue::u32(4294967295u)},
        {"tokenizer.ggml.bos_token_id", GGUFValue::u32(4)},
        {"tokenizer.ggml.eot_token_id", GGUFValue::i32(-1)},
    }));
    set_warning_sink(previous);
    EXPECT_EQ(v.pad, -1);
    EXPECT_EQ(v.eot, -1);
    EXPECT_EQ(v.bos, 1);  // the SentencePiece default, as in llama.cpp
    ASSERT_EQ(warnings.size(), 3u);
    EXPECT_EQ(warnings[0], path_ + ": tokenizer.ggml.bos_token_id: token id 4 is out of range " +
                               "(4 tokens); ignored");
    EXPECT_NE(warnings[1].find("tokenizer.ggml.eot_token_id: token id -1"), std::string::npos);
    EXPECT_NE(warnings[2].find("tokenizer.ggml.padding_token_id: token id 4294967295"),
              std::string::npos);
}

TEST_F(VocabGGUF, MissingKeysAreNamed) {
    GGUFWriter w;
    w.set("tokenizer.ggml.tokens", GGUFValue::array_string({"a"}));
    EXPECT_THROW(
        {
            try {
                Vocab::from_gguf(*write(w));
            } catch (const Error& e) {
                EXPECT_STREQ(e.what(),
                             (path_ + ": missing metadata key tokenizer.ggml.model").c_str());
                throw;
            }
        },
        Error);

    GGUFWriter no_tokens;
    no_tokens.set("tokenizer.ggml.model", GGUFValue::string("llama"));
    EXPECT_THROW(Vocab::from_gguf(*write(no_tokens)), Error);
}

TEST_F(VocabGGUF, ToGgufRejectsInconsistentVocabularies) {
    GGUFWriter w;
    Vocab v = llama_vocab();
    v.types.pop_back();
    EXPECT_THROW(v.to_gguf(w), Error);
    v = llama_vocab();
    v.scores.pop_back();
    EXPECT_THROW(v.to_gguf(w), Error);
    v = llama_vocab();
    v.eos = v.size();
    EXPECT_THROW(v.to_gguf(w), Error);
    v = llama_vocab();
    v.types[0] = TokenType(0);
    EXPECT_THROW(v.to_gguf(w), Error);
    v.tokens.clear();
    EXPECT_THROW(v.to_gguf(w), Error);
}

}  // namespace
}  // namespace lila
