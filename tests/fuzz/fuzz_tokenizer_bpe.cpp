// The byte-level BPE tokenizer (PCRE2 pre-tokenizer, merges by rank) on arbitrary bytes and
// arbitrary ids, with the real Llama 3 vocabulary read from its tokenizer.json.
#include "src/tokenizer/hf_tokenizer.h"
#include "tokenizer_checks.h"

namespace {

const lila::Tokenizer& llama3() {
    using namespace lila;
    static const auto tok =
        Tokenizer::create(read_hf_tokenizer(fuzz::shared_path("tokenizers/llama3")).vocab);
    return *tok;
}

}  // namespace

// The vocabulary is read once, here, outside the per-input timeout: under ASan on a loaded
// machine reading the 9 MB tokenizer.json took longer than -timeout (a false "hang").
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    llama3();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    lila::fuzz::fuzz_tokenizer(llama3(), data, size, true);
    return 0;
}
