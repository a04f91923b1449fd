// Byte-level BPE as GPT-2 introduced it and Llama 3, SmolLM and Qwen2 use it; the same
// algorithm as Hugging Face tokenizers, tiktoken and llama.cpp's llm_tokenizer_bpe.
//
// 1. Special tokens are cut out of the text (Tokenizer::split_special).
// 2. Each remaining run is split into words by the model's pre-tokenizer regexes (PCRE2,
//    Unicode classes), chosen by tokenizer.ggml.pre.
// 3. Each byte of a word is replaced by its GPT-2 stand-in character (bytes_to_unicode), so
//    a token's text is printable; a word's symbols start as its single bytes.
// 4. Adjacent symbols are merged, lowest merge rank first (ties: leftmost), until no listed
//    pair remains. A priority queue makes this O(n log n) in the word's length.
#include "src/tokenizer/tokenizer_bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <climits>
#include <unordered_map>

#include "src/base/error.h"
#include "src/base/utf8.h"

namespace lila {

namespace {

// The GPT-2 regex, as Hugging Face's ByteLevel pre-tokenizer writes it.
constexpr const char* kGpt2Regex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
constexpr const char* kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// A pre-tokenizer: regexes applied one after the other, each splitting every piece the
// previous ones left (matches and the text between them both become pieces), as
// Hugging Face's Sequence pre-tokenizer and llama.cpp's unicode_regex_split do.
struct PreTokenizerSpec {
    const char* name;  // tokenizer.ggml.pre, as llama.cpp names it
    std::vector<const char*> regexes;
    // A word that is a token as a whole is that token, without merging (Llama 3's
    // tokenizer.json sets ignore_merges; llama.cpp keys it on the pre-tokenizer too).
    bool ignore_merges;
};

const std::vector<PreTokenizerSpec>& pre_tokenizer_specs() {
    static const std::vector<PreTokenizerSpec> specs = {
        {"llama-bpe", {kLlama3Regex}, true},
        {"llama3", {kLlama3Regex}, true},
        {"llama-v3", {kLlama3Regex}, true},
        {"qwen2", {kQwen2Regex}, false},
        {"smollm", {"\\p{N}", kGpt2Regex}, false},
        {"gpt-2", {kGpt2Regex}, false},
        // What llama.cpp uses when a "gpt2" vocabulary names no pre-tokenizer.
        {"default", {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2Regex, "\\p{N}+", "[0-9][0-9][0-9]"}, false},
    };
    return specs;
}

// In the reference tokenizers (Rust regex, Oniguruma) \s is Unicode White_Space; PCRE2's \s
// also matches U+180E, so spell the property out.
std::string translate_regex(std::string_view re) {
    std::string out;
    for (size_t i = 0; i < re.size(); i++) {
        if (re[i] == '\\' && i + 1 < re.size()) {
            const char c = re[++i];
            if (c == 's') {
                out += "\\p{White_Space}";
            } else if (c == 'S') {
                out += "\\P{White_Space}";
            } else {
                out += '\\';
                out += c;
            }
        } else {
            out += re[i];
        }
    }
    return out;
}

class Regex {
public:
    explicit Regex(std::string_view pattern) {
        const std::string re = translate_regex(pattern);
        int err = 0;
        PCRE2_SIZE at = 0;
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
        if (!code_) {
            throw Error("tokenizer: pre-tokenizer regex '" + std::string(pattern) +
                        "': " + message(err) + " at offset " + std::to_string(at));
        }
        // JIT is several times faster; where it is unavailable the interpreter is used.
        pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
    }
    ~Regex() { pcre2_code_free(code_); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Appends the matches in `text` (valid UTF-8) and the runs between them to `out`.
    void split(std::string_view text, pcre2_match_data* md,
               std::vector<std::string_view>& out) const {
        const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        size_t pos = 0, gap = 0;  // where to search from; where the unmatched run began
        while (pos < text.size()) {
            const int rc =
                pcre2_match(code_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) throw Error("tokenizer: pre-tokenizer regex failed: " + message(rc));
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            if (ov[1] == ov[0]) {  // an empty match: step over one character
                if (ov[0] >= text.size()) break;
                pos = ov[0] + utf8_next(text.substr(ov[0])).len;
                continue;
            }
            if (ov[0] > gap) out.push_back(text.substr(gap, ov[0] - gap));
            out.push_back(text.substr(ov[0], ov[1] - ov[0]));
            pos = gap = ov[1];
        }
        if (gap < text.size()) out.push_back(text.substr(gap));
    }

private:
    static std::string message(int err) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return reinterpret_cast<const char*>(buf);
    }
    pcre2_code* code_;
};

// GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the other 68 for
// U+0100.. in byte order, so every byte has a visible, non-space character.
struct ByteMap {
    std::array<std::string, 256> text;  // byte -> UTF-8 of its character
    std::array<int16_t, 324> byte;      // code point -> byte; -1 for none

