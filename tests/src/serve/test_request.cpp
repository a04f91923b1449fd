// Request parsing: OpenAI's fields into typed structs; every problem a 400 naming the field.
#include <gtest/gtest.h>

#include "src/serve/request.h"

namespace lila::serve {
namespace {

CompletionRequest chat(const std::string& body) {
    return parse_completion_request(body, true, SamplerParams{});
}
CompletionRequest completion(const std::string& body) {
    return parse_completion_request(body, false, SamplerParams{});
}

// The ApiError a body gets, as "STATUS PARAM: MESSAGE".
std::string error_of(const std::string& body, bool is_chat = true) {
    try {
        parse_completion_request(body, is_chat, SamplerParams{});
    } catch (const ApiError& e) {
        return std::to_string(e.status) + " " + e.param + ": " + e.what();
    }
    return "no error";
}

TEST(Request, ChatWithEveryField) {
    const CompletionRequest r = chat(R"({
        "model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": [{"type": "text", "text": "Hi"},
                                                                {"type": "text", "text": "!"}]}],
        "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 3, "min_p": 0.1,
        "repeat_penalty": 1.1, "seed": 42, "stop": ["\n", "END"], "stream": true,
        "stream_options": {"include_usage": true}, "ignore_eos": true, "user": "ignored"})");
    ASSERT_EQ(r.messages.size(), 2u);
    EXPECT_EQ(r.messages[0], (ChatMessage{Role::System, "Be brief."}));
    EXPECT_EQ(r.messages[1], (ChatMessage{Role::User, "Hi!"}));
    EXPECT_EQ(r.model, "m");
    EXPECT_EQ(r.max_tokens, 7);
    EXPECT_FLOAT_EQ(r.sampling.temp, 0.5f);
    EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
    EXPECT_EQ(r.sampling.top_k, 3);
    EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
    EXPECT_FLOAT_EQ(r.sampling.repeat_penalty, 1.1f);
    EXPECT_TRUE(r.seeded);
    EXPECT_EQ(r.sampling.seed, 42u);
    EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
    EXPECT_TRUE(r.stream && r.include_usage && r.ignore_eos.value_or(false));
}

TEST(Request, DefaultsComeFromTheServer) {
    SamplerParams defaults;
    defaults.temp = 0;
    defaults.top_k = 5;
    const CompletionRequest r =
        parse_completion_request(R"({"prompt": "Once", "seed": -1})", false, defaults);
    EXPECT_EQ(r.prompt, "Once");
    EXPECT_EQ(r.sampling.temp, 0.0f);
    EXPECT_EQ(r.sampling.top_k, 5);
    EXPECT_FALSE(r.seeded);
    EXPECT_EQ(r.max_tokens, 0);
    EXPECT_FALSE(r.stream);
    EXPECT_FALSE(r.ignore_eos.has_value());
}

TEST(Request, PromptForms) {
    EXPECT_EQ(completion(R"({"prompt": ["text"]})").prompt, "text");
    EXPECT_EQ(completion(R"({"prompt": [1, 2, 3]})").prompt_ids, (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(completion(R"({"prompt": [[4, 5]]})").prompt_ids, (std::vector<int32_t>{4, 5}));
    EXPECT_EQ(chat(R"({"messages": [{"role": "developer", "content": "x"},
                                    {"role": "user", "content": "y"}]})")
                  .messages[0]
                  .role,
              Role::System);
    EXPECT_EQ(chat(R"({"messages": [{"role": "user", "content": "y"}],
                       "max_completion_tokens": 3})")
                  .max_tokens,
              3);
}

