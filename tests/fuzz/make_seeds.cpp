// Writes the seed corpora of the fuzz targets from the real files in ../shared: small models
// and files in each format, cut down from (or built with the vocabularies of) the real ones,
// so that the fuzzers start from inputs that get deep into each parser. Small matters: a
// fuzzer mutates and runs each input thousands of times a second.
//
// Usage: fuzz-seeds SHARED_DIR OUT_DIR    (writes OUT_DIR/<target>/<name>)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-lite/quant.h"
#include "ggml-lite/type.h"
#include "src/base/error.h"
#include "src/convert/convert.h"
#include "src/io/gguf.h"
#include "src/runtime/model.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/llama2c_tokenizer.h"

namespace lila {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

fs::path g_shared, g_out;

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string() + ": cannot open");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(const std::string& target, const std::string& name, std::string_view bytes) {
    fs::create_directories(g_out / target);
    std::ofstream(g_out / target / name, std::ios::binary)
        .write(bytes.data(), std::streamsize(bytes.size()));
}

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Real weights to fill tensors with: the floats of stories260K after its header.
const std::vector<float>& real_floats() {
    static const std::vector<float> floats = [] {
        const std::string bin = read(g_shared / "models/stories260K.bin");
        std::vector<float> f((bin.size() - 28) / 4);
        std::memcpy(f.data(), bin.data() + 28, f.size() * 4);
        return f;
    }();
    return floats;
}

// ---- GGUF: tiny models with real vocabularies, at every weight type ----

// A byte-level BPE vocabulary in the Llama 3 style, small: the 256 byte tokens, the tokens
// of Llama 3's first merges, and its BOS and end-of-turn tokens.
Vocab small_bpe_vocab() {
    const Vocab llama3 = read_hf_tokenizer((g_shared / "tokenizers/llama3").string()).vocab;
    Vocab v;
    v.model = "gpt2";
    v.pre = "llama-bpe";
    v.add_space_prefix = false;
    for (int32_t id = 0; id < 256; id++) v.tokens.push_back(llama3.tokens[id]);
    for (size_t m = 0; m < 64; m++) {
        const std::string& merge = llama3.merges[m];
        const std::string joined =
            merge.substr(0, merge.find(' ', 1)) + merge.substr(merge.find(' ', 1) + 1);
        if (std::find(v.tokens.begin(), v.tokens.end(), joined) != v.tokens.end()) continue;
        v.tokens.push_back(joined);
        v.merges.push_back(merge);
    }
    v.types.assign(v.tokens.size(), TokenType::Normal);
    v.bos = v.size();
    v.tokens.push_back("<|begin_of_text|>");
    v.eot = v.size();
    v.tokens.push_back("<|eot_id|>");
    v.types.resize(v.tokens.size(), TokenType::Control);
    v.eos = v.eot;
    return v;
}

struct TinyShape {
    int64_t n_embd = 32, n_layer = 1, n_head = 4, n_head_kv = 2, n_ff = 64, n_ctx = 64;
};

// llama.* metadata as converters write it (the keys Model::load reads).
// The grid types (IQ1_S ... IQ3_S) have no quantizer (ggml's needs an importance matrix), but
// every byte pattern is a valid block of theirs: the grid indices fit their grids. A fixed
// byte stream, each block's d set to 1/64 (0x2400 in F16) so that the forward pass stays finite:
// the leading F16 of each block, or IQ1_M's, spread over its scales.
void grid_blocks(ggml_lite::Type type, std::vector<uint8_t>& bytes) {
    const size_t block_bytes = ggml_lite::traits(type).type_size;
    uint32_t state = 12345;
    for (uint8_t& b : bytes) {
        state = state * 1664525u + 1013904223u;
        b = uint8_t(state >> 24);
    }
    for (size_t at = 0; at + block_bytes <= bytes.size(); at += block_bytes) {
        if (type == ggml_lite::Type::IQ1_M) {
            ggml_lite::set_iq1_m_d(reinterpret_cast<ggml_lite::block_iq1_m*>(&bytes[at]), 0x2400);
        } else {
            bytes[at] = 0x00, bytes[at + 1] = 0x24;  // little-endian
        }
    }
}

