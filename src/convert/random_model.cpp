#include "src/convert/random_model.h"

#include <cmath>
#include <filesystem>
#include <memory>

#include "src/base/error.h"
#include "src/io/gguf.h"
#include "src/runtime/arch.h"
#include "src/tokenizer/hf_tokenizer.h"
#include "src/tokenizer/vocab.h"

namespace lila {

namespace {

using ggml_lite::Type;

// splitmix64: a fast, well-mixed generator; one stream per row so rows fill in parallel.
uint64_t splitmix64(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// A SentencePiece-style vocabulary of the right size: specials, the 256 byte tokens, then
// filler pieces. Benchmarks feed token ids, so the pieces only need to be distinct.
Vocab synthetic_vocab(int64_t n_vocab) {
    Vocab v;
    auto add = [&v](std::string piece, TokenType type) {
        v.tokens.push_back(std::move(piece));
        v.types.push_back(type);
        v.scores.push_back(-static_cast<float>(v.tokens.size()));
    };
    add("<unk>", TokenType::Unknown);
    add("<s>", TokenType::Control);
    add("</s>", TokenType::Control);
    for (int b = 0; b < 256; b++) {
        char piece[8];
        std::snprintf(piece, sizeof piece, "<0x%02X>", b);
        add(piece, TokenType::Byte);
    }
    while (v.size() < n_vocab) add("\xe2\x96\x81t" + std::to_string(v.size()), TokenType::Normal);
    v.unk = 0, v.bos = 1, v.eos = 2;
    return v;
}

struct SourceVocab {
    Vocab vocab;
    std::string chat_template;
};

// The vocabulary of a tokenizer.json (or its directory) or of a GGUF model, padded to at
// least n_vocab tokens with unused "[PADn]" ones, as llama.cpp pads a model's vocabulary to
// its embedding rows.
SourceVocab read_vocab(const std::string& path, int64_t n_vocab) {
    namespace fs = std::filesystem;
    if (!fs::exists(path)) throw Error(path + ": no such file or directory");
    SourceVocab s;
    if (fs::is_directory(path) || fs::path(path).extension() == ".json") {
        const std::string dir =
            fs::is_directory(path) ? path : fs::path(path).parent_path().string();
        HfTokenizer hf = read_hf_tokenizer(dir.empty() ? "." : dir);
        s.vocab = std::move(hf.vocab);
        s.chat_template = std::move(hf.chat_template);
    } else {
        const std::unique_ptr<GGUFFile> f = GGUFFile::open(path);
        s.vocab = Vocab::from_gguf(*f);
        s.chat_template = f->get_string("tokenizer.chat_template").value_or("");
    }
    Vocab& v = s.vocab;
    while (v.size() < n_vocab) {
        v.tokens.push_back("[PAD" + std::to_string(v.size()) + "]");
        v.types.push_back(TokenType::Unused);
        if (!v.scores.empty()) v.scores.push_back(-10000.0f);
    }
    return s;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
    // Shapes and settings from each model's config.json.
    static const std::vector<ModelPreset> presets = {
        {.name = "tiny",
         .arch = "llama",
         .n_vocab = 512,
         .n_embd = 64,
         .n_layer = 2,
         .n_head = 4,
         .n_head_kv = 2,
         .n_ff = 128,
         .n_ctx = 512},
        {.name = "stories15m",
         .arch = "llama",
         .n_vocab = 32000,
         .n_embd = 288,
         .n_layer = 6,
         .n_head = 6,
         .n_head_kv = 6,
         .n_ff = 768,
         .n_ctx = 256},
        {.name = "stories110m",
         .arch = "llama",
         .n_vocab = 32000,
         .n_embd = 768,
         .n_layer = 12,
         .n_head = 12,
         .n_head_kv = 12,
         .n_ff = 2048,
         .n_ctx = 1024},
        {.name = "tinyllama-1.1b",
         .arch = "llama",
         .n_vocab = 32000,
         .n_embd = 2048,
         .n_layer = 22,
         .n_head = 32,
         .n_head_kv = 4,
         .n_ff = 5632,
         .n_ctx = 2048},
        {.name = "llama2-7b",
         .arch = "llama",
         .n_vocab = 32000,
         .n_embd = 4096,
         .n_layer = 32,
         .n_head = 32,
         .n_head_kv = 32,
         .n_ff = 11008,
         .n_ctx = 4096},
        {.name = "llama3-8b",
         .arch = "llama",
         .n_vocab = 128256,
         .n_embd = 4096,
         .n_layer = 32,
         .n_head = 32,
         .n_head_kv = 8,
         .n_ff = 14336,
         .n_ctx = 8192,
         .rope_theta = 500000.0f},
        {.name = "llama-3.2-1b",
         .arch = "llama",
         .n_vocab = 128256,
         .n_embd = 2048,
         .n_layer = 16,
         .n_head = 32,
         .n_head_kv = 8,
         .n_ff = 8192,
         .n_ctx = 131072,
         .rope_theta = 500000.0f,
         .tied = true},
        {.name = "qwen2.5-0.5b",
         .arch = "qwen2",
         .n_vocab = 151936,
         .n_embd = 896,
         .n_layer = 24,
         .n_head = 14,
         .n_head_kv = 2,
         .n_ff = 4864,
         .n_ctx = 32768,
         .rope_theta = 1000000.0f,
         .norm_eps = 1e-6f,
         .tied = true,
         .qkv_bias = true},
        {.name = "qwen3-0.6b",
         .arch = "qwen3",
         .n_vocab = 151936,
         .n_embd = 1024,
         .n_layer = 28,
         .n_head = 16,
         .n_head_kv = 8,
         .n_ff = 3072,
         .n_ctx = 40960,
         .head_dim = 128,
         .rope_theta = 1000000.0f,
         .norm_eps = 1e-6f,
         .tied = true},
        {.name = "qwen3-1.7b",
         .arch = "qwen3",
         .n_vocab = 151936,
         .n_embd = 2048,
         .n_layer = 28,
         .n_head = 16,
         .n_head_kv = 8,
         .n_ff = 6144,
         .n_ctx = 40960,
         .head_dim = 128,
         .rope_theta = 1000000.0f,
         .norm_eps = 1e-6f,
         .tied = true},
        {.name = "gemma3-1b",
         .arch = "gemma3",
         .n_vocab = 262144,
         .n_embd = 1152,
         .n_layer = 26,
         .n_head = 4,
         .n_head_kv = 1,
         .n_ff = 6912,
         .n_ctx = 32768,
         .head_dim = 256,
         .rope_theta = 1000000.0f,
         .norm_eps = 1e-6f,
         .tied = true,
         .window = 512},
        {.name = "gemma2-2b",
         .arch = "gemma2",
         .n_vocab = 256000,
         .n_embd = 2304,
         .n_layer = 26,
         .n_head = 8,
         .n_head_kv = 4,
         .n_ff = 9216,
         .n_ctx = 8192,
         .head_dim = 256,
         .norm_eps = 1e-6f,
         .tied = true,
         .window = 4096},
        {.name = "phi-4-mini",
         .arch = "phi3",
         .n_vocab = 200064,
         .n_embd = 3072,
         .n_layer = 32,
         .n_head = 24,
         .n_head_kv = 8,
         .n_ff = 8192,
         .n_ctx = 131072,
         .rope_dim = 96,
         .tied = true,
         .window = 262144,
         .n_ctx_orig = 4096},
        {.name = "smollm2-135m",
         .arch = "llama",
         .n_vocab = 49152,
         .n_embd = 576,
         .n_layer = 30,
         .n_head = 9,
         .n_head_kv = 3,
         .n_ff = 1536,
         .n_ctx = 8192,
         .rope_theta = 100000.0f,
         .tied = true},
        {.name = "smollm3-3b",
         .arch = "smollm3",
         .n_vocab = 128256,
         .n_embd = 2048,
         .n_layer = 36,
         .n_head = 16,
         .n_head_kv = 4,
         .n_ff = 11008,
         .n_ctx = 65536,
         .rope_theta = 5000000.0f,
         .norm_eps = 1e-6f,
         .tied = true},
        {.name = "granite-3-2b",
         .arch = "granite",
         .n_vocab = 49155,
         .n_embd = 2048,
         .n_layer = 40,
         .n_head = 32,
         .n_head_kv = 8,
         .n_ff = 8192,
         .n_ctx = 131072,
         .rope_theta = 5000000.0f,
         .tied = true,
         .embedding_scale = 12.0f,
         .residual_scale = 0.22f,
         .attention_scale = 0.015625f,
         .logit_scale = 8.0f},
        {.name = "olmo2-1b",
         .arch = "olmo2",
         .n_vocab = 100352,
         .n_embd = 2048,
         .n_layer = 16,
         .n_head = 16,
         .n_head_kv = 16,
         .n_ff = 8192,
         .n_ctx = 4096,
         .rope_theta = 500000.0f,
         .norm_eps = 1e-6f},
    };
    return presets;
}

const ModelPreset& model_preset(const std::string& name) {
    std::string names;
    for (const ModelPreset& m : model_presets()) {
        if (name == m.name) return m;
        names += (names.empty() ? "" : ", ") + std::string(m.name);
    }
    throw Error("unknown model preset '" + name + "' (presets: " + names + ")");
}

void write_random_model(const ModelPreset& p, const std::string& out, const ConvertOptions& opts,
                        const RandomModelOptions& random, const GGUFWriter::Progress& progress) {
    const Arch* arch = find_arch(p.arch);
    if (!arch) throw Error(std::string("preset ") + p.name + ": unknown architecture " + p.arch);
    SourceVocab vocab = random.tokenizer.empty() ? SourceVocab{synthetic_vocab(p.n_vocab), ""}
                                                 : read_vocab(random.tokenizer, p.n_vocab);
    HParams hp;
    hp.n_vocab = vocab.vocab.size();
    hp.n_embd = p.n_embd;
    hp.n_layer = p.n_layer;
    hp.n_head = p.n_head;
    hp.n_head_kv = p.n_head_kv;
    hp.n_ff = p.n_ff;
    hp.n_ctx_train = p.n_ctx;
    hp.head_dim = p.head_dim ? p.head_dim : p.n_embd / p.n_head;
    hp.rope_dim = p.rope_dim ? p.rope_dim : hp.head_dim;
    hp.rope_theta = p.rope_theta;
    hp.norm_eps = p.norm_eps;
    const int64_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_embd = hp.n_embd, n_ff = hp.n_ff;

    GGUFWriter w;
    const std::string name = opts.name.empty() ? std::string(p.name) + " (random)" : opts.name;
    set_model_metadata(w, p.arch, hp, name, opts.type);
    const std::string k = std::string(p.arch) + ".";
    if (p.window > 0) w.set(k + "attention.sliding_window", GGUFValue::u32(uint32_t(p.window)));
    if (arch->softcap) {  // Gemma 2's values
        w.set(k + "attn_logit_softcapping", GGUFValue::f32(50.0));
        w.set(k + "final_logit_softcapping", GGUFValue::f32(30.0));
    }
    if (arch->granite_scales) {
        w.set(k + "embedding_scale", GGUFValue::f32(p.embedding_scale));
        w.set(k + "residual_scale", GGUFValue::f32(p.residual_scale));
        w.set(k + "attention.scale", GGUFValue::f32(p.attention_scale));
        w.set(k + "logit_scale", GGUFValue::f32(p.logit_scale));
    }
    if (p.n_ctx_orig > 0) {  // LongRoPE's attention factor, as llama.cpp's converter computes it
        const double scale = double(p.n_ctx) / double(p.n_ctx_orig);
        w.set(k + "rope.scaling.original_context_length", GGUFValue::u32(uint32_t(p.n_ctx_orig)));
        w.set(k + "rope.scaling.attn_factor",
              GGUFValue::f32(std::sqrt(1.0 + std::log(scale) / std::log(double(p.n_ctx_orig)))));
    }
    vocab.vocab.to_gguf(w);
    if (!vocab.chat_template.empty()) {
        w.set("tokenizer.chat_template", GGUFValue::string(vocab.chat_template));
    }

    uint64_t tensor_seed = random.seed;
    const ModelLayout layout = model_layout(p.arch, p.n_layer, p.n_head, p.n_head_kv, p.tied);
    // A matrix of uniform values with standard deviation `std`; rows 1: a 1-D tensor of
    // `fill` (norms 1).
    auto add = [&](const std::string& tensor, int64_t rows, int64_t cols, float std = 0.02f,
                   float fill = 1.0f) {
        const uint64_t s0 = splitmix64(tensor_seed);
        const int n_threads = opts.n_threads;
        add_float_tensor(w, tensor, rows, cols, opts, layout, [=](std::vector<float>& f) {
            f.assign(rows * cols, fill);
            if (rows == 1) return f.data();
            const float a = std * std::sqrt(3.0f);  // uniform(-a, a) has this std
#pragma omp parallel for schedule(static) num_threads(n_threads)
            for (int64_t r = 0; r < rows; r++) {
                uint64_t s = s0 + static_cast<uint64_t>(r) * 0x632be59bd9b4e019ull;
                for (int64_t c = 0; c < cols; c++) {
                    const float u = (splitmix64(s) >> 40) * (1.0f / 16777216.0f);
                    f[r * cols + c] = a * (2.0f * u - 1.0f);
                }
            }
            return f.data();
        });
    };
    // Biases are vectors of random values: one row of a matrix, written 1-D.
    auto add_bias = [&](const std::string& tensor, int64_t n) {
        const uint64_t s0 = splitmix64(tensor_seed);
        add_float_tensor(w, tensor, 1, n, opts, layout, [=](std::vector<float>& f) {
            uint64_t s = s0;
            f.resize(n);
            for (float& b : f)
                b = 0.02f * std::sqrt(3.0f) * ((splitmix64(s) >> 40) / 8388608.0f - 1);
            return f.data();
        });
    };

    add("token_embd.weight", hp.n_vocab, n_embd);
    const int64_t q_norm = arch->qk_norm == QKNorm::PerHead ? hp.head_dim : q_dim;
    const int64_t k_norm = arch->qk_norm == QKNorm::PerHead ? hp.head_dim : kv_dim;
    for (int64_t l = 0; l < p.n_layer; l++) {
        const std::string b = "blk." + std::to_string(l) + ".";
        if (arch->pre_norms) add(b + "attn_norm.weight", 1, n_embd);
        if (arch->fused) {
            add(b + "attn_qkv.weight", q_dim + 2 * kv_dim, n_embd);
        } else {
            add(b + "attn_q.weight", q_dim, n_embd);
            add(b + "attn_k.weight", kv_dim, n_embd);
            add(b + "attn_v.weight", kv_dim, n_embd);
        }
        if (p.qkv_bias) {
            add_bias(b + "attn_q.bias", q_dim);
            add_bias(b + "attn_k.bias", kv_dim);
            add_bias(b + "attn_v.bias", kv_dim);
        }
        if (arch->qk_norm != QKNorm::None) {
            add(b + "attn_q_norm.weight", 1, q_norm);
            add(b + "attn_k_norm.weight", 1, k_norm);
        }
        add(b + "attn_output.weight", n_embd, q_dim);
        if (arch->post_norms) add(b + "post_attention_norm.weight", 1, n_embd);
        if (arch->pre_norms) add(b + "ffn_norm.weight", 1, n_embd);
        if (arch->fused) {
            add(b + "ffn_up.weight", 2 * n_ff, n_embd);
        } else {
            add(b + "ffn_gate.weight", n_ff, n_embd);
            add(b + "ffn_up.weight", n_ff, n_embd);
        }
        add(b + "ffn_down.weight", n_embd, n_ff);
        if (arch->post_norms) add(b + "post_ffw_norm.weight", 1, n_embd);
    }
    // Confident: the final norm's weights make logits spread by about 10 (0.02 · sqrt(n_embd)
    // without), whether or not the LM head is the embedding table.
    add("output_norm.weight", 1, n_embd, 0.02f,
        random.confident ? 10.0f / (0.02f * std::sqrt(float(n_embd))) : 1.0f);
    if (!p.tied) add("output.weight", hp.n_vocab, n_embd);
    if (p.n_ctx_orig > 0) {
        // Divisors of the RoPE frequencies rising from 1, more steeply for long contexts.
        const int64_t n = hp.rope_dim / 2;
        for (const auto& [tensor, top] : {std::pair{"rope_factors_long.weight", 8.0f},
                                          std::pair{"rope_factors_short.weight", 2.0f}}) {
            auto f = std::make_shared<std::vector<float>>(n);
            for (int64_t i = 0; i < n; i++) (*f)[i] = 1.0f + (top - 1.0f) * float(i) / float(n);
            add_float_tensor(w, tensor, 1, n, opts, layout, [f](auto&) { return f->data(); });
        }
    }
    w.write(out, progress);
}

}  // namespace lila
