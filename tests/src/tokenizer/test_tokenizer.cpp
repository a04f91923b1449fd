// The SentencePiece tokenizer on small hand-made vocabularies: merge order, byte fallback,
// special tokens, pieces, decoding and streaming. Reference data: test_tokenizer_ref.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.h"
#include "src/base/utf8.h"
#include "src/tokenizer/tokenizer.h"

namespace lila {
namespace {

using Ids = std::vector<int32_t>;
const std::string kSp = "\xE2\x96\x81";  // U+2581

// <unk> <s> </s>, the 256 byte tokens (ids 3..258), then the given pieces in id order.
struct VocabBuilder {
    Vocab v;
    VocabBuilder() {
        add("<unk>", 0, TokenType::Unknown);
        add("<s>", 0, TokenType::Control);
        add("</s>", 0, TokenType::Control);
        for (int b = 0; b < 256; b++) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            add(name, 0, TokenType::Byte);
        }
        v.unk = 0, v.bos = 1, v.eos = 2;
    }
    int32_t add(const std::string& text, float score, TokenType type = TokenType::Normal) {
        v.tokens.push_back(text);
        v.scores.push_back(score);
        v.types.push_back(type);
        return v.size() - 1;
    }
};

int32_t byte_id(uint8_t b) {
    return 3 + b;
}

TEST(Tokenizer, MergesHighestScoreFirst) {
    VocabBuilder b;
    const int32_t a = b.add("a", -10), bb = b.add("b", -10), c = b.add("c", -10);
    const int32_t ab = b.add("ab", -5), bc = b.add("bc", -1);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    // "bc" outscores "ab", so the b goes right; "abc" is no piece.
    EXPECT_EQ(tok->encode("abc", false, false), (Ids{a, bc}));
    EXPECT_EQ(tok->encode("ab", false, false), (Ids{ab}));
    EXPECT_EQ(tok->encode("cab", false, false), (Ids{c, ab}));
    EXPECT_EQ(tok->encode("b", false, false), (Ids{bb}));
}

TEST(Tokenizer, MergedPiecesMergeFurther) {
    VocabBuilder b;
    b.add("a", -10), b.add("b", -10), b.add("c", -10);
    b.add("ab", -5), b.add("bc", -1);
    const int32_t abc = b.add("abc", -3);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->encode("abc", false, false), (Ids{abc}));  // b+c, then a+bc
}

TEST(Tokenizer, EqualScoresMergeLeftmostFirst) {
    VocabBuilder b;
    const int32_t a = b.add("a", -10), aa = b.add("aa", -1);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->encode("aaa", false, false), (Ids{aa, a}));
    EXPECT_EQ(tok->encode("aaaaa", false, false), (Ids{aa, aa, a}));
}

TEST(Tokenizer, SpacePrefixAndSpaces) {
    VocabBuilder b;
    const int32_t sp = b.add(kSp, -100), x = b.add("x", -10), spx = b.add(kSp + "x", -1);
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->encode("x", false, false), (Ids{spx}));
    EXPECT_EQ(tok->encode("x x", true, false), (Ids{1, spx, spx}));
    EXPECT_EQ(tok->encode(" x", false, false), (Ids{sp, spx}));
    EXPECT_EQ(tok->encode("", false, false), Ids{});
    EXPECT_EQ(tok->encode("", true, false), Ids{1});
    // A literal U+2581 in the text is a space to SentencePiece too.
    EXPECT_EQ(tok->encode(kSp + "x", false, false), (Ids{sp, spx}));

    b.v.add_space_prefix = false;
    auto plain = Tokenizer::create(b.v);
    EXPECT_EQ(plain->encode("x x", false, false), (Ids{x, spx}));
}

TEST(Tokenizer, ByteFallback) {
    VocabBuilder b;
    const int32_t a = b.add("a", -1);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    // é has no piece: its two UTF-8 bytes become byte tokens.
    EXPECT_EQ(tok->encode("a\xC3\xA9"
                          "a",
                          false, false),
              (Ids{a, byte_id(0xC3), byte_id(0xA9), a}));
    // Without byte tokens, each byte becomes <unk>.
    Vocab no_bytes;
    no_bytes.tokens = {"<unk>", "a"};
    no_bytes.scores = {0, 0};
    no_bytes.types = {TokenType::Unknown, TokenType::Normal};
    no_bytes.unk = 0;
    no_bytes.add_space_prefix = false;
    EXPECT_EQ(Tokenizer::create(no_bytes)->encode("\xC3\xA9"
                                                  "a",
                                                  false, false),
              (Ids{0, 0, 1}));
}

// Bytes that are not UTF-8 each become one byte token; the text around them is tokenized
// as usual, and decoding gives the same bytes back.
TEST(Tokenizer, InvalidUtf8BecomesByteTokens) {
    VocabBuilder b;
    const int32_t a = b.add("a", -1), ab = b.add("ab", 0);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    const std::string s =
        "ab\xFF"
        "ab\xE4\xB8"
        "ab\x80";
    EXPECT_EQ(tok->encode(s, false, false),
              (Ids{ab, byte_id(0xFF), ab, byte_id(0xE4), byte_id(0xB8), ab, byte_id(0x80)}));
    EXPECT_EQ(tok->decode(tok->encode(s, false, false)), s);
    EXPECT_EQ(tok->encode("a\xC3", false, false), (Ids{a, byte_id(0xC3)}));
}

