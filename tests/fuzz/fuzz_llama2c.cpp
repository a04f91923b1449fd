// A llama2.c checkpoint of arbitrary bytes through `lila convert`: the header check, the
// size check of the weights it describes, the conversion itself, and the model it wrote.
// The tokenizer.bin beside it is made to fit the header's vocabulary, so inputs with a
// plausible header convert all the way.
//
// Promises under test (src/convert/llama2c.h): a truncated or inconsistent checkpoint is a
// lila::Error, never a crash or an out-of-bounds read of the mapping; a checkpoint the
// converter accepts gives a GGUF file that loads as a model.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "fuzz_util.h"
#include "src/convert/llama2c.h"
#include "src/runtime/model.h"

namespace lila {
namespace {

constexpr int32_t kMaxVocab = 1 << 12;  // larger vocabularies: the header check alone

// Token `id` of a llama2.c vocabulary: <unk>, <s>, </s> as llama2.c exports them, then
// distinct pieces.
std::string piece(int32_t id) {
    if (id < 3) return id == 0 ? "<unk>" : id == 1 ? "\n<s>\n" : "\n</s>\n";
    std::string p = "p";
    return p.append(std::to_string(id));  // not "p" + ...: GCC 12 warns falsely (bug 105651)
}

// A llama2.c tokenizer.bin of n tokens.
std::string tokenizer_bin(int32_t n) {
    std::string out;
    auto put = [&out](const void* p, size_t k) { out.append(static_cast<const char*>(p), k); };
    const int32_t max_len = 16;
    put(&max_len, 4);
    for (int32_t id = 0; id < n; id++) {
        const std::string text = piece(id);
        const float score = -float(id);
        const int32_t len = int32_t(text.size());
        put(&score, 4);
        put(&len, 4);
        put(text.data(), text.size());
    }
    return out;
}

// Where converted files go: tmpfs when there is one, so the writer's fsync costs nothing.
std::string output_path() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    return (dir / ("lila-fuzz-llama2c-" + std::to_string(getpid()) + ".gguf")).string();
}

// The weight type of the conversion, from the input's length: each input always converts
// the same way, and the quantizers see arbitrary floats too.
ggml_lite::Type output_type(size_t size) {
    constexpr ggml_lite::Type kTypes[] = {ggml_lite::Type::F32, ggml_lite::Type::F16,
                                          ggml_lite::Type::BF16, ggml_lite::Type::Q8_0,
                                          ggml_lite::Type::Q4_0};
    return kTypes[size % std::size(kTypes)];
}

}  // namespace
}  // namespace lila

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    const fuzz::MemFile checkpoint(data, size);
    Llama2cConfig c;
    try {
        c = read_llama2c_config(checkpoint.path());
    } catch (const Error&) {
        return 0;
    }
    if (c.vocab_size > kMaxVocab) return 0;
    const std::string tok = tokenizer_bin(c.vocab_size);
    const fuzz::MemFile tokenizer(reinterpret_cast<const uint8_t*>(tok.data()), tok.size());
    static const std::string out = output_path();
    ConvertOptions opts;
    opts.type = output_type(size);
    try {
        convert_llama2c(checkpoint.path(), tokenizer.path(), out, opts);
    } catch (const Error&) {
        fuzz::check(!std::filesystem::exists(out), "a failed convert leaves no output");
        return 0;
    }
    try {
        Model::load(out);
    } catch (const Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        fuzz::check(false, "a converted checkpoint loads as a model");
    }
    std::filesystem::remove(out);
    return 0;
}
