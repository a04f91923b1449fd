// `lila bench` as scripts read it (the JSON fields the issue names), the kernel paths `-v`
// and `lila info` state, and the prompt thread count flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/stories.h"
#include "run_lila.h"
#include "test_util.h"

namespace lila {
namespace {

using Output = test::LilaResult;
using test::run_lila;

TEST(BenchCli, JsonRowsHaveTheFieldsScriptsRead) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output r = run_lila(
        {"bench", "-m", model, "-p", "8", "-n", "4", "-t", "1,2", "-r", "2", "-o", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json rows = nlohmann::json::parse(r.out);
    ASSERT_EQ(rows.size(), 4u);  // (pp8, tg4) x (1, 2 threads)
    for (const auto& row : rows) {
        EXPECT_EQ(row["type"], "q8_0");
        for (const char* key : {"n_threads", "test", "avg_ts", "stddev_ts", "max_ts"})
            EXPECT_TRUE(row.contains(key)) << key;
        EXPECT_GT(row["avg_ts"].get<double>(), 0.0);
        EXPECT_GE(row["max_ts"].get<double>(), row["avg_ts"].get<double>());
        const bool tg = row["test"] == "tg4";
        EXPECT_TRUE(tg || row["test"] == "pp8") << row["test"];
        EXPECT_EQ(row.contains("bandwidth_gbs"), tg);
        EXPECT_EQ(row.contains("roofline_frac"), tg);
        if (tg) {
            EXPECT_GT(row["roofline_frac"].get<double>(), 0.0);
        }
    }
    EXPECT_EQ(rows[0]["n_threads"], 1);
    EXPECT_EQ(rows[2]["n_threads"], 2);
}

// --parallel (-np): a generation row per sequence count, tgNxP past one sequence.
TEST(BenchCli, ParallelGenerationRows) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output r = run_lila({"bench", "-m", model, "-p", "0", "-n", "4", "-d", "0,8", "-np",
                               "1,3", "-t", "1", "-r", "1", "-o", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json rows = nlohmann::json::parse(r.out);
    std::vector<std::string> tests;
    for (const auto& row : rows) {
        tests.push_back(row["test"]);
        EXPECT_GT(row["avg_ts"].get<double>(), 0.0);
        EXPECT_GT(row["roofline_frac"].get<double>(), 0.0);
    }
    EXPECT_EQ(tests, (std::vector<std::string>{"tg4", "tg4x3", "tg4@d8", "tg4@d8x3"}));
}

// -d applies to prompts as to generation (llama-bench's ppN@dD): each repetition evaluates the
// prompt after D tokens already in the cache, in a context sized for both.
TEST(BenchCli, DepthRowsForPromptAndGeneration) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output r = run_lila({"bench", "-m", model, "-p", "16", "-n", "2", "-d", "0,500", "-t",
                               "1", "-r", "2", "-o", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> tests;
    for (const auto& row : nlohmann::json::parse(r.out)) {
        tests.push_back(row["test"]);
        EXPECT_GT(row["avg_ts"].get<double>(), 0.0);
    }
    EXPECT_EQ(tests, (std::vector<std::string>{"pp16", "tg2", "pp16@d500", "tg2@d500"}));
}

TEST(BenchCli, VerboseAndInfoStateCpuAndKernelPaths) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output bench = run_lila({"bench", "-m", model, "-p", "4", "-n", "0", "-r", "1", "-v"});
    ASSERT_EQ(bench.status, 0) << bench.err;
    EXPECT_NE(bench.err.find("cpu: "), std::string::npos) << bench.err;
    EXPECT_NE(bench.err.find("kernels: "), std::string::npos) << bench.err;
    // stories260K has Q8_0 matrices and F32 ones (the FFN width is not a multiple of 32).
    EXPECT_NE(bench.err.find("  q8_0: "), std::string::npos) << bench.err;
    const Output info = run_lila({"info", model});
    ASSERT_EQ(info.status, 0) << info.err;
    EXPECT_NE(info.out.find("  q8_0: "), std::string::npos) << info.out;
}

// -tb (llama.cpp's short form, which CLI11 cannot name) and --threads-batch reach the session;
// without them prompts use as many threads as generation.
TEST(BenchCli, PromptThreadsFlag) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const auto threads = [&](std::vector<std::string> flags) {
        std::vector<std::string> args = {"generate", "-m", model,    "-p", "Once", "-n",
                                         "2",        "-v", "--temp", "0",  "-t",   "1"};
        args.insert(args.end(), flags.begin(), flags.end());
        const Output r = run_lila(args);
        EXPECT_EQ(r.status, 0) << r.err;
        const size_t at = r.err.find("threads: ");
        return at == std::string::npos ? r.err : r.err.substr(at, r.err.find('\n', at) - at);
    };
    EXPECT_EQ(threads({"-tb", "2"}), "threads: 1, prompt threads: 2");
    EXPECT_EQ(threads({"--threads-batch", "3"}), "threads: 1, prompt threads: 3");
    EXPECT_EQ(threads({}), "threads: 1, prompt threads: 1");
    const Output bad = run_lila({"generate", "-m", model, "-p", "Once", "-tb", "0"});
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.err.find("--threads-batch"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace lila
