// The Hugging Face tokenizer files a converter reads from a downloaded model: tokenizer.json
// (JSON of any shape), SentencePiece's tokenizer.model (a protobuf read by lila's own wire
// reader) and tokenizer_config.json, each from arbitrary bytes beside valid other files; then
// the tokenizer built from the vocabulary read.
//
// Input: a flags byte (bits 0-1: which file the rest is), then the file.
// Promise under test (src/tokenizer/hf_tokenizer.h): anything malformed is a lila::Error naming the
// file, never a crash or another exception.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/tokenizer/hf_tokenizer.h"
#include "tokenizer_checks.h"

namespace lila {
namespace {

namespace fs = std::filesystem;

// A valid byte-level BPE tokenizer.json: every byte a token, one merge, Llama 3's regex.
constexpr const char* kBpeJson = R"({"model": {"type": "BPE", "vocab": {VOCAB}, "merges": ["a b"]},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
  "added_tokens": [{"id": 300, "content": "<|eot_id|>", "special": true}]})";

// A SentencePiece-style tokenizer.json, whose pieces come from tokenizer.model beside it.
constexpr const char* kSpmJson =
    R"({"model": {"type": "BPE", "byte_fallback": true, "vocab": {"<unk>": 0}, "merges": []}})";

std::string bpe_json() {
    // GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the rest for U+0100..
    std::string vocab = "{";
    uint32_t next = 256;
    for (int b = 0; b < 256; b++) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
        std::string text;
        utf8_append(text, printable ? uint32_t(b) : next++);
        if (text == "\"" || text == "\\") text = "\\" + text;
        vocab += "\"" + text + "\": " + std::to_string(b) + ", ";
    }
    vocab += "\"ab\": 256}";
    std::string json = kBpeJson;
    return json.replace(json.find("{VOCAB}"), 7, vocab);
}

void write(const fs::path& path, std::string_view bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A fresh model directory per run: the input as one file, valid files for the others.
fs::path model_dir(const fuzz::Flags& f) {
    static const std::string kBpe = bpe_json();
    static const fs::path dir =
        (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
        ("lila-fuzz-hf-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    switch (f.bits & 3) {
        case 0:  // tokenizer.json alone
            write(dir / "tokenizer.json", f.rest);
            break;
        case 1:  // tokenizer.model for a SentencePiece tokenizer.json
            write(dir / "tokenizer.json", kSpmJson);
            write(dir / "tokenizer.model", f.rest);
            break;
        default:  // tokenizer_config.json (or config.json) for a byte-level tokenizer.json
            write(dir / "tokenizer.json", kBpe);
            write(dir / ((f.bits & 3) == 2 ? "tokenizer_config.json" : "config.json"), f.rest);
            break;
    }
    return dir;
}

}  // namespace
}  // namespace lila

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    const fuzz::Flags f = fuzz::split_flags(data, size);
    HfTokenizer hf;
    try {
        hf = read_hf_tokenizer(model_dir(f).string());
    } catch (const Error&) {
        return 0;
    }
    std::unique_ptr<Tokenizer> tok;
    try {
        tok = Tokenizer::create(std::move(hf.vocab));
    } catch (const Error&) {
        return 0;  // e.g. SentencePiece pieces with NaN scores: refused with a message
    }
    const std::string text = "Hello, world! <|eot_id|> \xE2\x96\x81 \xFF\xC3\xA9 123";
    // A vocabulary that cannot spell a byte of the text and has no unknown token to stand in
    // for it is accepted (most texts still encode) and refuses such a text with an Error
    // naming the byte, which `lila` prints as its one-line message. Nothing else may throw.
    bool encodes = true;
    try {
        (void)tok->encode(text, true, true);
    } catch (const Error&) {
        encodes = false;
        fuzz::check(tok->vocab().unk < 0, "encode fails only where there is no unknown token");
    }
    if (encodes) fuzz::check_encode(*tok, text, true, true, false);
    fuzz::check_decode(*tok, f.rest, true);
    return 0;
}
