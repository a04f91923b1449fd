// SentencePiece BPE with scores and byte fallback, as Llama 2, TinyLlama and llama2.c use
// it; the same algorithm as SentencePiece's bpe_model.cc and llama.cpp's llm_tokenizer_spm.
//
// The text (with a leading space) has its spaces replaced by U+2581 and is split into
// UTF-8 characters. Then, over and over, the adjacent pair whose concatenation is a piece
// with the highest score is merged (ties: leftmost), until no pair forms a piece. A
// priority queue of candidate pairs makes that O(n log n), which matters because
// perplexity runs tokenize whole files. Symbols that are not pieces become byte tokens.
#include "src/tokenizer/tokenizer_spm.h"

#include <array>
#include <climits>
#include <queue>
#include <string>
#include <unordered_map>

#include "src/base/error.h"
#include "src/base/utf8.h"

namespace lila {

namespace {

class SpmTokenizer final : public Tokenizer {
public:
    explicit SpmTokenizer(Vocab vocab);
    SpmTokenizer(const SpmTokenizer&) = delete;  // pieces_ points into vocab_
    SpmTokenizer& operator=(const SpmTokenizer&) = delete;
    std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                bool parse_special) const override;

private:
    // A run of the text in a doubly linked list of symbols; merged-away symbols get len 0.
    struct Symbol {
        int32_t prev, next;
        size_t start, len;
        int32_t id;  // the piece this symbol is, once merged; -1 for a single character
    };
    // The symbol `left` and the one after it, whose concatenation is the piece `id`.
    // 16 bytes: the queue of a whole file's pairs is large, and sifting it is the hot loop.
    struct Bigram {
        float score;
        int32_t left;
        uint32_t len;  // of the concatenation, to spot pairs made stale by other merges
        int32_t id;
    };
    // Highest score first; on equal scores the leftmost pair first.
    struct Lower {
        bool operator()(const Bigram& a, const Bigram& b) const {
            return a.score < b.score || (a.score == b.score && a.left > b.left);
        }
    };
    using Queue = std::priority_queue<Bigram, std::vector<Bigram>, Lower>;

    void encode_fragment(std::string_view text, bool space_prefix, std::vector<int32_t>& out) const;
    void try_add_bigram(std::string_view s, const std::vector<Symbol>& syms, int32_t left,
                        int32_t right, Queue& queue) const;
    void emit_bytes(std::string_view s, std::vector<int32_t>& out) const;
    int32_t find_piece(std::string_view s) const {
        const auto it = pieces_.find(s);
        return it == pieces_.end() ? -1 : it->second;
    }

    // Pieces the merge may form, by text: normal and user-defined ones. Control, unknown
    // and byte tokens never come out of a merge, as in SentencePiece. Unused pieces don't
    // either: SentencePiece merges through them and splits them up again at the end, which
    // can differ only for vocabularies that have some (Llama 2 and TinyLlama have none).
    std::unordered_map<std::string_view, int32_t> pieces_;
    std::array<int32_t, 256> byte_tokens_;  // <0xNN> ids; -1 where the vocab lacks one
};

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    byte_tokens_.fill(-1);
    pieces_.reserve(vocab_.tokens.size());
    // The first of duplicate texts wins.
    for (int32_t id = 0; id < n_vocab(); id++) {
        const TokenType t = vocab_.types[id];
        if (t == TokenType::Normal || t == TokenType::UserDefined) {
            pieces_.emplace(vocab_.tokens[id], id);
        }
        const int b = byte_token_value(vocab_.tokens[id]);
        if (t == TokenType::Byte && b >= 0 && byte_tokens_[b] < 0) byte_tokens_[b] = id;
    }
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
    std::vector<int32_t> out;
    if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
    // Like llama.cpp (and Meta's reference, which encodes each segment of a chat on its
    // own), every run of text that starts the input or follows a special token gets the
    // space prefix.
    bool at_fragment_start = true;
    for (const Fragment& f : split_special(text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            at_fragment_start = true;
        } else {
            encode_fragment(f.text, at_fragment_start && vocab_.add_space_prefix, out);
            at_fragment_start = false;
        }
    }
    return out;
}

