// Byte-level BPE: the Llama 3 tokenizer, built by lila's tokenizer.json reader, against the
// reference encodings (../shared/reference/tokenizer_llama3_sample.jsonl); round trips of
// arbitrary bytes and a whole WikiText-2 file; merge order and pre-tokenizers on
// hand-made vocabularies.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/base/utf8.h"
#include "src/io/gguf.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/tokenizer.h"
#include "src/tokenizer/tokenizer_bpe.h"
#include "test_util.h"

namespace lila {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;

const Tokenizer& llama3() {
    static const auto tok =
        Tokenizer::create(read_hf_tokenizer(test::shared_path("tokenizers/llama3")).vocab);
    return *tok;
}

TEST(TokenizerBpe, Llama3Vocabulary) {
    const HfTokenizer hf = read_hf_tokenizer(test::shared_path("tokenizers/llama3"));
    const Vocab& v = hf.vocab;
    EXPECT_EQ(v.model, "gpt2");
    EXPECT_EQ(v.pre, "llama-bpe");
    EXPECT_EQ(v.size(), 128256);
    EXPECT_EQ(v.merges.size(), 280147u);
    EXPECT_EQ(v.bos, 128000);
    EXPECT_EQ(v.eos, 128001);
    EXPECT_EQ(v.eot, 128009);
    EXPECT_TRUE(v.add_bos);  // llama.cpp's default for Llama 3: its post-processor adds none
    EXPECT_FALSE(v.add_eos);
    EXPECT_FALSE(v.add_space_prefix);
    EXPECT_TRUE(v.scores.empty());
    EXPECT_EQ(v.tokens[128006], "<|start_header_id|>");
    for (int32_t id = 128000; id < 128256; id++) EXPECT_EQ(v.types[id], TokenType::Control) << id;
    for (int32_t id = 0; id < 128000; id++) ASSERT_EQ(v.types[id], TokenType::Normal) << id;
    EXPECT_NE(hf.chat_template.find("<|start_header_id|>"), std::string::npos);
}

std::vector<json> read_jsonl(const std::string& path) {
    std::vector<json> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(json::parse(line));
    }
    return lines;
}

TEST(TokenizerBpe, Llama3SamplesMatchReference) {
    const auto lines = read_jsonl(test::shared_path("reference/tokenizer_llama3_sample.jsonl"));
    ASSERT_GT(lines.size(), 50u);
    size_t matched = 0, matched_plain = 0;
    for (const json& l : lines) {
        const std::string text = l["text"];
        const Ids want = l["ids"], want_plain = l.value("ids_plain", want);
        const Ids ids = llama3().encode(text, false, true);
        const Ids plain = llama3().encode(text, false, false);
        EXPECT_EQ(ids, want) << l["category"] << ": " << text;
        EXPECT_EQ(plain, want_plain) << l["category"] << " (plain): " << text;
        matched += ids == want;
        matched_plain += plain == want_plain;
        EXPECT_EQ(llama3().decode(ids, true), text);
        EXPECT_EQ(llama3().decode(plain), text);
    }
    std::printf("llama3 samples: %zu / %zu exact with specials, %zu / %zu as plain text\n", matched,
                lines.size(), matched_plain, lines.size());
    EXPECT_EQ(matched, lines.size());
    EXPECT_EQ(matched_plain, lines.size());
}

TEST(TokenizerBpe, Llama3Basics) {
    EXPECT_EQ(llama3().encode("Hello", true, false), (Ids{128000, 9906}));
    EXPECT_EQ(llama3().encode("<|eot_id|>", false, true), (Ids{128009}));
    EXPECT_GT(llama3().encode("<|eot_id|>", false, false).size(), 1u);
    EXPECT_TRUE(llama3().is_eog(128009));
    EXPECT_TRUE(llama3().is_eog(128001));
    EXPECT_FALSE(llama3().is_eog(128000));
    EXPECT_EQ(llama3().token_to_piece(128009), "");
    EXPECT_EQ(llama3().token_to_piece(128009, true), "<|eot_id|>");
    EXPECT_EQ(llama3().token_to_piece(9906), "Hello");
    EXPECT_EQ(llama3().token_to_piece(220), " ");   // "Ġ"
    EXPECT_EQ(llama3().token_to_piece(198), "\n");  // "Ċ"
}

