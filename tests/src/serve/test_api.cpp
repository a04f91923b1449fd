// The API without HTTP: routes, OpenAI shapes of responses and errors, streaming, the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures/stories.h"
#include "src/serve/api.h"

namespace lila::serve {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// A server on stories260K with two slots of 128 positions, greedy by default.
class ApiTest : public testing::Test {
protected:
    static void SetUpTestSuite() {
        model_ = Model::load(test::stories_model(ggml_lite::Type::Q8_0));
    }
    static void TearDownTestSuite() { model_.reset(); }

    ApiTest() : session_(*model_, params()), sched_(session_, {.max_queue = 1}, &metrics_) {
        ApiParams p;
        p.model_id = "stories";
        p.api_key = "secret";
        p.sampling.temp = 0;
        p.page = "<html>chat</html>";
        api_ = std::make_unique<Api>(*model_, sched_, metrics_, *find_chat_template("plain"), p);
    }

    static SessionParams params() {
        SessionParams p;
        p.n_ctx = 128;
        p.n_seq = 2;
        p.n_threads = 2;
        return p;
    }

    // The whole body, the stream drained while the scheduler is stepped here.
    struct Reply {
        int status;
        std::string body;
        HttpResponse r;
    };
    Reply call(const std::string& method, const std::string& path, const std::string& body = "",
               const std::string& key = "Bearer secret") {
        HttpResponse r = api_->handle(method, path, key, body);
        std::string out = r.body;
        if (r.stream) {
            for (bool done = false; !done;) {
                sched_.step();
                out += r.stream->next(milliseconds(0), done);
            }
            r.stream.reset();
        }
        return {r.status, out, std::move(r)};
    }
    json call_json(const std::string& method, const std::string& path, const std::string& body,
                   int want_status = 200) {
        const Reply r = call(method, path, body);
        EXPECT_EQ(r.status, want_status) << r.body;
        return json::parse(r.body);
    }

    static std::unique_ptr<Model> model_;
    Session session_;
    Metrics metrics_;
    Scheduler sched_;
    std::unique_ptr<Api> api_;
};
std::unique_ptr<Model> ApiTest::model_;

// The data of each "data: ..." event of an SSE body, and whether it ended with [DONE].
std::vector<json> events(const std::string& body, bool* done) {
    std::vector<json> out;
    *done = false;
    size_t pos = 0;
    while ((pos = body.find("data: ", pos)) != std::string::npos) {
        const size_t end = body.find("\n\n", pos);
        const std::string data = body.substr(pos + 6, end - pos - 6);
        pos = end;
        if (data == "[DONE]") {
            *done = true;
        } else {
            out.push_back(json::parse(data));
        }
    }
    return out;
}

TEST_F(ApiTest, Completion) {
    const json r =
        call_json("POST", "/v1/completions",
                  R"({"model": "stories", "prompt": "Once upon a time", "max_tokens": 8})");
    EXPECT_EQ(r["object"], "text_completion");
    EXPECT_EQ(r["model"], "stories");
    EXPECT_TRUE(r["id"].get<std::string>().starts_with("cmpl-"));
    EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
    EXPECT_FALSE(r["choices"][0]["text"].get<std::string>().empty());
    EXPECT_EQ(r["usage"]["completion_tokens"], 8);
    EXPECT_EQ(r["usage"]["total_tokens"],
              r["usage"]["prompt_tokens"].get<int>() + r["usage"]["completion_tokens"].get<int>());
}

TEST_F(ApiTest, ChatStreamsWhatItWouldReturnWhole) {
    const std::string req = R"({"messages": [{"role": "user", "content": "Tell me a story"}],
                                "max_tokens": 20)";
    const json whole = call_json("POST", "/v1/chat/completions", req + "}");
    EXPECT_EQ(whole["object"], "chat.completion");
    EXPECT_EQ(whole["choices"][0]["message"]["role"], "assistant");
    const std::string text = whole["choices"][0]["message"]["content"];

