// lila generate: one prompt, its continuation streamed to stdout.
#include <chrono>
#include <cstdio>

#include "common.h"
#include "src/base/error.h"
#include "src/tokenizer/tokenizer.h"

namespace lila::tools {

namespace {

struct GenerateArgs {
    ModelArgs model;
    SamplingArgs sampling;
    std::string prompt;
    std::string prompt_file;
    int n_predict = 128;
    bool no_echo = false;
};

void write_out(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

void run(const GenerateArgs& a) {
    const std::string prompt = a.prompt_file.empty() ? a.prompt : read_utf8_file(a.prompt_file);
    require_utf8(prompt, "the prompt");
    auto model = load_model(a.model);
    const Tokenizer& tok = model->tokenizer();
    Session session(*model, a.model.session_params());

    const std::vector<int32_t> ids = tok.encode(prompt, tok.vocab().add_bos, false);
    if (ids.empty()) throw Error("the prompt is empty and the model adds no BOS token");
    if (static_cast<int64_t>(ids.size()) >= session.n_ctx()) {
        throw Error("the prompt is " + std::to_string(ids.size()) + " tokens, the context holds " +
                    std::to_string(session.n_ctx()) + " (use -c to enlarge it)");
    }
    const SamplerParams sp = a.sampling.resolve();
    if (a.model.verbose) {
        std::fprintf(stderr, "seed: %llu\nthreads: %d, prompt threads: %d\n",
                     (unsigned long long)sp.seed, session.n_threads(), session.n_threads_batch());
    }
    Sampler sampler(sp, tok.n_vocab());
    for (int32_t id : ids) sampler.accept(id);

    if (!a.no_echo) write_out(prompt);
    const auto t_prompt = Clock::now();
    std::vector<float> logits(tok.n_vocab());
    const float* out = session.eval(ids);
    const double prompt_s = seconds_since(t_prompt);

    // After BOS (an empty prompt) the text starts afresh: its first piece's leading space is
    // SentencePiece's word marker, not text, and is dropped as llama2.c does.
    StreamDecoder decoder(tok, tok.is_special(ids.back()));
    const auto t_gen = Clock::now();
    int n_gen = 0;
    while (n_gen < a.n_predict) {
        std::copy(out, out + tok.n_vocab(), logits.begin());
        const int32_t next = sampler.sample(logits.data());
        // BOS mid-stream marks the start of a new document (llama2.c's stories): stop there.
        if (tok.is_eog(next) || next == tok.vocab().bos) break;
        sampler.accept(next);
        write_out(decoder.push(next));
        n_gen++;
        if (n_gen == a.n_predict || session.n_past() == session.n_ctx()) break;
        out = session.eval({&next, 1});
    }
    write_out(decoder.flush());
    if (!a.no_echo || n_gen > 0) write_out("\n");
    const double gen_s = seconds_since(t_gen);
    std::fprintf(stderr,
                 "prompt: %zu tokens, %.1f tokens/s; generation: %d tokens, %.1f tokens/s\n",
                 ids.size(), ids.size() / prompt_s, n_gen, n_gen > 0 ? n_gen / gen_s : 0.0);
}

}  // namespace

void register_generate(CLI::App& app) {
    auto a = std::make_shared<GenerateArgs>();
    CLI::App* cmd = app.add_subcommand("generate", "continue a prompt, streaming to stdout");
    add_model_args(cmd, a->model);
    add_sampling_args(cmd, a->sampling);
    auto* p = cmd->add_option("-p,--prompt", a->prompt, "prompt text");
    cmd->add_option("-f,--file", a->prompt_file, "read the prompt from a file")->excludes(p);
    cmd->add_option("-n,--n-predict", a->n_predict, "new tokens to generate")
        ->check(CLI::Range(0, 1 << 30));
    cmd->add_flag("--no-echo", a->no_echo, "print only the continuation");
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
