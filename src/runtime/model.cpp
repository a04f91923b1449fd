#include "src/runtime/model.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>

#include "src/base/error.h"
#include "src/io/file_type.h"

namespace lila {

namespace {

using ggml_lite::Matrix;
using ggml_lite::Type;

class Binder {
public:
    explicit Binder(const GGUFFile& f) : f_(f) {}

    const GGUFTensorInfo* find(const std::string& name) const { return f_.find_tensor(name); }

    const GGUFTensorInfo& require(const std::string& name) const {
        const GGUFTensorInfo* t = f_.find_tensor(name);
        if (!t) throw Error(f_.path() + ": missing tensor " + name);
        return *t;
    }

    // A 2-D weight [rows][cols] (GGUF shape (cols, rows)).
    Matrix matrix(const std::string& name, int64_t rows, int64_t cols) const {
        const GGUFTensorInfo& t = require(name);
        check_shape(t, {cols, rows});
        return Matrix{t.type, rows, cols, t.data};
    }

    // A 1-D tensor of n floats, converted to F32.
    std::vector<float> vector(const std::string& name, int64_t n) const {
        const GGUFTensorInfo& t = require(name);
        check_shape(t, {n});
        std::vector<float> v(n);
        ggml_lite::traits(t.type).to_float(t.data, v.data(), n);
        return v;
    }

    std::vector<float> optional_vector(const std::string& name, int64_t n) const {
        return find(name) ? vector(name, n) : std::vector<float>{};
    }

private:
    // Trailing dimensions of 1 are implied, as in ggml: a writer may leave them out (ggml's
    // own drops them), so an (8, 1) matrix can be stored as shape (8).
    void check_shape(const GGUFTensorInfo& t, const std::vector<int64_t>& want) const {
        const auto trimmed = [](std::vector<int64_t> s) {
            while (s.size() > 1 && s.back() == 1) s.pop_back();
            return s;
        };
        if (trimmed(t.shape) == trimmed(want)) return;
        auto str = [](const std::vector<int64_t>& s) {
            std::string out = "(";
            for (size_t i = 0; i < s.size(); i++) out += (i ? ", " : "") + std::to_string(s[i]);
            return out + ")";
        };
        throw Error(f_.path() + ": tensor " + t.name + " has shape " + str(t.shape) +
                    ", expected " + str(want));
    }