// A tensor of rows × cols real weights: matrices at `type` (F16 where rows do not split into
// its blocks), vectors at F32, as the converters store them.
void add_weights(GGUFWriter& w, const std::string& name, int64_t rows, int64_t cols,
                 ggml_lite::Type type, size_t& next) {
    const float* src = real_floats().data() + next;
    next = (next + size_t(rows * cols)) % (real_floats().size() / 2);
    if (rows == 1) type = ggml_lite::Type::F32;
    if (cols % ggml_lite::traits(type).block_size != 0) type = ggml_lite::Type::F16;
    const std::vector<int64_t> shape =
        rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    w.add_tensor(name, type, shape, [=](std::vector<uint8_t>& bytes) {
        const size_t row = ggml_lite::row_size(type, cols);
        bytes.resize(row * size_t(rows));
        const auto& traits = ggml_lite::traits(type);
        if (traits.from_float == nullptr) {
            grid_blocks(type, bytes);
            return;
        }
        for (int64_t r = 0; r < rows; r++) {
            traits.from_float(src + r * cols, bytes.data() + size_t(r) * row, cols);
        }
    });
}

// A model of the given vocabulary and shape, weights from stories260K, matrices at `type`.
void tiny_gguf(const std::string& name, const Vocab& vocab, ggml_lite::Type type,
               const TinyShape& s, bool extras) {
    HParams hp;
    hp.n_vocab = vocab.size();
    hp.n_embd = s.n_embd, hp.n_layer = s.n_layer, hp.n_head = s.n_head;
    hp.n_head_kv = s.n_head_kv, hp.n_ff = s.n_ff, hp.n_ctx_train = s.n_ctx;
    hp.head_dim = hp.rope_dim = s.n_embd / s.n_head;

    GGUFWriter w;
    // general.file_type: lila has no file type of the grid types (it does not write them); the
    // reader goes by each tensor's own type, so those seeds say F16.
    const bool writable = ggml_lite::traits(type).from_float != nullptr;
    set_model_metadata(w, "llama", hp, name, writable ? type : ggml_lite::Type::F16);
    vocab.to_gguf(w);
    if (extras) {  // what some real files carry: a chat template, head sizes, biases, RoPE factors
        const auto config =
            nlohmann::json::parse(read(g_shared / "tokenizers/llama3/tokenizer_config.json"));
        w.set("tokenizer.chat_template", GGUFValue::string(config["chat_template"]));
        w.set("llama.attention.key_length", GGUFValue::u32(uint32_t(hp.head_dim)));
        w.set("llama.attention.value_length", GGUFValue::u32(uint32_t(hp.head_dim)));
    }
    size_t next = 0;
    auto add = [&](const std::string& tensor, int64_t rows, int64_t cols) {
        add_weights(w, tensor, rows, cols, type, next);
    };
    const int64_t kv = hp.kv_dim();
    add("token_embd.weight", hp.n_vocab, hp.n_embd);
    for (int64_t l = 0; l < hp.n_layer; l++) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", 1, hp.n_embd);
        add(p + "attn_q.weight", hp.n_embd, hp.n_embd);
        add(p + "attn_k.weight", kv, hp.n_embd);
        add(p + "attn_v.weight", kv, hp.n_embd);
        add(p + "attn_output.weight", hp.n_embd, hp.n_embd);
        if (extras) {
            add(p + "attn_q.bias", 1, hp.n_embd);
            add(p + "attn_k.bias", 1, kv);
            add(p + "attn_v.bias", 1, kv);
        }
        add(p + "ffn_norm.weight", 1, hp.n_embd);
        add(p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
        add(p + "ffn_down.weight", hp.n_embd, hp.n_ff);
        add(p + "ffn_up.weight", hp.n_ff, hp.n_embd);
    }
    add("output_norm.weight", 1, hp.n_embd);
    if (extras) {
        add("rope_freqs.weight", 1, hp.rope_dim / 2);
        add("output.weight", hp.n_vocab, hp.n_embd);
    }
    const fs::path path = g_out / "gguf" / (name + ".gguf");
    fs::create_directories(path.parent_path());
    w.write(path.string());
}