TEST(Request, ErrorsNameTheField) {
    EXPECT_TRUE(error_of("{").starts_with("400 : the body is not valid JSON: "));
    // JSON strings are UTF-8: nlohmann's parser rejects anything else.
    EXPECT_TRUE(error_of("{\"prompt\": \"\xff\"}", false)
                    .starts_with("400 : the body is not valid JSON: "));
    EXPECT_EQ(error_of("[1]"), "400 : the body must be a JSON object");
    EXPECT_EQ(error_of("{}"), "400 messages: messages: required");
    EXPECT_EQ(error_of("{}", false), "400 prompt: prompt: required");
    EXPECT_EQ(error_of(R"({"messages": []})"), "400 messages: messages: expected a non-empty list");
    EXPECT_EQ(error_of(R"({"messages": [{"role": "robot", "content": "x"}]})"),
              "400 messages[0].role: messages[0].role: 'robot' is not one of system, developer, "
              "user, assistant");
    EXPECT_EQ(error_of(R"({"messages": [{"role": "user"}]})"),
              "400 messages[0].content: messages[0].content: required");
    EXPECT_EQ(error_of(R"({"messages": [{"role": "user", "content": 5}]})"),
              "400 messages[0].content: messages[0].content: expected a string or a list of "
              "content parts");
    EXPECT_EQ(error_of(R"({"messages": [{"role": "user", "content": "a"},
                                        {"role": "system", "content": "b"}]})"),
              "400 messages[1].role: messages[1].role: a system message must come first");
    EXPECT_EQ(error_of(R"({"prompt": "x", "max_tokens": "7"})", false),
              "400 max_tokens: max_tokens: expected an integer");
    EXPECT_EQ(error_of(R"({"prompt": "x", "max_tokens": 0})", false),
              "400 max_tokens: max_tokens: must be between 1 and 2147483647");
    EXPECT_EQ(error_of(R"({"prompt": "x", "temperature": 3})", false),
              "400 temperature: temperature: must be between 0 and 2");
    EXPECT_EQ(error_of(R"({"prompt": "x", "temperature": "hot"})", false),
              "400 temperature: temperature: expected a number");
    EXPECT_EQ(error_of(R"({"prompt": "x", "stream": 1})", false),
              "400 stream: stream: expected true or false");
    EXPECT_EQ(error_of(R"({"prompt": "x", "stop": 5})", false),
              "400 stop: stop: expected a string or a list of strings");
    EXPECT_EQ(error_of(R"({"prompt": "x", "stop": ["a", 1]})", false),
              "400 stop[1]: stop[1]: expected a string");
    EXPECT_EQ(error_of(R"({"prompt": "x", "stop": [""]})", false),
              "400 stop: stop: stop strings must not be empty");
    EXPECT_EQ(error_of(R"({"prompt": "x", "n": 2})", false), "400 n: n: only n = 1 is supported");
    EXPECT_EQ(error_of(R"({"prompt": ["a", "b"]})", false),
              "400 prompt: prompt: one prompt per request (a list of 2 was given)");
    EXPECT_EQ(error_of(R"({"prompt": [1, -2]})", false),
              "400 prompt: prompt: expected token ids (non-negative integers)");
    EXPECT_EQ(error_of(R"({"prompt": "x", "seed": 18446744073709551615})", false),
              "400 seed: seed: must be between -1 and 9223372036854775807");
    EXPECT_EQ(error_of(R"({"prompt": "x", "stream_options": {"include_usage": "yes"}})", false),
              "400 stream_options.include_usage: stream_options.include_usage: expected true or "
              "false");
    EXPECT_EQ(error_of(R"({"prompt": "x", "logprobs": true})", false),
              "400 logprobs: logprobs: not supported");
}

TEST(Request, TokenizeAndDetokenize) {
    const TokenizeRequest t = parse_tokenize_request(R"({"content": "hi", "with_pieces": true})");
    EXPECT_EQ(t.content, "hi");
    EXPECT_TRUE(t.add_special);
    EXPECT_TRUE(t.with_pieces);
    EXPECT_THROW(parse_tokenize_request(R"({"content": 1})"), ApiError);
    EXPECT_EQ(parse_detokenize_request(R"({"tokens": [1, 2]})"), (std::vector<int32_t>{1, 2}));
    EXPECT_THROW(parse_detokenize_request(R"({"tokens": "1 2"})"), ApiError);
    EXPECT_THROW(parse_detokenize_request(R"({})"), ApiError);
}

}  // namespace
}  // namespace lila::serve
