#include "src/chat/chat.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/base/clock.h"
#include "src/base/error.h"
#include "src/base/utf8.h"
#include "src/chat/stop_text.h"
#include "src/tokenizer/tokenizer.h"

namespace lila {

namespace {

// Prompt tokens evaluated per step of a prefill; an interrupt is noticed between steps.
constexpr size_t kPrefillChunk = 512;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return std::string(s);
}

bool is_utf8(std::string_view s) {
    return utf8_sanitize(s) == s;
}

bool raised(const std::atomic<bool>* flag) {
    return flag && flag->load();
}

// The reply as it streams: cut at the end-of-turn markers that come as text (never shown,
// not even in part), less the leading whitespace.
class ReplyText {
public:
    ReplyText(const std::vector<std::string>& stops, const Chat::TextSink& sink)
        : stops_(stops), sink_(sink) {}

    // Adds decoded text; true when it completed a marker.
    bool add(std::string_view piece) {
        emit(stops_.add(piece));
        return stops_.stopped();
    }

    // Passes on whatever was held back.
    void finish() { emit(stops_.finish()); }

    const std::string& text() const { return stops_.text(); }

private:
    void emit(std::string_view text) {
        if (!started_) {
            while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
            started_ = !text.empty();
        }
        if (!text.empty() && sink_) sink_(text);
    }

    StopText stops_;
    const Chat::TextSink& sink_;
    bool started_ = false;  // something other than whitespace has been passed on
};

// A saved conversation's messages; Error naming the file and the first problem.
std::vector<ChatMessage> parse_messages(const nlohmann::json& doc, const std::string& path) {
    auto bad = [&](const std::string& what) { return Error(path + ": " + what); };
    const auto list = doc.is_object() ? doc.find("messages") : doc.end();
    if (!doc.is_object() || list == doc.end() || !list->is_array()) {
        throw bad("not a saved chat (no \"messages\" list)");
    }
    std::vector<ChatMessage> messages;
    for (const nlohmann::json& m : *list) {
        const std::string where = "message " + std::to_string(messages.size() + 1) + ": ";
        const auto role = m.is_object() ? m.find("role") : m.end();
        const auto content = m.is_object() ? m.find("content") : m.end();
        if (!m.is_object() || role == m.end() || content == m.end() || !role->is_string() ||
            !content->is_string()) {
            throw bad(where + "needs \"role\" and \"content\" strings");
        }
        const std::optional<Role> r = role_from_name(role->get<std::string>());
        if (!r) throw bad(where + "unknown role '" + role->get<std::string>() + "'");
        if (*r == Role::System && !messages.empty()) {
            throw bad(where + "a system message must come first");
        }
        messages.push_back({*r, trim(content->get<std::string>())});
    }
    return messages;
}

}  // namespace

Chat::Chat(Session& session, const ChatTemplate& tmpl, ChatParams params)
    : session_(session),
      tok_(session.model().tokenizer()),
      tmpl_(tmpl),
      params_(std::move(params)),
      sampler_(params_.sampling, tok_.n_vocab()),
      logits_(tok_.n_vocab()) {
    // A marker that is one special token is caught by id before it is decoded (special
    // tokens decode to nothing); any other is looked for in the text.
    const Vocab& v = tok_.vocab();
    for (std::string& marker : chat_stop_strings(tmpl, v)) {
        int32_t id = 0;
        while (id < v.size() && !(tok_.is_special(id) && v.tokens[id] == marker)) id++;
        if (id < v.size()) {
            stop_tokens_.push_back(id);
        } else {
            stop_strings_.push_back(std::move(marker));
        }
    }
    keep_cached_prefix({}, 0);
}

std::vector<int32_t> Chat::tokenize(std::span<const ChatMessage> messages,
                                    bool add_generation_prompt) const {
    return tokenize_chat(tmpl_, tok_, messages, add_generation_prompt);
}

ReplyStats Chat::reply(std::string_view user_text, const TextSink& on_text,
                       const std::atomic<bool>* interrupt) {
    const std::string user = trim(user_text);
    if (user.empty()) throw Error("the message is empty");
    if (!is_utf8(user)) throw Error("the message is not UTF-8 text");
    ReplyStats st;
    std::vector<ChatMessage> conv = messages_;
    conv.push_back({Role::User, user});
    const std::vector<int32_t> prompt = fit_turn(conv, &st.n_dropped);
    messages_ = std::move(conv);
    if (st.n_dropped > 0) {
        notice("context full: dropped the " + std::to_string(st.n_dropped) + " oldest message" +
               (st.n_dropped == 1 ? "" : "s") + " to make room");
    }

    // Keep what the cache shares with the prompt, but evaluate at least the last prompt
    // token: its logits choose the first reply token.
    keep_cached_prefix(prompt, prompt.size() - 1);
    st.n_reused = static_cast<int64_t>(cached_.size());
    const auto t_prompt = Clock::now();
    const bool prefilled = prefill(prompt, interrupt);
    st.n_prefilled = static_cast<int64_t>(cached_.size()) - st.n_reused;
    st.prompt_s = seconds_since(t_prompt);

    ReplyText text(stop_strings_, on_text);
    StreamDecoder decoder(tok_);
    const auto t_gen = Clock::now();
    bool marker = false;
    st.stop = prefilled ? StopReason::EndOfTurn : StopReason::Interrupted;
    while (prefilled) {
        if (raised(interrupt)) {
            st.stop = StopReason::Interrupted;
            break;
        }
        const int32_t id = sampler_.sample(logits_.data());
        if (is_stop_token(id)) break;
        sampler_.accept(id);
        st.n_generated++;
        if ((marker = text.add(decoder.push(id)))) break;
        if (params_.n_predict > 0 && st.n_generated >= params_.n_predict) {
            st.stop = StopReason::Limit;
            break;
        }
        if (session_.n_past() == session_.n_ctx()) {
            st.stop = StopReason::ContextFull;
            break;
        }
        eval_tokens({&id, 1});
    }
    if (!marker) text.add(decoder.flush());
    text.finish();
    st.gen_s = seconds_since(t_gen);
    messages_.push_back({Role::Assistant, trim(text.text())});
    last_ = st;
    return st;
}

