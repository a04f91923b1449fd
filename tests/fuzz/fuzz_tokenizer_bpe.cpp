// The byte-level BPE tokenizer (PCRE2 pre-tokenizer, merges by rank) on arbitrary bytes and
// arbitrary ids, with the real Llama 3 vocabulary read from its tokenizer.json.
#include "src/hf_tokenizer.h"
#include "tokenizer_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    static const auto llama3 =
        Tokenizer::create(read_hf_tokenizer(fuzz::shared_path("tokenizers/llama3")).vocab);
    fuzz::fuzz_tokenizer(*llama3, data, size, true);
    return 0;
}
