#include "src/serve/request.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace lila::serve {

namespace {

using nlohmann::json;

ApiError bad(const std::string& param, const std::string& problem) {
    return ApiError(400, param + ": " + problem, param);
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

json parse_object(std::string_view body) {
    json doc;
    try {
        doc = json::parse(body);
    } catch (const json::parse_error& e) {
        throw ApiError(400, std::string("the body is not valid JSON: ") + e.what());
    }
    if (!doc.is_object()) throw ApiError(400, "the body must be a JSON object");
    return doc;
}

// The fields of one JSON object, each read with its type checked; absent and null fields
// leave the value as it was.
class Fields {
public:
    Fields(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

    const json* find(const std::string& key) const {
        const auto it = obj_.find(key);
        return it == obj_.end() || it->is_null() ? nullptr : &*it;
    }
    std::string name(const std::string& key) const { return prefix_ + key; }

    bool get(const std::string& key, bool& out) const {
        const json* v = find(key);
        if (!v) return false;
        if (!v->is_boolean()) throw bad(name(key), "expected true or false");
        out = v->get<bool>();
        return true;
    }
    bool get(const std::string& key, std::string& out) const {
        const json* v = find(key);
        if (!v) return false;
        if (!v->is_string()) throw bad(name(key), "expected a string");
        out = v->get<std::string>();
        return true;
    }
    // An integer in [lo, hi].
    template <typename Int>
    bool get(const std::string& key, Int& out, int64_t lo, int64_t hi) const {
        const json* v = find(key);
        if (!v) return false;
        if (!v->is_number_integer()) throw bad(name(key), "expected an integer");
        // An unsigned value past int64 is out of every range here.
        const bool huge = v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX;
        const int64_t x = huge ? INT64_MAX : v->get<int64_t>();
        if (huge || x < lo || x > hi) {
            throw bad(name(key),
                      "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
        }
        out = static_cast<Int>(x);
        return true;
    }
    // A number in [lo, hi].
    bool get(const std::string& key, float& out, double lo, double hi) const {
        const json* v = find(key);
        if (!v) return false;
        if (!v->is_number()) throw bad(name(key), "expected a number");
        const double d = v->get<double>();
        if (!(d >= lo && d <= hi)) {
            throw bad(name(key), "must be between " + number(lo) + " and " + number(hi));
        }
        out = static_cast<float>(d);
        return true;
    }

private:
    const json& obj_;
    std::string prefix_;
};

// A message's content: a string, or OpenAI's list of parts of which lila reads the text ones.
std::string message_content(const json& content, const std::string& what) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw bad(what, "expected a string or a list of content parts");
    std::string text;
    for (size_t i = 0; i < content.size(); i++) {
        const std::string part = what + "[" + std::to_string(i) + "]";
        const json& p = content[i];
        if (!p.is_object() || p.value("type", json()) != "text") {
            throw bad(part, "only parts of type \"text\" are supported");
        }
        const auto t = p.find("text");
        if (t == p.end() || !t->is_string()) throw bad(part + ".text", "expected a string");
        text += t->get<std::string>();
    }
    return text;
}

std::vector<ChatMessage> parse_messages(const Fields& f) {
    const json* list = f.find("messages");
    if (!list) throw bad("messages", "required");
    if (!list->is_array() || list->empty()) throw bad("messages", "expected a non-empty list");
    std::vector<ChatMessage> messages;
    for (size_t i = 0; i < list->size(); i++) {
        const std::string where = "messages[" + std::to_string(i) + "]";
        const json& m = (*list)[i];
        if (!m.is_object()) throw bad(where, "expected an object with role and content");
        const Fields mf(m, where + ".");
        std::string role_text;
        if (!mf.get("role", role_text)) throw bad(where + ".role", "required");
        // OpenAI's newer models call the system prompt "developer".
        std::optional<Role> role = role_from_name(role_text == "developer" ? "system" : role_text);
        if (!role) {
            throw bad(where + ".role",
                      "'" + role_text + "' is not one of system, developer, user, assistant");
        }
        if (*role == Role::System && i > 0) {
            throw bad(where + ".role", "a system message must come first");
        }
        const json* content = mf.find("content");
        if (!content) throw bad(where + ".content", "required");
        messages.push_back({*role, message_content(*content, where + ".content")});
    }
    if (messages.back().role == Role::Assistant) {
        throw bad("messages",
                  "the last message must not be the assistant's: it is what to reply to");
    }
    return messages;
}

void parse_prompt(const Fields& f, CompletionRequest& r) {
    const json* p = f.find("prompt");
    if (!p) throw bad("prompt", "required");
    auto token_ids = [&](const json& list, const std::string& what) {
        std::vector<int32_t> ids;
        for (const json& id : list) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
                throw bad(what, "expected token ids (non-negative integers)");
            }
            ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
        }
        return ids;
    };
    if (p->is_string()) {
        r.prompt = p->get<std::string>();
    } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
        r.prompt_ids = token_ids(*p, "prompt");
    } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
        r.prompt = (*p)[0].get<std::string>();
    } else if (p->is_array() && p->size() == 1 && (*p)[0].is_array() && !(*p)[0].empty()) {
        r.prompt_ids = token_ids((*p)[0], "prompt[0]");
    } else if (p->is_array() && p->size() > 1) {
        throw bad("prompt",
                  "one prompt per request (a list of " + std::to_string(p->size()) + " was given)");
    } else {
        throw bad("prompt", "expected a string or a list of token ids");
    }
}