    const Reply r = call("POST", "/v1/chat/completions",
                         req + R"(, "stream": true, "stream_options": {"include_usage": true}})");
    EXPECT_EQ(r.r.content_type, "text/event-stream");
    bool done = false;
    const std::vector<json> ev = events(r.body, &done);
    EXPECT_TRUE(done);
    ASSERT_GE(ev.size(), 3u);
    EXPECT_EQ(ev[0]["object"], "chat.completion.chunk");
    EXPECT_EQ(ev[0]["choices"][0]["delta"]["role"], "assistant");
    std::string streamed;
    for (const json& e : ev) {
        if (!e["choices"].empty() && e["choices"][0]["delta"].contains("content")) {
            streamed += e["choices"][0]["delta"]["content"].get<std::string>();
        }
    }
    EXPECT_EQ(streamed, text);
    // The usage is the same but for the cache: the second request found the first's prompt.
    json usage = whole["usage"];
    usage["prompt_tokens_details"]["cached_tokens"] = usage["prompt_tokens"].get<int>() - 1;
    const json& last = ev[ev.size() - 2];
    EXPECT_EQ(last["choices"][0]["finish_reason"], whole["choices"][0]["finish_reason"]);
    EXPECT_EQ(last["usage"], usage);
    EXPECT_TRUE(ev.back()["choices"].empty());  // include_usage's chunk
    EXPECT_EQ(ev.back()["usage"], usage);
}

// The next turn of a chat finds the conversation so far in a slot's cache.
TEST_F(ApiTest, NextTurnReusesTheCache) {
    const json first =
        call_json("POST", "/v1/chat/completions",
                  R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 10})");
    const std::string reply = first["choices"][0]["message"]["content"];
    const json second = call_json("POST", "/v1/chat/completions",
                                  json({{"messages",
                                         {{{"role", "user"}, {"content", "Hello"}},
                                          {{"role", "assistant"}, {"content", reply}},
                                          {{"role", "user"}, {"content", "And then?"}}}},
                                        {"max_tokens", 5}})
                                      .dump());
    EXPECT_GE(second["usage"]["prompt_tokens_details"]["cached_tokens"],
              first["usage"]["prompt_tokens"]);
}

TEST_F(ApiTest, Errors) {
    auto error = [&](const std::string& method, const std::string& path, const std::string& body,
                     const std::string& key = "Bearer secret") {
        const Reply r = call(method, path, body, key);
        const json e = json::parse(r.body)["error"];
        EXPECT_TRUE(e["message"].is_string());
        EXPECT_TRUE(e.contains("type") && e.contains("param") && e.contains("code"));
        return std::make_pair(r.status, e);
    };
    const std::string ok = R"({"prompt": "Once", "max_tokens": 1})";
    EXPECT_EQ(error("POST", "/v1/completions", ok, "").first, 401);
    const auto [status, e] = error("POST", "/v1/completions", ok, "Bearer wrong");
    EXPECT_EQ(status, 401);
    EXPECT_EQ(e["code"], "invalid_api_key");
    EXPECT_EQ(
        error("POST", "/v1/completions", R"({"model": "gpt-4", "prompt": "x"})").second["code"],
        "model_not_found");
    EXPECT_EQ(error("POST", "/v1/completions", R"({"model": "gpt-4", "prompt": "x"})").first, 404);
    EXPECT_EQ(error("POST", "/v1/nothing", "{}").first, 404);
    EXPECT_EQ(error("GET", "/v1/completions", "").first, 405);
    const auto bad = error("POST", "/v1/completions", R"({"prompt": "x", "top_k": 1.5})");
    EXPECT_EQ(bad.first, 400);
    EXPECT_EQ(bad.second["param"], "top_k");
    EXPECT_EQ(bad.second["type"], "invalid_request_error");

    std::string long_prompt;
    for (int i = 0; i < 200; i++) long_prompt += "Once upon a time ";
    const auto too_long = error("POST", "/v1/completions", json({{"prompt", long_prompt}}).dump());
    EXPECT_EQ(too_long.first, 400);
    EXPECT_EQ(too_long.second["code"], "context_length_exceeded");
    EXPECT_EQ(error("POST", "/v1/completions", R"({"prompt": [600]})").first, 400);
    EXPECT_EQ(error("POST", "/detokenize", R"({"tokens": [600]})").first, 400);
}

