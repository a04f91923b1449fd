// Flags and helpers shared by the `lila` subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "src/base/clock.h"
#include "src/runtime/model.h"
#include "src/runtime/sampler.h"
#include "src/runtime/session.h"

namespace lila::tools {

// -m, -t, -c, --cache-type: what every command that runs a model takes.
struct ModelArgs {
    std::string model;
    int threads = 0;        // decoding; 0: physical cores
    int threads_batch = 0;  // prompt processing; 0: as threads
    int64_t ctx = 0;        // 0: the model's training context
    std::string cache_type = "f16";
    bool verbose = false;
    bool pack = true;  // rearrange weights for the packed kernels (Model::load)

    SessionParams session_params() const;
};
void add_model_args(CLI::App* cmd, ModelArgs& a);

// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --seed.
struct SamplingArgs {
    SamplerParams params;
    int64_t seed = -1;  // -1: random, printed so a run can be repeated

    SamplerParams resolve() const;
};
void add_sampling_args(CLI::App* cmd, SamplingArgs& a);

// Loads a model, reporting the time (and with verbose the CPU features and kernel path)
// on stderr.
std::unique_ptr<Model> load_model(const ModelArgs& a);

// "kernels: avx512" and, for each weight type in the model, how matmul multiplies it.
std::string kernel_paths(const Model& m);

int physical_cores();

// What main does first:
// - libgomp reads its spin-wait settings once, when it is loaded (before main): when the user
//   has set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, sets GOMP_SPINCOUNT to lila's default
//   and re-executes the program (docs/PERF.md: OpenMP waiting);
// - rewrites llama.cpp's two-letter short options -tb and -np as --threads-batch and
//   --parallel, which CLI11 cannot declare.
void startup(int argc, char** argv);

// The contents of a text file; Error naming the file when it cannot be read or is not UTF-8
// (with the byte offset of the first bad sequence).
std::string read_utf8_file(const std::string& path);
// Error("WHAT: not UTF-8 text ...") unless `text` is valid UTF-8.
void require_utf8(std::string_view text, const std::string& what);

// Every subcommand registers itself on the app.
void register_chat(CLI::App& app);
void register_bench(CLI::App& app);
void register_convert(CLI::App& app);
void register_generate(CLI::App& app);
void register_info(CLI::App& app);
void register_perplexity(CLI::App& app);
void register_serve(CLI::App& app);
void register_tokenize(CLI::App& app);

}  // namespace lila::tools
