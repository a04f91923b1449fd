// Reader for llama2.c's `tokenizer.bin` (Karpathy's export of a SentencePiece model).
#pragma once

#include <cstdint>
#include <string>

#include "src/tokenizer/vocab.h"

namespace lila {

// Reads the `n_vocab` tokens of a llama2.c tokenizer.bin: int32 max_token_length, then per
// token float32 score, int32 length, that many bytes. llama2.c stores SentencePiece's U+2581
// as a plain space and BOS/EOS as "\n<s>\n"/"\n</s>\n"; the result is the GGUF-style
// vocabulary SentencePiece would give (U+2581 restored, <unk>/<s>/</s> at ids 0/1/2, bytes
// as Byte tokens, add_bos and add_space_prefix set). Error naming the file when it is
// unreadable, truncated, has a bad length, or holds more than `n_vocab` tokens.
Vocab read_llama2c_tokenizer(const std::string& path, int32_t n_vocab);

}  // namespace lila