// Splits show as encode(whole) == encode(parts...).
TEST(TokenizerBpe, Llama3Whitespace) {
    auto enc = [](const std::string& s) { return llama3().encode(s, false, false); };
    auto cat = [&](const std::string& a, const std::string& b) {
        Ids ids = enc(a), tail = enc(b);
        ids.insert(ids.end(), tail.begin(), tail.end());
        return ids;
    };
    EXPECT_EQ(enc("a   b"), cat("a  ", " b"));  // \s+(?!\S) leaves the last space to " b"
    EXPECT_EQ(enc("a \n\n b"), cat("a", " \n\n b"));
    const std::string nel = "\xC2\x85";  // U+0085 is a space: alone, then a word's prefix
    EXPECT_EQ(enc(nel + nel + "b"), cat(nel, nel + "b"));
}

// Random mixtures of ASCII, whitespace, digits, CJK, emoji, combining marks, odd spaces and
// invalid bytes all decode back to the same bytes, whether streamed or not.
TEST(TokenizerBpe, RoundTripsArbitraryBytes) {
    const std::vector<std::string> parts = {
        "a",
        "Z",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\t",
        "0",
        "12345",
        "'s",
        "'LL",
        "!",
        "...",
        "\xC3\xA9",
        "e\xCC\x81",
        "\xE4\xB8\xAD",
        "\xE3\x81\x93",
        "\xF0\x9F\xA6\x99",
        "\xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88",
        "\xC2\x85",
        "\xE1\xA0\x8E",
        "\xEF\xBB\xBF",
        "\xE2\x80\xA8",
        "\xFF",
        "\xC3",
        "\xE4\xB8",
        "\xED\xA0\x80",
        std::string(1, '\0'),
        "<|eot_id|>",
        "<|begin_of_text",
        "\xE2\x96\x81"};
    std::mt19937 rng(7);
    for (int round = 0; round < 2000; round++) {
        std::string text;
        const int n = int(rng() % 24);
        for (int i = 0; i < n; i++) text += parts[rng() % parts.size()];
        const Ids ids = llama3().encode(text, round % 2 == 0, false);
        ASSERT_EQ(llama3().decode(ids), text);
        for (int32_t id : ids) ASSERT_LT(id, llama3().n_vocab());

        StreamDecoder stream(llama3(), true);
        std::string streamed;
        for (int32_t id : ids) streamed += stream.push(id);
        streamed += stream.flush();
        ASSERT_EQ(streamed, utf8_sanitize(text)) << round;
    }
}

TEST(TokenizerBpe, LongRunsStayFast) {
    for (const std::string unit : {" ", "\n", "a", "7", "!", "\xE4\xB8\xAD", " \n"}) {
        std::string text;
        for (int i = 0; i < 100000; i++) text += unit;
        const auto t0 = std::chrono::steady_clock::now();
        const Ids ids = llama3().encode(text, false, false);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_EQ(llama3().decode(ids), text);
        EXPECT_LT(s, 10.0) << "100000 x '" << unit << "'";
    }
}

TEST(TokenizerBpe, WholeWikiTextFile) {
    const std::string text = test::read_file(test::shared_path("data/wikitext-2/wiki.test.raw"));
    ASSERT_GT(text.size(), 1000000u);
    const auto t0 = std::chrono::steady_clock::now();
    const Ids ids = llama3().encode(text, true, false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wiki.test.raw: %zu bytes -> %zu Llama 3 tokens in %.2f s (%.1f MB/s)\n",
                text.size(), ids.size(), s, text.size() / s / 1e6);
    EXPECT_EQ(llama3().decode(ids), text);
}

// A vocabulary in GGUF terms survives the round trip through a file and tokenizes the same.
TEST(TokenizerBpe, VocabularyThroughGguf) {
    test::TempDir dir;
    GGUFWriter w;
    llama3().vocab().to_gguf(w);
    w.write(dir.path("vocab.gguf"));
    const auto back = Tokenizer::create(Vocab::from_gguf(*GGUFFile::open(dir.path("vocab.gguf"))));
    const std::string text = "Hello world<|eot_id|> 12345 \xE4\xB8\xAD\xE6\x96\x87!";
    EXPECT_EQ(back->encode(text, true, true), llama3().encode(text, true, true));
}

// --- hand-made vocabularies ------------------------------------------------------------

// Tokens: the 256 byte characters, then the given merges' results.
Vocab tiny_vocab(const std::vector<std::string>& merges, const std::string& pre = "gpt-2") {
    Vocab v;
    v.model = "gpt2";
    v.pre = pre;
    v.add_bos = false;
    v.add_space_prefix = false;
    uint32_t next = 256;
    for (int b = 0; b < 256; b++) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
        std::string t;
        utf8_append(t, printable ? uint32_t(b) : next++);
        v.tokens.push_back(t);
    }
    for (const std::string& m : merges) {
        v.merges.push_back(m);
        std::string joined = m;
        joined.erase(m.find(' '), 1);
        v.tokens.push_back(joined);
    }
    v.types.assign(v.tokens.size(), TokenType::Normal);
    return v;
}

