// Helpers shared by the test suites: where the shared data lives, temporary directories.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lila::test {

// ../shared (or $LILA_SHARED): the models, texts and reference outputs every developer and
// CI have. A missing file fails the test with a message saying where it was looked for.
inline std::string shared_path(const std::string& rel) {
    const char* env = std::getenv("LILA_SHARED");
    const std::filesystem::path p = std::filesystem::path(env ? env : LILA_SHARED_DEFAULT) / rel;
    if (!std::filesystem::exists(p)) {
        ADD_FAILURE() << "shared test data missing: " << p
                      << " (set LILA_SHARED to the folder holding models/, data/, reference/)";
    }
    return p.string();
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
public:
    TempDir() {
        std::string templ = (std::filesystem::temp_directory_path() / "lila-test-XXXXXX").string();
        path_ = mkdtemp(templ.data()) ? templ : throw std::runtime_error("mkdtemp failed");
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string path(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

}  // namespace lila::test
