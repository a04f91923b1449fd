// Hugging Face tokenizer files (tokenizer.json, tokenizer_config.json, ...) -> a GGUF-style
// Vocab, as llama.cpp's convert_hf_to_gguf.py builds it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/tokenizer/vocab.h"

namespace lila {

struct HfTokenizer {
    Vocab vocab;
    std::string chat_template;  // tokenizer.chat_template; empty when the model has none
};

// Reads the tokenizer of the Hugging Face model directory DIR:
// - tokenizer.json with model.type "BPE" and byte_fallback (Llama 2, TinyLlama, Mistral):
//   SentencePiece-style, model "llama". The pieces and scores come from tokenizer.model when
//   it is beside it; otherwise each piece's score is minus the rank of the first merge that
//   forms it, so merging by score follows the merge order the file defines. (llama.cpp gives
//   every piece -1000 there, which makes its merge order leftmost-first: wrong.)
// - byte-level BPE (Llama 3, SmolLM, Qwen2): model "gpt2" with merges, and the llama.cpp
//   pre-tokenizer name (tokenizer.ggml.pre) whose regexes equal the file's pre-tokenizer.
// Added tokens are control tokens when special (or looking like "<|...|>"), user-defined
// otherwise. BOS/EOS/UNK/PAD come from tokenizer_config.json, then config.json, then
// generation_config.json; EOT is the model's end-of-turn token (<|eot_id|>, <|im_end|>, ...)
// or another end id generation_config.json lists. `n_vocab` (the model's embedding rows, 0:
// the tokenizer's own count) pads the vocabulary with unused "[PADn]" tokens, as llama.cpp
// does. Error naming the file for anything missing, malformed or unsupported.
HfTokenizer read_hf_tokenizer(const std::string& dir, int64_t n_vocab = 0);

// Parses the JSON file PATH; Error naming it when it is unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);

}  // namespace lila
