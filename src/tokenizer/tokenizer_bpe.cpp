// Byte-level BPE as GPT-2 introduced it and Llama 3, SmolLM and Qwen2 use it; the same
// algorithm as Hugging Face tokenizers, tiktoken and llama.cpp's llm_tokenizer_bpe.
//
// 1. Special tokens are cut out of the text (Tokenizer::split_special).
// 2. Each remaining run is split into words by the model's pre-tokenizer regexes (PCRE2,
//    Unicode classes), chosen by tokenizer.ggml.pre.
// 3. Each byte of a word is replaced by its GPT-2 stand-in character (bytes_to_unicode), so
//    a token's text is printable; a word's symbols start as its single bytes.
// 4. Adjacent symbols are merged, lowest merge rank first (ties: leftmost), until no listed
//    pair remains. A priority queue makes this O(n log n) in the word's length.
#include "src/tokenizer/tokenizer_bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <climits>
#include <unordered_map>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/base/utf8.h"

namespace lila {

namespace {

// The regexes below are llama.cpp's (llm_tokenizer_bpe in its llama-vocab.cpp), so that a
// file splits as it does there; where llama.cpp adapted a tokenizer.json regex for its own
// engine, the row keeps the tokenizer.json original too, to recognise it in a checkpoint.
// (?:'[sS]|...) rather than (?i:'s|...): case-insensitive matching would also take 'ſ (long
// s) and the Kelvin sign for k, which llama.cpp does not.

// GPT-2's regex as Hugging Face's ByteLevel pre-tokenizer writes it. llama.cpp's table lacks
// the final \s+, which only ever matches what its split would leave as a piece anyway.
constexpr const char* kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3HfRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2HfRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kCjk = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
// Digit runs cut into threes from the right, the first group taking what is left over
// (1234567 -> 1 234 567): llama.cpp's AFMoE digit splitter, which it also runs for
// Tiny Aya's \d{1,3}(?=(?:\d{3})*\b).
constexpr const char* kDigitsFromTheRight = R"(\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N})))";
// GPT-4o's regex as llama.cpp adapted it: ((?=\p{L})[^a-z]) stands for an upper-case letter,
// which also counts non-ASCII lower-case letters as upper case (as llama.cpp does).
constexpr const char* kGpt4oRegex =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt4oHfRegex =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kTekkenRegex =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kTekkenHfRegex =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kCaseWordsRegex =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kDeepseek3Regex =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kPoroRegex =
    R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)";

// A pre-tokenizer: regexes applied one after the other, each splitting every piece the
// previous ones left (matches and the text between them both become pieces, and an empty
// match is a split point), as Hugging Face's Sequence pre-tokenizer and llama.cpp's
// unicode_regex_split do.
struct PreTokenizerSpec {
    std::vector<const char*> names;  // tokenizer.ggml.pre values, as llama.cpp names them
    std::vector<const char*> regexes;
    // A word that is a token as a whole is that token, without merging (Llama 3's
    // tokenizer.json sets ignore_merges; llama.cpp keys it on the pre-tokenizer).
    bool ignore_merges = false;
    // llama.cpp adds BOS for these when the file does not say (tokenizer.ggml.add_bos_token).
    bool add_bos = false;
    // tokenizer.json's own regexes, where llama.cpp runs an adapted form; empty: `regexes`.
    std::vector<const char*> hf_regexes = {};
};

// Every tokenizer.ggml.pre llama.cpp maps, in the order of its table; the first row of a
// given regex list is the name a converted checkpoint gets. Not here: "gemma4", whose
// vocabulary is not byte-encoded.
const std::vector<PreTokenizerSpec>& pre_tokenizer_specs() {
    static const std::vector<PreTokenizerSpec> specs =
        {
            {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Regex, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
            {{"llama-bpe", "llama3", "llama-v3", "laguna", "falcon3", "falcon-h1", "pixtral",
              "midm-2.0", "lfm2", "jina-v5-nano"},
             {kLlama3Regex},
             true,
             true,
             {kLlama3HfRegex}},
            {{"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"},
             {kLlama3Regex},
             false,
             false,
             {kLlama3HfRegex}},
            {{"deepseek-llm"},
             {R"([\r\n])",
              R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)",
              R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)",
              R"(\s+$)", kCjk, R"(\p{N}+)"}},
            {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}},
            {{"deepseek-v3", "hunyuan-dense", "joyai-llm"},
             {R"(\p{N}{1,3})", R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)",
              kDeepseek3Regex}},
            {{"youtu"},
             {R"([\x{AC00}-\x{D7A3}\x{3131}-\x{318E}]+|[\x{FF01}\x{2026}\x{201C}\x{201D}\x{2018}\x{2019}\x{2014}\x{FF1A}\x{FF1B}\x{FF0C}\x{3001}-\x{303F}\x{FE30}-\x{FE4F}]+|[\x{3105}-\x{312F}]+|[\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)",
              R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
             true},
            {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2Regex, "[0-9][0-9][0-9]"}},
            {{"gpt-2", "mpt", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
              "a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe",
              "olmo", "jais", "exaone4", "trillion", "granite-docling"},
             {kGpt2Regex}},
            {{"smollm", "starcoder", "mellum2", "refact", "command-r", "cohere2_moe", "codeshell",
              "exaone", "minerva-7b"},
             {R"(\p{N})", kGpt2Regex}},
            {{"jais-2"},
             {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})"}},
            {{"qwen2", "deepseek-r1-qwen", "kormo", "openpangu", "f2llmv2", "stablelm2", "megrez",
              "hunyuan", "grok-2", "solar-open"},
             {kQwen2Regex},
             false,
             false,
             {kQwen2HfRegex}},
            {{"qwen35"}, {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
            {{"poro-chat", "bloom", "gpt3-finnish"}, {kPoroRegex}},
            {{"viking"}, {kPoroRegex, R"(\p{N})"}},
            {{"tekken"}, {kTekkenRegex}, true, true, {kTekkenHfRegex}},
            {{"exaone-moe"},
             {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)"}},
            {{"chameleon"},
             {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
              R"(\p{N})", R"([\p{P}!-/:-@\[-`{-~])", kGpt2Regex},
             false,
             true},
            {{"gpt-4o", "llama4", "kanana2", "minimax-m2"},
             {kGpt4oRegex},
             false,
             false,
             {kGpt4oHfRegex}},
            {{"tiny_aya"}, {kDigitsFromTheRight, kCaseWordsRegex}},
            // (?=(\d{3})+(?!\d)) matches nothing but splits before every group of three digits
            // from the right; llama.cpp's engine reads \d as the ASCII digits.
            {{"superbpe"}, {R"(\p{N}+)", R"((?=([0-9]{3})+(?![0-9])))"}},
            {{"bailingmoe", "bailingmoe2", "llada-moe"},
             {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
            {{"seed-coder"},
             {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
            // Kimi K2's regex as llama.cpp's hand-written splitter runs it: a word is any run of
            // non-Han letters (the tiktoken regex distinguishes case), and only lower-case
            // contractions join it.
            {{"kimi-k2"},
             {R"(\p{Han}+|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})\p{L})+(?:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
            {{"afmoe"},
             {kDigitsFromTheRight,
              R"([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{8C48}-\x{FAFF}\x{3040}-\x{309F}\x{30A0}-\x{30FF}\x{FF65}-\x{FF9F}\x{2F00}-\x{2FDF}\x{E40}-\x{E7F}\x{E80}-\x{EFF}\x{1780}-\x{17FF}\x{1000}-\x{109F}\x{AA60}-\x{AA7F}\x{A9E0}-\x{A9FF}\x{AC00}-\x{D7AF}\x{1100}-\x{11FF}]+)",
              kDeepseek3Regex}},
        };
    return specs;
}

const PreTokenizerSpec* find_spec(std::string_view pre) {
    for (const PreTokenizerSpec& s : pre_tokenizer_specs()) {
        for (const char* name : s.names) {
            if (pre == name) return &s;
        }
    }
    return nullptr;
}

// In the reference tokenizers (Rust regex, Oniguruma) \s is Unicode White_Space; PCRE2's \s
// also matches U+180E, so spell the property out. llama.cpp's engine knows only the major
// letter category: \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm} and \p{Lo} all mean \p{L} there (its
// "collapsed" text has one stand-in for every letter), so they do here too.
std::string translate_regex(std::string_view re) {
    std::string out;
    for (size_t i = 0; i < re.size(); i++) {
        if (re.substr(i, 4) == "\\p{L" && i + 5 < re.size() &&
            std::string_view("ultmo").find(re[i + 4]) != std::string_view::npos &&
            re[i + 5] == '}') {
            out += "\\p{L}";
            i += 5;
        } else if (re[i] == '\\' && i + 1 < re.size()) {
            const char c = re[++i];
            if (c == 's') {
                out += "\\p{White_Space}";
            } else if (c == 'S') {
                out += "\\P{White_Space}";
            } else {
                out += '\\';
                out += c;
            }
        } else {
            out += re[i];
        }
    }
    return out;
}

class Regex {
public:
    explicit Regex(std::string_view pattern) {
        const std::string re = translate_regex(pattern);
        int err = 0;
        PCRE2_SIZE at = 0;
        // $ is the end of the piece only, as in llama.cpp's (ECMAScript) regexes.
        code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &at, nullptr);
        if (!code_) {
            throw Error("tokenizer: pre-tokenizer regex '" + std::string(pattern) +
                        "': " + message(err) + " at offset " + std::to_string(at));
        }
        // JIT is several times faster; where it is unavailable the interpreter is used.
        pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
    }
    ~Regex() { pcre2_code_free(code_); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Appends the matches in `text` (valid UTF-8) and the runs between them to `out`.
    void split(std::string_view text, pcre2_match_data* md,
               std::vector<std::string_view>& out) const {
        const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
        size_t pos = 0, gap = 0;  // where to search from; where the unmatched run began
        while (pos < text.size()) {
            const int rc =
                pcre2_match(code_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) throw Error("tokenizer: pre-tokenizer regex failed: " + message(rc));
            const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
            if (ov[1] == ov[0]) {  // an empty match splits there; search on from the next character
                if (ov[0] >= text.size()) break;
                if (ov[0] > gap) out.push_back(text.substr(gap, ov[0] - gap));
                gap = ov[0];
                pos = ov[0] + utf8_next(text.substr(ov[0])).len;
                continue;
            }
            if (ov[0] > gap) out.push_back(text.substr(gap, ov[0] - gap));
            out.push_back(text.substr(ov[0], ov[1] - ov[0]));
            pos = gap = ov[1];
        }
        if (gap < text.size()) out.push_back(text.substr(gap));
    }

private:
    static std::string message(int err) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return reinterpret_cast<const char*>(buf);
    }
    pcre2_code* code_;
};

// GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the other 68 for
// U+0100.. in byte order, so every byte has a visible, non-space character.
struct ByteMap {
    std::array<std::string, 256> text;  // byte -> UTF-8 of its character
    std::array<int16_t, 324> byte;      // code point -> byte; -1 for none

    ByteMap() {
        byte.fill(-1);
        uint32_t next = 256;
        for (int b = 0; b < 256; b++) {
            const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
            const uint32_t cp = printable ? uint32_t(b) : next++;
            utf8_append(text[b], cp);
            byte[cp] = int16_t(b);
        }
    }
};

const ByteMap& byte_map() {
    static const ByteMap m;
    return m;
}

class BpeTokenizer final : public Tokenizer {
public:
    explicit BpeTokenizer(Vocab vocab);
    BpeTokenizer(const BpeTokenizer&) = delete;  // pieces_ points into vocab_
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                bool parse_special) const override;
    std::string token_to_piece(int32_t id, bool special) const override;
    // The words the pre-tokenizer cuts `text` into, before merging.
    std::vector<std::string> words(std::string_view text) const;

private:
    struct Merge {
        int32_t rank;
        int32_t id;  // the token the pair becomes
    };
    // A run of the word in a doubly linked list of symbols; merged-away symbols get len 0.
    struct Symbol {
        int32_t prev, next;
        uint32_t start, len;
        int32_t id;
    };
    // The symbol `left` and the one after it may merge into `id`. 16 bytes, as the SPM queue.
    struct Candidate {
        int32_t rank;
        int32_t left;
        uint32_t len;  // of the pair, to spot pairs made stale by other merges
        int32_t id;
    };
    // Heap order: lowest rank first; on equal ranks the leftmost pair first.
    struct Later {
        bool operator()(const Candidate& a, const Candidate& b) const {
            return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
        }
    };
    // Buffers reused across the words of one encode() call.
    struct Scratch {
        pcre2_match_data* md = nullptr;
        std::vector<std::string_view> pieces, next;
        std::string mapped;
        std::vector<Symbol> syms;
        std::vector<Candidate> queue;
    };

    void split_words(std::string_view text, Scratch& s) const;
    void encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const;
    void push_candidate(Scratch& s, int32_t left, int32_t right) const;
    static uint64_t pair_key(int32_t a, int32_t b) {
        return uint64_t(uint32_t(a)) << 32 | uint32_t(b);
    }

    std::vector<std::unique_ptr<Regex>> regexes_;
    bool ignore_merges_ = false;
    std::unordered_map<std::string_view, int32_t> pieces_;  // normal tokens by text
    std::unordered_map<uint64_t, Merge> merges_;            // by (left id, right id)
    std::array<int32_t, 256> byte_tokens_;                  // each byte's one-character token
};

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    const PreTokenizerSpec* spec = find_spec(vocab_.pre.empty() ? "default" : vocab_.pre);
    if (!spec) {
        // As llama.cpp does for a name it does not know: the default regexes, and a warning
        // that the text may split differently from how the model was trained.
        warn("tokenizer: unknown pre-tokenizer '" + vocab_.pre + "': using the default regexes");
        spec = find_spec("default");
    }
    for (const char* re : spec->regexes) regexes_.push_back(std::make_unique<Regex>(re));
    ignore_merges_ = spec->ignore_merges;

    // The first of duplicate texts wins, as in the SentencePiece tokenizer.
    pieces_.reserve(vocab_.tokens.size());
    for (int32_t id = 0; id < n_vocab(); id++) {
        if (vocab_.types[id] == TokenType::Normal) pieces_.emplace(vocab_.tokens[id], id);
    }
    const ByteMap& bm = byte_map();
    for (int b = 0; b < 256; b++) {
        const auto it = pieces_.find(bm.text[b]);
        byte_tokens_[b] = it == pieces_.end() ? -1 : it->second;
    }

    // A merge whose halves or result are not tokens can never apply; Hugging Face refuses
    // such a file, llama.cpp ignores the merge, and so does lila.
    merges_.reserve(vocab_.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab_.merges.size(); rank++) {
        const std::string& m = vocab_.merges[rank];
        const size_t space = m.find(' ', 1);  // from 1: a half may itself start with a space
        if (space == std::string::npos) {
            throw Error("tokenizer: merge " + std::to_string(rank) + " '" + m +
                        "' is not two tokens separated by a space");
        }
        const auto a = pieces_.find(std::string_view(m).substr(0, space));
        const auto b = pieces_.find(std::string_view(m).substr(space + 1));
        joined.assign(m, 0, space).append(m, space + 1);
        const auto ab = pieces_.find(joined);
        if (a == pieces_.end() || b == pieces_.end() || ab == pieces_.end()) continue;
        merges_.emplace(pair_key(a->second, b->second), Merge{int32_t(rank), ab->second});
    }
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
    std::vector<int32_t> out;
    if (add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create(3, nullptr), pcre2_match_data_free);
    if (!md) throw std::bad_alloc();
    Scratch s;
    s.md = md.get();

    for (const Fragment& f : split_special(text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            continue;
        }
        split_words(f.text, s);
        for (std::string_view word : s.pieces) encode_word(word, s, out);
    }
    return out;
}

std::vector<std::string> BpeTokenizer::words(std::string_view text) const {
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create(3, nullptr), pcre2_match_data_free);
    if (!md) throw std::bad_alloc();
    Scratch s;
    s.md = md.get();
    split_words(text, s);
    return {s.pieces.begin(), s.pieces.end()};
}

// Splits `text` into s.pieces. The regexes see only valid UTF-8: each run of invalid bytes
// is a word of its own, so such input still encodes losslessly (byte-level BPE can spell
// any byte), where llama.cpp would turn it into U+FFFD.
void BpeTokenizer::split_words(std::string_view text, Scratch& s) const {
    s.pieces.clear();
    for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const bool valid = utf8_next(text.substr(pos)).status == Utf8Status::Valid;
        while (pos < text.size()) {
            const Utf8Char c = utf8_next(text.substr(pos));
            if ((c.status == Utf8Status::Valid) != valid) break;
            pos += c.len;
        }
        s.pieces.push_back(text.substr(start, pos - start));
    }

    for (const auto& re : regexes_) {
        s.next.clear();
        for (std::string_view piece : s.pieces) {
            if (utf8_next(piece).status == Utf8Status::Valid) {
                re->split(piece, s.md, s.next);
            } else {
                s.next.push_back(piece);
            }
        }
        s.pieces.swap(s.next);
    }
}

void BpeTokenizer::encode_word(std::string_view word, Scratch& s, std::vector<int32_t>& out) const {
    if (word.size() > INT32_MAX) throw Error("tokenizer: text longer than 2 GiB without a break");
    const ByteMap& bm = byte_map();
    if (ignore_merges_) {
        s.mapped.clear();
        for (char c : word) s.mapped += bm.text[uint8_t(c)];
        const auto it = pieces_.find(s.mapped);
        if (it != pieces_.end()) {
            out.push_back(it->second);
            return;
        }
    }

    // Symbols start as single bytes, each its stand-in character's token.
    s.syms.clear();
    for (uint32_t i = 0; i < word.size(); i++) {
        const int32_t id = byte_tokens_[uint8_t(word[i])];
        const auto n = int32_t(s.syms.size());
        s.syms.push_back({n - 1, i + 1 < word.size() ? n + 1 : -1, i, 1, id});
    }
    s.queue.clear();
    for (int32_t i = 1; i < int32_t(s.syms.size()); i++) push_candidate(s, i - 1, i);

    while (!s.queue.empty()) {
        std::pop_heap(s.queue.begin(), s.queue.end(), Later{});
        const Candidate c = s.queue.back();
        s.queue.pop_back();
        Symbol& left = s.syms[c.left];
        // Skip pairs an earlier merge consumed or extended (see tokenizer_spm.cpp).
        if (left.len == 0 || left.next < 0) continue;
        Symbol& right = s.syms[left.next];
        if (left.len + right.len != c.len) continue;

        left.len += right.len;
        left.id = c.id;
        right.len = 0;
        left.next = right.next;
        if (left.next >= 0) s.syms[left.next].prev = c.left;
        push_candidate(s, left.prev, c.left);
        push_candidate(s, c.left, left.next);
    }

    for (int32_t i = s.syms.empty() ? -1 : 0; i != -1; i = s.syms[i].next) {
        const Symbol& sym = s.syms[i];
        if (sym.id >= 0) {
            out.push_back(sym.id);
        } else if (vocab_.unk >= 0) {
            out.push_back(vocab_.unk);
        } else {
            throw Error("tokenizer: byte " + std::to_string(uint8_t(word[sym.start])) +
                        " has no token and the vocabulary has no unknown token");
        }
    }
}

// Queues the pair (left, right) if the merges list it: s.queue is a heap, lowest rank on top.
void BpeTokenizer::push_candidate(Scratch& s, int32_t left, int32_t right) const {
    if (left < 0 || right < 0) return;
    const Symbol& l = s.syms[left];
    const Symbol& r = s.syms[right];
    if (l.id < 0 || r.id < 0) return;
    const auto it = merges_.find(pair_key(l.id, r.id));
    if (it == merges_.end()) return;
    s.queue.push_back({it->second.rank, left, l.len + r.len, it->second.id});
    std::push_heap(s.queue.begin(), s.queue.end(), Later{});
}

// A normal token's text is the stand-in characters of its bytes: map them back. Anything
// else is as the base class has it (user-defined tokens are stored as raw text).
std::string BpeTokenizer::token_to_piece(int32_t id, bool special) const {
    if (id < 0 || id >= n_vocab() || vocab_.types[id] != TokenType::Normal) {
        return Tokenizer::token_to_piece(id, special);
    }
    const ByteMap& bm = byte_map();
    std::string_view text = vocab_.tokens[id];
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        const Utf8Char c = utf8_next(text);
        const size_t len = c.status == Utf8Status::Valid ? c.len : 1;
        uint32_t cp = 0;
        if (len == 1) {
            cp = uint8_t(text[0]);
        } else if (len == 2) {
            cp = (uint32_t(text[0] & 0x1F) << 6) | (text[1] & 0x3F);
        } else {
            cp = UINT32_MAX;  // beyond U+07FF: no byte stands for it
        }
        if (cp < bm.byte.size() && bm.byte[cp] >= 0) {
            out += char(bm.byte[cp]);
        } else {
            out.append(text.substr(0, len));
        }
        text.remove_prefix(len);
    }
    return out;
}

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab) {
    return std::make_unique<BpeTokenizer>(std::move(vocab));
}