TEST(Tokenizer, SpecialTokensOnlyWhenAsked) {
    VocabBuilder b;
    const int32_t sp = b.add(kSp, -100);
    const int32_t x = b.add("x", -10), spx = b.add(kSp + "x", -1);
    auto tok = Tokenizer::create(b.v);
    // Parsed: each text run after a special token gets its own space prefix (llama.cpp).
    EXPECT_EQ(tok->encode("x<s>x</s>", false, true), (Ids{spx, 1, spx, 2}));
    EXPECT_EQ(tok->encode("<s>x", true, true), (Ids{1, 1, spx}));
    EXPECT_EQ(tok->encode("<unk>", false, true), Ids{0});
    EXPECT_EQ(tok->encode("x <s>", false, true), (Ids{spx, sp, 1}));
    // Plain text: "<s>" is just characters (bytes here).
    const Ids plain = tok->encode("<s>", false, false);
    EXPECT_EQ(plain, (Ids{sp, byte_id('<'), byte_id('s'), byte_id('>')}));
    (void)x;
}

TEST(Tokenizer, LongestSpecialTokenFirst) {
    VocabBuilder b;
    const int32_t ab = b.add("<a><b>", 0, TokenType::Control);
    const int32_t a = b.add("<a>", 0, TokenType::Control);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->encode("<a><b><a>", false, true), (Ids{ab, a}));
    EXPECT_EQ(tok->encode("<a><a><b>", false, true), (Ids{a, ab}));
}

TEST(Tokenizer, UserDefinedTokensAlwaysRecognised) {
    VocabBuilder b;
    const int32_t ud = b.add("<tool>", 0, TokenType::UserDefined);
    const int32_t x = b.add("x", -1);
    b.v.add_space_prefix = false;
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->encode("x<tool>x", false, false), (Ids{x, ud, x}));
    EXPECT_EQ(tok->token_to_piece(ud), "<tool>");
}

TEST(Tokenizer, TokenToPiece) {
    VocabBuilder b;
    const int32_t spx = b.add(kSp + "x" + kSp + kSp, -1);
    const int32_t unused = b.add("<unused0>", 0, TokenType::Unused);
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->token_to_piece(spx), " x  ");
    EXPECT_EQ(tok->token_to_piece(byte_id(0x0A)), "\n");
    EXPECT_EQ(tok->token_to_piece(byte_id(0xF0)), "\xF0");
    EXPECT_EQ(tok->token_to_piece(1), "");
    EXPECT_EQ(tok->token_to_piece(1, true), "<s>");
    EXPECT_EQ(tok->token_to_piece(0), "");
    EXPECT_EQ(tok->token_to_piece(0, true), "<unk>");
    EXPECT_EQ(tok->token_to_piece(unused, true), "");
    EXPECT_THROW(tok->token_to_piece(-1), Error);
    EXPECT_THROW(tok->token_to_piece(tok->n_vocab()), Error);
}

TEST(Tokenizer, DecodeDropsTheSpacePrefix) {
    VocabBuilder b;
    b.add(kSp, -100);
    const int32_t x = b.add("x", -10), spx = b.add(kSp + "x", -1);
    auto tok = Tokenizer::create(b.v);
    EXPECT_EQ(tok->decode(Ids{1, spx, spx}), "x x");
    EXPECT_EQ(tok->decode(Ids{spx, 2, spx}, true), "x</s>x");
    EXPECT_EQ(tok->decode(Ids{x, spx}), "x x");
    for (const char* s : {"x", " x", "  x x  ", "x<s>x", "<s> x", "</s></s>", ""}) {
        EXPECT_EQ(tok->decode(tok->encode(s, false, true), true), s) << s;
        EXPECT_EQ(tok->decode(tok->encode(s, true, false)), s) << s;
    }
}

// Random byte strings, valid UTF-8 or not, survive encode -> decode unchanged.
TEST(Tokenizer, RandomRoundTrips) {
    VocabBuilder b;
    for (const char* p : {"a", "b", "ab", "ba", "aab", "\xC3\xA9", "a\xC3\xA9"}) {
        b.add(p, -static_cast<float>(b.v.size()));
        b.add(kSp + p, -static_cast<float>(b.v.size()));
    }
    b.add(kSp, -1000);
    b.add("<|end|>", 0, TokenType::Control);
    auto tok = Tokenizer::create(b.v);
    const std::string alphabet[] = {
        "a",    "b",    " ",   "\n",      "\xC3\xA9", "\xF0\x9F\xA6\x99", "\xE4\xB8\x96",
        "\xFF", "\xC3", "<s>", "<|end|>", "\t"};
    std::mt19937 rng(1234);
    for (int iter = 0; iter < 2000; iter++) {
        std::string s;
        const int n = rng() % 20;
        for (int i = 0; i < n; i++) s += alphabet[rng() % std::size(alphabet)];
        ASSERT_EQ(tok->decode(tok->encode(s, true, false)), s);
        ASSERT_EQ(tok->decode(tok->encode(s, false, true), true), s);
    }
}

