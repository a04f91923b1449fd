// Byte-level BPE (tokenizer.ggml.model "gpt2": Llama 3, SmolLM, Qwen2): internal to
// tokenizer.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/tokenizer/tokenizer.h"

namespace lila {

// Error for an unknown tokenizer.ggml.pre or malformed merges.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab);

// The tokenizer.ggml.pre values the byte-level tokenizer understands, llama.cpp's names.
std::vector<std::string> bpe_pre_tokenizers();
// The regexes pre-tokenizer `pre` splits text with, in order; empty for an unknown name.
std::vector<std::string> bpe_pre_tokenizer_regexes(std::string_view pre);

}  // namespace lila
