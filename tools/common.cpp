#include "common.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "ggml-lite/cpu.h"
#include "src/base/error.h"
#include "src/base/utf8.h"
#include "src/io/mapped_file.h"

namespace lila::tools {

int physical_cores() {
    // Distinct (physical id, core id) pairs: SMT siblings share a core and its SIMD units.
    std::ifstream in("/proc/cpuinfo");
    std::set<std::pair<std::string, std::string>> cores;
    std::string line, phys;
    while (std::getline(in, line)) {
        auto value = [&] { return line.substr(line.find(':') + 1); };
        if (line.rfind("physical id", 0) == 0) phys = value();
        if (line.rfind("core id", 0) == 0) cores.insert({phys, value()});
    }
    if (!cores.empty()) return static_cast<int>(cores.size());
    return std::max(1u, std::thread::hardware_concurrency());
}

void require_utf8(std::string_view text, const std::string& what) {
    for (size_t i = 0; i < text.size();) {
        const Utf8Char c = utf8_next(text.substr(i));
        if (c.status != Utf8Status::Valid) {
            throw Error(what + ": not UTF-8 text (invalid byte sequence at offset " +
                        std::to_string(i) + ")");
        }
        i += c.len;
    }
}

std::string read_utf8_file(const std::string& path) {
    std::string text = read_file(path);
    require_utf8(text, path);
    return text;
}

void add_model_args(CLI::App* cmd, ModelArgs& a) {
    cmd->add_option("-m,--model", a.model, "model file (GGUF)")->required();
    cmd->add_option("-t,--threads", a.threads, "threads for generation (default: physical cores)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--threads-batch", a.threads_batch,
                    "-tb: threads for prompt processing (default: as -t)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("-c,--ctx-size", a.ctx, "context length (default: the model's)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
    cmd->add_option("--cache-type", a.cache_type, "KV cache type")
        ->check(CLI::IsMember({"f16", "f32"}));
    cmd->add_flag("-v,--verbose", a.verbose, "print CPU features and kernel paths");
    cmd->add_flag(
        "!--no-repack", a.pack,
        "keep the weights as the file has them (less memory, faster load, slower prompts)");
}

SessionParams ModelArgs::session_params() const {
    SessionParams p;
    p.n_ctx = ctx;
    p.n_threads = threads > 0 ? threads : physical_cores();
    p.n_threads_batch = threads_batch > 0 ? threads_batch : p.n_threads;
    p.kv_type = *ggml_lite::type_from_name(cache_type);
    return p;
}

void add_sampling_args(CLI::App* cmd, SamplingArgs& a) {
    SamplerParams& p = a.params;
    cmd->add_option("--temp", p.temp, "temperature (0: greedy)")->check(CLI::Range(0.0f, 100.0f));
    cmd->add_option("--top-k", p.top_k, "top-k sampling (0: off)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--top-p", p.top_p, "top-p sampling (1: off)")->check(CLI::Range(0.0f, 1.0f));
    cmd->add_option("--min-p", p.min_p, "min-p sampling (0: off)")->check(CLI::Range(0.0f, 1.0f));
    cmd->add_option("--repeat-penalty", p.repeat_penalty, "repetition penalty (1: off)")
        ->check(CLI::Range(0.01f, 10.0f));
    cmd->add_option("--repeat-last-n", p.repeat_last_n, "tokens the penalty looks back")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("-s,--seed", a.seed, "random seed (-1: random)");
}

SamplerParams SamplingArgs::resolve() const {
    SamplerParams p = params;
    p.seed = seed >= 0 ? static_cast<uint64_t>(seed) : std::random_device{}();
    return p;
}

void startup(int argc, char** argv) {
    static char threads_batch[] = "--threads-batch", parallel[] = "--parallel";
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "-tb") == 0) argv[i] = threads_batch;
        if (std::strcmp(argv[i], "-np") == 0) argv[i] = parallel;
    }
    // libgomp's default when nothing is set: a waiting thread spins 300,000 times (about 8 ms
    // here) before it sleeps. On a machine shared with other work that spinning takes the CPU
    // the thread being waited for needs; 10,000 (about 0.3 ms) still covers the gaps between
    // the parallel regions of a token, so the threads stay awake while a model runs.
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
    setenv("GOMP_SPINCOUNT", "10000", 1);
    // The binary's real path rather than /proc/self/exe, which would rename the process "exe".
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return;
    self[len] = '\0';
    execv(self, argv);
}

std::string kernel_paths(const Model& m) {
    std::set<ggml_lite::Type> types;
    for (const GGUFTensorInfo& t : m.file().tensors()) {
        if (t.shape.size() >= 2) types.insert(t.type);
    }
    std::string out =
        "kernels: " + std::string(ggml_lite::isa_name(ggml_lite::active_isa())) + "\n";
    for (ggml_lite::Type t : types) {
        out +=
            std::string("  ") + ggml_lite::type_name(t) + ": " + ggml_lite::kernel_path(t) + "\n";
    }
    return out;
}

std::unique_ptr<Model> load_model(const ModelArgs& a) {
    const auto t0 = Clock::now();
    auto model = Model::load(a.model, a.pack);
    if (a.verbose) {
        std::fprintf(stderr, "cpu: %s\n%s", ggml_lite::cpu_features().c_str(),
                     kernel_paths(*model).c_str());
    }
    std::fprintf(stderr, "loaded %s (%s, %.1f MB) in %.2f s\n", model->name().c_str(),
                 model->type_summary().c_str(), model->weight_bytes() / 1e6, seconds_since(t0));
    return model;
}

}  // namespace lila::tools
