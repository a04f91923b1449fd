// What every tokenizer shares: vocabulary checks, special-token splitting, pieces,
// decoding and streaming. The SentencePiece merge itself is in tokenizer_spm.cpp.
#include "src/tokenizer/tokenizer.h"

#include <algorithm>
#include <cmath>

#include "src/base/error.h"
#include "src/base/utf8.h"
#include "src/tokenizer/tokenizer_bpe.h"
#include "src/tokenizer/tokenizer_spm.h"

namespace lila {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

void check_id(const Vocab& v, int32_t id, const char* what) {
    if (id < -1 || id >= v.size()) {
        throw Error(std::string("tokenizer: ") + what + " token id " + std::to_string(id) +
                    " is outside the vocabulary of " + std::to_string(v.size()));
    }
}

void check_vocab(const Vocab& v) {
    if (v.tokens.empty()) throw Error("tokenizer: empty vocabulary");
    if (v.types.size() != v.tokens.size()) {
        throw Error("tokenizer: " + std::to_string(v.types.size()) + " token types for " +
                    std::to_string(v.tokens.size()) + " tokens");
    }
    if (!v.scores.empty() && v.scores.size() != v.tokens.size()) {
        throw Error("tokenizer: " + std::to_string(v.scores.size()) + " scores for " +
                    std::to_string(v.tokens.size()) + " tokens");
    }
    for (size_t i = 0; i < v.scores.size(); i++) {
        // A NaN would break the ordering the merge queue relies on.
        if (std::isnan(v.scores[i])) {
            throw Error("tokenizer: token " + std::to_string(i) + " has a NaN score");
        }
    }
    check_id(v, v.bos, "BOS");
    check_id(v, v.eos, "EOS");
    check_id(v, v.eot, "EOT");
    check_id(v, v.unk, "UNK");
    check_id(v, v.pad, "PAD");
}

// encode() puts a space in front of every text fragment (see SpmTokenizer); a decoder
// drops it again from the first piece of each fragment.
void drop_prefix_space(const Tokenizer& tok, int32_t id, bool& at_fragment_start,
                       std::string& piece) {
    const bool special = tok.is_special(id);
    if (at_fragment_start && !special && tok.vocab().add_space_prefix && !piece.empty() &&
        piece[0] == ' ') {
        piece.erase(0, 1);
    }
    at_fragment_start = special;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
    if (vocab.model == "llama") return make_spm_tokenizer(std::move(vocab));
    if (vocab.model == "gpt2") return make_bpe_tokenizer(std::move(vocab));
    throw Error("tokenizer model '" + vocab.model + "' is not supported (supported: llama, gpt2)");
}

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
    check_vocab(vocab_);
    for (int32_t id = 0; id < vocab_.size(); id++) {
        if (is_special(id) && !vocab_.tokens[id].empty()) specials_.push_back(id);
    }
    std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
        return vocab_.tokens[a].size() > vocab_.tokens[b].size();
    });
}

bool Tokenizer::is_special(int32_t id) const {
    if (id < 0 || id >= n_vocab()) return false;
    const TokenType t = vocab_.types[id];
    return t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined;
}

bool Tokenizer::is_eog(int32_t id) const {
    if (id < 0 || id >= n_vocab()) return false;
    if (id == vocab_.eos || id == vocab_.eot) return true;
    if (vocab_.types[id] != TokenType::Control) return false;
    // Chat models whose files name no EOT still end their turns with one of these
    // (the list llama.cpp uses).
    static constexpr std::string_view kEndOfTurn[] = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",   "<|endoftext|>",
        "<|eom_id|>", "<EOT>",      "_<EOT>",  "<|end_of_text|>",
    };
    const std::string& text = vocab_.tokens[id];
    return std::find(std::begin(kEndOfTurn), std::end(kEndOfTurn), text) != std::end(kEndOfTurn);
}

std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text,
                                                          bool parse_special) const {
    std::vector<Fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({-1, text});
    std::vector<Fragment> next;
    for (int32_t id : specials_) {
        // User-defined tokens are always cut out; control tokens only when asked.
        if (!parse_special && vocab_.types[id] != TokenType::UserDefined) continue;
        const std::string_view s = vocab_.tokens[id];
        if (text.find(s) == std::string_view::npos) continue;
        next.clear();
        for (const Fragment& f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (size_t pos; (pos = rest.find(s)) != std::string_view::npos;) {
                if (pos > 0) next.push_back({-1, rest.substr(0, pos)});
                next.push_back({id, rest.substr(pos, s.size())});
                rest.remove_prefix(pos + s.size());
            }
            if (!rest.empty()) next.push_back({-1, rest});
        }
        frags.swap(next);
    }
    return frags;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
    if (id < 0 || id >= n_vocab()) {
        throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " +
                    std::to_string(n_vocab()));
    }
    const std::string& text = vocab_.tokens[id];
    switch (vocab_.types[id]) {
        case TokenType::Normal: {
            std::string out;
            out.reserve(text.size());
            for (size_t i = 0; i < text.size();) {
                if (text.compare(i, kSpaceMarker.size(), kSpaceMarker) == 0) {
                    out += ' ';
                    i += kSpaceMarker.size();
                } else {
                    out += text[i++];
                }
            }
            return out;
        }
        case TokenType::Byte: {
            const int b = byte_token_value(text);
            return b < 0 ? std::string() : std::string(1, static_cast<char>(b));
        }
        case TokenType::UserDefined:
            return text;
        case TokenType::Control:
        case TokenType::Unknown:
            return special ? text : std::string();
        case TokenType::Unused:
            break;
    }
    return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
    std::string out;
    bool at_fragment_start = true;
    for (int32_t id : ids) {
        std::string piece = token_to_piece(id, special);
        drop_prefix_space(*this, id, at_fragment_start, piece);
        out += piece;
    }
    return out;
}

std::string StreamDecoder::push(int32_t id) {
    std::string piece = tok_.token_to_piece(id);
    drop_prefix_space(tok_, id, at_fragment_start_, piece);
    pending_ += piece;

    // Emit every complete character; hold back a trailing one that may still complete.
    std::string out;
    std::string_view rest = pending_;
    while (!rest.empty()) {
        const Utf8Char c = utf8_next(rest);
        if (c.status == Utf8Status::Incomplete) break;
        if (c.status == Utf8Status::Valid) {
            out.append(rest.substr(0, c.len));
        } else {
            out.append(kReplacementChar);
        }
        rest.remove_prefix(c.len);
    }
    pending_.erase(0, pending_.size() - rest.size());
    return out;
}

std::string StreamDecoder::flush() {
    std::string out = utf8_sanitize(pending_);
    pending_.clear();
    return out;
}

}  // namespace lila
