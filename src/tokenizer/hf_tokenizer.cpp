// tokenizer.json & co. -> Vocab. The rules follow llama.cpp's convert_hf_to_gguf.py and
// gguf-py (SpecialVocab, get_vocab_base), so a file converted by either has the same tokens,
// types and special ids; where lila differs it says why.
#include "src/tokenizer/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "src/base/error.h"
#include "src/tokenizer/sentencepiece_model.h"
#include "src/tokenizer/tokenizer_bpe.h"
#include "src/tokenizer/tokenizer_spm.h"

namespace lila {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files of one model directory, parsed once; a missing optional file is null JSON.
struct HfFiles {
    std::string dir;
    json tokenizer, config, generation, tokenizer_config;

    std::string path(const char* name) const { return (fs::path(dir) / name).string(); }
    json optional(const char* name) const {
        return fs::exists(path(name)) ? read_json_file(path(name)) : json();
    }
};

const json* find(const json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string get_string(const json& j, const char* key) {
    const json* v = find(j, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

// Added-token entries of tokenizer_config.json are a string or {"content": ...}.
std::string token_text(const json* v) {
    if (!v) return {};
    if (v->is_string()) return v->get<std::string>();
    return get_string(*v, "content");
}

// Added tokens some models fail to mark special (llama.cpp's does_token_look_special).
bool looks_special(std::string_view t) {
    auto wrapped = [&](std::string_view open, std::string_view close) {
        return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
    };
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" ||
           wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>") ||  // <｜...｜>
           wrapped("<unused", ">");
}

// Token ids are this or less. The vocabulary is a dense array indexed by id, so a few bytes
// of JSON holding one large id would otherwise cost gigabytes (a fuzzing finding: 2^30 took
// a 9 KB file past 2 GB). The largest real vocabularies have about 2^18 tokens.
constexpr uint64_t kMaxTokenId = (1u << 20) - 1;

// model.vocab {text: id} -> tokens by id (gaps left empty).
std::vector<std::string> read_base_vocab(const json& model, const std::string& where) {
    const json* vocab = find(model, "vocab");
    if (!vocab || !vocab->is_object() || vocab->empty()) {
        throw Error(where + ": model.vocab is missing or empty");
    }
    std::vector<std::string> tokens;
    std::vector<bool> seen;
    for (const auto& [text, id] : vocab->items()) {
        if (!id.is_number_unsigned() || id.get<uint64_t>() > kMaxTokenId) {
            throw Error(where + ": token '" + text + "' has an invalid id (0 to " +
                        std::to_string(kMaxTokenId) + ")");
        }
        const size_t i = id.get<size_t>();
        if (i >= tokens.size()) tokens.resize(i + 1), seen.resize(i + 1);
        if (seen[i]) throw Error(where + ": token id " + std::to_string(i) + " appears twice");
        tokens[i] = text, seen[i] = true;
    }
    return tokens;
}

// model.merges as (left, right) pairs: "a b" strings, or [a, b] lists (transformers >= 4.45).
std::vector<std::pair<std::string, std::string>> read_merges(const json& model,
                                                             const std::string& where) {
    std::vector<std::pair<std::string, std::string>> merges;
    const json* list = find(model, "merges");
    if (!list) return merges;
    if (!list->is_array()) throw Error(where + ": model.merges is not a list");
    for (const json& m : *list) {
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const size_t space = s.find(' ', 1);
            if (space != std::string::npos) {
                merges.emplace_back(s.substr(0, space), s.substr(space + 1));
                continue;
            }
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
            continue;
        }
        throw Error(where + ": merge " + m.dump() + " is not a pair of tokens");
    }
    return merges;
}

// tokenizer.json's pre-tokenizer as the list of regexes it splits with.
std::vector<std::string> pre_tokenizer_regexes(const json& pre, const std::string& where) {
    std::vector<const json*> steps;
    if (get_string(pre, "type") == "Sequence") {
        const json* list = find(pre, "pretokenizers");
        if (list && list->is_array()) {
            for (const json& p : *list) steps.push_back(&p);
        }
    } else if (pre.is_object()) {
        steps.push_back(&pre);
    }
    std::vector<std::string> regexes;
    bool byte_level = false;
    for (const json* p : steps) {
        const std::string type = get_string(*p, "type");
        const json* prefix = find(*p, "add_prefix_space");
        const json* use_regex = find(*p, "use_regex");
        const json* individual = find(*p, "individual_digits");
        const json* invert = find(*p, "invert");
        if (type == "Split" && get_string(*p, "behavior") == "Isolated" &&
            !(invert && invert->get<bool>()) && find(*p, "pattern")) {
            const std::string re = get_string(*find(*p, "pattern"), "Regex");
            if (!re.empty()) {
                regexes.push_back(re);
                continue;
            }
        } else if (type == "ByteLevel" && !(prefix && prefix->get<bool>())) {
            byte_level = true;
            if (!use_regex || use_regex->get<bool>()) {
                regexes.push_back(bpe_byte_level_regex());
            }
            continue;
        } else if (type == "Digits" && individual && individual->get<bool>()) {
            regexes.push_back("\\p{N}");
            continue;
        }
        throw Error(where + ": pre-tokenizer step " + p->dump().substr(0, 200) +
                    " is not supported");
    }
    if (!byte_level) throw Error(where + ": byte-level BPE without a ByteLevel pre-tokenizer");
    return regexes;
}

// llama.cpp's name for the pre-tokenizer whose regexes (and ignore_merges) are the file's.
std::string detect_pre(const json& tok, const std::string& where) {
    const json* pre = find(tok, "pre_tokenizer");
    const std::vector<std::string> regexes = pre_tokenizer_regexes(pre ? *pre : json(), where);
    const json* model = find(tok, "model");
    const json* ignore = model ? find(*model, "ignore_merges") : nullptr;
    const std::string name =
        bpe_pre_tokenizer_for(regexes, ignore && ignore->is_boolean() && ignore->get<bool>());
    if (name.empty()) {
        throw Error(where +
                    ": the pre-tokenizer's regexes are not those of a model llama.cpp knows");
    }
    return name;
}

// SentencePiece-style vocabulary from tokenizer.json alone (see hf_tokenizer.h on scores).
Vocab spm_vocab_from_json(const json& model, const std::string& where) {
    Vocab v;
    v.model = "llama";
    v.tokens = read_base_vocab(model, where);
    const size_t n = v.tokens.size();
    v.types.assign(n, TokenType::Normal);
    std::map<std::string_view, int32_t> ids;
    for (size_t i = 0; i < n; i++) ids.emplace(v.tokens[i], int32_t(i));

    const auto merges = read_merges(model, where);
    // Pieces no merge forms (single characters) rank below every merged piece.
    v.scores.resize(n);
    for (size_t i = 0; i < n; i++) v.scores[i] = -float(merges.size() + i);
    std::vector<bool> scored(n);
    for (size_t rank = 0; rank < merges.size(); rank++) {
        const auto it = ids.find(merges[rank].first + merges[rank].second);
        if (it == ids.end() || scored[it->second]) continue;
        v.scores[it->second] = -float(rank);
        scored[it->second] = true;
    }
    for (size_t i = 0; i < n; i++) {
        if (byte_token_value(v.tokens[i]) >= 0) v.types[i] = TokenType::Byte, v.scores[i] = 0;
    }
    const std::string unk = get_string(model, "unk_token");
    if (const auto it = ids.find(unk); !unk.empty() && it != ids.end()) {
        v.unk = it->second;
        v.types[v.unk] = TokenType::Unknown;
        v.scores[v.unk] = 0;
    }
    return v;
}

// Whether SentencePiece-style text gets a leading U+2581: a Prepend normalizer, or a
// Metaspace pre-tokenizer that prepends.
bool spm_space_prefix(const json& tok) {
    bool prefix = false;
    auto visit = [&](const json& step, auto& self) -> void {
        for (const char* list : {"normalizers", "pretokenizers"}) {
            if (const json* l = find(step, list); l && l->is_array()) {
                for (const json& s : *l) self(s, self);
            }
        }
        const std::string type = get_string(step, "type");
        if (type == "Prepend" && get_string(step, "prepend") == "\xE2\x96\x81") prefix = true;
        if (type == "Metaspace") {
            const std::string scheme = get_string(step, "prepend_scheme");
            const json* add = find(step, "add_prefix_space");
            if (scheme == "first" || scheme == "always" || (add && add->get<bool>())) prefix = true;
        }
    };
    for (const char* key : {"normalizer", "pre_tokenizer"}) {
        if (const json* j = find(tok, key)) visit(*j, visit);
    }
    return prefix;
}

// The base vocabulary of either kind, before added tokens and padding.
Vocab base_vocab(const HfFiles& f) {
    const std::string where = f.path("tokenizer.json");
    const json* model = find(f.tokenizer, "model");
    if (!model || get_string(*model, "type") != "BPE") {
        throw Error(where + ": tokenizer model '" + (model ? get_string(*model, "type") : "") +
                    "' is not supported (BPE: SentencePiece-style or byte-level)");
    }
    const json* fallback = find(*model, "byte_fallback");
    if (fallback && fallback->get<bool>()) {
        // SentencePiece's own file has the exact scores, when the model ships it.
        if (fs::exists(f.path("tokenizer.model"))) {
            return read_sentencepiece_model(f.path("tokenizer.model"));
        }
        Vocab v = spm_vocab_from_json(*model, where);
        v.add_space_prefix = spm_space_prefix(f.tokenizer);
        return v;
    }

    Vocab v;
    v.model = "gpt2";
    v.pre = detect_pre(f.tokenizer, where);
    v.tokens = read_base_vocab(*model, where);
    v.types.assign(v.tokens.size(), TokenType::Normal);
    v.add_space_prefix = false;
    for (auto& [a, b] : read_merges(*model, where)) {
        // List-form halves may hold spaces; llama.cpp spells them U+0120 in "a b" strings.
        for (std::string* s : {&a, &b}) {
            for (size_t i; (i = s->find(' ')) != std::string::npos;) s->replace(i, 1, "\xC4\xA0");
        }
        v.merges.push_back(a + " " + b);
    }
    if (v.merges.empty()) throw Error(where + ": byte-level BPE without merges");
    return v;
}

// Added tokens take their ids' places; ids past the base vocabulary extend it.
void add_tokens(const HfFiles& f, Vocab& v) {
    const json* added = find(f.tokenizer, "added_tokens");
    if (!added) return;
    const std::string where = f.path("tokenizer.json");
    for (const json& t : *added) {
        const json* id = find(t, "id");
        const std::string text = get_string(t, "content");
        if (!id || !id->is_number_unsigned() || id->get<uint64_t>() > kMaxTokenId || text.empty()) {
            throw Error(where + ": added token " + t.dump().substr(0, 200) + " is malformed");
        }
        const size_t i = id->get<size_t>();
        if (i >= v.tokens.size()) {
            v.tokens.resize(i + 1), v.types.resize(i + 1, TokenType::Unused);
            if (!v.scores.empty()) v.scores.resize(i + 1, -1000.0f);
        }
        if (v.types[i] == TokenType::Unknown) continue;  // keep <unk> what SentencePiece says
        const json* special = find(t, "special");
        const bool control = (special && special->get<bool>()) || looks_special(text);
        v.tokens[i] = text;
        v.types[i] = control ? TokenType::Control : TokenType::UserDefined;
        // A user-defined token is matched in the raw text, so a SentencePiece one spells
        // its spaces as spaces (llama.cpp's "pre-normalize user-defined spaces").
        if (!control && v.model == "llama") {
            for (size_t k; (k = v.tokens[i].find("\xE2\x96\x81")) != std::string::npos;) {
                v.tokens[i].replace(k, 3, " ");
            }
        }
        if (!v.scores.empty()) v.scores[i] = -1000.0f;
    }
}

// Every id without a token becomes an unused "[PADn]" (gaps, and rows up to n_vocab).
void pad(Vocab& v, int64_t n_vocab, const std::string& where) {
    if (n_vocab > 0 && v.size() > n_vocab) {
        throw Error(where + ": the tokenizer has " + std::to_string(v.size()) +
                    " tokens, the model's embedding only " + std::to_string(n_vocab) + " rows");
    }
    const size_t n = std::max<size_t>(v.tokens.size(), size_t(n_vocab));
    v.tokens.resize(n), v.types.resize(n, TokenType::Unused);
    if (!v.scores.empty()) v.scores.resize(n, -1000.0f);
    for (size_t i = 0; i < n; i++) {
        if (v.tokens[i].empty()) {
            v.tokens[i] = "[PAD" + std::to_string(i) + "]";
            v.types[i] = TokenType::Unused;
        }
    }
}

int32_t find_token(const HfFiles& f, const Vocab& v, const std::string& text) {
    if (text.empty()) return -1;
    if (const json* added = find(f.tokenizer, "added_tokens")) {
        for (const json& t : *added) {
            const json* id = find(t, "id");
            if (id && id->is_number_unsigned() && get_string(t, "content") == text) {
                return id->get<int32_t>();
            }
        }
    }
    for (int32_t i = 0; i < v.size(); i++) {
        if (v.tokens[i] == text) return i;
    }
    return -1;
}

// An id from config.json / generation_config.json: an integer, or the first of a list.
int32_t config_id(const json& j, const char* key, const Vocab& v) {
    const json* id = find(j, key);
    if (id && id->is_array() && !id->empty()) id = &(*id)[0];
    if (!id || !id->is_number_unsigned() || id->get<uint64_t>() >= uint64_t(v.size())) return -1;
    return id->get<int32_t>();
}

// BOS/EOS/UNK/PAD: tokenizer_config.json's token texts, else config.json's ids, else
// generation_config.json's (llama.cpp's SpecialVocab reads the first two).
void set_special_ids(const HfFiles& f, Vocab& v) {
    struct Special {
        const char* name;
        int32_t Vocab::*field;
    };
    for (const Special s : {Special{"bos", &Vocab::bos}, Special{"eos", &Vocab::eos},
                            Special{"unk", &Vocab::unk}, Special{"pad", &Vocab::pad}}) {
        const std::string key = std::string(s.name) + "_token";
        int32_t id = find_token(f, v, token_text(find(f.tokenizer_config, key.c_str())));
        if (id < 0) id = config_id(f.config, (key + "_id").c_str(), v);
        if (id < 0) id = config_id(f.generation, (key + "_id").c_str(), v);
        if (id >= 0) v.*s.field = id;
    }
    // What llama.cpp assumes of a SentencePiece vocabulary nothing else describes.
    if (v.model == "llama") {
        for (const auto& [field, text] :
             {std::pair{&Vocab::bos, "<s>"}, std::pair{&Vocab::eos, "</s>"},
              std::pair{&Vocab::unk, "<unk>"}}) {
            if (v.*field < 0) v.*field = find_token(f, v, text);
        }
    }

    // End of turn: the chat models' own token, else another end id generation_config lists
    // (Llama 3.1 Instruct: [<|end_of_text|>, <|eom_id|>, <|eot_id|>]).
    for (const char* text : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"}) {
        const int32_t id = find_token(f, v, text);
        if (id >= 0 && v.types[id] == TokenType::Control) {
            v.eot = id;
            return;
        }
    }
    if (const json* ends = find(f.generation, "eos_token_id"); ends && ends->is_array()) {
        for (const json& e : *ends) {
            if (e.is_number_unsigned() && e.get<uint64_t>() < uint64_t(v.size()) &&
                e.get<int32_t>() != v.eos) {
                v.eot = e.get<int32_t>();
                return;
            }
        }
    }
}

// add_bos / add_eos: tokenizer_config.json's flags, else what the post-processor's
// template puts around a single text (which also names BOS and EOS when nothing else did),
// else llama.cpp's default for the vocabulary.
void set_add_flags(const HfFiles& f, Vocab& v) {
    v.add_bos = v.model == "llama" || v.pre == "llama-bpe";
    v.add_eos = false;
    const json* post = find(f.tokenizer, "post_processor");
    std::vector<const json*> processors;
    if (post && find(*post, "processors")) {
        for (const json& p : (*post)["processors"]) processors.push_back(&p);
    } else if (post) {
        processors.push_back(post);
    }
    for (const json* p : processors) {
        const json* single = find(*p, "single");
        if (get_string(*p, "type") != "TemplateProcessing" || !single || !single->is_array() ||
            single->size() < 2) {
            continue;
        }
        auto special_at = [&](const json& item) {
            const json* st = find(item, "SpecialToken");
            return st ? find_token(f, v, get_string(*st, "id")) : -1;
        };
        const int32_t first = special_at(single->front()), last = special_at(single->back());
        if (v.bos < 0) v.bos = first;
        if (v.eos < 0) v.eos = last;
        v.add_bos = first >= 0 && first == v.bos;
        v.add_eos = last >= 0 && last == v.eos;
    }
    if (const json* b = find(f.tokenizer_config, "add_bos_token"); b && b->is_boolean()) {
        v.add_bos = b->get<bool>();
    }
    if (const json* e = find(f.tokenizer_config, "add_eos_token"); e && e->is_boolean()) {
        v.add_eos = e->get<bool>();
    }
}

// tokenizer_config.json's chat_template (a list of named templates: the "default" one),
// else chat_template.jinja, else chat_template.json.
std::string chat_template(const HfFiles& f) {
    const json* t = find(f.tokenizer_config, "chat_template");
    if (!t) {
        if (fs::exists(f.path("chat_template.jinja"))) {
            std::ifstream in(f.path("chat_template.jinja"), std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(in), {});
        }
        t = find(f.optional("chat_template.json"), "chat_template");
        if (!t) return {};
        return t->is_string() ? t->get<std::string>() : std::string();
    }
    if (t->is_string()) return t->get<std::string>();
    if (t->is_array()) {
        for (const json& named : *t) {
            if (get_string(named, "name") == "default") return get_string(named, "template");
        }
    }
    return {};
}

}  // namespace

json read_json_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open");
    try {
        return json::parse(in);
    } catch (const json::exception& e) {
        throw Error(path + ": not valid JSON: " + e.what());
    }
}

HfTokenizer read_hf_tokenizer(const std::string& dir, int64_t n_vocab) {
    HfFiles f{dir, {}, {}, {}, {}};
    if (!fs::exists(f.path("tokenizer.json"))) {
        throw Error(dir + ": no tokenizer.json (lila reads Hugging Face fast-tokenizer files)");
    }
    f.tokenizer = read_json_file(f.path("tokenizer.json"));
    f.config = f.optional("config.json");
    f.generation = f.optional("generation_config.json");
    f.tokenizer_config = f.optional("tokenizer_config.json");

    HfTokenizer out;
    Vocab& v = out.vocab;
    try {
        v = base_vocab(f);
        add_tokens(f, v);
        pad(v, n_vocab, f.path("tokenizer.json"));
        set_special_ids(f, v);
        set_add_flags(f, v);
    } catch (const json::exception& e) {  // a value of the wrong JSON type
        throw Error(f.path("tokenizer.json") + ": unexpected content: " + e.what());
    }
    out.chat_template = chat_template(f);
    return out;
}

}  // namespace lila
