// Text <-> token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/tokenizer/vocab.h"

namespace lila {

class Tokenizer {
public:
    // SentencePiece-style BPE for model "llama", byte-level BPE for "gpt2"; Error for a model
    // lila does not support or a vocabulary that is inconsistent (sizes, special ids, NaN
    // scores, an unknown pre-tokenizer).
    static std::unique_ptr<Tokenizer> create(Vocab vocab);
    virtual ~Tokenizer() = default;

    // add_bos: prepend BOS (callers pass vocab().add_bos for the model's default).
    // parse_special: text of control/user-defined tokens (e.g. "<s>", "<|eot_id|>") becomes
    // those tokens; otherwise it is plain text. User-defined tokens are always recognised,
    // as SentencePiece and llama.cpp do. Bytes that are not valid UTF-8 become one byte
    // token each (SentencePiece would replace them by U+FFFD), so no input is lost.
    virtual std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                        bool parse_special) const = 0;
    // The bytes a token stands for when printed (U+2581 -> ' ', <0xNN> -> the byte; control
    // tokens -> "" unless `special`, then their text). May be a partial UTF-8 sequence.
    virtual std::string token_to_piece(int32_t id, bool special = false) const;

    // The text of a whole sequence: the pieces concatenated, less the space encode() put in
    // front of each text fragment (at the start and after a special token), so
    // decode(encode(s)) == s for any bytes s, except that SentencePiece's space marker U+2581
    // in s comes back as the space it stands for (as in SentencePiece). Raw bytes: may hold
    // invalid UTF-8.
    std::string decode(std::span<const int32_t> ids, bool special = false) const;

    const Vocab& vocab() const { return vocab_; }
    int32_t n_vocab() const { return vocab_.size(); }
    // End of generation: EOS, EOT, or another control token the vocab marks as such.
    bool is_eog(int32_t id) const;
    // Control, unknown or user-defined: a token encode() cuts out of the text as a whole, so
    // the text after it is a new fragment (and gets its own space prefix).
    bool is_special(int32_t id) const;

protected:
    explicit Tokenizer(Vocab vocab);

    // A piece of the input text: raw text to tokenize (token < 0) or a special token.
    struct Fragment {
        int32_t token;
        std::string_view text;
    };
    // Cuts the special tokens out of `text` as llama.cpp's tokenizer_st_partition does:
    // longest token text first, each found everywhere in what is still raw text.
    std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;

    Vocab vocab_;

private:
    std::vector<int32_t> specials_;  // special token ids, longest text first
};

// Turns a stream of token ids into text that never splits a UTF-8 character: bytes of an
// incomplete character are held back until it completes. Invalid sequences come out as
// U+FFFD rather than being held forever. Like decode(), it drops the space the tokenizer
// put in front of text that follows a special token (e.g. BOS), and, when `at_text_start`,
// in front of the first token: pass true when the stream is the whole text from its
// beginning, false (the default) when it continues text already shown, such as a prompt.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tok, bool at_text_start = false)
        : tok_(tok), at_fragment_start_(at_text_start) {}
    std::string push(int32_t id);
    std::string flush();  // whatever is held back, invalid bytes as U+FFFD

private:
    const Tokenizer& tok_;
    std::string pending_;
    bool at_fragment_start_;
};

}  // namespace lila
