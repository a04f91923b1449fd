// lila bench: prompt processing and token generation speed, like llama-bench, with the
// machine's memory bandwidth measured in the same run as the yardstick for decode. With
// --parallel, generation also runs N sequences at once, one token of each per forward pass
// (like llama-batched-bench): the aggregate tokens/s a server gets from continuous batching.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "common.h"
#include "ggml-lite/bandwidth.h"
#include "src/base/error.h"

namespace lila::tools {

namespace {

struct BenchArgs {
    ModelArgs model;
    std::vector<int64_t> n_prompt{128}, n_gen{32}, depth{0};
    std::vector<int> threads;
    std::vector<int> parallel{1};
    int reps = 5;
    std::string output = "md";
};

struct Row {
    std::string test;  // "pp128", "tg32", "pp512@d4096", "tg32@d4096" (after 4096 tokens of
                       // context), "tg32x8" (8 sequences at once)
    int threads;
    double avg_ts, stddev_ts, max_ts;  // max: the best repetition (on a shared machine, the
                                       // rate the hardware gives when the run gets the CPUs)
    double bandwidth_gbs = 0, roofline_frac = 0;  // tg only
};

// Bytes a decode step reads: every tensor, except that only one row of the embedding
// table is looked up (unless it doubles as the LM head).
size_t bytes_per_token(const Model& m) {
    size_t total = 0;
    for (const GGUFTensorInfo& t : m.file().tensors()) {
        const bool embd_only = t.name == "token_embd.weight" && m.output.data != m.tok_embd.data;
        total += embd_only ? ggml_lite::row_size(t.type, t.shape[0]) : t.nbytes;
    }
    return total;
}

std::vector<int32_t> random_tokens(int64_t n, int32_t n_vocab, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int32_t> ids(n);
    for (auto& id : ids) id = static_cast<int32_t>(rng() % n_vocab);
    return ids;
}

struct Rate {
    double mean, stddev, max;
};

// Runs `once` after a warm-up `reps` times: tokens/s.
template <typename F>
Rate measure(int reps, int64_t n_tokens, F once) {
    once();
    std::vector<double> ts;
    for (int r = 0; r < reps; r++) {
        const auto t0 = Clock::now();
        once();
        ts.push_back(n_tokens / seconds_since(t0));
    }
    double mean = 0, var = 0;
    for (double v : ts) mean += v / ts.size();
    for (double v : ts) var += (v - mean) * (v - mean) / std::max<size_t>(1, ts.size() - 1);
    return {mean, std::sqrt(var), *std::max_element(ts.begin(), ts.end())};
}

void print_rows(const BenchArgs& a, const Model& m, const std::vector<Row>& rows,
                const std::vector<std::pair<int, double>>& bw) {
    const std::string type = m.type_summary();
    const double size_mb = m.weight_bytes() / 1e6;
    if (a.output == "json") {
        nlohmann::json out = nlohmann::json::array();
        for (const Row& r : rows) {
            nlohmann::json o = {{"model", m.name()},        {"type", type},
                                {"size_mb", size_mb},       {"n_threads", r.threads},
                                {"test", r.test},           {"avg_ts", r.avg_ts},
                                {"stddev_ts", r.stddev_ts}, {"max_ts", r.max_ts}};
            if (r.test.rfind("tg", 0) == 0) {
                o["bandwidth_gbs"] = r.bandwidth_gbs;
                o["roofline_frac"] = r.roofline_frac;
            }
            out.push_back(o);
        }
        std::printf("%s\n", out.dump(2).c_str());
        return;
    }
    if (a.output == "csv") {
        std::printf(
            "model,type,size_mb,n_threads,test,avg_ts,stddev_ts,max_ts,bandwidth_gbs,"
            "roofline_frac\n");
        for (const Row& r : rows) {
            std::printf("\"%s\",%s,%.2f,%d,%s,%.3f,%.3f,%.3f,%.3f,%.4f\n", m.name().c_str(),
                        type.c_str(), size_mb, r.threads, r.test.c_str(), r.avg_ts, r.stddev_ts,
                        r.max_ts, r.bandwidth_gbs, r.roofline_frac);
        }
        return;
    }
    for (const auto& [threads, gbs] : bw) {
        std::printf("memory read bandwidth, %d thread%s: %.1f GB/s\n", threads,
                    threads > 1 ? "s" : "", gbs);
    }
    std::printf("\n| model | type | size | threads | test | t/s | best t/s | GB/s | roofline |\n");
    std::printf("|---|---|---:|---:|---|---:|---:|---:|---:|\n");
    for (const Row& r : rows) {
        const bool tg = r.test.rfind("tg", 0) == 0;
        char gbs[32] = "", roof[32] = "";
        if (tg) {
            std::snprintf(gbs, sizeof gbs, "%.1f", r.bandwidth_gbs);
            std::snprintf(roof, sizeof roof, "%.0f%%", 100 * r.roofline_frac);
        }
        std::printf("| %s | %s | %.1f MB | %d | %s | %.2f ± %.2f | %.2f | %s | %s |\n",
                    m.name().c_str(), type.c_str(), size_mb, r.threads, r.test.c_str(), r.avg_ts,
                    r.stddev_ts, r.max_ts, gbs, roof);
    }
}

// A prompt of n tokens after d tokens of context (as llama-bench's -d): tokens/s.
Row prompt(Session& s, int64_t d, int64_t n, int reps, int32_t n_vocab) {
    s.truncate(0);
    if (d > 0) s.eval(random_tokens(d, n_vocab, 7));
    const auto ids = random_tokens(n, n_vocab, 42);
    const Rate rate = measure(reps, n, [&] {
        s.truncate(d);
        s.eval(ids);
    });
    const std::string test = "pp" + std::to_string(n) + (d ? "@d" + std::to_string(d) : "");
    return {test, 0, rate.mean, rate.stddev, rate.max};
}

// Generation of n tokens in each of np sequences at once (one token of each per forward
// pass), each after d tokens of context: aggregate tokens/s.
Row generation(Session& s, int64_t d, int64_t n, int np, int reps, int32_t n_vocab) {
    std::vector<BatchToken> batch;
    for (int seq = 0; seq < np; seq++) {
        s.truncate(0, seq);
        if (d == 0) continue;
        batch.clear();
        for (int32_t id : random_tokens(d, n_vocab, 7 + seq)) batch.push_back({id, seq});
        s.eval_batch(batch);
    }
    const auto ids = random_tokens(n * np, n_vocab, 43);
    const Rate rate = measure(reps, n * np, [&] {
        for (int seq = 0; seq < np; seq++) s.truncate(d, seq);
        for (int64_t step = 0; step < n; step++) {
            batch.clear();
            for (int seq = 0; seq < np; seq++) batch.push_back({ids[step * np + seq], seq, true});
            s.eval_batch(batch);
        }
    });
    const std::string test = "tg" + std::to_string(n) + (d ? "@d" + std::to_string(d) : "") +
                             (np > 1 ? "x" + std::to_string(np) : "");
    return {test, 0, rate.mean, rate.stddev, rate.max};
}

void run(const BenchArgs& a) {
    auto model = load_model(a.model);
    const int32_t n_vocab = static_cast<int32_t>(model->hp.n_vocab);
    const double tok_bytes = static_cast<double>(bytes_per_token(*model));
    const std::vector<int> threads =
        a.threads.empty() ? std::vector<int>{physical_cores()} : a.threads;

    int64_t need_ctx = 1;
    for (int64_t d : a.depth) {
        for (int64_t p : a.n_prompt) need_ctx = std::max(need_ctx, d + p);
        for (int64_t g : a.n_gen) need_ctx = std::max(need_ctx, d + g);
    }

    std::vector<Row> rows;
    std::vector<std::pair<int, double>> bw;
    for (int t : threads) {
        const double bandwidth = ggml_lite::measure_read_bandwidth(t);
        bw.push_back({t, bandwidth / 1e9});
        SessionParams sp = a.model.session_params();
        sp.n_threads = sp.n_threads_batch = t;
        sp.n_ctx = std::max(need_ctx, a.model.ctx);
        sp.n_seq = *std::max_element(a.parallel.begin(), a.parallel.end());
        Session s(*model, sp);

        for (int64_t d : a.depth) {
            for (int64_t n : a.n_prompt) {
                if (n <= 0) continue;
                Row r = prompt(s, d, n, a.reps, n_vocab);
                r.threads = t;
                rows.push_back(r);
                std::fprintf(stderr, "%s, %d threads: %.2f t/s\n", r.test.c_str(), t, r.avg_ts);
            }
            for (int64_t n : a.n_gen) {
                if (n <= 0) continue;
                for (int np : a.parallel) {
                    Row r = generation(s, d, n, np, a.reps, n_vocab);
                    r.threads = t;
                    // Each step streams the weights once, for all np sequences.
                    r.bandwidth_gbs = r.avg_ts / np * tok_bytes / 1e9;
                    r.roofline_frac = r.avg_ts / np * tok_bytes / bandwidth;
                    rows.push_back(r);
                    std::fprintf(stderr, "%s, %d threads: %.2f t/s\n", r.test.c_str(), t, r.avg_ts);
                }
            }
        }
    }
    print_rows(a, *model, rows, bw);
}

}  // namespace

void register_bench(CLI::App& app) {
    auto a = std::make_shared<BenchArgs>();
    CLI::App* cmd = app.add_subcommand("bench", "measure prompt and generation speed");
    cmd->add_option("-m,--model", a->model.model, "model file (GGUF)")->required();
    // 0 skips a test, as in llama-bench; the upper bound is lila's largest context.
    const CLI::Range length(int64_t{0}, int64_t{1} << 24);
    cmd->add_option("-p,--n-prompt", a->n_prompt, "prompt lengths")->delimiter(',')->check(length);
    cmd->add_option("-n,--n-gen", a->n_gen, "generation lengths")->delimiter(',')->check(length);
    cmd->add_option("-d,--depth", a->depth,
                    "tokens already in the context before each pp and tg test")
        ->delimiter(',')
        ->check(length);
    cmd->add_option("-t,--threads", a->threads, "thread counts")
        ->delimiter(',')
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--parallel", a->parallel,
                    "-np: sequences generated at once (tgNxP rows: aggregate tokens/s)")
        ->delimiter(',')
        ->check(CLI::Range(1, 256));
    cmd->add_option("-r,--repetitions", a->reps, "repetitions after a warm-up")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("-o,--output", a->output, "md, json or csv")
        ->check(CLI::IsMember({"md", "json", "csv"}));
    cmd->add_option("--cache-type", a->model.cache_type, "KV cache type")
        ->check(CLI::IsMember({"f16", "f32"}));
    cmd->add_flag("-v,--verbose", a->model.verbose, "print CPU features and kernel paths");
    cmd->add_flag("!--no-repack", a->model.pack, "keep the weights as the file has them");
    cmd->callback([a] { run(*a); });
}

}  // namespace lila::tools
