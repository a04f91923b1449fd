// Reader for SentencePiece `tokenizer.model` files (Llama 2, TinyLlama, Mistral): a
// serialized ModelProto, decoded here with a small protobuf wire-format reader.
#pragma once

#include <string>

#include "src/tokenizer/vocab.h"

namespace lila {

// The pieces, scores and types of a BPE SentencePiece model as a GGUF-style Vocab
// (model "llama"; unk/bos/eos/pad ids and add_space_prefix from the model's specs;
// add_bos true, add_eos false as Llama does). Error naming the file for an unreadable or
// malformed file, or a model type other than BPE.
Vocab read_sentencepiece_model(const std::string& path);

}  // namespace lila