std::vector<std::string> bpe_pre_tokenizers() {
    std::vector<std::string> names;
    for (const PreTokenizerSpec& s : pre_tokenizer_specs())
        names.insert(names.end(), s.names.begin(), s.names.end());
    return names;
}

std::vector<std::string> bpe_pre_tokenizer_regexes(std::string_view pre) {
    const PreTokenizerSpec* spec = find_spec(pre);
    return spec ? std::vector<std::string>(spec->regexes.begin(), spec->regexes.end())
                : std::vector<std::string>{};
}

std::string bpe_pre_tokenizer_for(const std::vector<std::string>& regexes, bool ignore_merges) {
    const PreTokenizerSpec* same_regexes = nullptr;
    for (const PreTokenizerSpec& s : pre_tokenizer_specs()) {
        const std::vector<const char*>& hf = s.hf_regexes.empty() ? s.regexes : s.hf_regexes;
        if (!std::equal(regexes.begin(), regexes.end(), hf.begin(), hf.end())) continue;
        if (s.ignore_merges == ignore_merges) return s.names[0];
        if (!same_regexes) same_regexes = &s;
    }
    return same_regexes ? same_regexes->names[0] : std::string();
}

const char* bpe_byte_level_regex() {
    return kGpt2Regex;
}

bool bpe_pre_tokenizer_adds_bos(std::string_view pre) {
    const PreTokenizerSpec* spec = find_spec(pre);
    return spec && spec->add_bos;
}

std::vector<std::string> bpe_pre_tokenize(std::string_view pre, std::string_view text) {
    Vocab v;
    v.model = "gpt2";
    v.pre = pre;
    v.tokens = {"a"};
    v.types = {TokenType::Normal};
    const BpeTokenizer tok(std::move(v));
    return tok.words(text);
}

}  // namespace lila