std::vector<std::string> pieces(const Tokenizer& tok, const std::string& text) {
    std::vector<std::string> out;
    for (int32_t id : tok.encode(text, false, false)) out.push_back(tok.vocab().tokens[id]);
    return out;
}

TEST(TokenizerBpe, MergesByRankThenLeftmost) {
    auto tok = Tokenizer::create(tiny_vocab({"b c", "a a", "a b", "a bc"}));
    EXPECT_EQ(pieces(*tok, "aaa"), (std::vector<std::string>{"aa", "a"}));  // leftmost first
    EXPECT_EQ(pieces(*tok, "aaaa"), (std::vector<std::string>{"aa", "aa"}));
    // "b c" outranks "a b", so "abc" is a + bc, then abc; leftmost-first would give ab + c.
    EXPECT_EQ(pieces(*tok, "abc"), (std::vector<std::string>{"abc"}));
    EXPECT_EQ(pieces(*tok, "aabc"), (std::vector<std::string>{"aa", "bc"}));
    EXPECT_EQ(pieces(*tok, "Ġ"), (std::vector<std::string>{"Ä", "ł"}));  // bytes C4 A0
    EXPECT_EQ(pieces(*tok, " a"), (std::vector<std::string>{"Ġ", "a"}));
}

TEST(TokenizerBpe, IgnoreMergesTakesWholeWords) {
    // "abc" is a token that no merge forms: Llama 3 takes the whole word, GPT-2 merges.
    Vocab v = tiny_vocab({"a b"}, "llama-bpe");
    v.tokens.push_back("abc");
    v.types.push_back(TokenType::Normal);
    EXPECT_EQ(pieces(*Tokenizer::create(v), "abc"), (std::vector<std::string>{"abc"}));
    v.pre = "gpt-2";
    EXPECT_EQ(pieces(*Tokenizer::create(v), "abc"), (std::vector<std::string>{"ab", "c"}));
}

// Split points show in what merges cannot cross.
TEST(TokenizerBpe, PreTokenizers) {
    Vocab v = tiny_vocab({"1 2", "12 3", "123 4", "1234 5"}, "llama-bpe");
    EXPECT_EQ(pieces(*Tokenizer::create(v), "12345"), (std::vector<std::string>{"123", "4", "5"}));
    v.pre = "qwen2";
    EXPECT_EQ(pieces(*Tokenizer::create(v), "12345"),
              (std::vector<std::string>{"1", "2", "3", "4", "5"}));
    v.pre = "smollm";
    EXPECT_EQ(pieces(*Tokenizer::create(v), "12345"),
              (std::vector<std::string>{"1", "2", "3", "4", "5"}));
    v.pre = "gpt-2";
    EXPECT_EQ(pieces(*Tokenizer::create(v), "12345"), (std::vector<std::string>{"12345"}));
    v.pre = "default";  // llama.cpp's fallback: runs of digits, then threes
    EXPECT_EQ(pieces(*Tokenizer::create(v), "12345"), (std::vector<std::string>{"123", "4", "5"}));
}

// \s is Unicode White_Space, as in the reference engines (Rust regex, Oniguruma): U+0085
// is a space and splits "!" runs, U+180E (which PCRE2's own \s matches) is not and does not.
// Merges that join every byte show whether a split came between them.
TEST(TokenizerBpe, WhitespaceIsUnicodeWhiteSpace) {
    // "!" U+180E "!" is 21 E1 A0 8E 21; its stand-ins are ! á ł İ !.
    auto mvs =
        Tokenizer::create(tiny_vocab({"! \xC3\xA1", "!\xC3\xA1 \xC5\x82",
                                      "!\xC3\xA1\xC5\x82 \xC4\xB0", "!\xC3\xA1\xC5\x82\xC4\xB0 !"},
                                     "llama-bpe"));
    EXPECT_EQ(mvs->encode("!\xE1\xA0\x8E!", false, false).size(), 1u);
    // "!" U+0085 "!" is 21 C2 85 21, stand-ins ! Â ħ !.
    auto nel = Tokenizer::create(
        tiny_vocab({"! \xC3\x82", "!\xC3\x82 \xC4\xA7", "!\xC3\x82\xC4\xA7 !"}, "llama-bpe"));
    EXPECT_EQ(nel->encode("!\xC2\x85!", false, false).size(), 4u);
}

