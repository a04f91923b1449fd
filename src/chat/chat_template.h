// Chat templates: how a conversation is laid out as text for a chat-tuned model.
//
// Models ship a Jinja template (`tokenizer.chat_template`); lila does not run Jinja. Like
// llama.cpp's llm_chat_detect_template, it recognises the template family by distinctive
// substrings and formats with its own row of a table: one row per family.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lila {

class GGUFFile;
class Tokenizer;
struct Vocab;

enum class Role { System, User, Assistant };

const char* role_name(Role r);  // "system", "user", "assistant"
std::optional<Role> role_from_name(std::string_view name);

struct ChatMessage {
    Role role;
    std::string content;

    bool operator==(const ChatMessage&) const = default;
};

// One template family. Text fields may hold "{bos}" and "{eos}", which stand for the
// vocabulary's BOS and EOS token text, as bos_token and eos_token do in the Jinja original.
struct ChatTemplate {
    const char* name;
    std::array<const char*, 2> detect;  // the Jinja text holds all of these (nullptr: unused)
    const char* reject;                 // ... and not this one (nullptr: unused)
    const char* start;                  // once, before the first message
    // Each message is prefix + content + suffix. A family without a system role (merge_system)
    // puts system_prefix + system + system_suffix in front of the first user message's content.
    const char* system_prefix;
    const char* system_suffix;
    bool merge_system;
    const char* user_prefix;
    const char* user_suffix;
    const char* assistant_prefix;
    const char* assistant_suffix;
    const char* generation_prompt;  // opens the assistant's turn
    // End-of-turn markers: generation stops at them and they are never shown. A marker that
    // is a special token of the vocabulary is matched by id, any other as text.
    std::array<const char*, 3> stops;
    // The system prompt the model's template writes when the conversation has none
    // (nullptr: no system message then).
    const char* default_system = nullptr;
};

// The table, in detection order; the last row is "plain", the fallback.
std::span<const ChatTemplate> chat_templates();
std::string chat_template_names();  // "chatml, llama2, ...", for messages
// The row named `name`; nullptr when there is none.
const ChatTemplate* find_chat_template(std::string_view name);
// The family of a Jinja template (or of a bare template name); nullptr when unrecognised.
const ChatTemplate* detect_chat_template(std::string_view jinja);

// The template for a model file: `override_name` when given (Error when unknown), else the
// family of the file's tokenizer.chat_template, else "plain". `note` receives a line for the
// user when the file has a template lila does not recognise.
const ChatTemplate& pick_chat_template(const GGUFFile& file, const std::string& override_name,
                                       std::string* note);

// The conversation as text; with add_generation_prompt, the assistant's turn is opened at the
// end. Content is used as given (the chat engine stores it trimmed).
std::string format_chat(const ChatTemplate& t, const Vocab& vocab,
                        std::span<const ChatMessage> messages, bool add_generation_prompt);

// The token ids of a conversation: the text above with marker text as special tokens, and
// the vocabulary's BOS first when it adds one and the template did not write it already.
std::vector<int32_t> tokenize_chat(const ChatTemplate& t, const Tokenizer& tok,
                                   std::span<const ChatMessage> messages,
                                   bool add_generation_prompt);

// The template's end-of-turn markers with {bos}/{eos} resolved; empty ones left out.
std::vector<std::string> chat_stop_strings(const ChatTemplate& t, const Vocab& vocab);

}  // namespace lila