void gguf_seeds() {
    const Vocab tok512 = read_llama2c_tokenizer((g_shared / "models/tok512.bin").string(), 512);
    const Vocab bpe = small_bpe_vocab();
    using ggml_lite::Type;
    TinyShape s;
    tiny_gguf("spm-q4_0", tok512, Type::Q4_0, s, false);
    tiny_gguf("spm-q8_0-extras", tok512, Type::Q8_0, s, true);
    tiny_gguf("bpe-f16", bpe, Type::F16, s, false);
    tiny_gguf("bpe-bf16-extras", bpe, Type::BF16, s, true);
    s.n_embd = 8, s.n_head = 2, s.n_head_kv = 1, s.n_ff = 16, s.n_layer = 2;
    tiny_gguf("bpe-f32-narrow", bpe, Type::F32, s, false);
    // Rows of 256, so that every type's blocks, the k-quants' and grid types' 256-value
    // super-blocks included, reach the reader and the kernels; the vocabularies alternate.
    const TinyShape wide{.n_embd = 256, .n_layer = 1, .n_head = 4, .n_head_kv = 2, .n_ff = 256};
    bool spm = true;
    for (Type t : {Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL, Type::Q2_K, Type::Q3_K,
                   Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_XS, Type::IQ2_XXS, Type::IQ2_XS,
                   Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M}) {
        const std::string name = std::string(spm ? "spm-" : "bpe-") + ggml_lite::type_name(t);
        tiny_gguf(name + "-wide", spm ? tok512 : bpe, t, wide, false);
        spm = !spm;
    }
}

// ---- safetensors: the layouts the Hugging Face converter meets ----

struct StTensor {
    const char* name;
    const char* dtype;
    std::vector<int64_t> shape;
};

std::string safetensors(const std::vector<StTensor>& tensors, bool pad_header) {
    ordered_json header;
    header["__metadata__"] = {{"format", "pt"}};
    std::string data;
    size_t next = 0;
    for (const StTensor& t : tensors) {
        const ggml_lite::Type type = std::string(t.dtype) == "F32"   ? ggml_lite::Type::F32
                                     : std::string(t.dtype) == "F16" ? ggml_lite::Type::F16
                                                                     : ggml_lite::Type::BF16;
        int64_t n = 1;
        for (int64_t d : t.shape) n *= d;
        std::string bytes(size_t(n) * ggml_lite::traits(type).type_size, '\0');
        ggml_lite::traits(type).from_float(real_floats().data() + next, bytes.data(), n);
        next += size_t(n);
        header[t.name] = {{"dtype", t.dtype},
                          {"shape", t.shape},
                          {"data_offsets", {data.size(), data.size() + bytes.size()}}};
        data += bytes;
    }
    std::string json = header.dump();
    while (pad_header && json.size() % 8 != 0) json += ' ';
    std::string out;
    put<uint64_t>(out, json.size());
    return out + json + data;
}

void safetensors_seeds() {
    write("safetensors", "llama-layer.safetensors",
          safetensors({{"model.layers.0.input_layernorm.weight", "F32", {64}},
                       {"model.layers.0.self_attn.q_proj.weight", "F16", {16, 64}},
                       {"model.layers.0.self_attn.k_proj.weight", "BF16", {8, 64}},
                       {"model.layers.0.mlp.up_proj.weight", "F16", {2, 4, 8}}},
                      true));
    write("safetensors", "unaligned.safetensors",
          safetensors({{"a", "BF16", {3, 5}}, {"b", "F32", {7}}, {"c", "F16", {}}}, false));
    write("safetensors", "empty-tensor.safetensors",
          safetensors({{"model.embed_tokens.weight", "F32", {0, 4}}}, true));
}

// ---- llama2.c checkpoints and tokenizer.bin ----

