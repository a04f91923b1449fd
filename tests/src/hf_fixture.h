// Hugging Face model directories for tests: a safetensors writer, and the stories260K
// reference model exported as transformers' save_pretrained would write it (HF tensor names,
// q/k rows in HF's rotate-half order, a tokenizer.json like transformers' LlamaConverter
// makes from a SentencePiece model).
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ggml-lite/type.h"
#include "src/llama2c_tokenizer.h"
#include "stories.h"
#include "test_util.h"

namespace lila::test {

struct StTensor {
    std::string name;
    ggml_lite::Type type;  // F32, F16 or BF16
    std::vector<int64_t> shape;
    std::vector<float> values;
};

inline const char* st_dtype(ggml_lite::Type t) {
    return t == ggml_lite::Type::F32 ? "F32" : t == ggml_lite::Type::F16 ? "F16" : "BF16";
}

// A safetensors file: u64 header length, JSON header (padded with spaces to a multiple of
// 8 when `align`, as the safetensors library does), then the tensors' data in order.
inline std::string safetensors_bytes(const std::vector<StTensor>& tensors, bool align = true) {
    nlohmann::ordered_json header;
    header["__metadata__"] = {{"format", "pt"}};
    std::string data;
    for (const StTensor& t : tensors) {
        const auto& tr = ggml_lite::traits(t.type);
        std::string bytes(t.values.size() * tr.type_size, '\0');
        if (!bytes.empty()) tr.from_float(t.values.data(), bytes.data(), int64_t(t.values.size()));
        header[t.name] = {{"dtype", st_dtype(t.type)},
                          {"shape", t.shape},
                          {"data_offsets", {data.size(), data.size() + bytes.size()}}};
        data += bytes;
    }
    std::string json = header.dump();
    while (align && json.size() % 8 != 0) json += ' ';
    const uint64_t len = json.size();
    std::string out(reinterpret_cast<const char*>(&len), 8);
    return out + json + data;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

inline void write_json(const std::string& path, const nlohmann::json& j) {
    write_bytes(path, j.dump(2));
}

// Writes `tensors` as DIR/model.safetensors, or as `shards` files with an index.
inline void write_checkpoint(const TempDir& dir, const std::vector<StTensor>& tensors,
                             int shards = 1) {
    if (shards == 1) {
        write_bytes(dir.path("model.safetensors"), safetensors_bytes(tensors));
        return;
    }
    nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                            {"weight_map", nlohmann::json::object()}};
    for (int s = 0; s < shards; s++) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
        std::vector<StTensor> part;
        for (size_t i = s; i < tensors.size(); i += shards) {
            part.push_back(tensors[i]);
            index["weight_map"][tensors[i].name] = name;
        }
        write_bytes(dir.path(name), safetensors_bytes(part));
    }
    write_json(dir.path("model.safetensors.index.json"), index);
}

