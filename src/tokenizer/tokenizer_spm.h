// SentencePiece-style BPE (tokenizer.ggml.model "llama"): internal to tokenizer.cpp.
#pragma once

#include <memory>
#include <string_view>

#include "src/tokenizer/tokenizer.h"

namespace lila {

std::unique_ptr<Tokenizer> make_spm_tokenizer(Vocab vocab);

// "<0xNN>" (a byte token's text) -> NN; -1 for any other text.
int byte_token_value(std::string_view s);

}  // namespace lila
