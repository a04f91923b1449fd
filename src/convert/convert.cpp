#include <algorithm>
#include <memory>
#include <string>
#include <variant>

#include "src/convert/convert.h"
#include "src/convert/quantize.h"

namespace lila {

namespace {

// Layer 0's value of a head count, which may be one per layer (0 when absent).
int64_t first_layer_value(const GGUFFile& f, const std::string& key) {
    const GGUFValue* v = f.find(key);
    if (!v) return 0;
    if (const auto* per_layer = std::get_if<std::vector<int64_t>>(&v->value))
        return per_layer->empty() ? 0 : per_layer->front();
    return f.get_int(key).value_or(0);
}

// The layers (one past the highest N of a "blk.N." tensor) and whether the output matrix is
// token_embd's, read from the tensors themselves, whatever the architecture; the head counts
// from the architecture's keys (KV heads as many as query heads when absent, as llama.cpp).
ModelLayout layout_of(const GGUFFile& f) {
    int64_t n_layer = 0;
    bool has_output = false;
    for (const GGUFTensorInfo& t : f.tensors()) {
        has_output |= t.name == "output.weight";
        n_layer = std::max(n_layer, tensor_layer(t.name) + 1);
    }
    const std::string arch = f.get_string("general.architecture").value_or("");
    const int64_t n_head = first_layer_value(f, arch + ".attention.head_count");
    const int64_t n_head_kv = f.find(arch + ".attention.head_count_kv")
                                  ? first_layer_value(f, arch + ".attention.head_count_kv")
                                  : n_head;
    return model_layout(arch, n_layer, n_head, n_head_kv, !has_output);
}

}  // namespace

void set_model_metadata(GGUFWriter& w, const std::string& arch, const HParams& hp,
                        const std::string& name, FileType type) {
    auto u32 = [](int64_t v) { return GGUFValue::u32(static_cast<uint32_t>(v)); };
    const std::string k = arch + ".";
    w.set("general.architecture", GGUFValue::string(arch));
    w.set("general.name", GGUFValue::string(name));
    w.set("general.file_type", GGUFValue::u32(gguf_file_type(type)));
    w.set("general.quantization_version", GGUFValue::u32(2));
    w.set(k + "vocab_size", u32(hp.n_vocab));
    w.set(k + "context_length", u32(hp.n_ctx_train));
    w.set(k + "embedding_length", u32(hp.n_embd));
    w.set(k + "block_count", u32(hp.n_layer));
    w.set(k + "feed_forward_length", u32(hp.n_ff));
    w.set(k + "attention.head_count", u32(hp.n_head));
    w.set(k + "attention.head_count_kv", u32(hp.n_head_kv));
    w.set(k + "attention.layer_norm_rms_epsilon", GGUFValue::f32(hp.norm_eps));
    if (hp.head_dim * hp.n_head != hp.n_embd) {
        w.set(k + "attention.key_length", u32(hp.head_dim));
        w.set(k + "attention.value_length", u32(hp.head_dim));
    }
    w.set(k + "rope.dimension_count", u32(hp.rope_dim));
    w.set(k + "rope.freq_base", GGUFValue::f32(hp.rope_theta));
}

void add_float_tensor(GGUFWriter& w, const std::string& name, int64_t rows, int64_t cols,
                      const ConvertOptions& opts, const ModelLayout& model, FloatSource source) {
    const std::vector<int64_t> shape =
        rows == 1 ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    const ggml_lite::Type type = tensor_type(opts.type, name, shape, model);
    const int n_threads = opts.n_threads;
    w.add_tensor(name, type, shape, [=](std::vector<uint8_t>& bytes) {
        std::vector<float> scratch;
        quantize_rows(source(scratch), type, rows, cols, n_threads, bytes);
    });
}

void requantize_gguf(const std::string& in, const std::string& out, const ConvertOptions& opts,
                     const GGUFWriter::Progress& progress) {
    std::shared_ptr<const GGUFFile> src = GGUFFile::open(in);
    GGUFWriter gw;
    for (const auto& [key, value] : src->metadata()) gw.set(key, value);
    gw.set("general.file_type", GGUFValue::u32(gguf_file_type(opts.type)));
    if (!opts.name.empty()) gw.set("general.name", GGUFValue::string(opts.name));

    const ModelLayout model = layout_of(*src);
    for (const GGUFTensorInfo& t : src->tensors()) {
        const ggml_lite::Type type = tensor_type(opts.type, t.name, t.shape, model);
        const int n_threads = opts.n_threads;
        gw.add_tensor(t.name, type, t.shape,
                      [src, &t, type, n_threads](std::vector<uint8_t>& bytes) {
                          if (type == t.type) {
                              const auto* p = static_cast<const uint8_t*>(t.data);
                              bytes.assign(p, p + t.nbytes);
                              return;
                          }
                          const int64_t cols = t.shape[0], rows = t.n_elements() / cols;
                          std::vector<float> f(t.n_elements());
                          ggml_lite::traits(t.type).to_float(t.data, f.data(), t.n_elements());
                          quantize_rows(f.data(), type, rows, cols, n_threads, bytes);
                      });
    }
    gw.write(out, progress);
}

}  // namespace lila