// The tokenizer.json transformers' LlamaConverter writes for a SentencePiece BPE vocab:
// merges are every split of a piece into two pieces, ordered by the piece's score.
inline nlohmann::json spm_tokenizer_json(const Vocab& v) {
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    std::map<std::string, int32_t> ids;
    for (int32_t i = 0; i < v.size(); i++) vocab[v.tokens[i]] = i, ids.emplace(v.tokens[i], i);
    std::vector<int32_t> by_score(v.size());
    for (int32_t i = 0; i < v.size(); i++) by_score[i] = i;
    std::stable_sort(by_score.begin(), by_score.end(),
                     [&](int32_t a, int32_t b) { return v.scores[a] > v.scores[b]; });
    auto normal = [&](const std::string& s) {
        auto it = ids.find(s);
        return it != ids.end() && v.types[it->second] == TokenType::Normal;
    };
    nlohmann::json merges = nlohmann::json::array();
    for (int32_t id : by_score) {
        const std::string& piece = v.tokens[id];
        if (v.types[id] != TokenType::Normal) continue;
        std::vector<std::pair<int32_t, int32_t>> local;
        for (size_t k = 1; k < piece.size(); k++) {
            if (normal(piece.substr(0, k)) && normal(piece.substr(k))) {
                local.emplace_back(ids[piece.substr(0, k)], ids[piece.substr(k)]);
            }
        }
        std::sort(local.begin(), local.end());
        for (auto [l, r] : local) merges.push_back(v.tokens[l] + " " + v.tokens[r]);
    }
    nlohmann::json added = nlohmann::json::array();
    for (int32_t i = 0; i < v.size(); i++) {
        if (v.types[i] == TokenType::Control || v.types[i] == TokenType::Unknown) {
            added.push_back({{"id", i},
                             {"content", v.tokens[i]},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", true}});
        }
    }
    const std::string space = "\xE2\x96\x81";
    return {
        {"version", "1.0"},
        {"added_tokens", added},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", space}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space}}}}}},
        {"pre_tokenizer", nullptr},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
        {"decoder", {{"type", "Sequence"}, {"decoders", nlohmann::json::array()}}},
        {"model",
         {{"type", "BPE"},
          {"unk_token", "<unk>"},
          {"fuse_unk", true},
          {"byte_fallback", true},
          {"vocab", vocab},
          {"merges", merges}}},
    };
}

// The stories260K checkpoint's weights by llama2.c name order (run.c's memory_map_weights).
struct StoriesWeights {
    int32_t dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len;
    std::vector<float> all;  // everything after the header
};

inline StoriesWeights read_stories() {
    const std::string bytes = read_file(stories_checkpoint());
    StoriesWeights w;
    std::memcpy(&w.dim, bytes.data(), 7 * sizeof(int32_t));
    w.all.resize((bytes.size() - 28) / sizeof(float));
    std::memcpy(w.all.data(), bytes.data() + 28, w.all.size() * sizeof(float));
    return w;
}

// HF row R of a q/k projection holds llama2.c row hf_to_interleaved(R): the inverse of the
// converter's un-permutation.
inline int64_t hf_to_interleaved(int64_t r, int64_t head_dim) {
    const int64_t head = r / head_dim, k = r % head_dim, half = head_dim / 2;
    return head * head_dim + 2 * (k % half) + k / half;
}

// The stories260K tensors under their Hugging Face names, as `type`.
inline std::vector<StTensor> stories_hf_tensors(ggml_lite::Type type) {
    const StoriesWeights w = read_stories();
    const int64_t dim = w.dim, hidden = w.hidden, head = w.dim / w.n_heads;
    const int64_t kv_dim = head * w.n_kv_heads, L = w.n_layers;
    const float* p = w.all.data();
    auto take = [&p](int64_t n) {
        const float* q = p;
        p += n;
        return q;
    };
    const float* embed = take(w.vocab * dim);
    const float* rms_att = take(L * dim);
    const float* wq = take(L * dim * dim);
    const float* wk = take(L * kv_dim * dim);
    const float* wv = take(L * kv_dim * dim);
    const float* wo = take(L * dim * dim);
    const float* rms_ffn = take(L * dim);
    const float* w1 = take(L * hidden * dim);
    const float* w2 = take(L * dim * hidden);
    const float* w3 = take(L * hidden * dim);
    const float* rms_final = take(dim);

    std::vector<StTensor> out;
    auto add = [&](const std::string& name, const float* src, int64_t rows, int64_t cols,
                   bool rope = false) {
        StTensor t{
            name, type, rows ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{cols}, {}};
        for (int64_t r = 0; r < std::max<int64_t>(rows, 1); r++) {
            const float* row = src + (rope ? hf_to_interleaved(r, head) : r) * cols;
            t.values.insert(t.values.end(), row, row + cols);
        }
        out.push_back(std::move(t));
    };
    add("model.embed_tokens.weight", embed, w.vocab, dim);
    for (int64_t l = 0; l < L; l++) {
        const std::string h = "model.layers." + std::to_string(l) + ".";
        add(h + "input_layernorm.weight", rms_att + l * dim, 0, dim);
        add(h + "self_attn.q_proj.weight", wq + l * dim * dim, dim, dim, true);
        add(h + "self_attn.k_proj.weight", wk + l * kv_dim * dim, kv_dim, dim, true);
        add(h + "self_attn.v_proj.weight", wv + l * kv_dim * dim, kv_dim, dim);
        add(h + "self_attn.o_proj.weight", wo + l * dim * dim, dim, dim);
        add(h + "post_attention_layernorm.weight", rms_ffn + l * dim, 0, dim);
        add(h + "mlp.gate_proj.weight", w1 + l * hidden * dim, hidden, dim);
        add(h + "mlp.down_proj.weight", w2 + l * dim * hidden, dim, hidden);
        add(h + "mlp.up_proj.weight", w3 + l * hidden * dim, hidden, dim);
    }
    add("model.norm.weight", rms_final, 0, dim);
    return out;
}

inline nlohmann::json stories_config() {
    const StoriesWeights w = read_stories();
    return {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", w.dim},
            {"intermediate_size", w.hidden},
            {"num_hidden_layers", w.n_layers},
            {"num_attention_heads", w.n_heads},
            {"num_key_value_heads", w.n_kv_heads},
            {"vocab_size", w.vocab},
            {"max_position_embeddings", w.seq_len},
            {"rms_norm_eps", 1e-5},
            {"rope_theta", 10000.0},
            {"hidden_act", "silu"},
            {"tie_word_embeddings", true},
            {"bos_token_id", 1},
            {"eos_token_id", 2},
            {"torch_dtype", "float32"}};
}

inline const char* kStoriesTemplate = "{% for m in messages %}{{ m['content'] }}{% endfor %}";

// Writes the whole HF export of stories260K into DIR.
inline void write_stories_hf(const TempDir& dir, ggml_lite::Type type = ggml_lite::Type::F32,
                             int shards = 1) {
    write_json(dir.path("config.json"), stories_config());
    write_checkpoint(dir, stories_hf_tensors(type), shards);
    write_json(dir.path("tokenizer.json"),
               spm_tokenizer_json(read_llama2c_tokenizer(stories_tokenizer(), 512)));
    write_json(dir.path("tokenizer_config.json"), {{"add_bos_token", true},
                                                   {"add_eos_token", false},
                                                   {"bos_token", "<s>"},
                                                   {"eos_token", "</s>"},
                                                   {"unk_token", "<unk>"},
                                                   {"chat_template", kStoriesTemplate}});
}

}  // namespace lila::test
