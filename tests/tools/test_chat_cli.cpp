// `lila chat` end to end: the real binary with the reference model, fed through a pipe as a
// script would, and once on a real terminal (tmux) for line editing, Ctrl-C and colours.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "fixtures/stories.h"
#include "test_util.h"

namespace lila {
namespace {

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

const std::string& model() {
    return test::stories_model(ggml_lite::Type::F32);
}

std::string chat_command(const std::string& args) {
    return quote(LILA_BINARY) + " chat -m " + quote(model()) + " -t 1 --temp 0 " + args;
}

struct Result {
    int rc;
    std::string out, err;
};

// Runs `lila chat ARGS` with `input` on stdin (a file: not a terminal).
Result run_chat(const test::TempDir& dir, const std::string& args, const std::string& input,
                const std::string& env = "") {
    std::ofstream(dir.path("in.txt"), std::ios::binary) << input;
    const std::string cmd = env + " " + chat_command(args) + " < " + quote(dir.path("in.txt")) +
                            " > " + quote(dir.path("out.txt")) + " 2> " +
                            quote(dir.path("err.txt"));
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(dir.path("out.txt")),
            test::read_file(dir.path("err.txt"))};
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

nlohmann::json saved(const std::string& path) {
    return nlohmann::json::parse(test::read_file(path));
}

TEST(ChatCli, PipedMessageGetsAReplyAndEndOfInputExitsZero) {
    test::TempDir dir;
    const Result r = run_chat(dir, "-n 16", "Once upon a time");  // no newline at the end
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.err, "loaded stories260K")) << r.err;
    EXPECT_TRUE(has(r.err,
                    "stories260K (f32) | context 512 | 1 thread | template plain | "
                    "/help for commands"))
        << r.err;
    EXPECT_GT(r.out.size(), 10u);
    EXPECT_FALSE(has(r.out, "> ")) << "no prompt when stdin is not a terminal";
    EXPECT_FALSE(has(r.out + r.err, "\033[")) << "no colours when not a terminal";
}

TEST(ChatCli, CommandsFromAScript) {
    test::TempDir dir;
    const std::string file = dir.path("chat.json");
    const std::string script =
        "/system Be kind.\n"
        "Once upon a time\n"
        "Tell me more\n"
        "/stats\n"
        "/undo\n"
        "/save " +
        file +
        "\n"
        "/system\n"
        "/help\n"
        "/frobnicate\n"
        "/load " +
        dir.path("missing.json") +
        "\n"
        "/reset\n"
        "/stats\n"
        "/exit\n"
        "this line is never read\n";
    const Result r = run_chat(dir, "-n 12", script);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has(r.out, "context: ")) << r.out;
    EXPECT_TRUE(has(r.out, "last reply: prompt ")) << r.out;
    EXPECT_TRUE(has(r.out, "Be kind.\n")) << r.out;
    EXPECT_TRUE(has(r.out, "/undo")) << "help lists the commands";
    EXPECT_TRUE(has(r.err, "dropped the last exchange")) << r.err;
    EXPECT_TRUE(has(r.err, "error: unknown command /frobnicate")) << r.err;
    EXPECT_TRUE(has(r.err, "error: " + dir.path("missing.json") + ": ")) << r.err;
    EXPECT_TRUE(has(r.err, "new conversation (system prompt kept)")) << r.err;
    EXPECT_TRUE(has(r.out, "tokens, 1 message\n")) << "only the system prompt is left";

    const nlohmann::json j = saved(file);
    ASSERT_EQ(j["messages"].size(), 3u);  // system, and the first exchange after /undo
    EXPECT_EQ(j["messages"][0]["content"], "Be kind.");
    EXPECT_EQ(j["messages"][1]["content"], "Once upon a time");
    EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));

    // A saved conversation loads back and goes on.
    const Result again = run_chat(dir, "-n 8", "/load " + file + "\nAnd then?\n/save " + file);
    EXPECT_EQ(again.rc, 0) << again.err;
    EXPECT_TRUE(has(again.err, "loaded 3 messages")) << again.err;
    EXPECT_EQ(saved(file)["messages"].size(), 5u);
}

TEST(ChatCli, BackslashContinuesTheMessage) {
    test::TempDir dir;
    const std::string file = dir.path("chat.json");
    const Result r = run_chat(dir, "-n 4", "Once upon\\\na time\n//slash\n/save " + file + "\n");
    EXPECT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = saved(file);
    ASSERT_EQ(j["messages"].size(), 4u);
    EXPECT_EQ(j["messages"][0]["content"], "Once upon\na time");
    EXPECT_EQ(j["messages"][2]["content"], "/slash");  // "//" sends a leading slash
}

