// Flags and helpers shared by the `lila` subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "src/model.h"
#include "src/sampler.h"
#include "src/session.h"

namespace lila::tools {

// -m, -t, -c, --cache-type: what every command that runs a model takes.
struct ModelArgs {
    std::string model;
    int threads = 0;  // 0: physical cores
    int64_t ctx = 0;  // 0: the model's training context
    std::string cache_type = "f16";
    bool verbose = false;

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

int physical_cores();

// The contents of a text file; Error naming the file when it cannot be read or is not UTF-8
// (with the byte offset of the first bad sequence).
std::string read_utf8_file(const std::string& path);
// Error("WHAT: not UTF-8 text ...") unless `text` is valid UTF-8.
void require_utf8(std::string_view text, const std::string& what);

double seconds_since(std::chrono::steady_clock::time_point t0);

// Every subcommand registers itself on the app.
void register_chat(CLI::App& app);
void register_bench(CLI::App& app);
void register_convert(CLI::App& app);
void register_generate(CLI::App& app);
void register_info(CLI::App& app);
void register_perplexity(CLI::App& app);
void register_tokenize(CLI::App& app);

}  // namespace lila::tools
