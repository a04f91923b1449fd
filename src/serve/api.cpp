#include "src/serve/api.h"

#include <random>

#include "src/base/utf8.h"

namespace lila::serve {

using nlohmann::json;

namespace {

HttpResponse json_response(int status, const json& body) {
    HttpResponse r;
    r.status = status;
    r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    return r;
}

HttpResponse error_response(const ApiError& e) {
    HttpResponse r = json_response(e.status, error_body(e));
    if (e.status == 503) r.headers.push_back({"Retry-After", "1"});
    return r;
}

// Compares in a time that does not depend on where the strings differ.
bool same_secret(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); i++) diff |= a[i] ^ b[i];
    return diff == 0;
}

}  // namespace

BodyStream::BodyStream(std::shared_ptr<Task> task, CompletionShape shape, bool stream,
                       bool include_usage)
    : task_(std::move(task)),
      shape_(std::move(shape)),
      stream_(stream),
      include_usage_(include_usage) {}

BodyStream::~BodyStream() {
    if (!finished_) task_->cancel();
}

std::string BodyStream::next(std::chrono::milliseconds wait, bool& done) {
    done = false;
    if (finished_) {
        done = true;
        return {};
    }
    // Streaming, new text goes out as it comes; otherwise only the end is worth waking for.
    const auto until = std::chrono::steady_clock::now() + wait;
    Task::Progress p = task_->take(wait);
    if (!stream_) {
        text_ += p.text;
        while (!p.done && std::chrono::steady_clock::now() < until) {
            p = task_->take(std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now()));
            text_ += p.text;
        }
    }
    std::string out;
    if (stream_ && !p.text.empty()) out += sse_event(shape_.chunk(p.text));
    if (!p.done) return out;

    finished_ = done = true;
    if (!p.error.empty()) {
        const json err = error_body(ApiError(500, p.error));
        return stream_ ? out + sse_event(err) + kSseDone : err.dump();
    }
    if (!stream_) return shape_.whole(text_, p.finish, p.usage).dump();
    out += sse_event(shape_.last_chunk(p.finish, p.usage));
    if (include_usage_) out += sse_event(shape_.usage_chunk(p.usage));
    return out + kSseDone;
}

Api::Api(const Model& model, Scheduler& scheduler, Metrics& metrics, const ChatTemplate& tmpl,
         ApiParams params)
    : model_(model),
      tok_(model.tokenizer()),
      scheduler_(scheduler),
      metrics_(metrics),
      tmpl_(tmpl),
      params_(std::move(params)) {
    // As lila chat does: a marker that is one special token is caught by id before it is
    // decoded (special tokens decode to nothing); any other is looked for in the text.
    const Vocab& v = tok_.vocab();
    for (std::string& marker : chat_stop_strings(tmpl, v)) {
        int32_t id = 0;
        while (id < v.size() && !(tok_.is_special(id) && v.tokens[id] == marker)) id++;
        if (id < v.size()) {
            template_stop_tokens_.push_back(id);
        } else {
            template_stop_strings_.push_back(std::move(marker));
        }
    }
}

HttpResponse Api::handle(std::string_view method, std::string_view path,
                         std::string_view authorization, std::string_view body) {
    HttpResponse r;
    try {
        r = route(method, path, authorization, body);
    } catch (const ApiError& e) {
        r = error_response(e);
    } catch (const std::exception& e) {
        r = error_response(ApiError(500, std::string("internal error: ") + e.what()));
    }
    metrics_.response(r.status);
    return r;
}

HttpResponse Api::route(std::string_view method, std::string_view path,
                        std::string_view authorization, std::string_view body) {
    if (path.starts_with("/v1/")) path.remove_prefix(3);
    const bool get = method == "GET", post = method == "POST";
    if (path == "/" && get) {
        HttpResponse r;
        r.content_type = "text/html; charset=utf-8";
        r.body = params_.page;
        return r;
    }
    if (path == "/health" && get) return json_response(200, {{"status", "ok"}});

    struct Route {
        std::string_view path;
        bool post;
    };
    static constexpr Route routes[] = {{"/chat/completions", true}, {"/completions", true},
                                       {"/models", false},          {"/metrics", false},
                                       {"/tokenize", true},         {"/detokenize", true}};
    const Route* found = nullptr;
    for (const Route& rt : routes) {
        if (rt.path == path) found = &rt;
    }
    if (!found) throw ApiError(404, "no endpoint " + std::string(path), "", "not_found");
    if (found->post ? !post : !get) {
        throw ApiError(405, std::string(path) + " takes " + (found->post ? "POST" : "GET"), "",
                       "method_not_allowed");
    }
    if (!authorized(authorization)) {
        throw ApiError(401,
                       authorization.empty()
                           ? "an API key is needed: send it as 'Authorization: Bearer KEY'"
                           : "incorrect API key",
                       "", "invalid_api_key");
    }
    if (path == "/chat/completions") return completion(body, true);
    if (path == "/completions") return completion(body, false);
    if (path == "/models") return models();
    if (path == "/tokenize") return tokenize(body);
    if (path == "/detokenize") return detokenize(body);
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = metrics_.text(scheduler_.status());
    return r;
}