// The tokens of `conv` with the assistant's turn opened, after dropping the oldest
// exchanges (never the system prompt, never the new message) until a reply has room.
std::vector<int32_t> Chat::fit_turn(std::vector<ChatMessage>& conv, int* n_dropped) const {
    const int64_t n_ctx = session_.n_ctx();
    const int64_t room =
        params_.n_predict > 0 ? std::min<int64_t>(params_.n_predict, n_ctx / 2) : n_ctx / 4;
    std::vector<int32_t> prompt = tokenize(conv, true);
    const auto is_user = [](const ChatMessage& m) { return m.role == Role::User; };
    while (static_cast<int64_t>(prompt.size()) + room > n_ctx) {
        const auto oldest = conv.begin() + (conv[0].role == Role::System ? 1 : 0);
        const auto next_user = std::find_if(oldest + 1, conv.end(), is_user);
        if (next_user == conv.end()) break;  // only the new message is left
        *n_dropped += static_cast<int>(next_user - oldest);
        conv.erase(oldest, next_user);
        prompt = tokenize(conv, true);
    }
    if (static_cast<int64_t>(prompt.size()) >= n_ctx) {
        throw Error("the message is too long: this turn alone takes " +
                    std::to_string(prompt.size()) + " tokens and the context holds " +
                    std::to_string(n_ctx));
    }
    return prompt;
}

// Evaluates the prompt past the cached prefix, in chunks so an interrupt is noticed
// between them. False when interrupted before the end.
bool Chat::prefill(const std::vector<int32_t>& prompt, const std::atomic<bool>* interrupt) {
    while (cached_.size() < prompt.size()) {
        const size_t n = std::min(kPrefillChunk, prompt.size() - cached_.size());
        const std::span<const int32_t> chunk(prompt.data() + cached_.size(), n);
        eval_tokens(chunk);
        for (int32_t id : chunk) sampler_.accept(id);
        if (cached_.size() < prompt.size() && raised(interrupt)) return false;
    }
    return true;
}

void Chat::eval_tokens(std::span<const int32_t> ids) {
    const float* out = session_.eval(ids);
    std::copy(out, out + logits_.size(), logits_.begin());
    cached_.insert(cached_.end(), ids.begin(), ids.end());
}

bool Chat::is_stop_token(int32_t id) const {
    // A BOS mid-stream starts a new document (llama2.c's story models): the reply is over.
    return tok_.is_eog(id) || id == tok_.vocab().bos ||
           std::find(stop_tokens_.begin(), stop_tokens_.end(), id) != stop_tokens_.end();
}

// Forgets the cached tokens past the prefix shared with `tokens` (at most `limit` kept).
void Chat::keep_cached_prefix(const std::vector<int32_t>& tokens, size_t limit) {
    const auto diff = std::mismatch(cached_.begin(), cached_.end(), tokens.begin(), tokens.end());
    const size_t n = std::min<size_t>(diff.first - cached_.begin(), limit);
    session_.truncate(static_cast<int64_t>(n));
    cached_.resize(n);
}

void Chat::set_messages(std::vector<ChatMessage> messages) {
    messages_ = std::move(messages);
    keep_cached_prefix(tokenize(messages_, false), SIZE_MAX);
}

void Chat::set_system(std::string_view text) {
    const std::string content = trim(text);
    if (!is_utf8(content)) throw Error("the system prompt is not UTF-8 text");
    std::vector<ChatMessage> conv = messages_;
    if (!conv.empty() && conv[0].role == Role::System) conv.erase(conv.begin());
    if (!content.empty()) conv.insert(conv.begin(), {Role::System, content});
    set_messages(std::move(conv));
}

std::string Chat::system() const {
    return !messages_.empty() && messages_[0].role == Role::System ? messages_[0].content : "";
}

bool Chat::undo() {
    const auto last_user = std::find_if(messages_.rbegin(), messages_.rend(),
                                        [](const ChatMessage& m) { return m.role == Role::User; });
    if (last_user == messages_.rend()) return false;
    std::vector<ChatMessage> conv(messages_.begin(), std::prev(last_user.base()));
    set_messages(std::move(conv));
    return true;
}

void Chat::reset() {
    std::vector<ChatMessage> conv;
    if (!messages_.empty() && messages_[0].role == Role::System) conv.push_back(messages_[0]);
    set_messages(std::move(conv));
    sampler_.reset();  // a new conversation with a given seed goes as a first one would
    last_ = {};
}

void Chat::save(const std::string& path) const {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const ChatMessage& m : messages_) {
        list.push_back({{"role", role_name(m.role)}, {"content", m.content}});
    }
    const nlohmann::ordered_json doc = {{"template", tmpl_.name}, {"messages", list}};
    const std::string tmp = path + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.close();
    if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        throw Error(path + ": cannot write: " + std::strerror(err));
    }
}

void Chat::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": " + std::strerror(errno));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(path + ": not a saved chat: " + e.what());
    }
    set_messages(parse_messages(doc, path));
}

void Chat::notice(const std::string& text) const {
    if (params_.on_notice) params_.on_notice(text);
}

}  // namespace lila
