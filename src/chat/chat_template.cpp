#include "src/chat/chat_template.h"

#include <algorithm>

#include "src/base/error.h"
#include "src/io/gguf.h"
#include "src/tokenizer/tokenizer.h"
#include "src/tokenizer/vocab.h"

namespace lila {

namespace {

// Rows are tried in this order, so a family whose markers another family also uses comes
// first (Llama 2 has <<SYS>> as well as the [INST] of Mistral). Layouts follow the Jinja
// templates the models ship, rendered as Hugging Face does (trim_blocks).
// clang-format off
constexpr ChatTemplate kTemplates[] = {
    // Columns: name, detect, reject, start,
    //          system prefix, suffix, merge_system,  user prefix, suffix,
    //          assistant prefix, suffix,  generation prompt, end-of-turn markers.

    // Phi-4 (14B): ChatML with <|im_sep|> after the role.
    {"phi4", {"<|im_sep|>", nullptr}, nullptr, "",
     "<|im_start|>system<|im_sep|>", "<|im_end|>", false,
     "<|im_start|>user<|im_sep|>", "<|im_end|>",
     "<|im_start|>assistant<|im_sep|>", "<|im_end|>",
     "<|im_start|>assistant<|im_sep|>", {"<|im_end|>", "<|endoftext|>", nullptr}},

    // SmolLM3: ChatML whose system turn is a metadata header (reasoning mode /think, the
    // template's default) around the custom instructions, with a default of its own.
    {"smollm3", {"<|im_start|>", "Reasoning Mode"}, nullptr, "",
     "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\n"
     "Reasoning Mode: /think\n\n## Custom Instructions\n\n", "\n\n<|im_end|>\n", false,
     "<|im_start|>user\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", {"<|im_end|>", "<|endoftext|>", nullptr},
     "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an "
     "assistant involves thoroughly exploring questions through a systematic thinking process "
     "before providing the final precise and accurate solutions. This requires engaging in a "
     "comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, "
     "backtracking, and iteration to develop well-considered thinking process. Please structure "
     "your response into two main sections: Thought and Solution using the specified format: "
     "<think> Thought section </think> Solution section. In the Thought section, detail your "
     "reasoning process in steps. Each step should include detailed considerations such as "
     "analysing questions, summarizing relevant findings, brainstorming new ideas, verifying the "
     "accuracy of the current steps, refining any errors, and revisiting previous steps. In the "
     "Solution section, based on various attempts, explorations, and reflections from the Thought "
     "section, systematically present the final solution that you deem correct. The Solution "
     "section should be logical, accurate, and concise and detail necessary steps needed to "
     "reach the conclusion."},

    // Qwen 2.5: ChatML with a default system prompt.
    {"qwen2.5", {"<|im_start|>", "You are Qwen, created by Alibaba Cloud"}, nullptr, "",
     "<|im_start|>system\n", "<|im_end|>\n", false,  "<|im_start|>user\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", {"<|im_end|>", "<|endoftext|>", nullptr},
     "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."},

    // ChatML: SmolLM2, Qwen 2 and 3, and many fine-tunes.
    {"chatml", {"<|im_start|>", nullptr}, nullptr, "",
     "<|im_start|>system\n", "<|im_end|>\n", false,  "<|im_start|>user\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", "<|im_end|>\n",
     "<|im_start|>assistant\n", {"<|im_end|>", "<|endoftext|>", nullptr}},

    // Llama 2 chat: BOS before every [INST], the system prompt inside the first one.
    {"llama2", {"[INST]", "<<SYS>>"}, nullptr, "",
     "<<SYS>>\n", "\n<</SYS>>\n\n", true,  "{bos}[INST] ", " [/INST]",
     " ", " {eos}",
     "", {"{eos}", nullptr, nullptr}},

    // Mistral Instruct (v0.3 layout). The official template puts the system prompt in the
    // last user message; lila keeps it in the first, so earlier turns never change and the
    // cache stays valid.
    {"mistral", {"[INST]", nullptr}, nullptr, "{bos}",
     "", "\n\n", true,  "[INST] ", "[/INST]",
     " ", "{eos}",
     "", {"{eos}", nullptr, nullptr}},

    // Phi-4-mini: <|role|> tags with no line breaks, turns ended by <|end|>.
    {"phi4-mini", {"'<|' + message['role'] + '|>'", "<|end|>"}, nullptr, "",
     "<|system|>", "<|end|>", false,  "<|user|>", "<|end|>",
     "<|assistant|>", "<|end|>",
     "<|assistant|>", {"<|end|>", "<|endoftext|>", nullptr}},

    // Phi-3 and 3.5.
    {"phi3", {"<|assistant|>", "<|end|>"}, nullptr, "",
     "<|system|>\n", "<|end|>\n", false,  "<|user|>\n", "<|end|>\n",
     "<|assistant|>\n", "<|end|>\n",
     "<|assistant|>\n", {"<|end|>", "<|endoftext|>", nullptr}},

    // OLMo 2 (Tulu 3's template): BOS first, turns end with a line break, the assistant's
    // with EOS too.
    {"olmo2", {"<|user|>", "{{ bos_token }}"}, "<|end|>", "{bos}",
     "<|system|>\n", "\n", false,  "<|user|>\n", "\n",
     "<|assistant|>\n", "{eos}\n",
     "<|assistant|>\n", {"{eos}", nullptr, nullptr}},

    // Granite 3: role tags, turns ended by <|end_of_text|>. Without a system message the
    // model's template writes one with today's date; lila writes none (as llama.cpp).
    {"granite", {"<|start_of_role|>", nullptr}, nullptr, "",
     "<|start_of_role|>system<|end_of_role|>", "<|end_of_text|>\n", false,
     "<|start_of_role|>user<|end_of_role|>", "<|end_of_text|>\n",
     "<|start_of_role|>assistant<|end_of_role|>", "<|end_of_text|>\n",
     "<|start_of_role|>assistant<|end_of_role|>", {"<|end_of_text|>", nullptr, nullptr}},

    // Zephyr, also TinyLlama chat. Phi-3 uses the same tags but ends turns with <|end|>.
    {"zephyr", {"<|user|>", "<|assistant|>"}, "<|end|>", "",
     "<|system|>\n", "{eos}\n", false,  "<|user|>\n", "{eos}\n",
     "<|assistant|>\n", "{eos}\n",
     "<|assistant|>\n", {"{eos}", "<|user|>", nullptr}},

    // Gemma: the assistant is "model", and there is no system role.
    {"gemma", {"<start_of_turn>", nullptr}, nullptr, "{bos}",
     "", "\n\n", true,  "<start_of_turn>user\n", "<end_of_turn>\n",
     "<start_of_turn>model\n", "<end_of_turn>\n",
     "<start_of_turn>model\n", {"<end_of_turn>", "{eos}", nullptr}},

    // Llama 3, 3.1, 3.2 instruct.
    {"llama3", {"<|start_header_id|>", "<|end_header_id|>"}, nullptr, "{bos}",
     "<|start_header_id|>system<|end_header_id|>\n\n", "<|eot_id|>", false,
     "<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|>",
     "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>",
     "<|start_header_id|>assistant<|end_header_id|>\n\n",
     {"<|eot_id|>", "<|eom_id|>", "{eos}"}},

    // Models without a template, such as story models. The generation prompt ends without
    // a space: SentencePiece models write the space as part of their first word.
    {"plain", {nullptr, nullptr}, nullptr, "",
     "", "\n\n", false,  "User: ", "\n",
     "Assistant: ", "\n",
     "Assistant:", {"\nUser:", "{eos}", nullptr}},
};
// clang-format on

std::string token_text(const Vocab& v, int32_t id) {
    return id >= 0 && id < v.size() ? v.tokens[id] : std::string();
}

// Appends a template fragment with {bos} and {eos} replaced by the vocabulary's text.
void append_fragment(std::string& out, std::string_view frag, const Vocab& v) {
    while (!frag.empty()) {
        const size_t brace = frag.find('{');
        out += frag.substr(0, brace);
        if (brace == std::string_view::npos) return;
        frag.remove_prefix(brace);
        if (frag.starts_with("{bos}")) {
            out += token_text(v, v.bos);
            frag.remove_prefix(5);
        } else if (frag.starts_with("{eos}")) {
            out += token_text(v, v.eos);
            frag.remove_prefix(5);
        } else {
            out += '{';
            frag.remove_prefix(1);
        }
    }
}

bool matches(const ChatTemplate& t, std::string_view jinja) {
    if (!t.detect[0]) return false;
    for (const char* s : t.detect) {
        if (s && jinja.find(s) == std::string_view::npos) return false;
    }
    return !t.reject || jinja.find(t.reject) == std::string_view::npos;
}

}  // namespace

const char* role_name(Role r) {
    switch (r) {
        case Role::System:
            return "system";
        case Role::User:
            return "user";
        case Role::Assistant:
            return "assistant";
    }
    return "?";
}

std::optional<Role> role_from_name(std::string_view name) {
    for (Role r : {Role::System, Role::User, Role::Assistant}) {
        if (name == role_name(r)) return r;
    }
    return std::nullopt;
}

std::span<const ChatTemplate> chat_templates() {
    return kTemplates;
}

std::string chat_template_names() {
    std::string names;
    for (const ChatTemplate& t : kTemplates)
        names += (names.empty() ? "" : ", ") + std::string(t.name);
    return names;
}

const ChatTemplate* find_chat_template(std::string_view name) {
    for (const ChatTemplate& t : kTemplates) {
        if (name == t.name) return &t;
    }
    return nullptr;
}

const ChatTemplate* detect_chat_template(std::string_view jinja) {
    if (const ChatTemplate* t = find_chat_template(jinja)) return t;
    for (const ChatTemplate& t : kTemplates) {
        if (matches(t, jinja)) return &t;
    }
    return nullptr;
}

const ChatTemplate& pick_chat_template(const GGUFFile& file, const std::string& override_name,
                                       std::string* note) {
    if (!override_name.empty()) {
        const ChatTemplate* t = find_chat_template(override_name);
        if (!t) {
            throw Error("unknown chat template '" + override_name +
                        "' (known: " + chat_template_names() + ")");
        }
        return *t;
    }
    const ChatTemplate& plain = kTemplates[std::size(kTemplates) - 1];
    const std::optional<std::string> jinja = file.get_string("tokenizer.chat_template");
    if (!jinja) return plain;
    if (const ChatTemplate* t = detect_chat_template(*jinja)) return *t;
    if (note) {
        *note = file.path() + ": chat template not recognised, using 'plain' (choose one with " +
                "--template: " + chat_template_names() + ")";
    }
    return plain;
}

std::string format_chat(const ChatTemplate& t, const Vocab& vocab,
                        std::span<const ChatMessage> messages, bool add_generation_prompt) {
    std::string out;
    append_fragment(out, t.start, vocab);
    std::string_view pending_system;  // for merge_system: waits for the first user message
    const bool has_system = std::any_of(messages.begin(), messages.end(), [](const ChatMessage& m) {
        return m.role == Role::System;
    });
    if (t.default_system && !has_system) {
        append_fragment(out, t.system_prefix, vocab);
        out += t.default_system;
        append_fragment(out, t.system_suffix, vocab);
    }
    for (const ChatMessage& m : messages) {
        switch (m.role) {
            case Role::System:
                if (t.merge_system) {
                    pending_system = m.content;
                    break;
                }
                append_fragment(out, t.system_prefix, vocab);
                out += m.content;
                append_fragment(out, t.system_suffix, vocab);
                break;
            case Role::User:
                append_fragment(out, t.user_prefix, vocab);
                if (!pending_system.empty()) {
                    append_fragment(out, t.system_prefix, vocab);
                    out += pending_system;
                    append_fragment(out, t.system_suffix, vocab);
                    pending_system = {};
                }
                out += m.content;
                append_fragment(out, t.user_suffix, vocab);
                break;
            case Role::Assistant:
                append_fragment(out, t.assistant_prefix, vocab);
                out += m.content;
                append_fragment(out, t.assistant_suffix, vocab);
                break;
        }
    }
    if (add_generation_prompt) append_fragment(out, t.generation_prompt, vocab);
    return out;
}

std::vector<int32_t> tokenize_chat(const ChatTemplate& t, const Tokenizer& tok,
                                   std::span<const ChatMessage> messages,
                                   bool add_generation_prompt) {
    const Vocab& v = tok.vocab();
    std::vector<int32_t> ids =
        tok.encode(format_chat(t, v, messages, add_generation_prompt), false, true);
    // As llama.cpp does: a template that writes no BOS still gets the one the model expects.
    if (v.add_bos && v.bos >= 0 && (ids.empty() || ids[0] != v.bos)) ids.insert(ids.begin(), v.bos);
    return ids;
}

std::vector<std::string> chat_stop_strings(const ChatTemplate& t, const Vocab& vocab) {
    std::vector<std::string> stops;
    for (const char* s : t.stops) {
        if (!s) continue;
        std::string text;
        append_fragment(text, s, vocab);
        if (!text.empty() && std::find(stops.begin(), stops.end(), text) == stops.end()) {
            stops.push_back(std::move(text));
        }
    }
    return stops;
}

}  // namespace lila
