// `lila bench` as scripts read it (the JSON fields the issue names), the kernel paths `-v`
// and `lila info` state, and the prompt thread count flag.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/stories.h"
#include "test_util.h"

namespace lila {
namespace {

struct Output {
    int status;  // as waitpid() reports it
    std::string out, err;
};

Output lila(const std::vector<std::string>& args) {
    static test::TempDir dir;
    const std::string out = dir.path("stdout"), err = dir.path("stderr");
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> argv{const_cast<char*>(LILA_BINARY)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        dup2(open("/dev/null", O_RDONLY), 0);
        dup2(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
        dup2(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
        execv(LILA_BINARY, argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return {status, test::read_file(out), test::read_file(err)};
}

TEST(BenchCli, JsonRowsHaveTheFieldsScriptsRead) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output r =
        lila({"bench", "-m", model, "-p", "8", "-n", "4", "-t", "1,2", "-r", "2", "-o", "json"});
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

TEST(BenchCli, VerboseAndInfoStateCpuAndKernelPaths) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    const Output bench = lila({"bench", "-m", model, "-p", "4", "-n", "0", "-r", "1", "-v"});
    ASSERT_EQ(bench.status, 0) << bench.err;
    EXPECT_NE(bench.err.find("cpu: "), std::string::npos) << bench.err;
    EXPECT_NE(bench.err.find("kernels: "), std::string::npos) << bench.err;
    // stories260K has Q8_0 matrices and F32 ones (the FFN width is not a multiple of 32).
    EXPECT_NE(bench.err.find("  q8_0: "), std::string::npos) << bench.err;
    const Output info = lila({"info", model});
    ASSERT_EQ(info.status, 0) << info.err;
    EXPECT_NE(info.out.find("  q8_0: "), std::string::npos) << info.out;
}

TEST(BenchCli, PromptThreadsFlag) {
    const std::string model = test::stories_model(ggml_lite::Type::Q8_0);
    for (const char* flag : {"-tb", "--threads-batch"}) {
        const Output r = lila({"generate", "-m", model, "-p", "Once", "-n", "2", "--temp", "0",
                               "-t", "1", flag, "2"});
        EXPECT_EQ(r.status, 0) << flag << ": " << r.err;
    }
}

}  // namespace
}  // namespace lila