    ByteMap() {
        byte.fill(-1);
        uint32_t next = 256;
        for (int b = 0; b < 256; b++) {
            const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
            const uint32_t cp = printable ? uint32_t(b) : next++;
            utf8_append(text[b], cp);
            byte[cp] = int16_t(b);
        }
    }
};

const ByteMap& byte_map() {
    static const ByteMap m;
    return m;
}

class BpeTokenizer final : public Tokenizer {
public:
    explicit BpeTokenizer(Vocab vocab);
    BpeTokenizer(const BpeTokenizer&) = delete;  // pieces_ points into vocab_
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                bool parse_special) const override;
    std::string token_to_piece(int32_t id, bool special) const override;

private:
    struct Merge {
        int32_t rank;
        int32_t id;  // the token the pair becomes
    };
    // A run of the word in a doubly linked list of symbols; merged-away symbols get len 0.
    struct Symbol {
        int32_t prev, next;
        uint32_t start, len;
        int32_t id;
    };
    // The symbol `left` and the one after it may merge into `id`. 16 bytes, as the SPM queue.
    struct Candidate {
        int32_t rank;
        int32_t left;
        uint32_t len;  // of the pair, to spot pairs made stale by other merges
        int32_t id;
    };
    // Heap order: lowest rank first; on equal ranks the leftmost pair first.
    struct Later {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
        }
    };
    // Buffers reused across the words of one encode() call.
    struct Scratch {
        pcre2_match_data* md = nullptr;
        std::vector<std::string_view> pieces, next;
        std::string mapped;
        std::vector<Symbol> syms;
        std::vector<Candidate> queue;
    };

    void split_words(std::string_view text, Scratch& s) const;
    void encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const;
    void push_candidate(Scratch& s, int32_t left, int32_t right) const;
    static uint64_t pair_key(int32_t a, int32_t b) {
        return uint64_t(uint32_t(a)) << 32 | uint32_t(b);
    }

