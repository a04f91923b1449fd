// Runs the lila binary as a user would, for the end-to-end tests of tools/.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace lila::test {

struct LilaResult {
    int status;  // as waitpid() reports it
    std::string out, err;
};

// Runs `lila ARGS` (LILA_BINARY) with stdin from `input`, and returns its exit status and
// what it printed.
inline LilaResult run_lila(const std::vector<std::string>& args,
                           const std::string& input = "/dev/null") {
    static TempDir dir;
    const std::string out = dir.path("stdout"), err = dir.path("stderr");
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> argv{const_cast<char*>(LILA_BINARY)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        dup2(open(input.c_str(), O_RDONLY), 0);
        dup2(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
        dup2(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
        execv(LILA_BINARY, argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return {status, read_file(out), read_file(err)};
}

}  // namespace lila::test
