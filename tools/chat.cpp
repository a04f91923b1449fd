// lila chat: talk with a model in the terminal.
//
// The conversation itself is src/chat (lila::Chat); this file is the terminal around it:
// line editing and history with libedit when stdin is a terminal (plain lines otherwise, so
// scripts can pipe a conversation in), commands, colours, and Ctrl-C.
#include <histedit.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <langinfo.h>
#include <atomic>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "common.h"
#include "src/base/error.h"
#include "src/chat/chat.h"

namespace lila::tools {

namespace {

// Set by SIGINT: stops a reply between two tokens, or ends the chat at an empty prompt.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void on_sigint(int) {
    g_interrupt = true;
}

void install_sigint_handler() {
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a read waiting at the prompt returns, so Ctrl-C ends it
    sigaction(SIGINT, &sa, nullptr);
}

struct ChatArgs {
    ModelArgs model;
    SamplingArgs sampling;
    std::string system;
    std::string template_name;
    std::string color = "auto";
    int n_predict = -1;
};

// ANSI styles for one output stream; all empty when it gets no colour.
struct Style {
    std::string prompt, note, error, reset;
};

Style make_style(const std::string& mode, int fd) {
    const char* no_color = std::getenv("NO_COLOR");  // https://no-color.org
    const bool on =
        mode == "always" || (mode == "auto" && isatty(fd) && !(no_color && no_color[0] != '\0'));
    if (!on) return {};
    return {"\033[1;32m", "\033[2m", "\033[1;31m", "\033[0m"};
}

void write_out(std::string_view s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

// Input lines: libedit (editing, history) on a terminal, plain reads of fd 0 otherwise.
class LineReader {
public:
    // Interrupt: Ctrl-C, with `line` set to what was on the line (dropped, not sent).
    enum class Status { Line, Interrupt, End };

    LineReader(bool terminal, const Style& style) : style_(style) {
        if (!terminal) return;
        el_ = el_init("lila", stdin, stdout, stderr);
        hist_ = history_init();
        if (!el_ || !hist_) throw Error("cannot set up line editing (libedit)");
        HistEvent ev;
        history(hist_, &ev, H_SETSIZE, 1000);
        history(hist_, &ev, H_SETUNIQUE, 1);
        el_set(el_, EL_EDITOR, "emacs");
        el_set(el_, EL_HIST, history, hist_);
        el_set(el_, EL_CLIENTDATA, this);
        el_set(el_, EL_PROMPT_ESC, &LineReader::prompt_of, '\1');
        el_source(el_, nullptr);  // the user's ~/.editrc key bindings
    }
    ~LineReader() {
        if (el_) el_end(el_);
        if (hist_) history_end(hist_);
    }
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    Status read(const std::string& prompt, std::string& line) {
        return el_ ? read_edited(prompt, line) : read_plain(line);
    }

    void remember(const std::string& line) {
        HistEvent ev;
        if (hist_ && !line.empty()) history(hist_, &ev, H_ENTER, line.c_str());
    }

    // More typed or pasted input already waiting: a paste of several lines is one message.
    bool input_pending() const {
        pollfd p = {STDIN_FILENO, POLLIN, 0};
        return el_ && poll(&p, 1, 0) > 0;
    }

private:
    static char* prompt_of(EditLine* el) {
        void* self = nullptr;
        el_get(el, EL_CLIENTDATA, &self);
        return static_cast<LineReader*>(self)->prompt_.data();
    }

    Status read_edited(const std::string& prompt, std::string& line) {
        // '\1' brackets the colour codes, which take no room on screen. With nothing visible
        // after the reset, libedit leaves the colour on for what the user types, so the
        // colour covers the prompt's first character only.
        prompt_ = style_.prompt.empty() ? prompt
                                        : "\1" + style_.prompt + "\1" + prompt.substr(0, 1) + "\1" +
                                              style_.reset + "\1" + prompt.substr(1);
        int count = 0;
        const char* text = el_gets(el_, &count);
        if (text && count > 0) {
            line.assign(text, count);
            if (line.ends_with('\n')) line.pop_back();
            return Status::Line;
        }
        if (!g_interrupt) {  // Ctrl-D, or stdin closed: leave the shell a fresh line
            write_out("\n");
            return Status::End;
        }
        g_interrupt = false;
        const LineInfo* li = el_line(el_);
        line.assign(li->buffer, li->lastchar);
        write_out("\n");
        return Status::Interrupt;
    }

    Status read_plain(std::string& line) {
        for (;;) {
            const size_t nl = pending_.find('\n');
            if (nl != std::string::npos || (at_eof_ && !pending_.empty())) {
                line = pending_.substr(0, nl);
                pending_.erase(0, nl == std::string::npos ? nl : nl + 1);
                if (line.ends_with('\r')) line.pop_back();
                return Status::Line;
            }
            if (g_interrupt) {
                line.clear();
                return Status::Interrupt;
            }
            if (at_eof_) return Status::End;
            char buf[4096];
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
            if (n > 0) pending_.append(buf, n);
            if (n == 0 || (n < 0 && errno != EINTR)) at_eof_ = true;
        }
    }

    const Style& style_;
    EditLine* el_ = nullptr;
    History* hist_ = nullptr;
    std::string prompt_;
    std::string pending_;  // plain mode: bytes read but not yet returned as lines
    bool at_eof_ = false;
};

// One message: a line ending in a backslash continues on the next, and so do lines pasted
// together. nullopt at the end of input or for Ctrl-C at an empty prompt; "" when Ctrl-C
// drops what was typed.
std::optional<std::string> read_message(LineReader& in) {
    std::string msg, line;
    for (;;) {
        switch (in.read(msg.empty() ? "> " : ". ", line)) {
            case LineReader::Status::End:
                return msg.empty() ? std::nullopt : std::optional(msg);
            case LineReader::Status::Interrupt:
                if (msg.empty() && line.empty()) return std::nullopt;
                return std::string();
            case LineReader::Status::Line:
                break;
        }
        in.remember(line);
        const bool more = line.ends_with('\\');
        if (more) line.pop_back();
        msg += line;
        if (!more && !in.input_pending()) return msg;
        msg += '\n';
    }
}

void print_note(const Style& err, const std::string& text) {
    std::fprintf(stderr, "%s%s%s\n", err.note.c_str(), text.c_str(), err.reset.c_str());
}

// "1 message", "2 messages".
std::string count(size_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// What the commands work on.
struct App {
    Chat& chat;
    const Style& err;

    void note(const std::string& text) const { print_note(err, text); }
    void error(const std::string& text) const {
        std::fprintf(stderr, "%serror:%s %s\n", err.error.c_str(), err.reset.c_str(), text.c_str());
    }
};

struct Command {
    const char* name;
    const char* args;
    const char* help;
    bool (*run)(App& app, const std::string& arg);  // false: leave the chat
};

bool cmd_help(App& app, const std::string& arg);

bool cmd_system(App& app, const std::string& arg) {
    if (arg.empty()) {
        const std::string s = app.chat.system();
        write_out(s.empty() ? "(no system prompt)\n" : s + "\n");
    } else {
        app.chat.set_system(arg);
        app.note("system prompt set");
    }
    return true;
}

bool cmd_reset(App& app, const std::string&) {
    app.chat.reset();
    app.note(app.chat.system().empty() ? "new conversation"
                                       : "new conversation (system prompt kept)");
    return true;
}

bool cmd_undo(App& app, const std::string&) {
    app.note(app.chat.undo() ? "dropped the last exchange" : "nothing to undo");
    return true;
}

bool cmd_save(App& app, const std::string& arg) {
    if (arg.empty()) throw Error("/save needs a file name");
    app.chat.save(arg);
    app.note("saved " + count(app.chat.messages().size(), "message") + " to " + arg);
    return true;
}

bool cmd_load(App& app, const std::string& arg) {
    if (arg.empty()) throw Error("/load needs a file name");
    app.chat.load(arg);
    app.note("loaded " + count(app.chat.messages().size(), "message") + " from " + arg);
    return true;
}

bool cmd_stats(App& app, const std::string&) {
    const Chat& c = app.chat;
    const ReplyStats& r = c.last_reply();
    char line[256];
    std::snprintf(line, sizeof line, "context: %lld of %lld tokens, %s\n", (long long)c.n_cached(),
                  (long long)c.n_ctx(), count(c.messages().size(), "message").c_str());
    write_out(line);
    if (r.n_prefilled + r.n_generated == 0) return true;
    std::snprintf(line, sizeof line,
                  "last reply: prompt %lld tokens (%lld cached) at %.1f tokens/s, "
                  "generation %lld tokens at %.1f tokens/s\n",
                  (long long)r.n_prefilled, (long long)r.n_reused,
                  r.prompt_s > 0 ? r.n_prefilled / r.prompt_s : 0.0, (long long)r.n_generated,
                  r.gen_s > 0 ? r.n_generated / r.gen_s : 0.0);
    write_out(line);
    return true;
}

bool cmd_exit(App&, const std::string&) {
    return false;
}

constexpr Command kCommands[] = {
    {"/help", "", "this list", cmd_help},
    {"/system", "[TEXT]", "show the system prompt, or set it", cmd_system},
    {"/reset", "", "start a new conversation (the system prompt stays)", cmd_reset},
    {"/undo", "", "drop the last exchange", cmd_undo},
    {"/save", "FILE", "save the conversation as JSON", cmd_save},
    {"/load", "FILE", "load a saved conversation", cmd_load},
    {"/stats", "", "tokens in the context, speed of the last reply", cmd_stats},
    {"/exit", "", "leave (also Ctrl-D, or Ctrl-C at an empty prompt)", cmd_exit},
};

bool cmd_help(App&, const std::string&) {
    std::string text;
    for (const Command& c : kCommands) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-8s %-7s %s\n", c.name, c.args, c.help);
        text += line;
    }
    text += "  A line ending in \\ continues on the next. Ctrl-C stops a reply.\n";
    text += "  Start a message with // to send one that begins with /.\n";
    write_out(text);
    return true;
}

// Runs "/name arg"; false when the chat should end.
bool run_command(App& app, const std::string& line) {
    const size_t space = line.find_first_of(" \t\n");
    const std::string name = line.substr(0, space);
    const size_t arg_at =
        line.find_first_not_of(" \t\n", space == std::string::npos ? line.size() : space);
    const std::string arg = arg_at == std::string::npos ? "" : line.substr(arg_at);
    for (const Command& c : kCommands) {
        if (name == c.name) return c.run(app, arg);
    }
    app.error("unknown command " + name + " (/help lists them)");
    return true;
}

void reply(App& app, const std::string& text) {
    g_interrupt = false;
    const ReplyStats st = app.chat.reply(text, write_out, &g_interrupt);
    write_out("\n");
    switch (st.stop) {
        case StopReason::EndOfTurn:
            break;
        case StopReason::Interrupted:
            app.note("(stopped)");
            break;
        case StopReason::Limit:
            app.note("(reply cut at " + std::to_string(st.n_generated) + " tokens, see -n)");
            break;
        case StopReason::ContextFull:
            app.note("(context full)");
            break;
    }
}

// libedit needs the locale's character set to handle UTF-8 input; without a UTF-8 locale in
// the environment, C.UTF-8 is tried.
void use_utf8_locale() {
    if (std::setlocale(LC_CTYPE, "") && std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0) return;
    std::setlocale(LC_CTYPE, "C.UTF-8");
}

void run(const ChatArgs& a) {
    require_utf8(a.system, "--system");
    auto model = load_model(a.model);
    Session session(*model, a.model.session_params());
    std::string template_note;
    const ChatTemplate& tmpl = pick_chat_template(model->file(), a.template_name, &template_note);
    const Style out = make_style(a.color, STDOUT_FILENO), err = make_style(a.color, STDERR_FILENO);

    ChatParams params;
    params.n_predict = a.n_predict;
    params.sampling = a.sampling.resolve();
    if (a.model.verbose)
        std::fprintf(stderr, "seed: %llu\n", (unsigned long long)params.sampling.seed);
    params.on_notice = [&err](const std::string& s) { print_note(err, s); };
    Chat chat(session, tmpl, params);
    App app{chat, err};
    if (!template_note.empty()) app.note(template_note);
    chat.set_system(a.system);

    const bool terminal = isatty(STDIN_FILENO);
    if (terminal) use_utf8_locale();
    std::fprintf(stderr, "%s (%s) | context %lld | %s | template %s | /help for commands\n",
                 model->name().c_str(), model->type_summary().c_str(), (long long)session.n_ctx(),
                 count(session.n_threads(), "thread").c_str(), tmpl.name);

    install_sigint_handler();
    LineReader in(terminal, out);
    for (;;) {
        g_interrupt = false;
        const std::optional<std::string> msg = read_message(in);
        if (!msg) break;
        if (msg->find_first_not_of(" \t\n") == std::string::npos) continue;
        try {
            if (msg->starts_with('/') && !msg->starts_with("//")) {
                if (!run_command(app, *msg)) break;
            } else {
                reply(app, msg->starts_with("//") ? msg->substr(1) : *msg);
                if (terminal) write_out("\n");
            }
        } catch (const Error& e) {
            app.error(e.what());
        }
    }
}

}  // namespace

void register_chat(CLI::App& app) {
    auto a = std::make_shared<ChatArgs>();
    CLI::App* cmd = app.add_subcommand("chat", "talk with a model in the terminal");
    add_model_args(cmd, a->model);
    add_sampling_args(cmd, a->sampling);
    cmd->add_option("--system", a->system, "system prompt");
    cmd->add_option("--template", a->template_name,
                    "chat template (default: from the model file): " + chat_template_names());
    cmd->add_option("-n,--n-predict", a->n_predict, "most tokens per reply (-1: no limit)")
        ->check(CLI::Range(-1, 1 << 30));
    cmd->add_option("--color", a->color, "colours: auto (when a terminal), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
