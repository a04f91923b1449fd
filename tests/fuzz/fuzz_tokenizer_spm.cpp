// The SentencePiece-style tokenizer on arbitrary bytes and arbitrary ids, with the two real
// vocabularies lila meets: llama2.c's tok512 (stories260K) and Llama 2's 32000 pieces.
#include <memory>

#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/llama2c_tokenizer.h"
#include "tokenizer_checks.h"

namespace {

struct Vocabularies {
    std::unique_ptr<lila::Tokenizer> tok512, llama2;
};

const Vocabularies& vocabularies() {
    using namespace lila;
    static const Vocabularies v{
        Tokenizer::create(read_llama2c_tokenizer(fuzz::shared_path("models/tok512.bin"), 512)),
        Tokenizer::create(read_hf_tokenizer(fuzz::shared_path("tokenizers/llama2")).vocab)};
    return v;
}

}  // namespace

// The vocabularies are read once, here, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    vocabularies();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const Vocabularies& v = vocabularies();
    // Bit 7 of the flags byte picks the vocabulary.
    const lila::Tokenizer& tok = size > 0 && (data[0] & 0x80) ? *v.llama2 : *v.tok512;
    lila::fuzz::fuzz_tokenizer(tok, data, size, true);
    return 0;
}
