// lila: convert, run and measure Llama-family models on the CPU.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common.h"
#include "src/error.h"

int main(int argc, char** argv) {
    lila::tools::startup(argc, argv);
    CLI::App app{"lila: quantized Llama-family inference on the CPU"};
    app.require_subcommand(1);
    app.option_defaults()->always_capture_default();
    lila::tools::register_chat(app);
    lila::tools::register_bench(app);
    lila::tools::register_convert(app);
    lila::tools::register_generate(app);
    lila::tools::register_info(app);
    lila::tools::register_perplexity(app);
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