bool Api::authorized(std::string_view authorization) const {
    if (params_.api_key.empty()) return true;
    constexpr std::string_view bearer = "Bearer ";
    if (!authorization.starts_with(bearer)) return false;
    return same_secret(authorization.substr(bearer.size()), params_.api_key);
}

HttpResponse Api::completion(std::string_view body, bool chat) {
    const CompletionRequest req = parse_completion_request(body, chat, params_.sampling);
    if (!req.model.empty() && req.model != params_.model_id) {
        throw ApiError(404,
                       "the model '" + req.model + "' does not exist (this server has '" +
                           params_.model_id + "')",
                       "model", "model_not_found");
    }
    auto task = std::make_shared<Task>(make_job(req));
    if (!scheduler_.submit(task)) {
        throw ApiError(503, "the server is busy: every slot is working and the queue is full", "",
                       "server_busy");
    }
    HttpResponse r;
    r.content_type = req.stream ? "text/event-stream" : "application/json";
    if (req.stream) r.headers.push_back({"Cache-Control", "no-cache"});
    r.stream = std::make_unique<BodyStream>(task, CompletionShape(chat, params_.model_id),
                                            req.stream, req.include_usage);
    return r;
}

Job Api::make_job(const CompletionRequest& r) const {
    Job job;
    const char* field = r.chat ? "messages" : "prompt";
    if (r.chat) {
        job.prompt = tokenize_chat(tmpl_, tok_, r.messages, true);
        job.stop = template_stop_strings_;
        job.stop_tokens = template_stop_tokens_;
        job.trim_leading_space = true;
    } else if (!r.prompt_ids.empty()) {
        for (int32_t id : r.prompt_ids) {
            if (id >= tok_.n_vocab()) {
                throw ApiError(400,
                               "prompt: token id " + std::to_string(id) +
                                   " is out of range (the vocabulary has " +
                                   std::to_string(tok_.n_vocab()) + ")",
                               "prompt");
            }
        }
        job.prompt = r.prompt_ids;
    } else {
        job.prompt = tok_.encode(r.prompt, tok_.vocab().add_bos, true);
    }
    if (job.prompt.empty()) throw ApiError(400, "prompt: empty", field);
    const int64_t n_ctx = scheduler_.n_ctx();
    if (static_cast<int64_t>(job.prompt.size()) >= n_ctx) {
        throw ApiError(400,
                       std::string(field) + ": the prompt is " + std::to_string(job.prompt.size()) +
                           " tokens; a slot's context holds " + std::to_string(n_ctx) +
                           ", with room for at least one generated token",
                       field, "context_length_exceeded");
    }
    job.stop.insert(job.stop.end(), r.stop.begin(), r.stop.end());
    job.max_tokens = r.max_tokens;
    job.sampling = r.sampling;
    if (!r.seeded) {
        job.sampling.seed =
            params_.seed >= 0 ? static_cast<uint64_t>(params_.seed) : std::random_device{}();
    }
    job.ignore_eos = r.ignore_eos.value_or(params_.ignore_eos);
    return job;
}

HttpResponse Api::tokenize(std::string_view body) const {
    const TokenizeRequest req = parse_tokenize_request(body);
    const std::vector<int32_t> ids =
        tok_.encode(req.content, req.add_special && tok_.vocab().add_bos, true);
    json tokens = json::array();
    for (int32_t id : ids) {
        if (!req.with_pieces) {
            tokens.push_back(id);
            continue;
        }
        // A piece that is not whole UTF-8 (one byte of a character) is given as its bytes.
        const std::string piece = tok_.token_to_piece(id, true);
        json bytes = json::array();
        for (unsigned char c : piece) bytes.push_back(c);
        const json p = {{"id", id}, {"piece", utf8_sanitize(piece) == piece ? json(piece) : bytes}};
        tokens.push_back(p);
    }
    return json_response(200, {{"tokens", tokens}});
}

HttpResponse Api::detokenize(std::string_view body) const {
    const std::vector<int32_t> ids = parse_detokenize_request(body);
    for (int32_t id : ids) {
        if (id >= tok_.n_vocab()) {
            throw ApiError(400,
                           "tokens: token id " + std::to_string(id) +
                               " is out of range (the vocabulary has " +
                               std::to_string(tok_.n_vocab()) + ")",
                           "tokens");
        }
    }
    return json_response(200, {{"content", utf8_sanitize(tok_.decode(ids))}});
}

HttpResponse Api::models() const {
    const json model = {{"id", params_.model_id},
                        {"object", "model"},
                        {"created", 0},
                        {"owned_by", "lila"},
                        {"meta",
                         {{"n_vocab", model_.hp.n_vocab},
                          {"n_ctx_slot", scheduler_.n_ctx()},
                          {"size_bytes", model_.weight_bytes()},
                          {"type", model_.type_summary()}}}};
    return json_response(200, {{"object", "list"}, {"data", json::array({model})}});
}

}  // namespace lila::serve
