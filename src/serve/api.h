// The OpenAI-compatible API without the HTTP: a request's method, path, key and body in, the
// status, headers and body out. tools/serve.cpp puts it behind cpp-httplib; the tests call
// it directly. Endpoints:
//
//   POST /v1/chat/completions, /v1/completions   (also without /v1)
//   GET  /v1/models, /health, /metrics, and / (the chat page)
//   POST /tokenize, /detokenize                  (llama.cpp's shapes)
//
// Every endpoint but / and /health needs the API key when one is set.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/chat/chat_template.h"
#include "src/runtime/model.h"
#include "src/serve/metrics.h"
#include "src/serve/response.h"
#include "src/serve/scheduler.h"

namespace lila::serve {

struct ApiParams {
    std::string model_id;     // what /v1/models lists and requests must name (or leave out)
    std::string api_key;      // "": none needed
    SamplerParams sampling;   // for the fields a request leaves out
    int64_t seed = -1;        // for requests without one; -1: a random seed each
    bool ignore_eos = false;  // for requests that do not say
    std::string page;         // the HTML of GET /
};

// The body of a completion as it is generated: server-sent events when streaming, else one
// JSON object at the end. Destroyed before the end (the client went away, a write failed),
// it cancels its task, which frees the slot at the scheduler's next step.
class BodyStream {
public:
    BodyStream(std::shared_ptr<Task> task, CompletionShape shape, bool stream, bool include_usage);
    ~BodyStream();
    BodyStream(const BodyStream&) = delete;
    BodyStream& operator=(const BodyStream&) = delete;

    // Waits up to `wait` for more of the reply; returns what to send now ("" when nothing yet)
    // and sets `done` with the last of it.
    std::string next(std::chrono::milliseconds wait, bool& done);
    // What to send while nothing else comes, which the client ignores: an SSE comment, or a
    // space before the JSON. Writing it is how a client that has gone is noticed.
    std::string heartbeat() const { return stream_ ? ":\n\n" : " "; }

private:
    std::shared_ptr<Task> task_;
    CompletionShape shape_;
    bool stream_, include_usage_;
    bool finished_ = false;
    std::string text_;  // not streaming: the reply so far
};

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    std::unique_ptr<BodyStream> stream;  // when set, the body comes from it
};

class Api {
public:
    Api(const Model& model, Scheduler& scheduler, Metrics& metrics, const ChatTemplate& tmpl,
        ApiParams params);

    // `authorization`: the Authorization header ("" when absent).
    HttpResponse handle(std::string_view method, std::string_view path,
                        std::string_view authorization, std::string_view body);

private:
    HttpResponse route(std::string_view method, std::string_view path,
                       std::string_view authorization, std::string_view body);
    HttpResponse completion(std::string_view body, bool chat);
    Job make_job(const CompletionRequest& r) const;
    HttpResponse tokenize(std::string_view body) const;
    HttpResponse detokenize(std::string_view body) const;
    HttpResponse models() const;
    bool authorized(std::string_view authorization) const;

    const Model& model_;
    const Tokenizer& tok_;
    Scheduler& scheduler_;
    Metrics& metrics_;
    const ChatTemplate& tmpl_;
    ApiParams params_;
    std::vector<std::string> template_stop_strings_;  // end-of-turn markers matched as text
    std::vector<int32_t> template_stop_tokens_;       // ... and those that are one token
};

}  // namespace lila::serve