std::string llama2c_checkpoint(int32_t dim, int32_t hidden, int32_t layers, int32_t heads,
                               int32_t kv_heads, int32_t vocab, int32_t seq, bool shared) {
    std::string out;
    for (int32_t v : {dim, hidden, layers, heads, kv_heads, shared ? vocab : -vocab, seq}) {
        put(out, v);
    }
    const int64_t kv_dim = int64_t(dim) / heads * kv_heads, head = dim / heads;
    const int64_t floats =
        int64_t(vocab) * dim * (shared ? 1 : 2) +
        layers * (2 * dim + 2 * dim * dim + 2 * kv_dim * dim + 3 * dim * hidden) + dim + seq * head;
    out.append(reinterpret_cast<const char*>(real_floats().data()), size_t(floats) * 4);
    return out;
}

void llama2c_seeds() {
    write("llama2c", "tiny.bin", llama2c_checkpoint(8, 16, 1, 2, 1, 32, 4, true));
    write("llama2c", "tiny-unshared-gqa.bin", llama2c_checkpoint(16, 32, 2, 4, 2, 40, 8, false));
    write("llama2c", "blocks.bin", llama2c_checkpoint(32, 64, 1, 2, 2, 8, 2, true));
    // The real header with the weights cut short: the size check's error path.
    write("llama2c", "stories260K-truncated.bin",
          read(g_shared / "models/stories260K.bin").substr(0, 4096));

    const std::string tok = read(g_shared / "models/tok512.bin");
    std::string full;
    put<uint16_t>(full, 512);
    write("llama2c_tokenizer", "tok512", full + tok);
    // The first three tokens only: header, then (score, length, bytes) per token.
    size_t end = 4;
    for (int i = 0; i < 3; i++) {
        int32_t len;
        std::memcpy(&len, tok.data() + end + 4, 4);
        end += 8 + size_t(len);
    }
    std::string three;
    put<uint16_t>(three, 3);
    write("llama2c_tokenizer", "tok512-first3", three + tok.substr(0, end));
}

// ---- tokenizers and chat templates: real texts ----

std::vector<nlohmann::json> jsonl(const fs::path& path) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(read(path));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    }
    return lines;
}

std::string ids_bytes(const nlohmann::json& ids) {
    std::string out;
    for (const auto& id : ids) put<uint32_t>(out, id.get<uint32_t>() + 4);  // see check_decode
    return out;
}

// Each sample text with the given flag bytes, and its reference ids in id mode.
void tokenizer_seeds(const std::string& target, const fs::path& samples,
                     std::initializer_list<uint8_t> flags) {
    int i = 0;
    for (const nlohmann::json& s : jsonl(samples)) {
        for (uint8_t f : flags) {
            const std::string text = s["text"];
            write(target, "text-" + std::to_string(i++), std::string(1, char(f)) + text);
            const std::string ids = ids_bytes(s["ids"]);
            write(target, "ids-" + std::to_string(i++), std::string(1, char(f | 4)) + ids);
        }
    }
    const std::string story =
        read(g_shared / "data/tinystories/tinystories_val.txt").substr(0, 2000);
    for (uint8_t f : flags) write(target, "story-" + std::to_string(i++), char(f) + story);
}

void chat_seeds() {
    const auto config =
        nlohmann::json::parse(read(g_shared / "tokenizers/llama3/tokenizer_config.json"));
    const std::string jinja = config["chat_template"];
    // Role bytes (modulo 3): '3' system, '1' user, '2' assistant.
    std::string chat;
    for (const char* m :
         {"3You are a storyteller.", "1Tell me a story.", "2Once upon a time.", "1Another!"}) {
        chat += '\0' + std::string(m);
    }
    for (uint8_t row = 0; row < 8; row++) {
        for (uint8_t f : {0x00, 0x18}) {
            write("chat_template", "chat-" + std::to_string(row) + "-" + std::to_string(f),
                  std::string(1, char(row | f)) + jinja + chat);
        }
    }
}

// ---- Hugging Face tokenizer files, cut down ----

