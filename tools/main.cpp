// lila: convert, run and measure Llama-family models on the CPU.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common.h"
#include "src/base/error.h"

namespace {

// A command-line mistake gets one line, as every other error does: what is wrong, and
// where the usage is. (CLI11's own message takes two lines and leaves out an unknown
// subcommand's name.)
std::string usage_error(const CLI::App* app, const CLI::Error& e) {
    std::string problem = e.what();
    std::string usage = "lila --help";
    if (const auto subs = app->get_subcommands(); !subs.empty()) {
        usage = "lila " + subs.front()->get_name() + " --help";
    } else if (const auto rest = app->remaining(); !rest.empty()) {
        problem = "unknown command '" + rest.front() + "'";
    }
    return "lila: error: " + problem + " (see " + usage + ")\n";
}

}  // namespace

int main(int argc, char** argv) {
    lila::tools::startup(argc, argv);
    CLI::App app{"lila: quantized Llama-family inference on the CPU"};
    app.require_subcommand(1);
    app.option_defaults()->always_capture_default();
    app.failure_message(usage_error);
    lila::tools::register_chat(app);
    lila::tools::register_bench(app);
    lila::tools::register_convert(app);
    lila::tools::register_generate(app);
    lila::tools::register_info(app);
    lila::tools::register_perplexity(app);
    lila::tools::register_serve(app);
    lila::tools::register_tokenize(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const lila::Error& e) {
        std::fprintf(stderr, "lila: error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lila: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
