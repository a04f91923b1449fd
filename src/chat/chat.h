// The conversation engine: the messages, the template that lays them out, and the KV cache
// kept between turns. It knows nothing of terminals: tools/chat.cpp and the tests drive it
// the same way.
//
// Each reply formats the whole conversation, tokenizes it, keeps the longest prefix that is
// already in the cache and evaluates only the rest, so a new turn costs only its own tokens.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/chat/chat_template.h"
#include "src/runtime/sampler.h"
#include "src/runtime/session.h"

namespace lila {

enum class StopReason {
    EndOfTurn,    // EOS/EOT, a BOS (a new document), or a template end-of-turn marker
    Limit,        // n_predict tokens
    ContextFull,  // no room left for another token
    Interrupted,  // the interrupt flag was raised
};

struct ReplyStats {
    int64_t n_reused = 0;     // prompt tokens that were already in the cache
    int64_t n_prefilled = 0;  // prompt tokens evaluated for this reply
    int64_t n_generated = 0;  // reply tokens (the end-of-turn token not counted)
    double prompt_s = 0.0;
    double gen_s = 0.0;
    int n_dropped = 0;  // oldest messages dropped to make room for this turn
    StopReason stop = StopReason::EndOfTurn;
};

struct ChatParams {
    int n_predict = -1;  // most tokens per reply; <= 0: until the end of the turn
    SamplerParams sampling;
    std::function<void(const std::string&)> on_notice;  // e.g. "dropped 2 oldest messages"
};

class Chat {
public:
    Chat(Session& session, const ChatTemplate& tmpl, ChatParams params);

    using TextSink = std::function<void(std::string_view)>;
    // Adds the user's message and generates the reply, passing its text to on_text as it
    // comes (whole UTF-8 characters, leading whitespace and end-of-turn markers left out).
    // When the turn does not fit, the oldest exchanges are dropped (the system prompt stays)
    // and on_notice is told. Error when the message cannot fit even alone, or is empty or
    // not UTF-8: the conversation is then unchanged. Stopped by `interrupt` between tokens,
    // the partial reply stays in the conversation.
    ReplyStats reply(std::string_view user, const TextSink& on_text,
                     const std::atomic<bool>* interrupt = nullptr);

    // Empty text removes the system prompt.
    void set_system(std::string_view text);
    std::string system() const;
    // Drops the last exchange (the last user message and what followed it); false when
    // there is none.
    bool undo();
    // Forgets every message but the system prompt.
    void reset();
    // The conversation as JSON, written atomically (FILE.tmp, then renamed over FILE).
    void save(const std::string& path) const;
    // Replaces the conversation with a saved one; Error naming the file and the problem
    // (the conversation is then unchanged).
    void load(const std::string& path);

    const std::vector<ChatMessage>& messages() const { return messages_; }
    const ChatTemplate& chat_template() const { return tmpl_; }
    const ReplyStats& last_reply() const { return last_; }
    int64_t n_cached() const { return session_.n_past(); }  // tokens in the KV cache
    int64_t n_ctx() const { return session_.n_ctx(); }

    // The token ids of a conversation laid out by this chat's template (tokenize_chat).
    std::vector<int32_t> tokenize(std::span<const ChatMessage> messages,
                                  bool add_generation_prompt) const;

private:
    void set_messages(std::vector<ChatMessage> messages);
    void keep_cached_prefix(const std::vector<int32_t>& tokens, size_t limit);
    std::vector<int32_t> fit_turn(std::vector<ChatMessage>& conv, int* n_dropped) const;
    bool prefill(const std::vector<int32_t>& prompt, const std::atomic<bool>* interrupt);
    void eval_tokens(std::span<const int32_t> ids);
    bool is_stop_token(int32_t id) const;
    void notice(const std::string& text) const;

    Session& session_;
    const Tokenizer& tok_;
    const ChatTemplate& tmpl_;
    ChatParams params_;
    Sampler sampler_;
    std::vector<std::string> stop_strings_;  // markers that are not single special tokens
    std::vector<int32_t> stop_tokens_;       // markers that are
    std::vector<ChatMessage> messages_;      // a system message, if any, comes first
    std::vector<int32_t> cached_;            // the tokens in the KV cache, position by position
    std::vector<float> logits_;              // the sampler's copy of the last logits
    ReplyStats last_;
};

}  // namespace lila