void SpmTokenizer::encode_fragment(std::string_view text, bool space_prefix,
                                   std::vector<int32_t>& out) const {
    static constexpr std::string_view kSpace = "\xE2\x96\x81";
    std::string s;
    s.reserve(text.size() + text.size() / 4 + kSpace.size());
    if (space_prefix) s += kSpace;
    for (char c : text) {
        if (c == ' ') {
            s += kSpace;
        } else {
            s += c;
        }
    }
    if (s.size() > INT32_MAX) throw Error("tokenizer: text longer than 2 GiB");

    // One symbol per UTF-8 character. A byte that starts no valid character is a symbol of
    // its own, so it becomes one byte token and the text around it tokenizes as usual
    // (llama.cpp instead takes the length from the lead byte alone).
    std::vector<Symbol> syms;
    syms.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        const Utf8Char c = utf8_next(std::string_view(s).substr(pos));
        const size_t len = c.status == Utf8Status::Valid ? c.len : 1;
        const auto i = static_cast<int32_t>(syms.size());
        syms.push_back({i - 1, pos + len < s.size() ? i + 1 : -1, pos, len, -1});
        pos += len;
    }

    std::vector<Bigram> storage;
    storage.reserve(syms.size());
    Queue queue(Lower{}, std::move(storage));
    for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); i++) {
        try_add_bigram(s, syms, i - 1, i, queue);
    }
    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol& left = syms[b.left];
        // Skip pairs that an earlier merge consumed or extended: then `left` is gone, or
        // its length or its right neighbour's differs from when the pair was queued.
        if (left.len == 0 || left.next < 0) continue;
        Symbol& right = syms[left.next];
        if (left.len + right.len != b.len) continue;

        left.len += right.len;
        left.id = b.id;
        right.len = 0;
        left.next = right.next;
        if (left.next >= 0) syms[left.next].prev = b.left;

        try_add_bigram(s, syms, left.prev, b.left, queue);
        try_add_bigram(s, syms, b.left, left.next, queue);
    }

    for (int32_t i = syms.empty() ? -1 : 0; i != -1; i = syms[i].next) {
        const Symbol& sym = syms[i];
        const std::string_view piece = std::string_view(s).substr(sym.start, sym.len);
        const int32_t id = sym.id >= 0 ? sym.id : find_piece(piece);
        if (id >= 0) {
            out.push_back(id);
        } else {
            emit_bytes(piece, out);
        }
    }
}

void SpmTokenizer::try_add_bigram(std::string_view s, const std::vector<Symbol>& syms, int32_t left,
                                  int32_t right, Queue& queue) const {
    if (left < 0 || right < 0) return;
    const size_t len = syms[left].len + syms[right].len;
    const int32_t id = find_piece(s.substr(syms[left].start, len));
    if (id < 0) return;
    const float score = vocab_.scores.empty() ? 0.0f : vocab_.scores[id];
    queue.push({score, left, static_cast<uint32_t>(len), id});
}

// Byte fallback: a character with no piece of its own is spelled as <0xNN> tokens, or as
// <unk> per byte where the vocab has no byte tokens.
void SpmTokenizer::emit_bytes(std::string_view s, std::vector<int32_t>& out) const {
    for (char c : s) {
        const int32_t id = byte_tokens_[static_cast<uint8_t>(c)];
        if (id >= 0) {
            out.push_back(id);
        } else if (vocab_.unk >= 0) {
            out.push_back(vocab_.unk);
        } else {
            throw Error("tokenizer: byte " + std::to_string(static_cast<uint8_t>(c)) +
                        " has no token and the vocabulary has no <unk>");
        }
    }
}

}  // namespace

int byte_token_value(std::string_view s) {
    auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
    const int hi = hex(s[3]), lo = hex(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::unique_ptr<Tokenizer> make_spm_tokenizer(Vocab vocab) {
    return std::make_unique<SpmTokenizer>(std::move(vocab));
}

}  // namespace lila