    std::vector<std::unique_ptr<Regex>> regexes_;
    bool ignore_merges_ = false;
    std::unordered_map<std::string_view, int32_t> pieces_;  // normal tokens by text
    std::unordered_map<uint64_t, Merge> merges_;            // by (left id, right id)
    std::array<int32_t, 256> byte_tokens_;                  // each byte's one-character token
};

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    const std::string pre = vocab_.pre.empty() ? "default" : vocab_.pre;
    const PreTokenizerSpec* spec = nullptr;
    for (const PreTokenizerSpec& s : pre_tokenizer_specs()) {
        if (pre == s.name) spec = &s;
    }
    if (!spec) {
        std::string known;
        for (const std::string& n : bpe_pre_tokenizers()) known += (known.empty() ? "" : ", ") + n;
        throw Error("tokenizer: pre-tokenizer '" + pre + "' is not supported (supported: " + known +
                    ")");
    }
    for (const char* re : spec->regexes) regexes_.push_back(std::make_unique<Regex>(re));
    ignore_merges_ = spec->ignore_merges;

    // The first of duplicate texts wins, as in the SentencePiece tokenizer.
    pieces_.reserve(vocab_.tokens.size());
    for (int32_t id = 0; id < n_vocab(); id++) {
        if (vocab_.types[id] == TokenType::Normal) pieces_.emplace(vocab_.tokens[id], id);
    }
    const ByteMap& bm = byte_map();
    for (int b = 0; b < 256; b++) {
        const auto it = pieces_.find(bm.text[b]);
        byte_tokens_[b] = it == pieces_.end() ? -1 : it->second;
    }

    // A merge whose halves or result are not tokens can never apply; Hugging Face refuses
    // such a file, llama.cpp ignores the merge, and so does lila.
    merges_.reserve(vocab_.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab_.merges.size(); rank++) {
        const std::string& m = vocab_.merges[rank];
        const size_t space = m.find(' ', 1);  // from 1: a half may itself start with a space
        if (space == std::string::npos) {
            throw Error("tokenizer: merge " + std::to_string(rank) + " '" + m +
                        "' is not two tokens separated by a space");
        }
        const auto a = pieces_.find(std::string_view(m).substr(0, space));
        const auto b = pieces_.find(std::string_view(m).substr(space + 1));
        joined.assign(m, 0, space).append(m, space + 1);
        const auto ab = pieces_.find(joined);
        if (a == pieces_.end() || b == pieces_.end() || ab == pieces_.end()) continue;
        merges_.emplace(pair_key(a->second, b->second), Merge{int32_t(rank), ab->second});
    }
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
    std::vector<int32_t> out;
    if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create(3, nullptr), pcre2_match_data_free);
    if (!md) throw std::bad_alloc();
    Scratch s;
    s.md = md.get();

    for (const Fragment& f : split_special(text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            continue;
        }
        split_words(f.text, s);
        for (std::string_view word : s.pieces) encode_word(word, s, out);
    }
    return out;
}

// Splits `text` into s.pieces. The regexes see only valid UTF-8: each run of invalid bytes
// is a word of its own, so such input still encodes losslessly (byte-level BPE can spell
// any byte), where llama.cpp would turn it into U+FFFD.
void BpeTokenizer::split_words(std::string_view text, Scratch& s) const {
    s.pieces.clear();
    for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const bool valid = utf8_next(text.substr(pos)).status == Utf8Status::Valid;
        while (pos < text.size()) {
            const Utf8Char c = utf8_next(text.substr(pos));
            if ((c.status == Utf8Status::Valid) != valid) break;
            pos += c.len;
        }
        s.pieces.push_back(text.substr(start, pos - start));
    }

    for (const auto& re : regexes_) {
        s.next.clear();
        for (std::string_view piece : s.pieces) {
            if (utf8_next(piece).status == Utf8Status::Valid) {
                re->split(piece, s.md, s.next);
            } else {
                s.next.push_back(piece);
            }
        }
        s.pieces.swap(s.next);
    }
}

