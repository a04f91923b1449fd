// The chat-template formatter: template detection on arbitrary Jinja text, and every
// template family formatting and tokenizing an arbitrary conversation with a real
// vocabulary (Llama 3's byte-level BPE, or stories260K's SentencePiece).
//
// Input: a flags byte (bits 0-2: template row, bit 3: add the generation prompt, bit 4: the
// Llama 3 vocabulary), then NUL-separated fields: the Jinja text, then messages whose first
// byte picks the role.
#include <memory>
#include <string>
#include <vector>

#include "src/chat/chat_template.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/llama2c_tokenizer.h"
#include "tokenizer_checks.h"

namespace lila {
namespace {

std::vector<std::string_view> split_fields(std::string_view s) {
    std::vector<std::string_view> fields;
    for (size_t nul; (nul = s.find('\0')) != std::string_view::npos; s.remove_prefix(nul + 1)) {
        fields.push_back(s.substr(0, nul));
    }
    fields.push_back(s);
    return fields;
}

std::vector<ChatMessage> messages(const std::vector<std::string_view>& fields) {
    std::vector<ChatMessage> out;
    for (size_t i = 1; i < fields.size(); i++) {
        if (fields[i].empty()) continue;
        const Role role = Role(uint8_t(fields[i][0]) % 3);
        out.push_back({role, std::string(fields[i].substr(1))});
    }
    return out;
}

// User and assistant turns are always in the text, as given.
void check_format(const ChatTemplate& t, const Vocab& v, const std::vector<ChatMessage>& chat,
                  bool generation_prompt) {
    const std::string text = format_chat(t, v, chat, generation_prompt);
    for (const ChatMessage& m : chat) {
        if (m.role != Role::System) {
            fuzz::check(text.find(m.content) != std::string::npos, "every turn is in the text");
        }
    }
}

struct Vocabularies {
    std::unique_ptr<Tokenizer> tok512, llama3;
};

const Vocabularies& vocabularies() {
    static const Vocabularies v{
        Tokenizer::create(read_llama2c_tokenizer(fuzz::shared_path("models/tok512.bin"), 512)),
        Tokenizer::create(read_hf_tokenizer(fuzz::shared_path("tokenizers/llama3")).vocab)};
    return v;
}

}  // namespace
}  // namespace lila

// The vocabularies are read once, here, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    lila::vocabularies();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    const auto& [tok512, llama3] = vocabularies();

    const fuzz::Flags f = fuzz::split_flags(data, size);
    const std::vector<std::string_view> fields = split_fields(f.rest);
    const ChatTemplate* detected = detect_chat_template(fields[0]);
    fuzz::check(!detected || find_chat_template(detected->name) == detected,
                "a detected template is a row of the table");

    const auto table = chat_templates();
    const ChatTemplate& t = table[(f.bits & 7) % table.size()];
    const bool generation_prompt = f.bit(3);
    const Tokenizer& tok = f.bit(4) ? *llama3 : *tok512;
    const std::vector<ChatMessage> chat = messages(fields);

    check_format(t, tok.vocab(), chat, generation_prompt);
    const std::vector<int32_t> ids = tokenize_chat(t, tok, chat, generation_prompt);
    for (int32_t id : ids) fuzz::check(id >= 0 && id < tok.n_vocab(), "ids in range");
    if (tok.vocab().add_bos) fuzz::check(!ids.empty() && ids[0] == tok.vocab().bos, "BOS first");
    for (const std::string& stop : chat_stop_strings(t, tok.vocab())) {
        fuzz::check(!stop.empty(), "stop strings are not empty");
    }
    return 0;
}
