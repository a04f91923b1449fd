// llama2.c's tokenizer.bin reader on arbitrary bytes, then the tokenizer built from the
// vocabulary it read, on a fixed text and on ids.
//
// Input: a u16 vocabulary size (what the checkpoint header would say), then the file.
// Promise under test (src/tokenizer/llama2c_tokenizer.h): a truncated or malformed file is a
// lila::Error, never a crash; a file it accepts gives a vocabulary the tokenizer takes.
#include <cstring>

#include "src/tokenizer/llama2c_tokenizer.h"
#include "tokenizer_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    if (size < 2) return 0;
    uint16_t n_vocab;
    std::memcpy(&n_vocab, data, 2);
    const fuzz::MemFile file(data + 2, size - 2);
    Vocab vocab;
    try {
        vocab = read_llama2c_tokenizer(file.path(), n_vocab);
    } catch (const Error&) {
        return 0;
    }
    fuzz::check(vocab.size() == n_vocab, "one token per vocabulary entry");
    std::unique_ptr<Tokenizer> tok;
    try {
        tok = Tokenizer::create(std::move(vocab));
    } catch (const Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        fuzz::check(false, "the tokenizer takes every vocabulary the reader accepts");
    }
    // A fuzzed vocabulary may lack byte tokens, so encoding need not be lossless.
    const std::string text = "Once upon a time, \xE2\x96\x81 <s> \xFF\xC3\xA9!";
    fuzz::check_encode(*tok, text, true, false, false);
    fuzz::check_encode(*tok, text, false, true, false);
    fuzz::check_decode(*tok, std::string_view(reinterpret_cast<const char*>(data), size), true);
    return 0;
}