TEST(Tokenizer, IsEog) {
    VocabBuilder b;
    const int32_t im_end = b.add("<|im_end|>", 0, TokenType::Control);
    const int32_t text_im_end = b.add("<|im_end|>x", 0, TokenType::Normal);
    const int32_t eot = b.add("<|my_eot|>", 0, TokenType::Control);
    b.v.eot = eot;
    auto tok = Tokenizer::create(b.v);
    EXPECT_TRUE(tok->is_eog(2));
    EXPECT_TRUE(tok->is_eog(eot));
    EXPECT_TRUE(tok->is_eog(im_end));
    EXPECT_FALSE(tok->is_eog(1));
    EXPECT_FALSE(tok->is_eog(text_im_end));
    EXPECT_FALSE(tok->is_eog(-1));
    EXPECT_FALSE(tok->is_eog(tok->n_vocab()));
}

TEST(Tokenizer, RejectsBadVocabularies) {
    VocabBuilder good;
    EXPECT_NO_THROW(Tokenizer::create(good.v));
    Vocab v = good.v;
    v.model = "t5";
    EXPECT_THROW(Tokenizer::create(v), Error);
    v = good.v;
    v.types.pop_back();
    EXPECT_THROW(Tokenizer::create(v), Error);
    v = good.v;
    v.scores.pop_back();
    EXPECT_THROW(Tokenizer::create(v), Error);
    v = good.v;
    v.scores[5] = std::nanf("");
    EXPECT_THROW(Tokenizer::create(v), Error);
    v = good.v;
    v.bos = v.size();
    EXPECT_THROW(Tokenizer::create(v), Error);
    v = good.v;
    v.scores.clear();  // no scores at all is allowed: every merge ties
    EXPECT_NO_THROW(Tokenizer::create(v));
    EXPECT_THROW(Tokenizer::create(Vocab{}), Error);
}

// The stream decoder's output is the sanitized decode, with no split characters.
TEST(StreamDecoder, HoldsBackPartialCharacters) {
    VocabBuilder b;
    const int32_t hi = b.add(kSp + "hi", -1);
    auto tok = Tokenizer::create(b.v);
    StreamDecoder d(*tok);
    EXPECT_EQ(d.push(hi), " hi");
    EXPECT_EQ(d.push(byte_id(0xF0)), "");
    EXPECT_EQ(d.push(byte_id(0x9F)), "");
    EXPECT_EQ(d.push(byte_id(0xA6)), "");
    EXPECT_EQ(d.push(byte_id(0x99)), "\xF0\x9F\xA6\x99");
    EXPECT_EQ(d.push(byte_id(0xFF)), "\xEF\xBF\xBD");  // never valid: out at once
    EXPECT_EQ(d.push(byte_id(0xE4)), "");
    EXPECT_EQ(d.push(hi), "\xEF\xBF\xBD hi");  // the character was cut short
    EXPECT_EQ(d.push(byte_id(0xE4)), "");
    EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");
    EXPECT_EQ(d.flush(), "");
}

TEST(StreamDecoder, SpacePrefixAfterSpecialTokens) {
    VocabBuilder b;
    const int32_t hi = b.add(kSp + "hi", -1);
    auto tok = Tokenizer::create(b.v);
    StreamDecoder from_start(*tok, true);
    EXPECT_EQ(from_start.push(hi), "hi");
    EXPECT_EQ(from_start.push(hi), " hi");
    StreamDecoder continuing(*tok);
    EXPECT_EQ(continuing.push(hi), " hi");
    EXPECT_EQ(continuing.push(1), "");  // BOS: a new text begins
    EXPECT_EQ(continuing.push(hi), "hi");
}

TEST(StreamDecoder, MatchesDecodeOnRandomIds) {
    VocabBuilder b;
    b.add(kSp + "hi", -1);
    b.add("\xE4\xB8\x96", -2);
    auto tok = Tokenizer::create(b.v);
    std::mt19937 rng(7);
    for (int iter = 0; iter < 500; iter++) {
        Ids ids;
        for (int i = 0, n = rng() % 12; i < n; i++) {
            // Mostly bytes of multi-byte characters, to split them in every way.
            const int32_t choices[] = {byte_id(0xE4),      byte_id(0xB8),      byte_id(0x96),
                                       byte_id(0xF0),      byte_id(0x9F),      byte_id('x'),
                                       tok->n_vocab() - 1, tok->n_vocab() - 2, 1};
            ids.push_back(choices[rng() % std::size(choices)]);
        }
        StreamDecoder d(*tok, true);
        std::string streamed;
        for (int32_t id : ids) {
            const std::string out = d.push(id);
            ASSERT_EQ(utf8_sanitize(out), out);  // only whole, valid characters
            streamed += out;
        }
        streamed += d.flush();
        ASSERT_EQ(streamed, utf8_sanitize(tok->decode(ids)));
    }
}

}  // namespace
}  // namespace lila
