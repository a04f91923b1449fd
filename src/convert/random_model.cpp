#include "src/convert/random_model.h"

#include <cmath>

#include "src/base/error.h"
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

}  // namespace

const std::vector<ModelPreset>& model_presets() {
    static const std::vector<ModelPreset> presets = {
        // name              vocab   width layers heads kv   ffn    ctx
        {"stories15m", 32000, 288, 6, 6, 6, 768, 256},
        {"stories110m", 32000, 768, 12, 12, 12, 2048, 1024},
        {"tinyllama-1.1b", 32000, 2048, 22, 32, 4, 5632, 2048},
        {"llama2-7b", 32000, 4096, 32, 32, 32, 11008, 4096},
        {"llama3-8b", 128256, 4096, 32, 32, 8, 14336, 8192},
    };
    return presets;
}

void write_random_model(const std::string& preset, const std::string& out,
                        const ConvertOptions& opts, uint64_t seed,
                        const GGUFWriter::Progress& progress) {
    const ModelPreset* p = nullptr;
    std::string names;
    for (const ModelPreset& m : model_presets()) {
        if (preset == m.name) p = &m;
        names += (names.empty() ? "" : ", ") + std::string(m.name);
    }
    if (!p) throw Error("unknown model preset '" + preset + "' (presets: " + names + ")");

    HParams hp;
    hp.n_vocab = p->n_vocab;
    hp.n_embd = p->n_embd;
    hp.n_layer = p->n_layer;
    hp.n_head = p->n_head;
    hp.n_head_kv = p->n_head_kv;
    hp.n_ff = p->n_ff;
    hp.n_ctx_train = p->n_ctx;
    hp.head_dim = hp.rope_dim = p->n_embd / p->n_head;
    const int64_t kv_dim = hp.kv_dim();

    GGUFWriter w;
    set_llama_metadata(w, hp, opts.name.empty() ? preset + " (random)" : opts.name, opts.type);
    synthetic_vocab(p->n_vocab).to_gguf(w);

    uint64_t tensor_seed = seed;
    const ModelLayout model{p->n_layer, false};  // output.weight is always written
    auto add = [&](const std::string& name, int64_t rows, int64_t cols) {
        const uint64_t s0 = splitmix64(tensor_seed);
        const int n_threads = opts.n_threads;
        add_float_tensor(w, name, rows, cols, opts, model, [=](std::vector<float>& f) {
            f.assign(rows * cols, 1.0f);  // norms: 1
            if (rows == 1) return f.data();
            const float a = 0.02f * std::sqrt(3.0f);  // uniform(-a, a) has std 0.02
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

    add("token_embd.weight", p->n_vocab, p->n_embd);
    for (int64_t l = 0; l < p->n_layer; l++) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", 1, p->n_embd);
        add(b + "attn_q.weight", p->n_embd, p->n_embd);
        add(b + "attn_k.weight", kv_dim, p->n_embd);
        add(b + "attn_v.weight", kv_dim, p->n_embd);
        add(b + "attn_output.weight", p->n_embd, p->n_embd);
        add(b + "ffn_norm.weight", 1, p->n_embd);
        add(b + "ffn_gate.weight", p->n_ff, p->n_embd);
        add(b + "ffn_down.weight", p->n_embd, p->n_ff);
        add(b + "ffn_up.weight", p->n_ff, p->n_embd);
    }
    add("output_norm.weight", 1, p->n_embd);
    add("output.weight", p->n_vocab, p->n_embd);
    w.write(out, progress);
}

}  // namespace lila
