// The tokenizer against independent implementations: the SentencePiece library's Llama 2
// encodings and llama2.c's token ids for the stories260K model (../shared/reference/),
// plus a direct, quadratic re-implementation of the BPE loop on real text.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/base/utf8.h"
#include "src/tokenizer/llama2c_tokenizer.h"
#include "src/tokenizer/sentencepiece_model.h"
#include "src/tokenizer/tokenizer.h"
#include "test_util.h"

namespace lila {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;

const Tokenizer& llama2() {
    static const auto tok = Tokenizer::create(
        read_sentencepiece_model(test::shared_path("tokenizers/llama2/tokenizer.model")));
    return *tok;
}

const Tokenizer& tok512() {
    static const auto tok =
        Tokenizer::create(read_llama2c_tokenizer(test::shared_path("models/tok512.bin"), 512));
    return *tok;
}

std::vector<json> read_jsonl(const std::string& path) {
    std::vector<json> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(json::parse(line));
    }
    return lines;
}

// SentencePiece's BPE as llama2.c writes it: find the best pair in the whole sequence,
// merge it, repeat. O(n^2), so only for short texts; the tokenizer must agree with it.
class NaiveBpe {
public:
    explicit NaiveBpe(const Vocab& v) : v_(v) {
        for (int32_t i = v.size() - 1; i >= 0; i--) {
            if (v.types[i] == TokenType::Normal) ids_[v.tokens[i]] = i;
            if (v.types[i] == TokenType::Byte) ids_[v.tokens[i]] = i;
        }
    }

    Ids encode(const std::string& text) const {
        std::string s = text.empty() ? "" : "\xE2\x96\x81";
        for (char c : text) s += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
        std::vector<std::string> syms;
        for (size_t pos = 0; pos < s.size();) {
            const Utf8Char c = utf8_next(std::string_view(s).substr(pos));
            const size_t len = c.status == Utf8Status::Valid ? c.len : 1;
            syms.push_back(s.substr(pos, len));
            pos += len;
        }
        for (;;) {
            float best = 0;
            size_t best_i = SIZE_MAX;
            for (size_t i = 0; i + 1 < syms.size(); i++) {
                const int32_t id = normal_id(syms[i] + syms[i + 1]);
                if (id >= 0 && (best_i == SIZE_MAX || v_.scores[id] > best)) {
                    best = v_.scores[id], best_i = i;
                }
            }
            if (best_i == SIZE_MAX) break;
            syms[best_i] += syms[best_i + 1];
            syms.erase(syms.begin() + best_i + 1);
        }
        Ids out;
        for (const std::string& sym : syms) {
            if (normal_id(sym) >= 0) {
                out.push_back(normal_id(sym));
                continue;
            }
            for (char c : sym) {
                char name[8];
                std::snprintf(name, sizeof name, "<0x%02X>", static_cast<uint8_t>(c));
                out.push_back(ids_.at(name));
            }
        }
        return out;
    }

private:
    int32_t normal_id(const std::string& s) const {
        const auto it = ids_.find(s);
        return it == ids_.end() || v_.types[it->second] != TokenType::Normal ? -1 : it->second;
    }

    const Vocab& v_;
    std::unordered_map<std::string, int32_t> ids_;
};

TEST(TokenizerReference, Llama2SamplesMatchSentencePiece) {
    const auto lines = read_jsonl(test::shared_path("reference/tokenizer_llama2_sample.jsonl"));
    ASSERT_GT(lines.size(), 50u);
    size_t matched = 0;
    for (const json& l : lines) {
        const std::string text = l["text"];
        const Ids ids = llama2().encode(text, false, false);
        EXPECT_EQ(ids, l["ids"].get<Ids>()) << l["category"] << ": " << text;
        matched += ids == l["ids"].get<Ids>();
        const std::string decoded = llama2().decode(ids);
        if (l["roundtrip"].get<bool>()) {
            EXPECT_EQ(decoded, text);
        } else {
            EXPECT_EQ(decoded, l["decoded"].get<std::string>());
        }
        // Hugging Face splits "<s>"-style text out as special tokens, as parse_special does.
        if (l.contains("ids_hf_special")) {
            EXPECT_EQ(llama2().encode(text, false, true), l["ids_hf_special"].get<Ids>()) << text;
        }
    }
    EXPECT_EQ(matched, lines.size());
    std::printf("llama2 samples: %zu / %zu exact\n", matched, lines.size());
}

TEST(TokenizerReference, Llama2Basics) {
    EXPECT_EQ(llama2().n_vocab(), 32000);
    EXPECT_EQ(llama2().encode("Hello", true, false), (Ids{1, 15043}));
    EXPECT_EQ(llama2().encode("<s>Hello</s>", false, true), (Ids{1, 15043, 2}));
    // Invalid UTF-8: each bad byte is a byte token (ids 3..258), and decodes back.
    EXPECT_EQ(llama2().encode("\xFF", false, false), (Ids{29871, 3 + 0xFF}));
    EXPECT_TRUE(llama2().is_eog(2));
    EXPECT_FALSE(llama2().is_eog(1));
}

