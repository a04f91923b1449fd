#include "src/serve/response.h"

#include <ctime>
#include <random>

namespace lila::serve {

using nlohmann::json;

namespace {

json nullable(const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
}

std::string random_id(const char* prefix) {
    static const char digits[] = "0123456789abcdef";
    std::random_device rd;
    std::string id = prefix;
    for (int i = 0; i < 24; i++) id += digits[rd() % 16];
    return id;
}

}  // namespace

json error_body(const ApiError& e) {
    const char* type = e.status < 500    ? "invalid_request_error"
                       : e.status == 503 ? "unavailable_error"
                                         : "server_error";
    return {{"error",
             {{"message", e.what()},
              {"type", type},
              {"param", nullable(e.param)},
              {"code", nullable(e.code)}}}};
}

std::string sse_event(const json& data) {
    // Text is UTF-8 (the decoder replaces invalid bytes), but never let a dump throw.
    return "data: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

json usage_body(const Usage& u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

CompletionShape::CompletionShape(bool chat, std::string model)
    : chat_(chat),
      model_(std::move(model)),
      id_(random_id(chat ? "chatcmpl-" : "cmpl-")),
      created_(static_cast<int64_t>(std::time(nullptr))) {}

json CompletionShape::base(bool streaming) const {
    const char* object =
        chat_ ? (streaming ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return {{"id", id_}, {"object", object}, {"created", created_}, {"model", model_}};
}

json CompletionShape::choice(const std::string& text, const json& finish, bool streaming) const {
    json c = {{"index", 0}};
    if (!chat_) {
        c["text"] = text;
    } else if (!streaming) {
        c["message"] = {{"role", "assistant"}, {"content", text}};
    } else {
        c["delta"] = json::object();
        if (!role_sent_) c["delta"]["role"] = "assistant";
        if (!text.empty()) c["delta"]["content"] = text;
    }
    c["logprobs"] = nullptr;
    c["finish_reason"] = finish;
    return c;
}

json CompletionShape::whole(const std::string& text, const std::string& finish,
                            const Usage& usage) const {
    json out = base(false);
    out["choices"] = json::array({choice(text, finish, false)});
    out["usage"] = usage_body(usage);
    return out;
}

json CompletionShape::chunk(const std::string& text) {
    json out = base(true);
    out["choices"] = json::array({choice(text, nullptr, true)});
    role_sent_ = true;
    return out;
}

json CompletionShape::last_chunk(const std::string& finish, const Usage& usage) const {
    json out = base(true);
    out["choices"] = json::array({choice("", finish, true)});
    // OpenAI sends usage only in the include_usage chunk; lila also puts it here, so a client
    // always has it.
    out["usage"] = usage_body(usage);
    return out;
}

json CompletionShape::usage_chunk(const Usage& usage) const {
    json out = base(true);
    out["choices"] = json::array();
    out["usage"] = usage_body(usage);
    return out;
}

}  // namespace lila::serve