std::vector<std::string> parse_stop(const Fields& f) {
    const json* s = f.find("stop");
    if (!s) return {};
    std::vector<std::string> stops;
    if (s->is_string()) {
        stops.push_back(s->get<std::string>());
    } else if (s->is_array()) {
        for (size_t i = 0; i < s->size(); i++) {
            const std::string what = "stop[" + std::to_string(i) + "]";
            if (!(*s)[i].is_string()) throw bad(what, "expected a string");
            stops.push_back((*s)[i].get<std::string>());
        }
    } else {
        throw bad("stop", "expected a string or a list of strings");
    }
    for (size_t i = 0; i < stops.size(); i++) {
        if (stops[i].empty()) throw bad("stop", "stop strings must not be empty");
    }
    return stops;
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, bool chat,
                                           const SamplerParams& defaults) {
    const json doc = parse_object(body);
    const Fields f(doc, "");
    CompletionRequest r;
    r.chat = chat;
    r.sampling = defaults;
    f.get("model", r.model);
    if (chat) {
        r.messages = parse_messages(f);
    } else {
        parse_prompt(f, r);
    }
    // The chat API's newer name for max_tokens.
    f.get(chat && f.find("max_completion_tokens") ? "max_completion_tokens" : "max_tokens",
          r.max_tokens, 1, INT32_MAX);
    int64_t n = 1;
    if (f.get("n", n, 1, INT32_MAX) && n != 1) throw bad("n", "only n = 1 is supported");
    f.get("temperature", r.sampling.temp, 0.0, 2.0);
    f.get("top_p", r.sampling.top_p, 0.0, 1.0);
    f.get("top_k", r.sampling.top_k, 0, INT32_MAX);
    f.get("min_p", r.sampling.min_p, 0.0, 1.0);
    f.get("repeat_penalty", r.sampling.repeat_penalty, 0.01, 10.0);
    f.get("repeat_last_n", r.sampling.repeat_last_n, 0, INT32_MAX);
    int64_t seed = -1;  // -1: the server picks one, as llama.cpp does
    f.get("seed", seed, -1, INT64_MAX);
    r.seeded = seed >= 0;
    if (r.seeded) r.sampling.seed = static_cast<uint64_t>(seed);
    r.stop = parse_stop(f);
    f.get("stream", r.stream);
    if (bool ignore = false; f.get("ignore_eos", ignore)) r.ignore_eos = ignore;
    bool logprobs = false;
    if (f.get("logprobs", logprobs) && logprobs) throw bad("logprobs", "not supported");
    if (const json* so = f.find("stream_options")) {
        if (!so->is_object()) throw bad("stream_options", "expected an object");
        Fields(*so, "stream_options.").get("include_usage", r.include_usage);
    }
    return r;
}

TokenizeRequest parse_tokenize_request(std::string_view body) {
    const json doc = parse_object(body);
    const Fields f(doc, "");
    TokenizeRequest r;
    if (!f.get("content", r.content)) throw bad("content", "required");
    f.get("add_special", r.add_special);
    f.get("with_pieces", r.with_pieces);
    return r;
}

std::vector<int32_t> parse_detokenize_request(std::string_view body) {
    const json doc = parse_object(body);
    const Fields f(doc, "");
    const json* list = f.find("tokens");
    if (!list) throw bad("tokens", "required");
    if (!list->is_array()) throw bad("tokens", "expected a list of token ids");
    std::vector<int32_t> ids;
    for (const json& id : *list) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
            throw bad("tokens", "expected a list of token ids (non-negative integers)");
        }
        ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    return ids;
}

}  // namespace lila::serve
