// A tokenizer vocabulary as GGUF stores it (tokenizer.ggml.*), independent of where it
// came from (a GGUF file, a llama2.c tokenizer.bin, a Hugging Face tokenizer.json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lila {

class GGUFFile;
class GGUFWriter;

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct Vocab {
    std::string model = "llama";      // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2"
    std::string pre;                  // tokenizer.ggml.pre (byte-level BPE pre-tokenizer id)
    std::vector<std::string> tokens;  // SentencePiece pieces use U+2581 for space, bytes as <0xNN>
    std::vector<float> scores;        // empty or one per token
    std::vector<TokenType> types;     // one per token
    std::vector<std::string> merges;  // byte-level BPE only: "a b" pairs in rank order
    int32_t bos = -1, eos = -1, eot = -1, unk = -1, pad = -1;  // -1: none
    bool add_bos = true;
    bool add_eos = false;
    bool add_space_prefix = true;  // SentencePiece dummy prefix

    int32_t size() const { return static_cast<int32_t>(tokens.size()); }

    // Reads tokenizer.ggml.*; Error naming the file on missing or inconsistent keys.
    static Vocab from_gguf(const GGUFFile& f);
    void to_gguf(GGUFWriter& w) const;
};

}  // namespace lila
