// Hugging Face checkpoint directories -> GGUF, after llama.cpp's convert_hf_to_gguf.py:
// config.json gives the hyperparameters, safetensors the weights (renamed to GGUF's names,
// q/k rows un-permuted), the tokenizer files the vocabulary.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numbers>
#include <optional>
#include <set>

#include "src/base/error.h"
#include "src/convert/convert.h"
#include "src/io/safetensors.h"
#include "src/runtime/arch.h"
#include "src/tokenizer/hf_tokenizer.h"

namespace lila {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A Hugging Face model class and the architecture llama.cpp's converter writes it as
// (src/runtime/arch.h). NORM-RoPE architectures get their q/k rows permuted into GGUF's
// interleaved pairs; NEOX ones keep Hugging Face's layout.
struct HfClass {
    const char* name;  // config.json "architectures"[0]
    const char* arch;  // general.architecture
    bool biases;       // q/k/v biases, where llama.cpp's graph for the architecture adds them
    bool gemma_norms;  // RMSNorm scales by 1 + w: GGUF stores 1 + w (llama.cpp's converter)
};

constexpr HfClass kClasses[] = {
    {"LlamaForCausalLM", "llama", true, false},
    {"MistralForCausalLM", "llama", true, false},
    {"Qwen2ForCausalLM", "qwen2", true, false},
    {"Qwen3ForCausalLM", "qwen3", false, false},
    {"Gemma2ForCausalLM", "gemma2", false, true},
    {"Gemma3ForCausalLM", "gemma3", false, true},
    {"Phi3ForCausalLM", "phi3", false, false},
    {"SmolLM3ForCausalLM", "smollm3", false, false},
    {"GraniteForCausalLM", "granite", false, false},
    {"Olmo2ForCausalLM", "olmo2", false, false},
};

struct HfModel {
    const HfClass* cls = nullptr;
    const Arch* arch = nullptr;
    HParams hp;
    bool explicit_head_dim = false;   // config.json names head_dim
    bool tied_embeddings = false;     // no lm_head: the output layer is the embedding
    std::vector<float> rope_factors;  // Llama 3.1 "llama3" RoPE scaling; empty when none
    // Phi-3's LongRoPE factors and the context they switch at (0: none).
    std::vector<float> long_factors, short_factors;
    int64_t n_ctx_orig = 0;
    // Architecture keys beyond the common ones ({arch}.attention.sliding_window, ...).
    std::vector<std::pair<std::string, GGUFValue>> keys;
};

// Llama 3.1's long-context RoPE scaling as per-frequency divisors (rope_freqs.weight),
// computed as llama.cpp's converter does, in float32 like its torch code: high frequencies
// keep factor 1, low ones get `factor`, those between are interpolated.
std::vector<float> llama3_rope_factors(const json& scaling, float theta, int64_t head_dim,
                                       const std::string& where) {
    auto get = [&](const char* key, float fallback) {
        const auto it = scaling.find(key);
        return it != scaling.end() && it->is_number() ? it->get<float>() : fallback;
    };
    const float factor = get("factor", 8.0f);
    const float low_freq_factor = get("low_freq_factor", 1.0f);
    const float high_freq_factor = get("high_freq_factor", 4.0f);
    const float old_context_len = get("original_max_position_embeddings", 8192.0f);
    const float low_freq_wavelen = old_context_len / low_freq_factor;
    const float high_freq_wavelen = old_context_len / high_freq_factor;
    if (low_freq_wavelen == high_freq_wavelen) {
        throw Error(where + ": rope_scaling: low_freq_factor equals high_freq_factor");
    }

    std::vector<float> factors;
    for (int64_t i = 0; i < head_dim; i += 2) {
        const float freq = 1.0f / std::pow(theta, float(i) / float(head_dim));
        const float wavelen = float(2 * std::numbers::pi) / freq;
        if (wavelen < high_freq_wavelen) {
            factors.push_back(1.0f);
        } else if (wavelen > low_freq_wavelen) {
            factors.push_back(factor);
        } else {
            const float smooth = (old_context_len / wavelen - low_freq_factor) /
                                 (high_freq_factor - low_freq_factor);
            factors.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
        }
    }
    return factors;
}

// Phi-3's LongRoPE: per-frequency factors for long and short contexts (rope_factors_long,
// rope_factors_short) and the attention factor: the checkpoint's where it names one, as
// transformers takes it, else computed as transformers and llama.cpp's converter do.
template <class Fail>
void read_long_rope(const json& rope, HfModel& m, double orig, const Fail& fail) {
    const auto factors = [&](const char* key) {
        const auto it = rope.find(key);
        if (it == rope.end() || !it->is_array()) fail(std::string("rope_scaling lacks ") + key);
        std::vector<float> f = it->get<std::vector<float>>();
        if (int64_t(f.size()) != m.hp.rope_dim / 2) {
            fail(std::string("rope_scaling.") + key + " has " + std::to_string(f.size()) +
                 " factors for " + std::to_string(m.hp.rope_dim / 2) + " frequencies");
        }
        return f;
    };
    if (orig <= 0) fail("LongRoPE needs original_max_position_embeddings");
    m.long_factors = factors("long_factor");
    m.short_factors = factors("short_factor");
    m.n_ctx_orig = int64_t(orig);
    const double scale = double(m.hp.n_ctx_train) / orig;
    double attn_factor = scale > 1 ? std::sqrt(1 + std::log(scale) / std::log(orig)) : 1.0;
    if (const auto given = rope.find("attention_factor"); given != rope.end() && given->is_number())
        attn_factor = given->get<double>();
    const std::string k = std::string(m.arch->name) + ".";
    m.keys.emplace_back(k + "rope.scaling.original_context_length", GGUFValue::u32(uint32_t(orig)));
    m.keys.emplace_back(k + "rope.scaling.attn_factor", GGUFValue::f32(attn_factor));
}

// The keys of each architecture's variants, as llama.cpp's converter writes them, and the
// settings llama.cpp fixes rather than reads (refused when a checkpoint differs).
template <class Fail>
void read_variant_keys(const json& c, HfModel& m, const Fail& fail) {
    const std::string k = std::string(m.arch->name) + ".";
    auto number = [&](const char* key) -> const json* {
        const auto it = c.find(key);
        return it == c.end() || !it->is_number() ? nullptr : &*it;
    };
    auto f32 = [&](const char* key, const std::string& gguf_key, double fallback) {
        const json* v = number(key);
        m.keys.emplace_back(gguf_key, GGUFValue::f32(v ? v->get<double>() : fallback));
    };
    if (m.arch->sliding) {
        if (const json* w = number("sliding_window")) {
            m.keys.emplace_back(k + "attention.sliding_window", GGUFValue::u32(w->get<uint32_t>()));
        }
    }
    if (m.arch->softcap) {
        f32("attn_logit_softcapping", k + "attn_logit_softcapping", 50.0);
        f32("final_logit_softcapping", k + "final_logit_softcapping", 30.0);
    }
    if (m.arch->granite_scales) {
        for (const char* key : {"embedding_multiplier", "residual_multiplier",
                                "attention_multiplier", "logits_scaling"}) {
            if (!number(key)) fail(std::string("missing ") + key);
        }
        f32("embedding_multiplier", k + "embedding_scale", 1.0);
        f32("residual_multiplier", k + "residual_scale", 1.0);
        f32("attention_multiplier", k + "attention.scale", 1.0);
        f32("logits_scaling", k + "logit_scale", 1.0);
    }
    if (m.arch->local_rope_base > 0) {
        const json* base = number("rope_local_base_freq");
        const json* every = number("sliding_window_pattern");
        if ((base && base->get<double>() != m.arch->local_rope_base) ||
            (every && every->get<int64_t>() != m.arch->global_every)) {
            fail("a sliding-window pattern or local RoPE base other than Gemma 3's");
        }
    }
    if (m.arch->wide_query_layers > 0) {
        // transformers scales queries by query_pre_attn_scalar^-1/2 (its default 256);
        // llama.cpp by head_dim^-1/2, or (n_embd / n_head)^-1/2 at the wide-query layer count.
        const HParams& hp = m.hp;
        const int64_t want =
            hp.n_layer == m.arch->wide_query_layers ? hp.n_embd / hp.n_head : hp.head_dim;
        const json* s = number("query_pre_attn_scalar");
        const double got = s ? s->get<double>() : 256.0;
        if (got != double(want)) {
            fail("query_pre_attn_scalar " + json(got).dump() + " (llama.cpp scales queries by " +
                 "1/sqrt(" + std::to_string(want) + ") for this shape)");
        }
    }
    // Qwen's and SmolLM3's transformers classes slide windows when asked; llama.cpp does not.
    const auto swa = c.find("use_sliding_window");
    if (!m.arch->sliding && swa != c.end() && *swa == true) {
        fail(std::string("use_sliding_window: llama.cpp's ") + m.arch->name +
             " runs full attention on every layer");
    }
    // Newer transformers configs name each layer's attention; llama.cpp fixes which layers slide
    // (Phi-3's window, on every layer, comes from sliding_window alone).
    const auto types = c.find("layer_types");
    if (types != c.end() && types->is_array() && !(m.arch->sliding && m.arch->global_every == 0)) {
        for (size_t i = 0; i < types->size(); i++) {
            const json& type = (*types)[i];
            const bool want = m.arch->layer_slides(int64_t(i));
            if ((type == "sliding_attention") != want) {
                fail("layer_types: layer " + std::to_string(i) + " is " + type.dump() +
                     ", llama.cpp's " + m.arch->name + " runs " +
                     (want ? "sliding_attention" : "full_attention"));
            }
        }
    }
    if (m.arch->no_rope_every > 0) {
        if (const auto it = c.find("no_rope_layers"); it != c.end() && it->is_array()) {
            const auto layers = it->get<std::vector<int>>();
            for (size_t i = 0; i < layers.size(); i++) {
                if ((layers[i] != 0) != m.arch->layer_has_rope(int64_t(i))) {
                    fail("no_rope_layers: RoPE must be skipped in every " +
                         std::to_string(m.arch->no_rope_every) + "th layer alone");
                }
            }
        }
    }
}

HfModel read_config(const std::string& dir) {
    const std::string where = (fs::path(dir) / "config.json").string();
    if (!fs::exists(where)) throw Error(dir + ": no config.json (not a Hugging Face model?)");
    const json c = read_json_file(where);
    auto fail = [&](const std::string& problem) -> int64_t { throw Error(where + ": " + problem); };

    std::string supported;
    for (const HfClass& k : kClasses) {
        supported += (supported.empty() ? "" : ", ") + std::string(k.name);
    }
    const auto archs = c.find("architectures");
    const std::string arch =
        archs != c.end() && archs->is_array() && !archs->empty() && (*archs)[0].is_string()
            ? (*archs)[0].get<std::string>()
            : "";
    HfModel m;
    for (const HfClass& k : kClasses) {
        if (arch == k.name) m.cls = &k;
    }
    if (!m.cls) fail("architecture '" + arch + "' is not supported (supported: " + supported + ")");
    m.arch = find_arch(m.cls->arch);
    const std::string prefix = std::string(m.arch->name) + ".";

    auto number = [&](const char* key) -> const json* {
        const auto it = c.find(key);
        return it == c.end() || it->is_null() ? nullptr : &*it;
    };
    auto count = [&](const char* key, std::optional<int64_t> fallback = {}) {
        const json* v = number(key);
        if (!v) return fallback ? *fallback : fail(std::string("missing ") + key);
        if (!v->is_number_unsigned() || v->get<uint64_t>() == 0 ||
            v->get<uint64_t>() > (1u << 30)) {
            fail(std::string(key) + " = " + v->dump() + " is out of range");
        }
        return v->get<int64_t>();
    };
    auto real = [&](const char* key, double fallback) {
        const json* v = number(key);
        if (v && !v->is_number()) fail(std::string(key) + " is not a number");
        return v ? v->get<double>() : fallback;
    };

    HParams& hp = m.hp;
    hp.n_vocab = count("vocab_size");
    hp.n_embd = count("hidden_size");
    hp.n_layer = count("num_hidden_layers");
    hp.n_head = count("num_attention_heads");
    hp.n_head_kv = count("num_key_value_heads", hp.n_head);
    hp.n_ff = count("intermediate_size");
    hp.n_ctx_train = count("max_position_embeddings");
    hp.norm_eps = float(real("rms_norm_eps", 1e-6));  // transformers' default
    m.explicit_head_dim = number("head_dim") != nullptr;
    hp.head_dim = count("head_dim", hp.n_embd / hp.n_head);
    // transformers >= 5 keeps RoPE settings in rope_parameters, older ones in rope_scaling.
    const json* rope = number("rope_parameters");
    if (!rope) rope = number("rope_scaling");
    if (rope && rope->is_object() && rope->contains("full_attention")) {
        // Gemma 3 under transformers >= 5: one set per layer type. The global layers' is the
        // model's; the sliding layers' base is the one llama.cpp fixes.
        const json& global = rope->at("full_attention");
        const auto local = rope->find("sliding_attention");
        const double base =
            m.arch->local_rope_base > 0 ? m.arch->local_rope_base : global.value("rope_theta", 0.0);
        if (local != rope->end() && local->is_object() &&
            local->value("rope_theta", base) != base) {
            fail("rope_parameters.sliding_attention: a RoPE base other than llama.cpp's " +
                 json(base).dump());
        }
        rope = &global;
    }
    hp.rope_dim = hp.head_dim;
    // Phi-4-mini: RoPE on 3/4 of a head (transformers 5 keeps the factor with the RoPE settings).
    const json* partial = number("partial_rotary_factor");
    if (!partial && rope && rope->is_object() && rope->contains("partial_rotary_factor")) {
        partial = &rope->at("partial_rotary_factor");
    }
    if (partial) {
        if (!partial->is_number()) fail("partial_rotary_factor is not a number");
        hp.rope_dim =
            int64_t(partial->get<double>() * double(hp.n_embd)) / hp.n_head;  // llama.cpp's
        if (hp.rope_dim <= 0 || hp.rope_dim % 2 != 0 || hp.rope_dim > hp.head_dim) {
            fail("partial_rotary_factor " + partial->dump() + " gives " +
                 std::to_string(hp.rope_dim) + " rotated dimensions of " +
                 std::to_string(hp.head_dim));
        }
    }
    if (hp.n_head % hp.n_head_kv != 0 || hp.head_dim % 2 != 0 ||
        (!m.explicit_head_dim && hp.n_embd % hp.n_head != 0)) {
        fail("inconsistent attention shape: " + std::to_string(hp.n_head) + " heads, " +
             std::to_string(hp.n_head_kv) + " KV heads of " + std::to_string(hp.head_dim));
    }
    const std::string want_act = m.arch->act == Activation::GeluTanh ? "gelu_pytorch_tanh" : "silu";
    const json* act = number("hidden_activation");  // Gemma's; hidden_act elsewhere
    if (!act) act = number("hidden_act");
    if (act && *act != want_act) {
        fail("hidden_act " + act->dump() + " is not supported (" + want_act + ")");
    }
    if (const json* bias = number("mlp_bias"); bias && bias->is_boolean() && bias->get<bool>()) {
        fail("mlp_bias is not supported");
    }
    const json* tie = number("tie_word_embeddings");
    m.tied_embeddings = tie && tie->is_boolean() && tie->get<bool>();

    hp.rope_theta = float(real("rope_theta", 10000.0));
    if (rope && rope->is_object()) {
        if (const auto t = rope->find("rope_theta"); t != rope->end() && t->is_number()) {
            hp.rope_theta = t->get<float>();
        }
        std::string type = rope->value("rope_type", rope->value("type", std::string("default")));
        if (type == "llama3") {
            m.rope_factors = llama3_rope_factors(*rope, hp.rope_theta, hp.head_dim, where);
        } else if (type == "linear") {
            m.keys.emplace_back(prefix + "rope.scaling.type", GGUFValue::string("linear"));
            m.keys.emplace_back(prefix + "rope.scaling.factor",
                                GGUFValue::f32(rope->value("factor", 1.0)));
        } else if (type == "longrope" || type == "su") {
            // Phi-3 names it at the top level; transformers 5 moves it into the RoPE settings.
            const double orig = real("original_max_position_embeddings",
                                     rope->value("original_max_position_embeddings", 0.0));
            read_long_rope(*rope, m, orig, fail);
        } else if (type != "default") {
            fail("rope_scaling type '" + type + "' is not supported (llama3, linear, longrope)");
        }
    }
    read_variant_keys(c, m, fail);
    return m;
}

// GGUF row r of a q/k projection (or element r of its bias) is HF row src_row(r): HF
// rotates halves (i, i + d/2) of each head, GGUF adjacent pairs (2i, 2i + 1). This is the
// inverse of llama.cpp's LlamaModel.permute: reshape(n_head, 2, d/2, ...).swapaxes(1, 2).
int64_t src_row(int64_t r, int64_t head_dim) {
    const int64_t head = r / head_dim, k = r % head_dim;
    return head * head_dim + (k % 2) * (head_dim / 2) + k / 2;
}

// How a tensor is carried over: rows un-permuted for NORM RoPE (head_dim > 0), `offset` added
// to every value (Gemma's norms), or left out when the checkpoint lacks it (optional).
struct How {
    int64_t head_dim = 0;
    float offset = 0.0f;
    bool optional = false;
};

class TensorAdder {
public:
    TensorAdder(GGUFWriter& w, std::string dir, std::shared_ptr<const SafetensorsModel> st,
                const ConvertOptions& opts, const ModelLayout& model)
        : w_(w), dir_(std::move(dir)), st_(std::move(st)), opts_(opts), model_(model) {}

