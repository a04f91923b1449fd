// lila perplexity: llama.cpp-comparable perplexity of a model on a text, and the KL
// divergence of one model's predictions from another's.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "common.h"
#include "src/base/error.h"
#include "src/eval/kl_divergence.h"
#include "src/eval/perplexity.h"

namespace lila::tools {

namespace {

struct PerplexityArgs {
    ModelArgs model;
    std::string file, kl_base_out, kl_base_in;
    int64_t chunks = -1;
    int64_t batch = 512;
};

void print_kl(const KLStats& s) {
    std::printf("\n====== Perplexity statistics ======\n");
    std::printf("Mean PPL(Q)     : %10.6f\n", s.ppl);
    std::printf("Mean PPL(base)  : %10.6f\n", s.ppl_base);
    std::printf("PPL ratio       : %10.6f\n", s.ppl / s.ppl_base);
    std::printf("\n====== KL divergence statistics ======\n");
    std::printf("Mean    KLD: %10.6f +/- %10.6f\n", s.kld_mean, s.kld_err);
    std::printf("Maximum KLD: %10.6f\n", s.kld_max);
    std::printf("99.9%%   KLD: %10.6f\n", s.kld_p99_9);
    std::printf("99.0%%   KLD: %10.6f\n", s.kld_p99);
    std::printf("90.0%%   KLD: %10.6f\n", s.kld_p90);
    std::printf("Median  KLD: %10.6f\n", s.kld_median);
    std::printf("10.0%%   KLD: %10.6f\n", s.kld_p10);
    std::printf("Minimum KLD: %10.6f\n", s.kld_min);
    std::printf("\n====== Token probability statistics ======\n");
    std::printf("Same top p: %6.3f +/- %5.3f %%\n", 100 * s.same_top, 100 * s.same_top_err);
}

void run(const PerplexityArgs& a) {
    const std::string text = read_utf8_file(a.file);
    auto model = load_model(a.model);
    const Tokenizer& tok = model->tokenizer();
    const auto t_tok = Clock::now();
    const std::vector<int32_t> tokens = tok.encode(text, tok.vocab().add_bos, false);
    std::fprintf(stderr, "tokenized %s: %zu tokens in %.2f s\n", a.file.c_str(), tokens.size(),
                 seconds_since(t_tok));

    PerplexityParams p;
    p.n_ctx = a.model.ctx > 0 ? a.model.ctx : 512;
    p.n_chunks = a.chunks;
    p.session = a.model.session_params();
    p.session.n_batch = std::min(a.batch, p.n_ctx);

    std::optional<KLBaseWriter> base_out;
    std::optional<KLComparer> base_in;
    if (!a.kl_base_out.empty()) base_out.emplace(a.kl_base_out, model->hp.n_vocab);
    if (!a.kl_base_in.empty()) {
        base_in.emplace(a.kl_base_in);
        if (base_in->n_vocab() != model->hp.n_vocab) {
            throw Error(a.kl_base_in + ": base model has " + std::to_string(base_in->n_vocab()) +
                        " tokens in its vocabulary, this one " + std::to_string(model->hp.n_vocab));
        }
    }

    PerplexityCallbacks cb;
    if (base_out) cb.on_token = [&](const float* l, int32_t t) { base_out->add(l, t); };
    if (base_in) cb.on_token = [&](const float* l, int32_t t) { base_in->add(l, t); };
    const bool tty = isatty(fileno(stderr));
    const auto t0 = Clock::now();
    cb.on_chunk = [&](int64_t c, int64_t n, const PerplexityResult& r) {
        std::printf("[%lld]%.4f,", (long long)c + 1, r.ppl);
        std::fflush(stdout);
        // A log (not a terminal) gets a line per 5% rather than one per chunk.
        const bool report = tty || c + 1 == n || (c + 1) % std::max<int64_t>(1, n / 20) == 0;
        if (!report) return;
        const double s = seconds_since(t0), rate = (c + 1) * p.n_ctx / s;
        std::fprintf(stderr, "%schunk %lld/%lld, %.0f tokens/s, ETA %.0f s%s", tty ? "\r" : "",
                     (long long)c + 1, (long long)n, rate, (n - c - 1) * p.n_ctx / rate,
                     tty && c + 1 < n ? "" : "\n");
    };
    const PerplexityResult r = perplexity(*model, tokens, p, cb);
    std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
    if (base_out) base_out->finish();
    if (base_in) print_kl(base_in->stats());
}

}  // namespace

void register_perplexity(CLI::App& app) {
    auto a = std::make_shared<PerplexityArgs>();
    CLI::App* cmd = app.add_subcommand("perplexity", "perplexity of a model on a text file");
    add_model_args(cmd, a->model);
    cmd->add_option("-f,--file", a->file, "text file")->required();
    cmd->add_option("-b,--batch-size", a->batch, "tokens per forward pass")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    cmd->add_option("--chunks", a->chunks, "evaluate at most this many chunks (-1: all)");
    auto* out = cmd->add_option("--kl-divergence-base", a->kl_base_out,
                                "save this model's predictions for a later --kl-divergence run");
    cmd->add_option("--kl-divergence", a->kl_base_in,
                    "compare with the predictions saved by --kl-divergence-base FILE")
        ->excludes(out);
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
