// Chat templates: the exact text and token ids of a two-turn conversation in every family,
// detection from the Jinja templates real models ship, and end-of-turn markers.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/base/error.h"
#include "src/chat/chat_template.h"
#include "src/io/gguf.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/tokenizer.h"
#include "test_util.h"

namespace lila {
namespace {

using Ids = std::vector<int32_t>;

// <unk>, BOS, EOS, the template's special tokens, "▁" (so a space is one token), then the
// 256 byte tokens: every other character of the text becomes its byte token.
struct ChatVocab {
    Vocab v;
    int32_t space = 0, byte0 = 0;

    ChatVocab(const std::string& bos, const std::string& eos, std::vector<std::string> specials,
              bool add_bos) {
        add("<unk>", TokenType::Unknown);
        v.bos = add(bos, TokenType::Control);
        v.eos = add(eos, TokenType::Control);
        for (const std::string& s : specials) add(s, TokenType::Control);
        space = add("\xE2\x96\x81", TokenType::Normal);
        byte0 = v.size();
        for (int b = 0; b < 256; b++) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            add(name, TokenType::Byte);
        }
        v.unk = 0;
        v.add_bos = add_bos;
        v.add_space_prefix = false;
    }
    int32_t add(const std::string& text, TokenType type) {
        v.tokens.push_back(text);
        v.scores.push_back(0.0f);
        v.types.push_back(type);
        return v.size() - 1;
    }
    int32_t id(const std::string& special) const {
        for (int32_t i = 0; i < v.size(); i++) {
            if (v.tokens[i] == special) return i;
        }
        ADD_FAILURE() << "no token " << special;
        return -1;
    }
    // The ids of plain text: a space is "▁", anything else its byte.
    Ids text(const std::string& s) const {
        Ids ids;
        for (unsigned char c : s) ids.push_back(c == ' ' ? space : byte0 + c);
        return ids;
    }
};

struct Piece {
    std::string text;
    bool special;
};
Piece S(const char* s) {
    return {s, true};
}
Piece T(const char* s) {
    return {s, false};
}

Ids ids_of(const ChatVocab& cv, std::initializer_list<Piece> pieces) {
    Ids out;
    for (const Piece& p : pieces) {
        const Ids part = p.special ? Ids{cv.id(p.text)} : cv.text(p.text);
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

const std::vector<ChatMessage> kConversation = {
    {Role::System, "You are terse."},
    {Role::User, "Hi"},
    {Role::Assistant, "Hello!"},
    {Role::User, "Bye"},
};

struct Family {
    const char* name;
    ChatVocab vocab;
    std::string expected;  // kConversation with the generation prompt
};

std::vector<Family> families() {
    const std::vector<std::string> no_specials;
    return {
        {"chatml", ChatVocab("<|endoftext|>", "<|im_end|>", {"<|im_start|>"}, false),
         "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
         "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
         "<|im_start|>assistant\n"},
        {"llama2", ChatVocab("<s>", "</s>", no_specials, true),
         "<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello! </s>"
         "<s>[INST] Bye [/INST]"},
        {"mistral", ChatVocab("<s>", "</s>", no_specials, true),
         "<s>[INST] You are terse.\n\nHi[/INST] Hello!</s>[INST] Bye[/INST]"},
        {"zephyr", ChatVocab("<s>", "</s>", no_specials, true),
         "<|system|>\nYou are terse.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello!</s>\n"
         "<|user|>\nBye</s>\n<|assistant|>\n"},
        {"gemma", ChatVocab("<bos>", "<eos>", {"<start_of_turn>", "<end_of_turn>"}, true),
         "<bos><start_of_turn>user\nYou are terse.\n\nHi<end_of_turn>\n"
         "<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"
         "<start_of_turn>model\n"},
        {"llama3",
         ChatVocab("<|begin_of_text|>", "<|end_of_text|>",
                   {"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}, true),
         "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
         "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
         "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
         "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
         "<|start_header_id|>assistant<|end_header_id|>\n\n"},
        {"plain", ChatVocab("<s>", "</s>", no_specials, true),
         "You are terse.\n\nUser: Hi\nAssistant: Hello!\nUser: Bye\nAssistant:"},
    };
}

TEST(ChatTemplate, TableHasEveryFamilyAndPlainLast) {
    EXPECT_EQ(chat_template_names(),
              "phi4, smollm3, qwen2.5, chatml, llama2, mistral, phi4-mini, phi3, olmo2, granite, "
              "zephyr, gemma, llama3, plain");
    EXPECT_STREQ(chat_templates().back().name, "plain");
    EXPECT_EQ(find_chat_template("nope"), nullptr);
}

TEST(ChatTemplate, FormatsTwoTurnsExactly) {
    for (const Family& f : families()) {
        SCOPED_TRACE(f.name);
        const ChatTemplate* t = find_chat_template(f.name);
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(format_chat(*t, f.vocab.v, kConversation, true), f.expected);
    }
}

TEST(ChatTemplate, HistoryIsAPrefixOfTheNextTurn) {
    // What keeps the KV cache valid from one turn to the next.
    for (const Family& f : families()) {
        SCOPED_TRACE(f.name);
        const ChatTemplate& t = *find_chat_template(f.name);
        const std::span<const ChatMessage> first_turn(kConversation.data(), 3);
        EXPECT_TRUE(f.expected.starts_with(format_chat(t, f.vocab.v, first_turn, false)));
    }
}

TEST(ChatTemplate, TokenIdsOfTwoTurnsInLlama3) {
    const Family f = families()[5];
    auto tok = Tokenizer::create(f.vocab.v);
    const ChatVocab& cv = f.vocab;
    const Ids expected = ids_of(cv, {S("<|begin_of_text|>"),
                                     S("<|start_header_id|>"),
                                     T("system"),
                                     S("<|end_header_id|>"),
                                     T("\n\nYou are terse."),
                                     S("<|eot_id|>"),
                                     S("<|start_header_id|>"),
                                     T("user"),
                                     S("<|end_header_id|>"),
                                     T("\n\nHi"),
                                     S("<|eot_id|>"),
                                     S("<|start_header_id|>"),
                                     T("assistant"),
                                     S("<|end_header_id|>"),
                                     T("\n\nHello!"),
                                     S("<|eot_id|>"),
                                     S("<|start_header_id|>"),
                                     T("user"),
                                     S("<|end_header_id|>"),
                                     T("\n\nBye"),
                                     S("<|eot_id|>"),
                                     S("<|start_header_id|>"),
                                     T("assistant"),
                                     S("<|end_header_id|>"),
                                     T("\n\n")});
    // The template writes BOS itself: no second one.
    EXPECT_EQ(tokenize_chat(*find_chat_template("llama3"), *tok, kConversation, true), expected);
}

TEST(ChatTemplate, TokenIdsOfTwoTurnsInChatMLWithoutBos) {
    const Family f = families()[0];
    auto tok = Tokenizer::create(f.vocab.v);
    const Ids expected = ids_of(
        f.vocab, {S("<|im_start|>"), T("system\nYou are terse."), S("<|im_end|>"), T("\n"),
                  S("<|im_start|>"), T("user\nHi"), S("<|im_end|>"), T("\n"), S("<|im_start|>"),
                  T("assistant\nHello!"), S("<|im_end|>"), T("\n"), S("<|im_start|>"),
                  T("user\nBye"), S("<|im_end|>"), T("\n"), S("<|im_start|>"), T("assistant\n")});
    EXPECT_EQ(tokenize_chat(*find_chat_template("chatml"), *tok, kConversation, true), expected);
}

TEST(ChatTemplate, TokenIdsOfTwoTurnsInLlama2WithBosPerTurn) {
    const Family f = families()[1];
    auto tok = Tokenizer::create(f.vocab.v);
    const Ids expected = ids_of(
        f.vocab, {S("<s>"), T("[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello! "),
                  S("</s>"), S("<s>"), T("[INST] Bye [/INST]")});
    EXPECT_EQ(tokenize_chat(*find_chat_template("llama2"), *tok, kConversation, true), expected);
}

// With the real tokenizers: the ids Hugging Face's apply_chat_template gives.
TEST(ChatTemplate, RealLlama3TokenizerTwoTurns) {
    const HfTokenizer hf = read_hf_tokenizer(test::shared_path("tokenizers/llama3"));
    auto tok = Tokenizer::create(hf.vocab);
    const ChatTemplate* t = detect_chat_template(hf.chat_template);
    ASSERT_NE(t, nullptr);
    const Ids expected = {128000, 128006, 9125,   128007, 271,    2675,   527,    51637,  13,
                          128009, 128006, 882,    128007, 271,    13347,  128009, 128006, 78191,
                          128007, 271,    9906,   0,      128009, 128006, 882,    128007, 271,
                          1383,   68,     128009, 128006, 78191,  128007, 271};
    EXPECT_EQ(tokenize_chat(*t, *tok, kConversation, true), expected);
}

TEST(ChatTemplate, RealLlama2TokenizerTwoTurns) {
    // BOS before each [INST]; " Hello! " ends in a lone "▁" (29871) before </s>, as in HF.
    const HfTokenizer hf = read_hf_tokenizer(test::shared_path("tokenizers/llama2"));
    auto tok = Tokenizer::create(hf.vocab);
    const Ids expected = {1,     518,   25580, 29962, 3532,  14816, 29903, 6778,  13,   3492, 526,
                          1935,  344,   29889, 13,    29966, 829,   14816, 29903, 6778, 13,   13,
                          18567, 518,   29914, 25580, 29962, 15043, 29991, 29871, 2,    1,    518,
                          25580, 29962, 2648,  29872, 518,   29914, 25580, 29962};
    EXPECT_EQ(tokenize_chat(*find_chat_template("llama2"), *tok, kConversation, true), expected);
}

TEST(ChatTemplate, PlainGetsTheVocabularysBos) {
    const Family f = families()[6];
    auto tok = Tokenizer::create(f.vocab.v);
    const Ids ids = tokenize_chat(*find_chat_template("plain"), *tok, kConversation, true);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids[0], f.vocab.v.bos);
    EXPECT_EQ(Ids(ids.begin() + 1, ids.end()), f.vocab.text(f.expected));
}

TEST(ChatTemplate, MarkersBecomeSpecialTokensInEveryFamily) {
    for (const Family& f : families()) {
        SCOPED_TRACE(f.name);
        auto tok = Tokenizer::create(f.vocab.v);
        const Ids ids = tokenize_chat(*find_chat_template(f.name), *tok, kConversation, true);
        std::string text = tok->decode(ids, true);
        // Decoding gives the text back, BOS included where the vocabulary adds it.
        const std::string bos = f.vocab.v.tokens[f.vocab.v.bos];
        const bool added_bos = !f.expected.starts_with(bos) && f.vocab.v.add_bos;
        EXPECT_EQ(text, (added_bos ? bos : "") + f.expected);
        for (int32_t id : ids) {
            if (id < f.vocab.space) {
                EXPECT_TRUE(tok->is_special(id));
            }
        }
    }
}

TEST(ChatTemplate, StopStringsResolveBosAndEos) {
    const ChatVocab zephyr("<s>", "</s>", {}, true);
    EXPECT_EQ(chat_stop_strings(*find_chat_template("zephyr"), zephyr.v),
              (std::vector<std::string>{"</s>", "<|user|>"}));
    const ChatVocab llama3("<|begin_of_text|>", "<|end_of_text|>", {}, true);
    EXPECT_EQ(chat_stop_strings(*find_chat_template("llama3"), llama3.v),
              (std::vector<std::string>{"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}));
    EXPECT_EQ(chat_stop_strings(*find_chat_template("plain"), zephyr.v),
              (std::vector<std::string>{"\nUser:", "</s>"}));
}

TEST(ChatTemplate, ContentIsNotTemplateText) {
    // "{eos}" typed by a user stays text; only the template's own fragments are resolved.
    const ChatVocab cv("<s>", "</s>", {}, true);
    const std::vector<ChatMessage> msgs = {{Role::User, "say {eos} and {bos}"}};
    EXPECT_EQ(format_chat(*find_chat_template("zephyr"), cv.v, msgs, false),
              "<|user|>\nsay {eos} and {bos}</s>\n");
}

TEST(ChatTemplate, SystemWaitsForTheFirstUserMessage) {
    const ChatVocab cv("<s>", "</s>", {}, true);
    const std::vector<ChatMessage> only_system = {{Role::System, "Be brief."}};
    EXPECT_EQ(format_chat(*find_chat_template("llama2"), cv.v, only_system, false), "");
    EXPECT_EQ(format_chat(*find_chat_template("mistral"), cv.v, only_system, false), "<s>");
    EXPECT_EQ(format_chat(*find_chat_template("plain"), cv.v, only_system, false), "Be brief.\n\n");
}

// Jinja templates as the models ship them (tokenizer_config.json "chat_template").
constexpr const char* kLlama2Jinja =
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
    "system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set "
    "system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] "
    "== 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != "
    "false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + "
    "message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if "
    "message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif "
    "message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% "
    "endfor %}";
constexpr const char* kSmolLM2Jinja =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
    "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' "
    "}}{% endif %}";
constexpr const char* kQwen2Jinja =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
    "'<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif "
    "%}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% "
    "endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
constexpr const char* kTinyLlamaJinja =
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + "
    "message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' "
    "+ message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ "
    "'<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and "
    "add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";
constexpr const char* kMistralJinja =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] "
    "' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
    "message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles "
    "are supported!') }}{% endif %}{% endfor %}";
constexpr const char* kGemmaJinja =
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
    "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% "
    "set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ "
    "'<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor "
    "%}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";
constexpr const char* kPhi3Jinja =
    "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + "
    "message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' "
    "%}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if "
    "add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";

// Phi-4-mini-instruct's and OLMo-2-1124-Instruct's templates, transcribed from their
// tokenizer_config.json (their files are not among tests/data/chat/).
constexpr const char* kPhi4MiniJinja =
    "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message and "
    "message['tools'] is not none %}{{ '<|' + message['role'] + '|>' + message['content'] + "
    "'<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + "
    "message['role'] + '|>' + message['content'] + '<|end|>' }}{% endif %}{% endfor %}{% if "
    "add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}";
constexpr const char* kOlmo2Jinja =
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}{{ "
    "'<|system|>\n' + message['content'] + '\n' }}{% elif message['role'] == 'user' %}{{ "
    "'<|user|>\n' + message['content'] + '\n' }}{% elif message['role'] == 'assistant' %}{% if "
    "not loop.last %}{{ '<|assistant|>\n'  + message['content'] + eos_token + '\n' }}{% else "
    "%}{{ '<|assistant|>\n'  + message['content'] + eos_token }}{% endif %}{% endif %}{% if "
    "loop.last and add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}{% endfor %}";

const char* detected(std::string_view jinja) {
    const ChatTemplate* t = detect_chat_template(jinja);
    return t ? t->name : "none";
}

TEST(ChatTemplate, DetectsRealTemplates) {
    EXPECT_STREQ(detected(kLlama2Jinja), "llama2");
    EXPECT_STREQ(detected(kSmolLM2Jinja), "chatml");
    EXPECT_STREQ(detected(kQwen2Jinja), "chatml");
    EXPECT_STREQ(detected(kTinyLlamaJinja), "zephyr");
    EXPECT_STREQ(detected(kMistralJinja), "mistral");
    EXPECT_STREQ(detected(kGemmaJinja), "gemma");
    // Phi-3 looks like Zephyr but ends turns with <|end|>.
    EXPECT_STREQ(detected(kPhi3Jinja), "phi3");
    EXPECT_STREQ(detected(kPhi4MiniJinja), "phi4-mini");
    EXPECT_STREQ(detected(kOlmo2Jinja), "olmo2");
    EXPECT_STREQ(detected("{{ messages }}"), "none");
    EXPECT_STREQ(detected(""), "none");
    // A bare name, as llama.cpp also accepts.
    EXPECT_STREQ(detected("gemma"), "gemma");
}

TEST(ChatTemplate, DetectsTheRealLlama3Template) {
    const std::string config =
        test::read_file(test::shared_path("tokenizers/llama3/tokenizer_config.json"));
    const auto json = nlohmann::json::parse(config);
    ASSERT_TRUE(json.contains("chat_template"));
    EXPECT_STREQ(detected(json["chat_template"].get<std::string>()), "llama3");
}

// The models' own templates (tests/data/chat/, with SOURCES.md) are recognised, and lila
// formats a conversation as they render it (rendered.json: jinja2 with Hugging Face's
// settings), with and without a system message.
TEST(ChatTemplate, FormatsAsTheModelsOwnTemplates) {
    const auto ref = nlohmann::json::parse(test::read_file("tests/data/chat/rendered.json"));
    const std::vector<ChatMessage> conv = {{Role::System, "You are terse."},
                                           {Role::User, "Hi"},
                                           {Role::Assistant, "Hello!"},
                                           {Role::User, "Bye"}};
    for (const auto& c : ref["cases"]) {
        const std::string file = c["file"];
        SCOPED_TRACE(file);
        const std::string jinja = test::read_file("tests/data/chat/" + file);
        ASSERT_FALSE(jinja.empty());
        const ChatTemplate* t = detect_chat_template(jinja);
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(t->name, c["family"].get<std::string>());
        const ChatVocab cv(c["bos"], c["eos"], {}, false);
        if (c.contains("with_system")) {
            EXPECT_EQ(format_chat(*t, cv.v, conv, true), c["with_system"].get<std::string>());
        }
        if (c.contains("without_system")) {
            EXPECT_EQ(format_chat(*t, cv.v, std::span(conv).subspan(1), true),
                      c["without_system"].get<std::string>());
        }
    }
    // Phi-4-mini and OLMo 2, rendered by hand from the templates above.
    const ChatVocab phi("<|endoftext|>", "<|endoftext|>", {}, false);
    EXPECT_EQ(format_chat(*find_chat_template("phi4-mini"), phi.v, conv, true),
              "<|system|>You are terse.<|end|><|user|>Hi<|end|><|assistant|>Hello!<|end|>"
              "<|user|>Bye<|end|><|assistant|>");
    const ChatVocab olmo("<|endoftext|>", "<|endoftext|>", {}, false);
    EXPECT_EQ(format_chat(*find_chat_template("olmo2"), olmo.v, conv, true),
              "<|endoftext|><|system|>\nYou are terse.\n<|user|>\nHi\n<|assistant|>\nHello!"
              "<|endoftext|>\n<|user|>\nBye\n<|assistant|>\n");
}

std::string gguf_with_template(const test::TempDir& dir, const std::string& jinja) {
    GGUFWriter w;
    w.set("general.architecture", GGUFValue::string("llama"));
    if (!jinja.empty()) w.set("tokenizer.chat_template", GGUFValue::string(jinja));
    const std::string path = dir.path("meta.gguf");
    w.write(path);
    return path;
}

TEST(ChatTemplate, PicksFromTheFileOrTheOverride) {
    test::TempDir dir;
    std::string note;
    auto with_gemma = GGUFFile::open(gguf_with_template(dir, kGemmaJinja));
    EXPECT_STREQ(pick_chat_template(*with_gemma, "", &note).name, "gemma");
    EXPECT_STREQ(pick_chat_template(*with_gemma, "chatml", &note).name, "chatml");
    EXPECT_TRUE(note.empty());
    EXPECT_THROW(
        {
            try {
                pick_chat_template(*with_gemma, "vicuna", &note);
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("unknown chat template 'vicuna'"),
                          std::string::npos);
                throw;
            }
        },
        Error);

    auto without = GGUFFile::open(gguf_with_template(dir, ""));
    EXPECT_STREQ(pick_chat_template(*without, "", &note).name, "plain");
    EXPECT_TRUE(note.empty());

    auto with_unknown = GGUFFile::open(gguf_with_template(dir, "{{ messages }}"));
    EXPECT_STREQ(pick_chat_template(*with_unknown, "", &note).name, "plain");
    EXPECT_NE(note.find("not recognised"), std::string::npos);
}

TEST(ChatTemplate, RoleNames) {
    for (Role r : {Role::System, Role::User, Role::Assistant}) {
        EXPECT_EQ(role_from_name(role_name(r)), r);
    }
    EXPECT_FALSE(role_from_name("tool").has_value());
}

}  // namespace
}  // namespace lila
