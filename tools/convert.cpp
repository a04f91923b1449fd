// lila convert: Hugging Face models, llama2.c checkpoints and GGUF files in, a GGUF model at
// the chosen type out.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "common.h"
#include "src/base/error.h"
#include "src/convert/convert.h"
#include "src/convert/llama2c.h"
#include "src/convert/quantize.h"
#include "src/convert/random_model.h"
#include "src/io/gguf.h"

namespace lila::tools {

namespace {

struct ConvertArgs {
    std::string input, output, tokenizer, type = "f16", name, random;
    int threads = 0;
    bool confident = false, pure = false;
};

bool has_gguf_magic(const std::string& path) {
    char magic[4] = {};
    std::ifstream in(path, std::ios::binary);
    return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

// One status line per tensor, rewritten in place on a terminal.
GGUFWriter::Progress progress_printer() {
    const bool tty = isatty(fileno(stderr));
    return [tty](size_t i, size_t n, const std::string& name) {
        std::fprintf(stderr, "%s[%4zu/%zu] %-40s%s", tty ? "\r" : "", i + 1, n, name.c_str(),
                     tty && i + 1 < n ? "" : "\n");
        std::fflush(stderr);
    };
}

void summarise(const std::string& in, const std::string& out, double seconds) {
    namespace fs = std::filesystem;
    auto model = GGUFFile::open(out);
    size_t bytes = 0;
    int64_t elements = 0;
    for (const GGUFTensorInfo& t : model->tensors()) bytes += t.nbytes, elements += t.n_elements();
    uintmax_t in_size = !in.empty() && fs::is_regular_file(in) ? fs::file_size(in) : 0;
    if (!in.empty() && fs::is_directory(in)) {  // a Hugging Face model: its weights
        for (const auto& e : fs::directory_iterator(in)) {
            if (e.path().extension() == ".safetensors") in_size += e.file_size();
        }
    }
    std::fprintf(stderr, "wrote %s: %.2f MB (input %.2f MB), %.2f bits per weight, %.1f s\n",
                 out.c_str(), model->file_size() / 1e6, in_size / 1e6,
                 elements ? 8.0 * bytes / elements : 0.0, seconds);
    // The matrices by type: what a mix, or a fallback for rows that do not fit, gave.
    std::map<std::string, int> matrices;
    for (const GGUFTensorInfo& t : model->tensors()) {
        if (t.shape.size() >= 2) matrices[ggml_lite::type_name(t.type)]++;
    }
    std::string line;
    for (const auto& [type, count] : matrices) line += " " + std::to_string(count) + " " + type;
    std::fprintf(stderr, "matrices:%s\n", line.c_str());
}

void run(const ConvertArgs& a) {
    ConvertOptions opts;
    const auto type = file_type_from_name(a.type);
    if (const auto t = ggml_lite::type_from_name(a.type);
        !type && t && !ggml_lite::traits(*t).from_float) {
        throw Error("--type " + a.type +
                    ": lila reads and runs this type but cannot write it (quantizing to it needs "
                    "an importance matrix: use llama-quantize --imatrix)");
    }
    if (!type)
        throw Error("unknown --type '" + a.type + "' (supported: " + file_type_names() + ")");
    opts.type = a.pure ? type->pure() : *type;
    opts.n_threads = a.threads > 0 ? a.threads : physical_cores();
    opts.name = a.name;

    if (a.input.empty() == a.random.empty()) {
        throw Error("convert: give an input (checkpoint or GGUF) or --random PRESET");
    }
    // Checked first: a missing file would otherwise be taken for a llama2.c checkpoint.
    if (!a.input.empty() && !std::filesystem::exists(a.input)) {
        throw Error(a.input + ": no such file or directory");
    }
    const auto t0 = Clock::now();
    if (!a.random.empty()) {
        RandomModelOptions r;
        r.confident = a.confident;
        r.tokenizer = a.tokenizer;
        write_random_model(model_preset(a.random), a.output, opts, r, progress_printer());
    } else if (std::filesystem::is_directory(a.input)) {
        convert_hf(a.input, a.output, opts, progress_printer());
    } else if (has_gguf_magic(a.input)) {
        requantize_gguf(a.input, a.output, opts, progress_printer());
    } else {
        if (a.tokenizer.empty()) {
            throw Error(a.input +
                        ": a llama2.c checkpoint needs its tokenizer: --tokenizer tokenizer.bin");
        }
        convert_llama2c(a.input, a.tokenizer, a.output, opts, progress_printer());
    }
    summarise(a.input, a.output, seconds_since(t0));
}

}  // namespace

void register_convert(CLI::App& app) {
    auto a = std::make_shared<ConvertArgs>();
    CLI::App* cmd = app.add_subcommand(
        "convert", "convert a Hugging Face model, llama2.c checkpoint or GGUF model");
    auto* in = cmd->add_option(
        "input", a->input, "Hugging Face model directory, llama2.c checkpoint (.bin) or GGUF file");
    std::string presets;
    for (const ModelPreset& p : model_presets()) presets += std::string(" ") + p.name;
    auto* rnd = cmd->add_option("--random", a->random,
                                "write random weights at a preset's shapes instead:" + presets);
    in->excludes(rnd);
    cmd->add_option("-o,--output", a->output, "output GGUF file")->required();
    cmd->add_option("--type", a->type,
                    "weight type: " + file_type_names() +
                        " (what llama-quantize gives for the name: q4_0 has a Q6_K output matrix, "
                        "q4_k_m more bits in some layers; q3_k, q4_k, q5_k: that type everywhere)");
    cmd->add_flag("--pure", a->pure,
                  "every matrix in the --type's base type, as llama-quantize --pure (rows that "
                  "do not split into its blocks still fall back)");
    cmd->add_option("--tokenizer", a->tokenizer,
                    "llama2.c input: its tokenizer.bin; --random: the vocabulary of a "
                    "tokenizer.json or a GGUF model");
    cmd->add_flag("--confident", a->confident,
                  "--random: a large output-layer scale, so predictions are confident and a "
                  "wrong block changes the tokens");
    cmd->add_option("--name", a->name, "model name stored in the file");
    cmd->add_option("-t,--threads", a->threads, "threads (default: physical cores)")
        ->check(CLI::Range(1, 1024));
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
