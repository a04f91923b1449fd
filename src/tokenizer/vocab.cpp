// Vocab <-> tokenizer.ggml.* metadata, with llama.cpp's key names, value types and defaults,
// so that vocabularies move between lila and llama.cpp files unchanged.
#include "src/tokenizer/vocab.h"

#include <limits>
#include <optional>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/io/gguf.h"
#include "src/tokenizer/tokenizer_bpe.h"

namespace lila {

namespace {

constexpr const char* kModel = "tokenizer.ggml.model";
constexpr const char* kPre = "tokenizer.ggml.pre";
constexpr const char* kTokens = "tokenizer.ggml.tokens";
constexpr const char* kScores = "tokenizer.ggml.scores";
constexpr const char* kTokenType = "tokenizer.ggml.token_type";
constexpr const char* kMerges = "tokenizer.ggml.merges";
constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";
constexpr const char* kAddEos = "tokenizer.ggml.add_eos_token";
constexpr const char* kAddSpacePrefix = "tokenizer.ggml.add_space_prefix";

struct SpecialId {
    const char* key;
    int32_t Vocab::*field;
    int32_t spm_default;  // llama.cpp's id when a "llama" vocab lacks the key; -1: none
};

constexpr SpecialId kSpecialIds[] = {
    {"tokenizer.ggml.bos_token_id", &Vocab::bos, 1},
    {"tokenizer.ggml.eos_token_id", &Vocab::eos, 2},
    {"tokenizer.ggml.eot_token_id", &Vocab::eot, -1},
    {"tokenizer.ggml.unknown_token_id", &Vocab::unk, 0},
    {"tokenizer.ggml.padding_token_id", &Vocab::pad, -1},
};

bool valid_token_type(int64_t t) {
    return t >= int64_t(TokenType::Normal) && t <= int64_t(TokenType::Byte);
}

}  // namespace

Vocab Vocab::from_gguf(const GGUFFile& f) {
    auto fail = [&](const char* key, const std::string& problem) {
        throw Error(f.path() + ": " + key + ": " + problem);
    };
    auto missing = [&](const char* key) {
        throw Error(f.path() + ": missing metadata key " + key);
    };

    Vocab v;
    std::optional<std::string> model = f.get_string(kModel);
    if (!model) missing(kModel);
    v.model = *model;
    v.pre = f.get_string(kPre).value_or("");

    std::optional<std::vector<std::string>> tokens = f.get_string_array(kTokens);
    if (!tokens) missing(kTokens);
    if (tokens->empty()) fail(kTokens, "no tokens");
    if (tokens->size() > size_t(std::numeric_limits<int32_t>::max()))
        fail(kTokens, "too many tokens");
    v.tokens = std::move(*tokens);
    const size_t n = v.tokens.size();
    auto check_size = [&](const char* key, size_t size) {
        if (size != n)
            fail(key, std::to_string(size) + " entries for " + std::to_string(n) + " tokens");
    };

    if (std::optional<std::vector<double>> scores = f.get_float_array(kScores)) {
        check_size(kScores, scores->size());
        v.scores.assign(scores->begin(), scores->end());
    }
    if (std::optional<std::vector<int64_t>> types = f.get_int_array(kTokenType)) {
        check_size(kTokenType, types->size());
        for (size_t i = 0; i < n; ++i) {
            if (!valid_token_type((*types)[i]))
                fail(kTokenType, "token " + std::to_string(i) + " has type " +
                                     std::to_string((*types)[i]) + " (expected 1 to 6)");
            v.types.push_back(TokenType((*types)[i]));
        }
    } else {
        v.types.assign(n, TokenType::Normal);  // as llama.cpp does without the key
    }
    v.merges = f.get_string_array(kMerges).value_or(std::vector<std::string>{});
    if (v.model == "gpt2" && v.merges.empty()) missing(kMerges);

    // llama.cpp's defaults: SentencePiece ("llama") adds BOS and a leading space and has
    // fixed special ids; byte-level BPE ("gpt2") and the rest do neither, except that some
    // pre-tokenizers (Llama 3's) add BOS.
    const bool spm = v.model == "llama";
    for (const SpecialId& s : kSpecialIds) {
        const int32_t fallback =
            spm && s.spm_default >= 0 && size_t(s.spm_default) < n ? s.spm_default : -1;
        std::optional<int64_t> id = f.get_int(s.key);
        // llama.cpp writes -1 (as u32: 4294967295) for "no such token", and reads any id
        // outside the vocabulary as if the key were absent; so does lila, and says so.
        if (id && (*id < 0 || size_t(*id) >= n)) {
            warn(f.path() + ": " + s.key + ": token id " + std::to_string(*id) +
                 " is out of range (" + std::to_string(n) + " tokens); ignored");
            id = std::nullopt;
        }
        v.*s.field = id ? int32_t(*id) : fallback;
    }
    v.add_bos = f.get_bool(kAddBos).value_or(spm || bpe_pre_tokenizer_adds_bos(v.pre));
    v.add_eos = f.get_bool(kAddEos).value_or(false);
    v.add_space_prefix = f.get_bool(kAddSpacePrefix).value_or(spm);
    return v;
}

void Vocab::to_gguf(GGUFWriter& w) const {
    auto fail = [](const std::string& problem) { throw Error("vocab: " + problem); };
    const size_t n = tokens.size();
    if (n == 0 || n > size_t(std::numeric_limits<int32_t>::max()))
        fail(std::to_string(n) + " tokens");
    if (types.size() != n)
        fail(std::to_string(types.size()) + " token types for " + std::to_string(n) + " tokens");
    if (!scores.empty() && scores.size() != n)
        fail(std::to_string(scores.size()) + " scores for " + std::to_string(n) + " tokens");
    for (const SpecialId& s : kSpecialIds)
        if (this->*s.field < -1 || this->*s.field >= size())
            fail(std::string(s.key) + " " + std::to_string(this->*s.field) + " is out of range");
    std::vector<int64_t> type_ids;
    for (TokenType t : types) {
        if (!valid_token_type(int64_t(t))) fail("token type " + std::to_string(int(t)));
        type_ids.push_back(int64_t(t));
    }

    // Value types as llama.cpp writes and expects them: it reads scores and token types
    // as raw f32 and i32 arrays, and special ids as u32.
    w.set(kModel, GGUFValue::string(model));
    if (!pre.empty()) w.set(kPre, GGUFValue::string(pre));
    w.set(kTokens, GGUFValue::array_string(tokens));
    if (!scores.empty())
        w.set(kScores, GGUFValue::array_f32(std::vector<double>(scores.begin(), scores.end())));
    w.set(kTokenType, GGUFValue::array_i32(std::move(type_ids)));
    if (!merges.empty()) w.set(kMerges, GGUFValue::array_string(merges));
    for (const SpecialId& s : kSpecialIds)
        if (this->*s.field >= 0) w.set(s.key, GGUFValue::u32(uint32_t(this->*s.field)));
    w.set(kAddBos, GGUFValue::boolean(add_bos));
    w.set(kAddEos, GGUFValue::boolean(add_eos));
    w.set(kAddSpacePrefix, GGUFValue::boolean(add_space_prefix));
}

}  // namespace lila