    const GGUFFile& f_;
};

int64_t positive(const GGUFFile& f, const std::string& key, int64_t v) {
    if (v <= 0 || v > (int64_t{1} << 31)) {
        throw Error(f.path() + ": metadata " + key + " = " + std::to_string(v) +
                    " is out of range");
    }
    return v;
}

HParams read_hparams(const GGUFFile& f, const std::string& arch, int64_t n_vocab) {
    auto req = [&](const std::string& k) {
        return positive(f, arch + "." + k, f.require_int(arch + "." + k));
    };
    HParams hp;
    hp.n_vocab = n_vocab;
    hp.n_embd = req("embedding_length");
    hp.n_layer = req("block_count");
    hp.n_head = req("attention.head_count");
    hp.n_head_kv = f.get_int(arch + ".attention.head_count_kv").value_or(hp.n_head);
    hp.n_ff = req("feed_forward_length");
    hp.n_ctx_train = req("context_length");
    hp.norm_eps =
        static_cast<float>(f.get_float(arch + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
    hp.rope_theta = static_cast<float>(f.get_float(arch + ".rope.freq_base").value_or(10000.0));
    positive(f, arch + ".attention.head_count_kv", hp.n_head_kv);

    const std::string key_length = arch + ".attention.key_length";
    const std::optional<int64_t> head_dim = f.get_int(key_length);
    // Without key_length the head size is n_embd / n_head, which must then be whole.
    if ((!head_dim && hp.n_embd % hp.n_head != 0) || hp.n_head % hp.n_head_kv != 0) {
        throw Error(f.path() + ": inconsistent attention shape: " + std::to_string(hp.n_embd) +
                    " wide with " + std::to_string(hp.n_head) + " heads and " +
                    std::to_string(hp.n_head_kv) + " KV heads");
    }
    // Range-checked like the counts above: a negative or huge size would go on to size
    // buffers and products of sizes.
    const std::string rope_dims = arch + ".rope.dimension_count";
    hp.head_dim = positive(f, key_length, head_dim.value_or(hp.n_embd / hp.n_head));
    hp.rope_dim = positive(f, rope_dims, f.get_int(rope_dims).value_or(hp.head_dim));
    if (hp.head_dim % 2 != 0 || hp.rope_dim % 2 != 0 || hp.rope_dim > hp.head_dim) {
        throw Error(f.path() + ": unsupported head size " + std::to_string(hp.head_dim) +
                    " / rope dimension " + std::to_string(hp.rope_dim));
    }
    return hp;
}

float real(const GGUFFile& f, const std::string& key, float fallback) {
    const std::optional<double> v = f.get_float(key);
    if (v && !std::isfinite(*v)) throw Error(f.path() + ": metadata " + key + " is not finite");
    return v ? static_cast<float>(*v) : fallback;
}

float required_real(const GGUFFile& f, const std::string& key) {
    if (!f.get_float(key)) throw Error(f.path() + ": missing metadata key " + key);
    return real(f, key, 0.0f);
}

// The block variants' values (model.h) as the file and llama.cpp's defaults give them.
void read_variants(const GGUFFile& f, Model& m) {
    const Arch& a = *m.arch;
    const HParams& hp = m.hp;
    const std::string k = std::string(a.name) + ".";
    m.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
    if (a.wide_query_layers > 0 && hp.n_layer == a.wide_query_layers) {
        m.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head));
    }
    if (a.embd_scale) m.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    if (a.softcap) {
        m.attn_softcap = real(f, k + "attn_logit_softcapping", 50.0f);
        m.final_softcap = real(f, k + "final_logit_softcapping", 30.0f);
    }
    if (a.granite_scales) {
        m.embd_scale = required_real(f, k + "embedding_scale");
        m.residual_scale = required_real(f, k + "residual_scale");
        m.attn_scale = required_real(f, k + "attention.scale");
        const float logit_scale = required_real(f, k + "logit_scale");
        if (logit_scale == 0.0f) throw Error(f.path() + ": metadata " + k + "logit_scale is 0");
        m.logit_scale = 1.0f / logit_scale;
    }
    if (a.sliding) {
        const std::string key = k + "attention.sliding_window";
        m.n_swa = f.get_int(key).value_or(a.default_window);
        if (m.n_swa < 0 || m.n_swa > (int64_t{1} << 31)) {
            throw Error(f.path() + ": metadata " + key + " = " + std::to_string(m.n_swa) +
                        " is out of range");
        }
    }
    m.rope_theta_local = a.local_rope_base;
    m.rope_attn_factor = real(f, k + "rope.scaling.attn_factor", 1.0f);
    const std::string orig = k + "rope.scaling.original_context_length";
    m.n_ctx_orig = positive(f, orig, f.get_int(orig).value_or(hp.n_ctx_train));
}

// Linear RoPE scaling (rope.scaling.type "linear", llama.cpp's default type, with
// rope.scaling.factor): positions divided by the factor, i.e. every frequency divided by it.
float linear_rope_factor(const GGUFFile& f, const std::string& arch) {
    const std::string type = f.get_string(arch + ".rope.scaling.type").value_or("linear");
    float factor = real(f, arch + ".rope.scaling.factor", 0.0f);
    if (factor == 0.0f) factor = real(f, arch + ".rope.scale_linear", 0.0f);
    if (type == "none" || factor == 0.0f || factor == 1.0f) return 1.0f;
    if (type != "linear") {
        throw Error(f.path() + ": RoPE scaling '" + type + "' is not supported (linear)");
    }
    if (factor < 0.0f) throw Error(f.path() + ": metadata rope.scaling.factor is negative");
    return factor;
}

Matrix row_range(const Matrix& w, int64_t first, int64_t rows) {
    const auto* data =
        static_cast<const uint8_t*>(w.data) + ggml_lite::row_size(w.type, w.cols) * first;
    return Matrix{w.type, rows, w.cols, data};
}

}  // namespace

std::unique_ptr<Model> Model::load(const std::string& path, bool pack) {
    auto m = std::make_unique<Model>();
    m->file_ = GGUFFile::open(path);
    const GGUFFile& f = *m->file_;

    const std::string arch = f.get_string("general.architecture").value_or("");
    m->arch = find_arch(arch);
    if (!m->arch) {
        throw Error(path + ": unsupported architecture '" + arch + "' (supported: " + arch_names() +
                    ")");
    }
    const Arch& a = *m->arch;
    m->tokenizer_ = Tokenizer::create(Vocab::from_gguf(f));
    m->hp = read_hparams(f, arch, m->tokenizer_->n_vocab());
    const HParams& hp = m->hp;
    read_variants(f, *m);

    Binder b(f);
    m->tok_embd = b.matrix("token_embd.weight", hp.n_vocab, hp.n_embd);
    m->output_norm = b.vector("output_norm.weight", hp.n_embd);
    m->output =
        b.find("output.weight") ? b.matrix("output.weight", hp.n_vocab, hp.n_embd) : m->tok_embd;
    const int64_t n_freqs = hp.rope_dim / 2;
    m->rope_freq_factors = b.optional_vector("rope_freqs.weight", n_freqs);
    if (const float factor = linear_rope_factor(f, arch); factor != 1.0f) {
        m->rope_freq_factors.resize(n_freqs, 1.0f);
        for (float& ff : m->rope_freq_factors) ff *= factor;
    }
    m->rope_factors_long = b.optional_vector("rope_factors_long.weight", n_freqs);
    m->rope_factors_short = b.optional_vector("rope_factors_short.weight", n_freqs);

    const int64_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_embd = hp.n_embd, n_ff = hp.n_ff;
    const int64_t qk_norm_q = a.qk_norm == QKNorm::PerHead ? hp.head_dim : q_dim;
    const int64_t qk_norm_k = a.qk_norm == QKNorm::PerHead ? hp.head_dim : kv_dim;
    for (int64_t i = 0; i < hp.n_layer; i++) {
        const std::string p = "blk." + std::to_string(i) + ".";
        Layer& l = m->layers.emplace_back();
        if (a.pre_norms) {
            l.attn_norm = b.vector(p + "attn_norm.weight", n_embd);
            l.ffn_norm = b.vector(p + "ffn_norm.weight", n_embd);
        }
        if (a.post_norms) {
            l.post_attn_norm = b.vector(p + "post_attention_norm.weight", n_embd);
            l.post_ffn_norm = b.vector(p + "post_ffw_norm.weight", n_embd);
        }
        if (a.qk_norm != QKNorm::None) {
            l.q_norm = b.vector(p + "attn_q_norm.weight", qk_norm_q);
            l.k_norm = b.vector(p + "attn_k_norm.weight", qk_norm_k);
        }
        if (a.fused && b.find(p + "attn_qkv.weight")) {
            const Matrix qkv = b.matrix(p + "attn_qkv.weight", q_dim + 2 * kv_dim, n_embd);
            l.wq = row_range(qkv, 0, q_dim);
            l.wk = row_range(qkv, q_dim, kv_dim);
            l.wv = row_range(qkv, q_dim + kv_dim, kv_dim);
        } else {
            l.wq = b.matrix(p + "attn_q.weight", q_dim, n_embd);
            l.wk = b.matrix(p + "attn_k.weight", kv_dim, n_embd);
            l.wv = b.matrix(p + "attn_v.weight", kv_dim, n_embd);
        }
        l.wo = b.matrix(p + "attn_output.weight", n_embd, q_dim);
        l.bq = b.optional_vector(p + "attn_q.bias", q_dim);
        l.bk = b.optional_vector(p + "attn_k.bias", kv_dim);
        l.bv = b.optional_vector(p + "attn_v.bias", kv_dim);
        if (a.fused && !b.find(p + "ffn_gate.weight")) {
            const Matrix gate_up = b.matrix(p + "ffn_up.weight", 2 * n_ff, n_embd);
            l.w1 = row_range(gate_up, 0, n_ff);
            l.w3 = row_range(gate_up, n_ff, n_ff);
        } else {
            l.w1 = b.matrix(p + "ffn_gate.weight", n_ff, n_embd);
            l.w3 = b.matrix(p + "ffn_up.weight", n_ff, n_embd);
        }
        l.w2 = b.matrix(p + "ffn_down.weight", n_embd, n_ff);
        l.sliding = a.layer_slides(i) && m->n_swa > 0;
        l.rope = a.layer_has_rope(i);
        l.local_rope = a.local_rope_base > 0 && a.layer_slides(i);
    }
    if (pack) {
        // The LM head, even when it is the embedding table: get_row reads tok_embd's own
        // rows, which stay as they are.
        std::vector<ggml_lite::Matrix*> matrices{&m->output};
        for (Layer& l : m->layers) {
            for (ggml_lite::Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3})
                matrices.push_back(w);
        }
        // matmul reads only the packed copies, so the file's pages are dropped as they are
        // copied: memory holds the weights once, at the peak too. (The rows get_row looks up
        // in a packed embedding table come back from the page cache.)
        m->packed_ = ggml_lite::pack_weights(matrices, 0, [&f](const ggml_lite::Matrix& w) {
            f.release(w.data, ggml_lite::row_size(w.type, w.cols) * w.rows);
        });
    }
    return m;
}

