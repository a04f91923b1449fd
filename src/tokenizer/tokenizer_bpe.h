// Byte-level BPE (tokenizer.ggml.model "gpt2": Llama 3, SmolLM, Qwen2): internal to
// tokenizer.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/tokenizer/tokenizer.h"

namespace lila {

// Error for malformed merges; an unknown tokenizer.ggml.pre gets llama.cpp's default regexes
// and a warning.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab);

// The tokenizer.ggml.pre values the byte-level tokenizer understands, llama.cpp's names.
std::vector<std::string> bpe_pre_tokenizers();
// The regexes pre-tokenizer `pre` runs, in order; empty for an unknown name.
std::vector<std::string> bpe_pre_tokenizer_regexes(std::string_view pre);
// llama.cpp's name for the pre-tokenizer of a tokenizer.json that splits with `regexes` (in
// its own spelling) and sets model.ignore_merges so; "" when none. Where names share the
// regexes, the one with the same ignore_merges wins.
std::string bpe_pre_tokenizer_for(const std::vector<std::string>& regexes, bool ignore_merges);
// The regex of Hugging Face's ByteLevel pre-tokenizer (use_regex): GPT-2's.
const char* bpe_byte_level_regex();
// Whether llama.cpp adds BOS for pre-tokenizer `pre` when the file does not say.
bool bpe_pre_tokenizer_adds_bos(std::string_view pre);
// The words pre-tokenizer `pre` cuts `text` into (valid UTF-8), as the tokenizer does before
// merging: what tests compare with llama.cpp's unicode_regex_split.
std::vector<std::string> bpe_pre_tokenize(std::string_view pre, std::string_view text);

}  // namespace lila