// Two slots and a queue of one: the fourth request waiting at once is refused.
TEST_F(ApiTest, FullQueueIs503WithRetryAfter) {
    const std::string req = R"({"prompt": "Once", "max_tokens": 2})";
    std::vector<HttpResponse> accepted;
    for (int i = 0; i < 3; i++) {
        accepted.push_back(api_->handle("POST", "/v1/completions", "Bearer secret", req));
        EXPECT_EQ(accepted.back().status, 200);
    }
    const HttpResponse refused = api_->handle("POST", "/v1/completions", "Bearer secret", req);
    EXPECT_EQ(refused.status, 503);
    ASSERT_EQ(refused.headers.size(), 1u);
    EXPECT_EQ(refused.headers[0].first, "Retry-After");
    EXPECT_EQ(json::parse(refused.body)["error"]["type"], "unavailable_error");
}

// A response dropped before its end (the client went away) frees the slot at the next step.
TEST_F(ApiTest, DroppedResponseCancels) {
    HttpResponse r = api_->handle("POST", "/v1/completions", "Bearer secret",
                                  R"({"prompt": "Once", "ignore_eos": true, "stream": true})");
    sched_.step();
    EXPECT_EQ(sched_.status().busy, 1);
    r.stream.reset();
    sched_.step();
    EXPECT_EQ(sched_.status().busy, 0);
    EXPECT_NE(
        metrics_.text(sched_.status()).find("lila_requests_finished_total{reason=\"cancelled\"} 1"),
        std::string::npos);
}

TEST_F(ApiTest, OtherEndpoints) {
    const json models = call_json("GET", "/v1/models", "");
    EXPECT_EQ(models["object"], "list");
    EXPECT_EQ(models["data"][0]["id"], "stories");
    EXPECT_EQ(models["data"][0]["object"], "model");

    // /health and / need no key.
    EXPECT_EQ(call("GET", "/health", "", "").body, R"({"status":"ok"})");
    const Reply page = call("GET", "/", "", "");
    EXPECT_EQ(page.status, 200);
    EXPECT_EQ(page.body, "<html>chat</html>");
    EXPECT_EQ(page.r.content_type, "text/html; charset=utf-8");

    const json ids = call_json("POST", "/tokenize", R"({"content": "Once upon a time"})");
    EXPECT_EQ(ids["tokens"][0], model_->tokenizer().vocab().bos);
    const json pieces = call_json(
        "POST", "/tokenize", R"({"content": "Once", "add_special": false, "with_pieces": true})");
    EXPECT_TRUE(pieces["tokens"][0].contains("piece"));
    json no_bos = ids["tokens"];
    no_bos.erase(0);
    const json text = call_json("POST", "/detokenize", json({{"tokens", no_bos}}).dump());
    EXPECT_EQ(text["content"], "Once upon a time");

    call_json("POST", "/v1/completions", R"({"prompt": "Once", "max_tokens": 3})");
    const Reply m = call("GET", "/metrics", "");
    EXPECT_EQ(m.r.content_type, "text/plain; version=0.0.4");
    for (const char* line :
         {"lila_generated_tokens_total 3", "lila_slots 2", "lila_queue_depth 0",
          "lila_kv_cache_cells 256", "lila_time_to_first_token_seconds_count 1",
          "lila_time_per_token_seconds_count 2", "lila_http_responses_total{code=\"200\"}",
          "lila_requests_finished_total{reason=\"length\"} 1"}) {
        EXPECT_NE(m.body.find(line), std::string::npos) << line << "\n" << m.body;
    }
}

}  // namespace
}  // namespace lila::serve
