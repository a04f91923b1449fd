// lila info: what a model file holds.
#include <cstdio>

#include "common.h"
#include "ggml-lite/cpu.h"
#include "src/io/gguf.h"

namespace lila::tools {

namespace {

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); i++) s += (i ? " x " : "") + std::to_string(shape[i]);
    return s;
}

// A metadata value in one short line: long arrays are summarised, not dumped.
std::string value_str(const GGUFValue& v) {
    if (v.is_array()) {
        return std::string("[") + gguf_type_name(v.elem_type) + " x " +
               std::to_string(v.array_size()) + "]";
    }
    if (auto* i = std::get_if<int64_t>(&v.value)) return std::to_string(*i);
    if (auto* d = std::get_if<double>(&v.value)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", *d);
        return buf;
    }
    std::string s = std::get<std::string>(v.value);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    for (char& c : s) c = (c == '\n') ? ' ' : c;
    return "\"" + s + "\"";
}

void run(const ModelArgs& a) {
    auto model = load_model(a);
    const GGUFFile& f = model->file();
    const HParams& hp = model->hp;
    std::printf("file:        %s (%.2f MB, GGUF v%u)\n", f.path().c_str(), f.file_size() / 1e6,
                f.version());
    std::printf("model:       %s, %s\n", model->name().c_str(), model->type_summary().c_str());
    std::printf("arch:        %s\n", model->arch->name);
    std::printf(
        "shape:       %lld layers, width %lld, ffn %lld, heads %lld (kv %lld), head dim %lld\n",
        (long long)hp.n_layer, (long long)hp.n_embd, (long long)hp.n_ff, (long long)hp.n_head,
        (long long)hp.n_head_kv, (long long)hp.head_dim);
    std::printf("context:     %lld, rope theta %g, rms eps %g\n", (long long)hp.n_ctx_train,
                hp.rope_theta, hp.norm_eps);
    const Vocab& vocab = model->tokenizer().vocab();
    std::printf("tokenizer:   %s, %d tokens, bos %d, eos %d\n", vocab.model.c_str(), vocab.size(),
                vocab.bos, vocab.eos);
    std::printf("cpu:         %s\n%s", ggml_lite::cpu_features().c_str(),
                kernel_paths(*model).c_str());

    std::printf("\nmetadata (%zu keys):\n", f.metadata().size());
    for (const auto& [key, value] : f.metadata()) {
        std::printf("  %-44s %s\n", key.c_str(), value_str(value).c_str());
    }
    std::printf("\ntensors (%zu):\n", f.tensors().size());
    std::printf("  %-32s %-6s %-16s %12s\n", "name", "type", "shape", "bytes");
    for (const GGUFTensorInfo& t : f.tensors()) {
        std::printf("  %-32s %-6s %-16s %12zu\n", t.name.c_str(), ggml_lite::type_name(t.type),
                    shape_str(t.shape).c_str(), t.nbytes);
    }
}

}  // namespace

void register_info(CLI::App& app) {
    auto a = std::make_shared<ModelArgs>();
    CLI::App* cmd = app.add_subcommand("info", "show a model's metadata and tensors");
    cmd->add_option("model", a->model, "model file (GGUF)")->required();
    a->pack = false;  // nothing runs: kernel_path() says what would
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
