// The GGUF reader on arbitrary bytes, then what `lila info`, `lila generate` and `lila chat`
// do with what it read: every metadata value through the typed getters, every tensor's
// bytes, the model binding (hyperparameters, shapes), the tokenizer built from the file's
// vocabulary, the chat template, and a short forward pass.
//
// Promise under test (src/io/gguf.h, src/runtime/model.h): a corrupt file is a lila::Error, never a
// crash, an out-of-bounds read or another exception; what the reader accepts is consistent.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "src/chat/chat_template.h"
#include "src/io/gguf.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"

namespace lila {
namespace {

// Each value through every typed getter: each returns it or throws Error, nothing else.
void read_metadata(const GGUFFile& f) {
    for (const auto& entry : f.metadata()) {
        const std::string& key = entry.first;  // not a structured binding: captured below
        fuzz::check(f.find(key) == &entry.second, "find() returns the entry metadata() lists");
        auto attempt = [](auto get) {
            try {
                get();
            } catch (const Error&) {
            }
        };
        attempt([&] { f.get_int(key); });
        attempt([&] { f.get_float(key); });
        attempt([&] { f.get_bool(key); });
        attempt([&] { f.get_string(key); });
        attempt([&] { f.get_string_array(key); });
        attempt([&] { f.get_float_array(key); });
        attempt([&] { f.get_int_array(key); });
    }
}

// Every tensor lies inside the file, at an aligned offset, with the bytes its shape needs;
// reading all of them must stay inside the mapping.
void read_tensors(const GGUFFile& f) {
    fuzz::check(f.data_offset() % f.alignment() == 0, "the data section is aligned");
    uint8_t sum = 0;
    for (const GGUFTensorInfo& t : f.tensors()) {
        fuzz::check(f.find_tensor(t.name) == &t, "find_tensor() returns the listed tensor");
        fuzz::check(t.offset % f.alignment() == 0, "tensor data is aligned");
        fuzz::check(f.data_offset() + t.offset + t.nbytes <= f.file_size(), "tensor inside file");
        const size_t rows = size_t(t.n_elements() / t.shape[0]);
        fuzz::check(t.nbytes == ggml_lite::row_size(t.type, t.shape[0]) * rows,
                    "tensor bytes match its shape and type");
        const auto* p = static_cast<const uint8_t*>(t.data);
        for (size_t i = 0; i < t.nbytes; i++) sum ^= p[i];
    }
    volatile uint8_t sink = sum;
    (void)sink;
}

// What the commands do with a model that loads: names, the tokenizer on a fixed text, the
// chat template, three tokens through the model in batches of two, and eight in one.
void use_model(const Model& m) {
    (void)m.name();
    (void)m.type_summary();
    (void)m.weight_bytes();
    const Tokenizer& tok = m.tokenizer();
    const std::string text = "Hello, world! <s> 123 \xC3\xA9t\xC3\xA9 <|eot_id|>";
    const std::vector<int32_t> ids = tok.encode(text, true, true);
    (void)tok.decode(ids, true);
    std::string note;
    const ChatTemplate& t = pick_chat_template(m.file(), "", &note);
    const std::array<ChatMessage, 2> chat = {{{Role::System, "Be brief."}, {Role::User, "Hi"}}};
    (void)tokenize_chat(t, tok, chat, true);

    SessionParams p;
    p.n_ctx = 4;
    p.n_batch = 2;
    p.n_threads = 1;
    Session s(m, p);
    const std::array<int32_t, 3> prompt = {0, int32_t(tok.n_vocab() - 1), 0};
    const float* logits = s.eval(prompt);
    fuzz::check(logits != nullptr && s.n_past() == 3, "eval stores every token");

    // Eight tokens in one batch: prefill's own routes (the grid types' decoded levels start at 8).
    p.n_ctx = 8;
    p.n_batch = 8;
    Session s8(m, p);
    std::array<int32_t, 8> eight{};
    for (size_t i = 0; i < eight.size(); i++) eight[i] = i % 2 ? int32_t(tok.n_vocab() - 1) : 0;
    fuzz::check(s8.eval(eight) != nullptr && s8.n_past() == 8,
                "a batch of eight stores every token");
}

}  // namespace
}  // namespace lila

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    const fuzz::MemFile file(data, size);
    std::unique_ptr<GGUFFile> f;
    try {
        f = GGUFFile::open(file.path());
    } catch (const Error&) {
        return 0;
    }
    fuzz::check(f->file_size() == size, "the whole file is mapped");
    read_metadata(*f);
    read_tensors(*f);
    try {
        use_model(*Model::load(file.path()));
    } catch (const Error&) {
    }
    return 0;
}