    // Adds GGUF tensor `name` from HF tensor `hf` of shape [rows][cols] (rows 0: 1-D of
    // cols). Error when the checkpoint lacks it (unless optional) or its shape differs.
    void add(const std::string& name, const std::string& hf, int64_t rows, int64_t cols,
             How how = {}) {
        const int64_t head_dim = how.head_dim;
        const float offset = how.offset;
        const bool optional = how.optional;
        const SafeTensor* t = st_->find(hf);
        if (!t) {
            if (optional) return;
            throw Error(dir_ + ": missing tensor " + hf);
        }
        used_.insert(hf);
        const std::vector<int64_t> want =
            rows ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{cols};
        if (t->shape != want) {
            throw Error(dir_ + ": tensor " + hf + " has shape " + shape_str(t->shape) +
                        ", config.json implies " + shape_str(want));
        }
        const int64_t n_rows = rows ? rows : 1;
        auto st = st_;  // keeps the mappings alive until the writer asks for the data
        auto source = [st, t, head_dim, offset](std::vector<float>& f) {
            f.resize(size_t(t->n_elements()));
            if (head_dim == 0) {
                t->rows_to_float(0, t->rows(), f.data());
            } else if (t->shape.size() == 1) {
                std::vector<float> hf(f.size());
                t->rows_to_float(0, 1, hf.data());
                for (size_t r = 0; r < f.size(); r++) f[r] = hf[src_row(int64_t(r), head_dim)];
            } else {
                const int64_t cols = t->cols();
                for (int64_t r = 0; r < t->rows(); r++) {
                    t->rows_to_float(src_row(r, head_dim), 1, f.data() + r * cols);
                }
            }
            if (offset != 0.0f) {
                for (float& x : f) x += offset;
            }
            return f.data();
        };
        add_float_tensor(w_, name, n_rows, cols, opts_, model_, source);
    }

