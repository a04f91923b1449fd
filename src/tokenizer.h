// Text <-> token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vocab.h"

namespace lila {

class Tokenizer {
public:
    // SentencePiece-style BPE for model "llama"; Error for a model lila does not support.
    static std::unique_ptr<Tokenizer> create(Vocab vocab);
    virtual ~Tokenizer() = default;

    // add_bos: prepend BOS (callers pass vocab().add_bos for the model's default).
    // parse_special: text of control/user-defined tokens (e.g. "<s>", "<|eot_id|>") becomes
    // those tokens; otherwise it is plain text.
    virtual std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                        bool parse_special) const = 0;
    // The bytes a token stands for when printed (U+2581 -> ' ', <0xNN> -> the byte; control
    // tokens -> "" unless `special`, then their text). May be a partial UTF-8 sequence.
    virtual std::string token_to_piece(int32_t id, bool special = false) const = 0;

    const Vocab& vocab() const { return vocab_; }
    int32_t n_vocab() const { return vocab_.size(); }
    // End of generation: EOS, EOT, or another control token the vocab marks as such.
    bool is_eog(int32_t id) const;

protected:
    explicit Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {}
    Vocab vocab_;
};

// Turns a stream of token ids into text that never splits a UTF-8 character: bytes of an
// incomplete character are held back until it completes. Invalid sequences come out as
// U+FFFD rather than being held forever.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tok) : tok_(tok) {}
    std::string push(int32_t id);
    std::string flush();  // whatever is held back, invalid bytes as U+FFFD

private:
    const Tokenizer& tok_;
    std::string pending_;
};

}  // namespace lila
