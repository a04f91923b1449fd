// `lila convert` under faults: killed with SIGKILL at points all through the writing, and
// out of disk space (a file-size limit, RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail
// with EFBIG as on a full disk). Whatever happens, the output path holds either the file
// that was there before, unchanged, or the complete new one: never a partial file that
// looks like a model. A stale OUT.tmp left by a killed run does not stop the next convert.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "fixtures/stories.h"
#include "test_util.h"

namespace lila {
namespace {

namespace fs = std::filesystem;

// A running `lila convert` of stories260K to `out`, its stderr readable line by line.
class Convert {
public:
    // fsize_limit: the most bytes the process may write to a file (0: no limit).
    explicit Convert(const std::string& out, rlim_t fsize_limit = 0) {
        int fds[2];
        if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ == 0) {
            close(fds[0]);
            dup2(fds[1], 2);
            if (fsize_limit > 0) {
                const rlimit r{fsize_limit, fsize_limit};
                setrlimit(RLIMIT_FSIZE, &r);
                signal(SIGXFSZ, SIG_IGN);  // kept across exec: write() fails with EFBIG instead
            }
            const std::string ckpt = test::stories_checkpoint(), tok = test::stories_tokenizer();
            execl(LILA_BINARY, LILA_BINARY, "convert", ckpt.c_str(), "--tokenizer", tok.c_str(),
                  "-o", out.c_str(), "--type", "q8_0", static_cast<char*>(nullptr));
            _exit(127);
        }
        close(fds[1]);
        err_ = fdopen(fds[0], "r");
    }
    ~Convert() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            wait();
        }
        if (err_) fclose(err_);
    }
    Convert(const Convert&) = delete;
    Convert& operator=(const Convert&) = delete;

    // The next line of stderr; false at its end.
    bool next_line(std::string& line) {
        char buf[512];
        if (!fgets(buf, sizeof buf, err_)) return false;
        line = buf;
        return true;
    }
    std::string rest_of_stderr() {
        std::string all, line;
        while (next_line(line)) all += line;
        return all;
    }
    void kill_now() { kill(pid_, SIGKILL); }
    int wait() {
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return status;
    }

private:
    pid_t pid_ = -1;
    FILE* err_ = nullptr;
};

class ConvertFaults : public ::testing::Test {
protected:
    void SetUp() override {
        // What a complete convert writes, and a different valid model to be overwritten.
        reference_ = convert_fully(dir_.path("reference.gguf"));
        old_ = test::read_file(test::stories_model(ggml_lite::Type::F32));
        ASSERT_NE(reference_, old_);
    }

    std::string convert_fully(const std::string& out) {
        Convert c(out);
        const std::string err = c.rest_of_stderr();
        const int status = c.wait();
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
        return test::read_file(out);
    }

    // The output path holds the old file (or nothing, when there was none) or the new one.
    void expect_old_or_new(const std::string& out, bool had_old) {
        if (!fs::exists(out)) {
            EXPECT_FALSE(had_old) << "the existing output was removed";
            return;
        }
        const std::string now = test::read_file(out);
        if (had_old && now == old_) return;
        EXPECT_EQ(now.size(), reference_.size()) << "a partial file at the output path";
        EXPECT_TRUE(now == reference_) << "the output is neither the old file nor the new one";
    }

    // Puts the old model at `out` (or removes it), as before each faulty run.
    void prepare(const std::string& out, bool had_old) {
        fs::remove(out);
        if (had_old) fs::copy_file(test::stories_model(ggml_lite::Type::F32), out);
    }

    test::TempDir dir_;
    std::string reference_, old_;
};

// Killed after the k-th tensor is written (the writer reports each on stderr), then a
// normal convert over whatever the killed one left behind.
TEST_F(ConvertFaults, KilledAfterEachStageLeavesOldOrNewFile) {
    const std::string out = dir_.path("out.gguf");
    for (bool had_old : {true, false}) {
        for (int k : {0, 1, 2, 5, 10, 20, 30, 40, 45, 46, 47, 48}) {
            SCOPED_TRACE("killed after line " + std::to_string(k) + (had_old ? ", old file" : ""));
            prepare(out, had_old);
            Convert c(out);
            std::string line;
            for (int i = 0; i < k && c.next_line(line); i++) {
            }
            c.kill_now();
            c.wait();
            expect_old_or_new(out, had_old);
            EXPECT_EQ(convert_fully(out), reference_) << "the next convert after a kill";
            EXPECT_FALSE(fs::exists(out + ".tmp"));
        }
    }
}

// Killed after random delays spread over a whole convert's duration: anywhere inside a write.
TEST_F(ConvertFaults, KilledAtRandomTimesLeavesOldOrNewFile) {
    const std::string out = dir_.path("out.gguf");
    const auto t0 = std::chrono::steady_clock::now();
    convert_fully(out);
    const auto full = std::chrono::steady_clock::now() - t0;
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int64_t> delay(0, std::chrono::nanoseconds(full).count() * 5 / 4);
    for (int i = 0; i < 24; i++) {
        const bool had_old = i % 2 == 0;
        const auto wait_ns = std::chrono::nanoseconds(delay(rng));
        SCOPED_TRACE("killed after " + std::to_string(wait_ns.count() / 1000) + " us");
        prepare(out, had_old);
        Convert c(out);
        std::this_thread::sleep_for(wait_ns);
        c.kill_now();
        c.wait();
        expect_old_or_new(out, had_old);
    }
    EXPECT_EQ(convert_fully(out), reference_);
}

// Out of space at several sizes: a one-line error naming the output, the old file untouched,
// no temporary file left.
TEST_F(ConvertFaults, OutOfDiskSpaceKeepsTheOldFile) {
    const std::string out = dir_.path("out.gguf");
    for (rlim_t limit : {rlim_t(1), rlim_t(100), rlim_t(4096), rlim_t(reference_.size() / 2),
                         rlim_t(reference_.size() - 1)}) {
        for (bool had_old : {true, false}) {
            SCOPED_TRACE("file size limit " + std::to_string(limit) +
                         (had_old ? ", old file" : ""));
            prepare(out, had_old);
            Convert c(out, limit);
            const std::string err = c.rest_of_stderr();
            const int status = c.wait();
            ASSERT_TRUE(WIFEXITED(status)) << "killed by signal: " << err;
            EXPECT_EQ(WEXITSTATUS(status), 1) << err;
            const std::string last = err.substr(err.rfind('\n', err.size() - 2) + 1);
            EXPECT_TRUE(last.starts_with("lila: error: " + out + ": not written: ")) << err;
            EXPECT_NE(last.find("File too large"), std::string::npos) << last;
            EXPECT_EQ(fs::exists(out), had_old);
            if (had_old) {
                EXPECT_TRUE(test::read_file(out) == old_) << "the old file was changed";
            }
            EXPECT_FALSE(fs::exists(out + ".tmp"));
        }
    }
}

TEST_F(ConvertFaults, StaleTemporaryFileDoesNotStopTheNextConvert) {
    const std::string out = dir_.path("out.gguf");
    // Longer than the new file, so only truncating it on open gives the right bytes.
    std::ofstream(out + ".tmp", std::ios::binary) << reference_ << std::string(4096, 'x');
    EXPECT_EQ(convert_fully(out), reference_);
    EXPECT_FALSE(fs::exists(out + ".tmp"));
}

}  // namespace
}  // namespace lila