const std::vector<float>& Model::rope_factors(int64_t n_ctx) const {
    if (n_ctx > n_ctx_orig && !rope_factors_long.empty()) return rope_factors_long;
    if (n_ctx <= n_ctx_orig && !rope_factors_short.empty()) return rope_factors_short;
    return rope_freq_factors;
}

std::string Model::name() const {
    if (auto n = file_->get_string("general.name"); n && !n->empty()) return *n;
    return std::filesystem::path(file_->path()).stem().string();
}

std::string Model::type_summary() const {
    std::map<std::string, size_t> bytes_by_type;
    for (const GGUFTensorInfo& t : file_->tensors()) {
        if (t.shape.size() >= 2) bytes_by_type[ggml_lite::type_name(t.type)] += t.nbytes;
    }
    std::string best;
    size_t most = 0;
    for (const auto& [name, bytes] : bytes_by_type) {
        if (bytes > most) most = bytes, best = name;
    }
    // A mix is named by its file type: Q4_K_M's majority type alone would read "q4_k". Q4_K_S
    // shares its id with the one-type q4_k file, whose matrices are all one type.
    const std::optional<int64_t> id = file_->get_int("general.file_type");
    const std::optional<FileType> ft = id && *id >= 0 && *id <= UINT32_MAX
                                           ? file_type_from_gguf(static_cast<uint32_t>(*id))
                                           : std::nullopt;
    if (ft && ft->mix != Mix::None && best == ggml_lite::type_name(ft->base) &&
        bytes_by_type.size() > 1) {
        return file_type_name(*ft);
    }
    return best;
}

size_t Model::weight_bytes() const {
    size_t total = 0;
    for (const GGUFTensorInfo& t : file_->tensors()) total += t.nbytes;
    return total;
}

}  // namespace lila