TEST(ChatCli, ErrorsAreOneLineAndExitNonZero) {
    test::TempDir dir;
    const std::string missing = quote(LILA_BINARY) + " chat -m " + quote(dir.path("none.gguf")) +
                                " < /dev/null 2> " + quote(dir.path("err.txt"));
    const int status = std::system(missing.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string err = test::read_file(dir.path("err.txt"));
    EXPECT_TRUE(has(err, "lila: error: ") && has(err, "none.gguf")) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

    const Result bad_template = run_chat(dir, "--template vicuna", "hi\n");
    EXPECT_EQ(bad_template.rc, 1);
    EXPECT_TRUE(has(bad_template.err, "unknown chat template 'vicuna' (known: phi4, smollm3,"))
        << bad_template.err;

    // A message longer than the context is refused; the chat goes on.
    std::string huge;
    for (int i = 0; i < 60; i++) huge += "the dog ran ";
    const Result too_long = run_chat(dir, "-c 64 -n 4", huge + "\nhi\n");
    EXPECT_EQ(too_long.rc, 0) << too_long.err;
    EXPECT_TRUE(has(too_long.err, "error: the message is too long")) << too_long.err;
    EXPECT_FALSE(too_long.out.empty());
}

TEST(ChatCli, ColoursWhenAskedAndNeverWithNever) {
    test::TempDir dir;
    const Result always = run_chat(dir, "--color always", "/nope\n");
    EXPECT_TRUE(has(always.err, "\033[1;31merror:")) << always.err;
    const Result never = run_chat(dir, "--color never", "/nope\n");
    EXPECT_FALSE(has(never.err, "\033[")) << never.err;
}

// A tmux server of its own, removed at the end of the test.
class Tmux {
public:
    Tmux() : socket_("lila-test-" + std::to_string(getpid())) {}
    ~Tmux() { run("kill-server"); }

    static bool available() { return std::system("tmux -V > /dev/null 2>&1") == 0; }

    std::string run(const std::string& args) const {
        const std::string cmd = "tmux -L " + socket_ + " " + args + " 2>&1";
        std::string out;
        if (FILE* p = popen(cmd.c_str(), "r")) {
            char buf[4096];
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
            pclose(p);
        }
        return out;
    }
    void start(const std::string& command) const {
        run("new-session -d -s chat -x 200 -y 50 " + quote(command + "; echo EXIT=$?; sleep 60"));
    }
    void keys(const std::string& keys) const { run("send-keys -t chat " + keys); }
    // What the pane shows, less the empty lines below.
    std::string screen(bool escapes = false) const {
        std::string s = run(std::string("capture-pane -p ") + (escapes ? "-e " : "") + "-t chat");
        while (s.ends_with('\n')) s.pop_back();
        return s;
    }
    // The screen once `ready` says so, or whatever it shows when the time is up.
    std::string wait_until(const std::function<bool(const std::string&)>& ready,
                           double timeout_s = 30.0) const {
        const auto t0 = std::chrono::steady_clock::now();
        std::string s;
        while (!ready(s = screen()) &&
               std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(timeout_s)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return s;
    }
    std::string wait_for(const std::string& text) const {
        return wait_until([&](const std::string& s) { return has(s, text); });
    }

private:
    std::string socket_;
};

TEST(ChatCli, RealTerminalEditingCtrlCAndExit) {
    if (!Tmux::available()) GTEST_SKIP() << "tmux is not installed: the terminal test is skipped";
    Tmux tmux;
    // "Tom" makes this model tell a story of thousands of tokens: time to press Ctrl-C.
    tmux.start("env -u NO_COLOR " + chat_command("-c 4096 -n 3000"));
    // The banner, then the prompt (the screen shows no trailing space).
    std::string s = tmux.wait_for("/help for commands\n>");
    ASSERT_TRUE(has(s, "/help for commands\n>")) << s;
    // The prompt is green on a terminal (tmux reports bold and green apart).
    EXPECT_TRUE(has(tmux.screen(true), "\033[32m>")) << tmux.screen(true);

    // Line editing: type, go to the start (Ctrl-A), fix the word, send.
    tmux.keys("'om' C-a 'T' Enter");
    s = tmux.wait_for("> Tom\n");
    ASSERT_TRUE(has(s, "> Tom")) << s;
    // Stop the reply as soon as it shows.
    tmux.wait_until([](const std::string& s) {
        const size_t at = s.find("> Tom\n");
        return at != std::string::npos && s.size() > at + 6;
    });
    tmux.keys("C-c");
    s = tmux.wait_for("(stopped)");
    ASSERT_TRUE(has(s, "(stopped)")) << s;

    // The partial reply stays in the conversation: two messages.
    tmux.keys("'/stats' Enter");
    s = tmux.wait_for("messages");
    EXPECT_TRUE(has(s, "2 messages")) << s;

    // Up recalls the previous line; Ctrl-C with text on the line only drops that line.
    tmux.keys("Up");
    s = tmux.wait_for("tokens/s\n> /stats");
    EXPECT_TRUE(s.ends_with("tokens/s\n> /stats")) << s;
    tmux.keys("C-c");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(has(tmux.screen(), "EXIT=")) << tmux.screen();

    // Ctrl-C at the empty prompt leaves with status 0.
    tmux.keys("C-c");
    s = tmux.wait_for("EXIT=");
    EXPECT_TRUE(has(s, "EXIT=0")) << s;
}

TEST(ChatCli, RealTerminalCtrlDAndNoColor) {
    if (!Tmux::available()) GTEST_SKIP() << "tmux is not installed: the terminal test is skipped";
    Tmux tmux;
    tmux.start("env NO_COLOR=1 " + chat_command("-n 8"));
    // The banner, then the prompt (the screen shows no trailing space).
    std::string s = tmux.wait_for("/help for commands\n>");
    ASSERT_TRUE(has(s, "/help for commands\n>")) << s;
    EXPECT_FALSE(has(tmux.screen(true), "\033[32m")) << "NO_COLOR is honoured";
    tmux.keys("'Once upon \\' Enter 'a time' Enter");  // continued on a second line
    s = tmux.wait_for("(reply cut at 8 tokens");
    EXPECT_TRUE(has(s, ". a time")) << s;
    // Ctrl-C at an empty continuation line drops the whole message, and the chat goes on.
    tmux.keys("'dropped \\' Enter");
    tmux.wait_for("dropped \\\n.");
    tmux.keys("C-c");
    s = tmux.wait_until([](const std::string& s) { return s.ends_with("dropped \\\n.\n>"); });
    EXPECT_TRUE(s.ends_with("dropped \\\n.\n>")) << s;
    tmux.keys("C-d");
    s = tmux.wait_for("EXIT=");
    EXPECT_TRUE(has(s, "EXIT=0")) << s;
}

}  // namespace
}  // namespace lila
