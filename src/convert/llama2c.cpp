#include "src/convert/llama2c.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "src/base/error.h"
#include "src/io/mapped_file.h"
#include "src/tokenizer/llama2c_tokenizer.h"
#include "src/tokenizer/vocab.h"

namespace lila {

namespace {

using ggml_lite::Type;

constexpr size_t kHeaderBytes = 7 * sizeof(int32_t);

Llama2cConfig parse_config(const MappedFile& f) {
    if (f.size() < kHeaderBytes) throw Error(f.path() + ": too small for a llama2.c checkpoint");
    int32_t h[7];
    std::memcpy(h, f.data(), sizeof h);
    Llama2cConfig c{h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[5] > 0};
    // INT32_MIN has no positive counterpart: it stays negative, for the range check to reject.
    if (c.vocab_size < 0 && c.vocab_size != INT32_MIN) c.vocab_size = -c.vocab_size;
    auto in_range = [](int32_t v) { return v > 0 && v <= (1 << 20); };
    if (!in_range(c.dim) || !in_range(c.hidden_dim) || !in_range(c.n_layers) ||
        !in_range(c.n_heads) || !in_range(c.n_kv_heads) || !in_range(c.vocab_size) ||
        !in_range(c.seq_len) || c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 ||
        (c.dim / c.n_heads) % 2 != 0) {
        throw Error(f.path() + ": not a llama2.c checkpoint (implausible header: dim " +
                    std::to_string(c.dim) + ", layers " + std::to_string(c.n_layers) + ", heads " +
                    std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) + ", vocab " +
                    std::to_string(c.vocab_size) + ")");
    }
    return c;
}

// Where each weight lies in the checkpoint, in run.c's memory_map_weights() order.
struct Layout {
    const float* embed;      // [vocab][dim]
    const float* rms_att;    // [layer][dim]
    const float* wq;         // [layer][dim][dim]     ([out][in] per layer)
    const float* wk;         // [layer][kv_dim][dim]
    const float* wv;         // [layer][kv_dim][dim]
    const float* wo;         // [layer][dim][dim]
    const float* rms_ffn;    // [layer][dim]
    const float* w1;         // [layer][hidden][dim]
    const float* w2;         // [layer][dim][hidden]
    const float* w3;         // [layer][hidden][dim]
    const float* rms_final;  // [dim]
    const float* wcls;       // [vocab][dim]
};

Layout locate(const MappedFile& f, const Llama2cConfig& c) {
    const size_t dim = c.dim, kv_dim = size_t(c.dim) / c.n_heads * c.n_kv_heads;
    const size_t L = c.n_layers, hidden = c.hidden_dim, head = size_t(c.dim) / c.n_heads;
    const size_t floats = size_t(c.vocab_size) * dim + L * dim * (2 + 2 * dim + 2 * kv_dim) +
                          L * dim * hidden * 3 + dim + size_t(c.seq_len) * head +
                          (c.shared_classifier ? 0 : size_t(c.vocab_size) * dim);
    // Compared in floats: with every size at most 2^20 the count fits in 64 bits, but its
    // byte count need not, and a wrapped one would let a tiny file pass.
    if (floats > (f.size() - kHeaderBytes) / sizeof(float)) {
        char need[32];
        std::snprintf(need, sizeof need, "%.0Lf",
                      kHeaderBytes + floats * (long double)sizeof(float));
        throw Error(f.path() + ": truncated: the header describes " + need +
                    " bytes of checkpoint, the file has " + std::to_string(f.size()));
    }
    const float* p = reinterpret_cast<const float*>(f.data() + kHeaderBytes);
    auto take = [&p](size_t n) {
        const float* q = p;
        p += n;
        return q;
    };
    Layout w{};
    w.embed = take(size_t(c.vocab_size) * dim);
    w.rms_att = take(L * dim);
    w.wq = take(L * dim * dim);
    w.wk = take(L * kv_dim * dim);
    w.wv = take(L * kv_dim * dim);
    w.wo = take(L * dim * dim);
    w.rms_ffn = take(L * dim);
    w.w1 = take(L * hidden * dim);
    w.w2 = take(L * dim * hidden);
    w.w3 = take(L * hidden * dim);
    w.rms_final = take(dim);
    take(size_t(c.seq_len) * head);  // legacy freq_cis_real/imag: RoPE is computed, not read
    w.wcls = c.shared_classifier ? w.embed : take(size_t(c.vocab_size) * dim);
    return w;
}

}  // namespace

Llama2cConfig read_llama2c_config(const std::string& checkpoint) {
    return parse_config(MappedFile(checkpoint));
}

void convert_llama2c(const std::string& checkpoint, const std::string& tokenizer,
                     const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress) {
    auto file = std::make_shared<MappedFile>(checkpoint);
    const Llama2cConfig c = parse_config(*file);
    const Layout w = locate(*file, c);
    const Vocab vocab = read_llama2c_tokenizer(tokenizer, c.vocab_size);

    const int64_t dim = c.dim, hidden = c.hidden_dim, head = c.dim / c.n_heads;
    const int64_t kv_dim = head * c.n_kv_heads;

    HParams hp;
    hp.n_vocab = c.vocab_size;
    hp.n_embd = dim;
    hp.n_layer = c.n_layers;
    hp.n_head = c.n_heads;
    hp.n_head_kv = c.n_kv_heads;
    hp.n_ff = hidden;
    hp.n_ctx_train = c.seq_len;
    hp.head_dim = hp.rope_dim = head;  // run.c: eps 1e-5, theta 10000 (HParams' defaults)

    GGUFWriter gw;
    const std::string name =
        opts.name.empty() ? std::filesystem::path(checkpoint).stem().string() : opts.name;
    set_model_metadata(gw, "llama", hp, name, opts.type);
    vocab.to_gguf(gw);

    // The checkpoint stays mapped (`file` is shared) until the writer has asked for every
    // tensor; each is quantized straight from the mapping.
    const ModelLayout model =
        model_layout("llama", c.n_layers, c.n_heads, c.n_kv_heads, c.shared_classifier);
    auto add = [&](const std::string& tname, const float* src, int64_t rows, int64_t cols) {
        add_float_tensor(gw, tname, rows, cols, opts, model, [file, src](auto&) { return src; });
    };

    add("token_embd.weight", w.embed, c.vocab_size, dim);
    for (int64_t l = 0; l < c.n_layers; l++) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", w.rms_att + l * dim, 1, dim);
        add(p + "attn_q.weight", w.wq + l * dim * dim, dim, dim);
        add(p + "attn_k.weight", w.wk + l * kv_dim * dim, kv_dim, dim);
        add(p + "attn_v.weight", w.wv + l * kv_dim * dim, kv_dim, dim);
        add(p + "attn_output.weight", w.wo + l * dim * dim, dim, dim);
        add(p + "ffn_norm.weight", w.rms_ffn + l * dim, 1, dim);
        add(p + "ffn_gate.weight", w.w1 + l * hidden * dim, hidden, dim);
        add(p + "ffn_down.weight", w.w2 + l * dim * hidden, dim, hidden);
        add(p + "ffn_up.weight", w.w3 + l * hidden * dim, hidden, dim);
    }
    add("output_norm.weight", w.rms_final, 1, dim);
    if (!c.shared_classifier) add("output.weight", w.wcls, c.vocab_size, dim);

    gw.write(out, progress);
}

}  // namespace lila