// tokenizer.json with its first `n` tokens, the merges among them, and the added tokens
// renumbered to follow them.
std::string trimmed_tokenizer_json(const fs::path& path, int64_t n) {
    // Plain json, not ordered_json: the latter's objects are vectors, quadratic to build.
    nlohmann::json j = nlohmann::json::parse(read(path));
    nlohmann::json vocab = nlohmann::json::object();
    for (const auto& [text, id] : j["model"]["vocab"].items()) {
        if (id.get<int64_t>() < n) vocab[text] = id;
    }
    nlohmann::json merges = nlohmann::json::array();
    for (const auto& m : j["model"]["merges"]) {
        const std::string s = m.is_string()
                                  ? m.get<std::string>()
                                  : m[0].get<std::string>() + " " + m[1].get<std::string>();
        const size_t sp = s.find(' ', 1);
        if (vocab.contains(s.substr(0, sp)) && vocab.contains(s.substr(sp + 1)) &&
            vocab.contains(s.substr(0, sp) + s.substr(sp + 1))) {
            merges.push_back(m);
        }
    }
    j["model"]["vocab"] = vocab;
    j["model"]["merges"] = merges;
    int64_t next = n;
    nlohmann::json added = nlohmann::json::array();
    for (nlohmann::json t : j["added_tokens"]) {
        if (t["id"].get<int64_t>() < n) {
            added.push_back(t);
        } else if (added.size() < 16) {
            t["id"] = next++;
            added.push_back(t);
        }
    }
    j["added_tokens"] = added;
    return j.dump();
}

uint64_t varint(std::string_view s, size_t& pos) {
    uint64_t v = 0;
    for (int shift = 0; pos < s.size(); shift += 7) {
        const uint8_t b = uint8_t(s[pos++]);
        v |= uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    return v;
}

// SentencePiece's tokenizer.model (a ModelProto) with only its first `n` pieces: the
// top-level fields are copied as they are, pieces (field 1) past the n-th dropped.
std::string trimmed_sentencepiece(const fs::path& path, int n) {
    const std::string model = read(path);
    std::string out;
    int pieces = 0;
    for (size_t pos = 0; pos < model.size();) {
        const size_t start = pos;
        const uint64_t tag = varint(model, pos);
        switch (tag & 7) {
            case 0:
                varint(model, pos);
                break;
            case 1:
                pos += 8;
                break;
            case 5:
                pos += 4;
                break;
            case 2:
                pos += varint(model, pos);
                break;
            default:
                throw Error(path.string() + ": unexpected protobuf wire type");
        }
        if ((tag >> 3) == 1 && pieces++ >= n) continue;
        out += model.substr(start, pos - start);
    }
    return out;
}

void hf_seeds() {
    const fs::path l2 = g_shared / "tokenizers/llama2", l3 = g_shared / "tokenizers/llama3";
    write("hf_tokenizer", "llama3-tokenizer.json",
          '\0' + trimmed_tokenizer_json(l3 / "tokenizer.json", 600));
    write("hf_tokenizer", "llama2-tokenizer.json",
          '\0' + trimmed_tokenizer_json(l2 / "tokenizer.json", 600));
    write("hf_tokenizer", "llama2-tokenizer.model",
          '\1' + trimmed_sentencepiece(l2 / "tokenizer.model", 400));
    ordered_json config = ordered_json::parse(read(l3 / "tokenizer_config.json"));
    config.erase("added_tokens_decoder");
    write("hf_tokenizer", "llama3-tokenizer_config.json", '\2' + config.dump());
    write("hf_tokenizer", "config.json",
          std::string("\3") + R"({"bos_token_id": 256, "eos_token_id": [300, 256]})");
}

}  // namespace
}  // namespace lila

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s SHARED_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    lila::g_shared = argv[1];
    lila::g_out = argv[2];
    try {
        lila::gguf_seeds();
        lila::safetensors_seeds();
        lila::llama2c_seeds();
        lila::tokenizer_seeds("tokenizer_spm",
                              lila::g_shared / "reference/tokenizer_llama2_sample.jsonl",
                              {0x00, 0x80, 0x83});
        lila::tokenizer_seeds("tokenizer_bpe",
                              lila::g_shared / "reference/tokenizer_llama3_sample.jsonl",
                              {0x00, 0x03});
        lila::chat_seeds();
        lila::hf_seeds();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz-seeds: %s\n", e.what());
        return 1;
    }
    return 0;
}