void BpeTokenizer::encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const {
    if (word.size() > INT32_MAX) throw Error("tokenizer: text longer than 2 GiB without a break");
    const ByteMap& bm = byte_map();
    if (ignore_merges_) {
        s.mapped.clear();
        for (char c : word) s.mapped += bm.text[uint8_t(c)];
        const auto it = pieces_.find(s.mapped);
        if (it != pieces_.end()) {
            out.push_back(it->second);
            return;
        }
    }

    // Symbols start as single bytes, each its stand-in character's token.
    s.syms.clear();
    for (uint32_t i = 0; i < word.size(); i++) {
        const int32_t id = byte_tokens_[uint8_t(word[i])];
        const auto n = int32_t(s.syms.size());
        s.syms.push_back({n - 1, i + 1 < word.size() ? n + 1 : -1, i, 1, id});
    }
    s.queue.clear();
    for (int32_t i = 1; i < int32_t(s.syms.size()); i++) push_candidate(s, i - 1, i);

    while (!s.queue.empty()) {
        std::pop_heap(s.queue.begin(), s.queue.end(), Later{});
        const Candidate c = s.queue.back();
        s.queue.pop_back();
        Symbol& left = s.syms[c.left];
        // Skip pairs an earlier merge consumed or extended (see tokenizer_spm.cpp).
        if (left.len == 0 || left.next < 0) continue;
        Symbol& right = s.syms[left.next];
        if (left.len + right.len != c.len) continue;

        left.len += right.len;
        left.id = c.id;
        right.len = 0;
        left.next = right.next;
        if (left.next >= 0) s.syms[left.next].prev = c.left;
        push_candidate(s, left.prev, c.left);
        push_candidate(s, c.left, left.next);
    }

    for (int32_t i = s.syms.empty() ? -1 : 0; i != -1; i = s.syms[i].next) {
        const Symbol& sym = s.syms[i];
        if (sym.id >= 0) {
            out.push_back(sym.id);
        } else if (vocab_.unk >= 0) {
            out.push_back(vocab_.unk);
        } else {
            throw Error("tokenizer: byte " + std::to_string(uint8_t(word[sym.start])) +
                        " has no token and the vocabulary has no unknown token");
        }
    }
}

// Queues the pair (left, right) if the merges list it: s.queue is a heap, lowest rank on top.
void BpeTokenizer::push_candidate(Scratch& s, int32_t left, int32_t right) const {
    if (left < 0 || right < 0) return;
    const Symbol& l = s.syms[left];
    const Symbol& r = s.syms[right];
    if (l.id < 0 || r.id < 0) return;
    const auto it = merges_.find(pair_key(l.id, r.id));
    if (it == merges_.end()) return;
    s.queue.push_back({it->second.rank, left, l.len + r.len, it->second.id});
    std::push_heap(s.queue.begin(), s.queue.end(), Later{});
}

// A normal token's text is the stand-in characters of its bytes: map them back. Anything
// else is as the base class has it (user-defined tokens are stored as raw text).
std::string BpeTokenizer::token_to_piece(int32_t id, bool special) const {
    if (id < 0 || id >= n_vocab() || vocab_.types[id] != TokenType::Normal) {
        return Tokenizer::token_to_piece(id, special);
    }
    const ByteMap& bm = byte_map();
    std::string_view text = vocab_.tokens[id];
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const Utf8Char c = utf8_next(text);
        const size_t len = c.status == Utf8Status::Valid ? c.len : 1;
        uint32_t cp = 0;
        if (len == 1) {
            cp = uint8_t(text[0]);
        } else if (len == 2) {
            cp = (uint32_t(text[0] & 0x1F) << 6) | (text[1] & 0x3F);
        } else {
            cp = UINT32_MAX;  // beyond U+07FF: no byte stands for it
        }
        if (cp < bm.byte.size() && bm.byte[cp] >= 0) {
            out += char(bm.byte[cp]);
        } else {
            out.append(text.substr(0, len));
        }
        text.remove_prefix(len);
    }
    return out;
}

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab) {
    return std::make_unique<BpeTokenizer>(std::move(vocab));
}

std::vector<std::string> bpe_pre_tokenizers() {
    std::vector<std::string> names;
    for (const PreTokenizerSpec& s : pre_tokenizer_specs()) names.push_back(s.name);
    return names;
}

std::vector<std::string> bpe_pre_tokenizer_regexes(std::string_view pre) {
    for (const PreTokenizerSpec& s : pre_tokenizer_specs()) {
        if (pre == s.name) return {s.regexes.begin(), s.regexes.end()};
    }
    return {};
}

}  // namespace lila
