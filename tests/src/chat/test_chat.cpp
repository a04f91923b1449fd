// The conversation engine with the real reference model (stories260K, greedy): replies stop
// at end-of-turn markers, the second turn prefills only its own tokens and gives what a fresh
// cache gives, overflow drops the oldest turns, /undo /reset, save and load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/stories.h"
#include "src/base/error.h"
#include "src/chat/chat.h"
#include "src/runtime/model.h"
#include "src/runtime/session.h"
#include "test_util.h"

namespace lila {
namespace {

const Model& stories() {
    static std::unique_ptr<Model> model = Model::load(test::stories_model(ggml_lite::Type::F32));
    return *model;
}

ChatParams greedy(int n_predict) {
    ChatParams p;
    p.n_predict = n_predict;
    p.sampling.temp = 0.0f;
    return p;
}

// A session and a chat on it, with what the chat printed and noticed.
struct Fixture {
    Session session;
    std::vector<std::string> notices;
    Chat chat;
    std::string shown;

    explicit Fixture(int64_t n_ctx = 512, int n_predict = 24,
                     const ChatTemplate& tmpl = *find_chat_template("plain"))
        : session(stories(), {.n_ctx = n_ctx, .n_threads = 1}),
          chat(session, tmpl, with_notices(greedy(n_predict))) {}