TEST(TokenizerReference, Llama2RoundTrips) {
    const std::string texts[] = {
        "Hello, world!",
        "  leading spaces and trailing  ",
        " ",
        "multiple     spaces\tand\ttabs",
        "line one\nline two\r\n\n\nline five\n",
        "\xF0\x9F\xA6\x99\xF0\x9F\x9A\x80 emoji "
        "\xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88",
        "\xE4\xB8\xAD\xE6\x96\x87\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF "
        "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
        "invalid \xFF\xFE bytes \xC3 and \xE4\xB8 cut \xED\xA0\x80 surrogate",
        std::string("nul \0 byte", 10),
        "<s> </s> <unk> as plain text",
    };
    for (const std::string& t : texts) {
        EXPECT_EQ(llama2().decode(llama2().encode(t, true, false)), t);
        EXPECT_EQ(tok512().decode(tok512().encode(t, true, false)), t);
    }
}

std::vector<std::string> text_lines(const std::string& rel, size_t max_lines, size_t max_len) {
    std::ifstream in(test::shared_path(rel));
    std::vector<std::string> out;
    for (std::string line; out.size() < max_lines && std::getline(in, line);) {
        if (!line.empty() && line.size() <= max_len) out.push_back(line);
    }
    return out;
}

// The priority-queue merge gives what the plain loop gives, on real text and on random
// slices of it (which cut words and UTF-8 characters anywhere).
TEST(TokenizerReference, AgreesWithQuadraticBpe) {
    auto lines = text_lines("data/tinystories/tinystories_val.txt", 300, 1000);
    const auto wiki = text_lines("data/wikitext-2/wiki.test.raw", 300, 1000);
    lines.insert(lines.end(), wiki.begin(), wiki.end());
    ASSERT_GT(lines.size(), 500u);
    const NaiveBpe naive_llama2(llama2().vocab()), naive_tok512(tok512().vocab());
    std::mt19937 rng(42);
    size_t checked = 0;
    for (const std::string& line : lines) {
        const size_t a = rng() % line.size(), b = a + rng() % (line.size() - a + 1);
        for (const std::string& t : {line, line.substr(a, b - a)}) {
            ASSERT_EQ(llama2().encode(t, false, false), naive_llama2.encode(t)) << t;
            ASSERT_EQ(tok512().encode(t, false, false), naive_tok512.encode(t)) << t;
            checked++;
        }
    }
    std::printf("agrees with the quadratic BPE on %zu texts\n", checked);
}

// A whole perplexity-sized file: fast enough, and decodes to the same bytes.
TEST(TokenizerReference, WholeWikiTextFile) {
    const std::string text = test::read_file(test::shared_path("data/wikitext-2/wiki.test.raw"));
    ASSERT_GT(text.size(), 1000000u);
    const auto t0 = std::chrono::steady_clock::now();
    const Ids ids = llama2().encode(text, true, false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wiki.test.raw: %zu bytes -> %zu Llama 2 tokens in %.2f s\n", text.size(),
                ids.size(), s);
    EXPECT_EQ(llama2().decode(ids), text);
}

// llama2.c's run.c: BOS, then the prompt with its dummy-prefix " " merged in (410 is " ",
// stored as U+2581 here), then the generated ids; its output is every piece printed after
// BOS, then a newline.
TEST(TokenizerReference, Stories260KGreedyTokens) {
    EXPECT_EQ(tok512().vocab().tokens[410], "\xE2\x96\x81");
    EXPECT_EQ(tok512().vocab().tokens[1], "<s>");
    const json ref =
        json::parse(test::read_file(test::shared_path("reference/stories260K_greedy.json")));
    ASSERT_EQ(ref.size(), 2u);
    for (const json& r : ref) {
        const std::string prompt = r["prompt"];
        const Ids all = r["token_ids"];
        const Ids prompt_ids = tok512().encode(prompt, true, false);
        ASSERT_LE(prompt_ids.size(), all.size());
        EXPECT_EQ(prompt_ids, Ids(all.begin(), all.begin() + prompt_ids.size())) << prompt;
        EXPECT_EQ(tok512().decode(all) + "\n", r["output"].get<std::string>());

        StreamDecoder stream(tok512());
        std::string streamed;
        for (int32_t id : all) streamed += stream.push(id);
        streamed += stream.flush();
        EXPECT_EQ(streamed + "\n", r["output"].get<std::string>());
    }
}

}  // namespace
}  // namespace lila