    bool has(const std::string& hf) const { return st_->find(hf) != nullptr; }

    // Every checkpoint tensor must have been converted: anything else is a part of the
    // model lila would silently drop. RoPE caches of old checkpoints are recomputed.
    void check_all_used() const {
        for (const SafeTensor* t : st_->tensors()) {
            if (!used_.count(t->name) && !t->name.ends_with(".rotary_emb.inv_freq")) {
                throw Error(dir_ + ": tensor " + t->name + " is not part of a supported model");
            }
        }
    }

private:
    static std::string shape_str(const std::vector<int64_t>& s) {
        std::string out = "[";
        for (size_t i = 0; i < s.size(); i++) out += (i ? ", " : "") + std::to_string(s[i]);
        return out + "]";
    }

    GGUFWriter& w_;
    std::string dir_;
    std::shared_ptr<const SafetensorsModel> st_;
    const ConvertOptions& opts_;
    ModelLayout model_;
    std::set<std::string> used_;
};

std::string model_name(const std::string& dir) {
    fs::path p = fs::path(dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    return p.filename().string();
}

void convert(const std::string& dir, const std::string& out, const ConvertOptions& opts,
             const GGUFWriter::Progress& progress) {
    const HfModel m = read_config(dir);
    const HParams& hp = m.hp;
    const HfTokenizer tok = read_hf_tokenizer(dir, hp.n_vocab);
    auto st = SafetensorsModel::open(dir);

    GGUFWriter gw;
    const Arch& a = *m.arch;
    set_model_metadata(gw, a.name, hp, opts.name.empty() ? model_name(dir) : opts.name, opts.type);
    if (m.explicit_head_dim) {
        gw.set(std::string(a.name) + ".attention.key_length",
               GGUFValue::u32(uint32_t(hp.head_dim)));
        gw.set(std::string(a.name) + ".attention.value_length",
               GGUFValue::u32(uint32_t(hp.head_dim)));
    }
    for (const auto& [key, value] : m.keys) gw.set(key, value);
    tok.vocab.to_gguf(gw);
    if (!tok.chat_template.empty()) {
        gw.set("tokenizer.chat_template", GGUFValue::string(tok.chat_template));
    }

    // token_embd is the output matrix too when tied embeddings leave no lm_head to write.
    const ModelLayout model = model_layout(a.name, hp.n_layer, hp.n_head, hp.n_head_kv,
                                           m.tied_embeddings && !st->find("lm_head.weight"));
    auto add_floats = [&](const char* name, const std::vector<float>& values) {
        if (values.empty()) return;
        const auto v = std::make_shared<const std::vector<float>>(values);
        add_float_tensor(gw, name, 1, int64_t(v->size()), opts, model,
                         [v](auto&) { return v->data(); });
    };
    add_floats("rope_freqs.weight", m.rope_factors);
    add_floats("rope_factors_long.weight", m.long_factors);
    add_floats("rope_factors_short.weight", m.short_factors);

    TensorAdder t(gw, dir, st, opts, model);
    const int64_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_embd = hp.n_embd, n_ff = hp.n_ff;
    // NORM-RoPE architectures rotate GGUF's interleaved pairs: q/k rows are un-permuted.
    const How rope{.head_dim = a.rope == RopeKind::Norm ? hp.head_dim : 0};
    const How norm{.offset = m.cls->gemma_norms ? 1.0f : 0.0f};
    const How bias{.head_dim = rope.head_dim, .optional = true};
    const int64_t q_norm = a.qk_norm == QKNorm::PerHead ? hp.head_dim : q_dim;
    const int64_t k_norm = a.qk_norm == QKNorm::PerHead ? hp.head_dim : kv_dim;
    t.add("token_embd.weight", "model.embed_tokens.weight", hp.n_vocab, n_embd);
    for (int64_t l = 0; l < hp.n_layer; l++) {
        const std::string p = "blk." + std::to_string(l) + ".";
        const std::string h = "model.layers." + std::to_string(l) + ".";
        if (a.pre_norms)
            t.add(p + "attn_norm.weight", h + "input_layernorm.weight", 0, n_embd, norm);
        if (a.fused) {
            t.add(p + "attn_qkv.weight", h + "self_attn.qkv_proj.weight", q_dim + 2 * kv_dim,
                  n_embd);
        } else {
            t.add(p + "attn_q.weight", h + "self_attn.q_proj.weight", q_dim, n_embd, rope);
            t.add(p + "attn_k.weight", h + "self_attn.k_proj.weight", kv_dim, n_embd, rope);
            t.add(p + "attn_v.weight", h + "self_attn.v_proj.weight", kv_dim, n_embd);
        }
        if (m.cls->biases) {
            t.add(p + "attn_q.bias", h + "self_attn.q_proj.bias", 0, q_dim, bias);
            t.add(p + "attn_k.bias", h + "self_attn.k_proj.bias", 0, kv_dim, bias);
            t.add(p + "attn_v.bias", h + "self_attn.v_proj.bias", 0, kv_dim, {.optional = true});
        }
        if (a.qk_norm != QKNorm::None) {
            t.add(p + "attn_q_norm.weight", h + "self_attn.q_norm.weight", 0, q_norm, norm);
            t.add(p + "attn_k_norm.weight", h + "self_attn.k_norm.weight", 0, k_norm, norm);
        }
        t.add(p + "attn_output.weight", h + "self_attn.o_proj.weight", n_embd, q_dim);
        if (a.post_norms) {
            // Gemma and OLMo 2 norm each sublayer's output; Gemma's FFN input has its own.
            t.add(p + "post_attention_norm.weight", h + "post_attention_layernorm.weight", 0,
                  n_embd, norm);
            t.add(p + "post_ffw_norm.weight", h + "post_feedforward_layernorm.weight", 0, n_embd,
                  norm);
            if (a.pre_norms) {
                t.add(p + "ffn_norm.weight", h + "pre_feedforward_layernorm.weight", 0, n_embd,
                      norm);
            }
        } else {
            t.add(p + "ffn_norm.weight", h + "post_attention_layernorm.weight", 0, n_embd);
        }
        if (a.fused) {
            t.add(p + "ffn_up.weight", h + "mlp.gate_up_proj.weight", 2 * n_ff, n_embd);
        } else {
            t.add(p + "ffn_gate.weight", h + "mlp.gate_proj.weight", n_ff, n_embd);
            t.add(p + "ffn_up.weight", h + "mlp.up_proj.weight", n_ff, n_embd);
        }
        t.add(p + "ffn_down.weight", h + "mlp.down_proj.weight", n_embd, n_ff);
    }
    t.add("output_norm.weight", "model.norm.weight", 0, n_embd, norm);
    // Tied embeddings write no output.weight: the loader uses token_embd for both.
    t.add("output.weight", "lm_head.weight", hp.n_vocab, n_embd, {.optional = m.tied_embeddings});
    t.check_all_used();

    gw.write(out, progress);
}

}  // namespace

void convert_hf(const std::string& dir, const std::string& out, const ConvertOptions& opts,
                const GGUFWriter::Progress& progress) {
    try {
        convert(dir, out, opts, progress);
    } catch (const json::exception& e) {  // a config value of the wrong JSON type
        throw Error(dir + ": unexpected content in config.json: " + e.what());
    }
}

}  // namespace lila