    ChatParams with_notices(ChatParams p) {
        p.on_notice = [this](const std::string& s) { notices.push_back(s); };
        return p;
    }
    ReplyStats say(const std::string& text, const std::atomic<bool>* interrupt = nullptr) {
        shown.clear();
        return chat.reply(
            text, [this](std::string_view s) { shown += s; }, interrupt);
    }
    const std::string& last_content() const { return chat.messages().back().content; }
};

TEST(Chat, PlainStoryModelReplies) {
    Fixture f;
    const ReplyStats st = f.say("Once upon a time");
    ASSERT_EQ(f.chat.messages().size(), 2u);
    EXPECT_EQ(f.chat.messages()[0], (ChatMessage{Role::User, "Once upon a time"}));
    EXPECT_EQ(f.chat.messages()[1].role, Role::Assistant);
    EXPECT_FALSE(f.last_content().empty());
    // What was shown is what the conversation keeps (less trailing whitespace).
    EXPECT_EQ(f.last_content(), f.shown.substr(0, f.last_content().size()));
    EXPECT_EQ(f.shown.find_first_not_of(" \n"), 0u);  // no leading whitespace shown
    EXPECT_EQ(st.n_reused, 0);
    EXPECT_EQ(st.n_prefilled,
              static_cast<int64_t>(f.chat.tokenize({f.chat.messages().data(), 1}, true).size()));
    EXPECT_GT(st.n_generated, 0);
    EXPECT_LE(st.n_generated, 24);
    // Every reply token is in the cache but the last one sampled at the limit.
    EXPECT_EQ(f.chat.n_cached(),
              st.n_prefilled + st.n_generated - (st.stop == StopReason::Limit ? 1 : 0));
}

TEST(Chat, StopsAtTheReplyLimit) {
    Fixture f(512, 5);
    const ReplyStats st = f.say("Tom");  // greedy, this story runs for thousands of tokens
    EXPECT_EQ(st.stop, StopReason::Limit);
    EXPECT_EQ(st.n_generated, 5);
}

TEST(Chat, StopsAtATextMarkerWithoutShowingIt) {
    // A template whose end-of-turn marker is text the model writes: the first full stop.
    Fixture reference(512, 40);
    reference.say("Tom");
    const std::string full = reference.last_content();
    const size_t dot = full.find('.');
    ASSERT_NE(dot, std::string::npos) << full;

    ChatTemplate dot_ends = *find_chat_template("plain");
    dot_ends.stops = {".", nullptr, nullptr};
    Fixture f(512, 40, dot_ends);
    const ReplyStats st = f.say("Tom");
    EXPECT_EQ(st.stop, StopReason::EndOfTurn);
    EXPECT_LT(st.n_generated, 40);
    EXPECT_EQ(f.last_content(), full.substr(0, dot));
    EXPECT_EQ(f.shown, full.substr(0, dot));
}

TEST(Chat, StopsAtTheEndOfTheStory) {
    // The story ends with BOS or EOS (control tokens, caught by id): the reply is over and
    // shows neither.
    ChatTemplate tokens_only = *find_chat_template("plain");
    tokens_only.stops = {"{eos}", nullptr, nullptr};
    Fixture f(512, 400, tokens_only);
    const ReplyStats st = f.say("hello there");
    EXPECT_EQ(st.stop, StopReason::EndOfTurn) << f.last_content();
    EXPECT_EQ(f.shown.find("</s>"), std::string::npos);
    EXPECT_EQ(f.shown.find("<s>"), std::string::npos);
}

TEST(Chat, SecondTurnPrefillsOnlyItsOwnTokens) {
    Fixture f(512, 24);
    const ReplyStats first = f.say("Once upon a time");
    const int64_t cached_after_first = f.chat.n_cached();
    const ReplyStats second = f.say("Tell me more");
    const std::vector<int32_t> prompt2 =
        f.chat.tokenize({f.chat.messages().data(), f.chat.messages().size() - 1}, true);
    // Everything the first turn left in the cache is reused...
    EXPECT_EQ(second.n_reused, cached_after_first);
    EXPECT_EQ(second.n_reused + second.n_prefilled, static_cast<int64_t>(prompt2.size()));
    // ... so of the first exchange only two tokens are evaluated again: the last reply token
    // (sampled at the limit, never evaluated) and the "\n" that closes the turn (never
    // generated). The rest of the prefill is the new message.
    ASSERT_EQ(first.stop, StopReason::Limit);
    const std::vector<int32_t> history = f.chat.tokenize({f.chat.messages().data(), 2}, false);
    EXPECT_EQ(second.n_reused, static_cast<int64_t>(history.size()) - 2);
    EXPECT_EQ(second.n_prefilled, static_cast<int64_t>(prompt2.size() - history.size()) + 2);
}

TEST(Chat, CachedTurnGivesWhatAFreshCacheGives) {
    test::TempDir dir;
    const std::string path = dir.path("first.json");
    Fixture cached(512, 24);
    cached.say("Once upon a time");
    cached.chat.save(path);
    cached.say("Tell me more");

    // The same history in a fresh session, evaluated from scratch.
    Fixture fresh(512, 24);
    fresh.chat.load(path);
    const ReplyStats st = fresh.say("Tell me more");
    EXPECT_EQ(st.n_reused, 0);
    EXPECT_EQ(fresh.chat.messages(), cached.chat.messages());
}

TEST(Chat, FullContextDropsTheOldestTurnsButKeepsTheSystemPrompt) {
    Fixture f(128, 24);
    f.chat.set_system("Be kind.");
    int dropped = 0;
    for (int turn = 0; turn < 6; turn++) {
        const ReplyStats st =
            f.say("Tell me a story about a dog and a cat " + std::to_string(turn));
        dropped += st.n_dropped;
        ASSERT_LE(f.chat.n_cached(), f.chat.n_ctx());
        ASSERT_EQ(f.chat.messages()[0], (ChatMessage{Role::System, "Be kind."}));
        ASSERT_EQ(f.chat.messages().back().role, Role::Assistant);
    }
    EXPECT_GT(dropped, 0);
    ASSERT_FALSE(f.notices.empty());
    EXPECT_NE(f.notices[0].find("dropped"), std::string::npos);
    // The newest exchange is always there.
    const auto& m = f.chat.messages();
    EXPECT_EQ(m[m.size() - 2].content, "Tell me a story about a dog and a cat 5");
}

TEST(Chat, ReplyStopsAtAFullContextAndTheNextTurnMakesRoom) {
    Fixture f(64, -1);  // no reply limit: the story runs until the context is full
    const ReplyStats st = f.say("Tom");
    EXPECT_EQ(st.stop, StopReason::ContextFull);
    EXPECT_EQ(f.chat.n_cached(), 64);
    const ReplyStats next = f.say("Go on");
    EXPECT_EQ(next.n_dropped, 2);
    ASSERT_EQ(f.chat.messages().size(), 2u);
    EXPECT_EQ(f.chat.messages()[0].content, "Go on");
    // The cache is rebuilt: only the start ("<s>User: ") is shared with the dropped turn.
    const auto prompt = f.chat.tokenize({f.chat.messages().data(), 1}, true);
    EXPECT_LT(next.n_reused, 8);
    EXPECT_EQ(next.n_reused + next.n_prefilled, static_cast<int64_t>(prompt.size()));
}

TEST(Chat, MessageTooLongIsRefusedAndChangesNothing) {
    Fixture f(128, 16);
    f.say("Once upon a time");
    const std::vector<ChatMessage> before = f.chat.messages();
    const int64_t cached = f.chat.n_cached();
    std::string huge;
    for (int i = 0; i < 100; i++) huge += "the dog ran ";
    try {
        f.say(huge);
        FAIL() << "a message longer than the context was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("too long"), std::string::npos) << e.what();
    }
    EXPECT_EQ(f.chat.messages(), before);
    EXPECT_EQ(f.chat.n_cached(), cached);
    EXPECT_TRUE(f.notices.empty());
    // And the chat goes on.
    EXPECT_NO_THROW(f.say("Tell me more"));
}

TEST(Chat, RefusesEmptyAndInvalidMessages) {
    Fixture f;
    EXPECT_THROW(f.say("  \n "), Error);
    EXPECT_THROW(f.say("bad \xC3\x28 byte"), Error);
    EXPECT_TRUE(f.chat.messages().empty());
}

TEST(Chat, UndoDropsTheLastExchangeAndTheCacheBehindIt) {
    Fixture f;
    EXPECT_FALSE(f.chat.undo());
    f.say("Once upon a time");
    const std::vector<ChatMessage> after_first = f.chat.messages();
    f.say("Tell me more");
    ASSERT_TRUE(f.chat.undo());
    EXPECT_EQ(f.chat.messages(), after_first);
    // The cache holds no more than the remaining conversation.
    const auto remaining = f.chat.tokenize(f.chat.messages(), false);
    EXPECT_LE(f.chat.n_cached(), static_cast<int64_t>(remaining.size()));
    EXPECT_GT(f.chat.n_cached(), 0);
    // Asking again gives the same reply as the first time (greedy).
    f.say("Tell me more");
    Fixture g;
    g.say("Once upon a time");
    g.say("Tell me more");
    EXPECT_EQ(f.chat.messages(), g.chat.messages());
}

TEST(Chat, ResetKeepsOnlyTheSystemPrompt) {
    Fixture f;
    f.chat.set_system("You tell stories.");
    const ReplyStats first = f.say("Once upon a time");
    const std::string first_reply = f.last_content();
    f.say("Tell me more");
    f.chat.reset();
    ASSERT_EQ(f.chat.messages().size(), 1u);
    EXPECT_EQ(f.chat.system(), "You tell stories.");
    EXPECT_LE(f.chat.n_cached(),
              static_cast<int64_t>(f.chat.tokenize(f.chat.messages(), false).size()));
    // A new conversation goes as the first did, reusing the cached system prompt.
    const ReplyStats again = f.say("Once upon a time");
    EXPECT_EQ(f.last_content(), first_reply);
    EXPECT_GT(again.n_reused, 0);
    EXPECT_LT(again.n_prefilled, first.n_prefilled);
}

TEST(Chat, SystemPromptCanBeSetChangedAndRemoved) {
    Fixture f;
    f.chat.set_system("  One.  ");
    EXPECT_EQ(f.chat.system(), "One.");
    f.say("Hi");
    f.chat.set_system("Two.");
    ASSERT_EQ(f.chat.messages().size(), 3u);
    EXPECT_EQ(f.chat.messages()[0], (ChatMessage{Role::System, "Two."}));
    f.chat.set_system("");
    EXPECT_EQ(f.chat.system(), "");
    EXPECT_EQ(f.chat.messages().size(), 2u);
}

TEST(Chat, InterruptKeepsThePartialReply) {
    Fixture f(512, 200);
    std::atomic<bool> stop{false};
    int pieces = 0;
    f.shown.clear();
    const ReplyStats st = f.chat.reply(
        "Tom",
        [&](std::string_view s) {
            f.shown += s;
            if (++pieces == 3) stop = true;
        },
        &stop);
    EXPECT_EQ(st.stop, StopReason::Interrupted);
    EXPECT_LT(st.n_generated, 10);
    EXPECT_EQ(f.last_content(), f.shown.substr(0, f.last_content().size()));
    EXPECT_FALSE(f.last_content().empty());
    // The next turn carries on from the partial reply.
    stop = false;
    EXPECT_NO_THROW(f.say("Go on", &stop));
    EXPECT_EQ(f.chat.messages().size(), 4u);
}

TEST(Chat, InterruptBeforeTheFirstTokenLeavesAnEmptyReply) {
    Fixture f;
    std::atomic<bool> stop{true};
    const ReplyStats st = f.say("Tom", &stop);
    EXPECT_EQ(st.stop, StopReason::Interrupted);
    EXPECT_EQ(st.n_generated, 0);
    EXPECT_EQ(f.chat.messages().back(), (ChatMessage{Role::Assistant, ""}));
}

TEST(Chat, SaveAndLoadRoundTrip) {
    test::TempDir dir;
    const std::string path = dir.path("chat.json");
    Fixture f;
    f.chat.set_system("Be kind.");
    f.say("Once upon a time");
    f.say("Tell me more \"quoted\" \xC3\xA9t\xC3\xA9");
    f.chat.save(path);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

    const auto json = nlohmann::json::parse(test::read_file(path));
    EXPECT_EQ(json["template"], "plain");
    EXPECT_EQ(json["messages"].size(), 5u);
    EXPECT_EQ(json["messages"][0]["role"], "system");

    Fixture g;
    g.chat.load(path);
    EXPECT_EQ(g.chat.messages(), f.chat.messages());
    // A loaded conversation continues as the original would.
    f.say("And then?");
    g.say("And then?");
    EXPECT_EQ(g.chat.messages(), f.chat.messages());
}

TEST(Chat, LoadRejectsBadFilesAndKeepsTheConversation) {
    test::TempDir dir;
    Fixture f;
    f.say("Once upon a time");
    const std::vector<ChatMessage> before = f.chat.messages();
    const std::pair<const char*, const char*> cases[] = {
        {"not json", "not a saved chat"},
        {"[1, 2]", "no \"messages\" list"},
        {R"({"messages": [{"role": "user"}]})", "message 1: needs"},
        {R"({"messages": [{"role": "robot", "content": "x"}]})", "unknown role 'robot'"},
        {R"({"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}]})",
         "message 2: a system message must come first"},
        {"{\"messages\": [{\"role\": \"user\", \"content\": \"\xC3\x28\"}]}", "not a saved chat"},
    };
    for (const auto& [text, why] : cases) {
        SCOPED_TRACE(text);
        const std::string path = dir.path("bad.json");
        std::ofstream(path) << text;
        try {
            f.chat.load(path);
            ADD_FAILURE() << "loaded";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find(path), 0u) << e.what();
        }
        EXPECT_EQ(f.chat.messages(), before);
    }
    EXPECT_THROW(f.chat.load(dir.path("missing.json")), Error);
    EXPECT_THROW(f.chat.save(dir.path("no/such/dir/chat.json")), Error);
}

}  // namespace
}  // namespace lila