// llama.cpp gives a pre-tokenizer it does not know its default regexes, with a warning.
TEST(TokenizerBpe, UnknownPreTokenizerIsTheDefaultWithAWarning) {
    std::vector<std::string> warnings;
    const WarningSink previous =
        set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    Vocab v = tiny_vocab({"1 2", "12 3", "123 4", "1234 5"}, "mystery");
    const auto tok = Tokenizer::create(v);
    set_warning_sink(previous);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("'mystery'"), std::string::npos) << warnings[0];
    EXPECT_EQ(pieces(*tok, "12345"), (std::vector<std::string>{"123", "4", "5"}));
}

TEST(TokenizerBpe, RejectsMalformedMerges) {
    Vocab v = tiny_vocab({});
    v.merges = {"ab"};  // not two tokens
    EXPECT_THROW(Tokenizer::create(v), Error);
}

// Every pre-tokenizer llama.cpp maps from tokenizer.ggml.pre splits texts as llama.cpp does:
// word lengths in bytes from its unicode_regex_split on each pre-tokenizer's regexes
// (tests/data/tokenizer/pre_tokenizer_splits.json; docs/architectures.md says how it was made).
bool uses_symbols(const std::string& pre) {
    for (const std::string& re : bpe_pre_tokenizer_regexes(pre)) {
        if (re.find("\\p{S}") != std::string::npos) return true;
    }
    return false;
}

TEST(TokenizerBpe, PreTokenizersSplitAsLlamaCpp) {
    const json ref = json::parse(test::read_file("tests/data/tokenizer/pre_tokenizer_splits.json"));
    const auto texts = ref["texts"].get<std::vector<std::string>>();
    std::set<std::string> covered;
    for (const json& group : ref["groups"]) {
        for (const std::string name : group["names"]) {
            covered.insert(name);
            for (size_t t = 0; t < texts.size(); t++) {
                // llama.cpp's engine leaves '~' out of \p{S} (its table of ASCII symbols lacks
                // it); PCRE2 cannot take a character out of a class, so lila keeps Unicode's.
                if (uses_symbols(name) && texts[t].find('~') != std::string::npos) continue;
                std::string lengths;
                for (const std::string& w : bpe_pre_tokenize(name, texts[t])) {
                    if (!lengths.empty()) lengths += ' ';
                    lengths += std::to_string(w.size());
                }
                EXPECT_EQ(lengths, group["word_bytes"][t].get<std::string>())
                    << name << " on \"" << texts[t] << "\"";
            }
        }
    }
    for (const std::string& name : bpe_pre_tokenizers()) {
        EXPECT_TRUE(covered.count(name)) << name << " has no reference splits";
    }
}

// A checkpoint's tokenizer.json names its regexes in Hugging Face's spelling; those llama.cpp
// adapted still find their pre-tokenizer, and Llama 3's ignore_merges tells it from DBRX's.
TEST(TokenizerBpe, PreTokenizerOfATokenizerJson) {
    const std::string llama3 =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    EXPECT_EQ(bpe_pre_tokenizer_for({llama3}, true), "llama-bpe");
    EXPECT_EQ(bpe_pre_tokenizer_for({llama3}, false), "dbrx");
    const std::string qwen2 =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    EXPECT_EQ(bpe_pre_tokenizer_for({qwen2}, false), "qwen2");
    const std::string gpt4o =
        R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    EXPECT_EQ(bpe_pre_tokenizer_for({gpt4o}, false), "gpt-4o");
    EXPECT_EQ(bpe_pre_tokenizer_for({"\\p{N}", bpe_byte_level_regex()}, false), "smollm");
    EXPECT_EQ(bpe_pre_tokenizer_for({"x"}, false), "");
}

// A byte without a token becomes <unk> when there is one, else an Error, never a crash.
TEST(TokenizerBpe, MissingByteTokens) {
    Vocab v = tiny_vocab({});
    v.tokens[uint8_t('x')] = "<unk>";
    v.types[uint8_t('x')] = TokenType::Unknown;
    EXPECT_THROW(Tokenizer::create(v)->encode("x", false, false), Error);
    v.unk = uint8_t('x');
    EXPECT_EQ(Tokenizer::create(v)->encode("axa", false, false),
              (Ids{uint8_t('a'), uint8_t('x'), uint8_t('a')}));
}

}  // namespace
}  // namespace lila
