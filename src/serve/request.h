// The requests of the OpenAI-compatible API, parsed and checked into typed structs. Every
// problem is an ApiError naming the field ("max_tokens: expected an integer"), which the
// server returns as OpenAI's error JSON with the error's HTTP status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.h"
#include "src/chat/chat_template.h"
#include "src/runtime/sampler.h"

namespace lila::serve {

class ApiError : public Error {
public:
    // param: the request field at fault ("" when none); code: OpenAI's machine-readable code
    // ("model_not_found", "context_length_exceeded", ...; "" when none).
    ApiError(int status, const std::string& message, std::string param = "", std::string code = "")
        : Error(message), status(status), param(std::move(param)), code(std::move(code)) {}

    int status;
    std::string param, code;
};

// POST /v1/chat/completions (messages) or /v1/completions (prompt).
struct CompletionRequest {
    bool chat = false;
    std::string model;                  // "" when not given
    std::vector<ChatMessage> messages;  // chat
    std::string prompt;                 // completion given as text
    std::vector<int32_t> prompt_ids;    // completion given as token ids (prompt is then "")
    int64_t max_tokens = 0;             // 0: until the end of the turn or of the context
    SamplerParams sampling;
    bool seeded = false;  // the client gave `seed`; otherwise the server picks one
    std::vector<std::string> stop;
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    // llama.cpp's extension: generate past end-of-sequence tokens (absent: the server's choice)
    std::optional<bool> ignore_eos;
};

// Parses a completion request; `defaults` are the sampling settings of fields not given.
// ApiError (400) naming the field for malformed JSON, a wrong type or an out-of-range value.
CompletionRequest parse_completion_request(std::string_view body, bool chat,
                                           const SamplerParams& defaults);

// POST /tokenize: {"content": "...", "add_special": true, "with_pieces": false}.
struct TokenizeRequest {
    std::string content;
    bool add_special = true;  // BOS, as the model adds it to a prompt
    bool with_pieces = false;
};
TokenizeRequest parse_tokenize_request(std::string_view body);

// POST /detokenize: {"tokens": [1, 2, 3]}.
std::vector<int32_t> parse_detokenize_request(std::string_view body);

}  // namespace lila::serve
