// The SentencePiece-style tokenizer on arbitrary bytes and arbitrary ids, with the two real
// vocabularies lila meets: llama2.c's tok512 (stories260K) and Llama 2's 32000 pieces.
#include "src/hf_tokenizer.h"
#include "src/llama2c_tokenizer.h"
#include "tokenizer_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    static const auto tok512 =
        Tokenizer::create(read_llama2c_tokenizer(fuzz::shared_path("models/tok512.bin"), 512));
    static const auto llama2 =
        Tokenizer::create(read_hf_tokenizer(fuzz::shared_path("tokenizers/llama2")).vocab);
    // Bit 7 of the flags byte picks the vocabulary.
    const Tokenizer& tok = size > 0 && (data[0] & 0x80) ? *llama2 : *tok512;
    fuzz::fuzz_tokenizer(tok, data, size, true);
    return 0;
}
