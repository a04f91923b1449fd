// The bodies the API sends, in OpenAI's shapes: errors, completions and chat completions
// whole or as server-sent-event chunks, and the models list.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/serve/request.h"
#include "src/serve/scheduler.h"

namespace lila::serve {

// {"error": {"message", "type", "param", "code"}}: type is OpenAI's invalid_request_error
// for 4xx, server_error (or, for 503, unavailable_error) otherwise.
nlohmann::json error_body(const ApiError& e);

// One server-sent event: "data: JSON\n\n"; and the stream's last one.
std::string sse_event(const nlohmann::json& data);
constexpr const char* kSseDone = "data: [DONE]\n\n";

nlohmann::json usage_body(const Usage& u);

// The objects of one completion: chat.completion / chat.completion.chunk for the chat API,
// text_completion for the completions API.
class CompletionShape {
public:
    CompletionShape(bool chat, std::string model);

    // The whole reply (not streaming).
    nlohmann::json whole(const std::string& text, const std::string& finish,
                         const Usage& usage) const;
    // A streamed chunk of text; the first chat chunk also says the role.
    nlohmann::json chunk(const std::string& text);
    // The last chunk: no text, the finish reason, and the usage.
    nlohmann::json last_chunk(const std::string& finish, const Usage& usage) const;
    // stream_options.include_usage: a chunk with no choices and the usage.
    nlohmann::json usage_chunk(const Usage& usage) const;

    const std::string& id() const { return id_; }

private:
    nlohmann::json base(bool streaming) const;
    nlohmann::json choice(const std::string& text, const nlohmann::json& finish,
                          bool streaming) const;

    bool chat_;
    std::string model_, id_;
    int64_t created_;
    bool role_sent_ = false;
};

}  // namespace lila::serve
