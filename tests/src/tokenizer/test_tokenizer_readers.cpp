// Vocabulary readers on hand-made files: llama2.c tokenizer.bin and SentencePiece .model.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "src/base/error.h"
#include "src/tokenizer/llama2c_tokenizer.h"
#include "src/tokenizer/sentencepiece_model.h"
#include "test_util.h"

namespace lila {
namespace {

const std::string kSp = "\xE2\x96\x81";  // U+2581

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// Expects `f` to throw an Error whose message names `path`.
template <class F>
void expect_error_naming(F f, const std::string& path) {
    try {
        f();
        ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
}

// ---- llama2.c tokenizer.bin ----

std::string le32(uint32_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; i++) s[i] = static_cast<char>(v >> (8 * i));
    return s;
}

std::string f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return le32(u);
}

std::string entry(float score, const std::string& piece) {
    return f32(score) + le32(static_cast<uint32_t>(piece.size())) + piece;
}

// What llama2.c's export writes for a tiny SentencePiece model.
std::string tiny_tokenizer_bin() {
    return le32(6) + entry(0, "<unk>") + entry(0, "\n<s>\n") + entry(0, "\n</s>\n") +
           entry(0, "<0x0A>") + entry(-1, " a") + entry(-2, "b c");
}

TEST(Llama2cTokenizer, ConvertsToSentencePieceConventions) {
    test::TempDir dir;
    const std::string path = dir.path("tokenizer.bin");
    write_file(path, tiny_tokenizer_bin());
    const Vocab v = read_llama2c_tokenizer(path, 6);
    EXPECT_EQ(v.model, "llama");
    EXPECT_EQ(v.tokens, (std::vector<std::string>{"<unk>", "<s>", "</s>", "<0x0A>", kSp + "a",
                                                  "b" + kSp + "c"}));
    EXPECT_EQ(v.scores, (std::vector<float>{0, 0, 0, 0, -1, -2}));
    EXPECT_EQ(v.types,
              (std::vector<TokenType>{TokenType::Unknown, TokenType::Control, TokenType::Control,
                                      TokenType::Byte, TokenType::Normal, TokenType::Normal}));
    EXPECT_EQ(v.unk, 0);
    EXPECT_EQ(v.bos, 1);
    EXPECT_EQ(v.eos, 2);
    EXPECT_TRUE(v.add_bos);
    EXPECT_FALSE(v.add_eos);
    EXPECT_TRUE(v.add_space_prefix);
}

TEST(Llama2cTokenizer, RejectsBrokenFiles) {
    test::TempDir dir;
    const std::string path = dir.path("tokenizer.bin");
    const std::string good = tiny_tokenizer_bin();
    auto read = [&](int32_t n) { return [&path, n] { read_llama2c_tokenizer(path, n); }; };

    // Cut at every byte: always an error, never a crash.
    for (size_t n = 0; n < good.size(); n++) {
        write_file(path, good.substr(0, n));
        expect_error_naming(read(6), path);
    }
    write_file(path, good);
    expect_error_naming(read(5), path);  // more tokens in the file than the model has
    expect_error_naming(read(7), path);  // fewer
    expect_error_naming(read(2), path);
    write_file(path, le32(6) + entry(0, "<unk>") + f32(0) + le32(0xFFFFFFFF) + "x");
    expect_error_naming(read(2), path);  // negative length
    write_file(path, le32(6) + entry(0, "<unk>") + f32(0) + le32(0x7FFFFFFF) + "x");
    expect_error_naming(read(2), path);  // length past the end
    write_file(path, le32(0xFFFFFFFF) + entry(0, "<unk>"));
    expect_error_naming(read(1), path);  // negative max_token_length
    const std::string missing = dir.path("missing.bin");
    expect_error_naming([&] { read_llama2c_tokenizer(missing, 6); }, missing);
}

// ---- SentencePiece model (protobuf) ----

std::string varint(uint64_t v) {
    std::string s;
    do {
        s += static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return s;
}

std::string field_varint(uint32_t num, uint64_t v) {
    return varint(num << 3) + varint(v);
}
std::string field_bytes(uint32_t num, const std::string& b) {
    return varint((num << 3) | 2) + varint(b.size()) + b;
}
std::string field_f32(uint32_t num, float f) {
    return varint((num << 3) | 5) + f32(f);
}

std::string piece(const std::string& text, float score, int type) {
    std::string m = field_bytes(1, text) + field_f32(2, score);
    if (type != 1) m += field_varint(3, type);  // NORMAL is the default, often left out
    return field_bytes(1, m);
}

std::string tiny_model(uint64_t model_type, int64_t pad_id, bool dummy_prefix) {
    // An unknown field (99) and a fixed64 one (98) that readers must skip.
    const std::string trainer = field_varint(3, model_type) + field_varint(40, 0) +
                                field_varint(41, 1) + field_varint(42, 2) +
                                field_varint(43, static_cast<uint64_t>(pad_id)) +
                                field_varint(99, 5) + varint((98 << 3) | 1) + std::string(8, 'x');
    const std::string normalizer = field_bytes(1, "identity") + field_varint(3, dummy_prefix);
    return piece("<unk>", 0, 2) + piece("<s>", 0, 3) + piece("</s>", 0, 3) + piece("<0x41>", 0, 6) +
           piece(kSp + "a", -1.5f, 1) + piece("<x>", 0, 4) + field_bytes(2, trainer) +
           field_bytes(3, normalizer);
}

TEST(SentencePieceModel, ReadsPiecesAndSpecs) {
    test::TempDir dir;
    const std::string path = dir.path("tokenizer.model");
    write_file(path, tiny_model(2, -1, true));
    const Vocab v = read_sentencepiece_model(path);
    EXPECT_EQ(v.tokens,
              (std::vector<std::string>{"<unk>", "<s>", "</s>", "<0x41>", kSp + "a", "<x>"}));
    EXPECT_EQ(v.scores, (std::vector<float>{0, 0, 0, 0, -1.5f, 0}));
    EXPECT_EQ(v.types,
              (std::vector<TokenType>{TokenType::Unknown, TokenType::Control, TokenType::Control,
                                      TokenType::Byte, TokenType::Normal, TokenType::UserDefined}));
    EXPECT_EQ(v.unk, 0);
    EXPECT_EQ(v.bos, 1);
    EXPECT_EQ(v.eos, 2);
    EXPECT_EQ(v.pad, -1);
    EXPECT_TRUE(v.add_space_prefix);
    EXPECT_TRUE(v.add_bos);

    write_file(path, tiny_model(2, 3, false));
    const Vocab w = read_sentencepiece_model(path);
    EXPECT_EQ(w.pad, 3);
    EXPECT_FALSE(w.add_space_prefix);
}

TEST(SentencePieceModel, RejectsBrokenFiles) {
    test::TempDir dir;
    const std::string path = dir.path("tokenizer.model");
    const std::string good = tiny_model(2, -1, true);
    // Cuts inside a field are errors; a cut between fields is a shorter valid message, so
    // those must either load or fail cleanly, never crash.
    for (size_t n = 0; n < good.size(); n++) {
        write_file(path, good.substr(0, n));
        try {
            read_sentencepiece_model(path);
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    }
    write_file(path, good.substr(0, good.size() - 1));
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    write_file(path, tiny_model(1, -1, true));  // unigram
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    write_file(path, tiny_model(2, 6, true));  // pad id past the vocabulary
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    write_file(path, piece("a", 0, 9) + field_bytes(2, field_varint(3, 2)));  // bad type
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    write_file(path, "");
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    write_file(path, std::string(12, '\xFF'));  // an endless varint
    expect_error_naming([&] { read_sentencepiece_model(path); }, path);
    expect_error_naming([&] { read_sentencepiece_model(dir.path("missing.model")); },
                        dir.path("missing.model"));
}

}  // namespace
}  // namespace lila
