// Helpers shared by the libFuzzer targets: the readers under test take paths, so an input is
// handed to them as an in-memory file; the shared models and tokenizers are found as the
// tests find them.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "src/base/error.h"

namespace lila::fuzz {

// The bytes of one input as a file: a memfd, named by its /proc/self/fd path. No disk I/O,
// and nothing is left behind when a run is killed.
class MemFile {
public:
    MemFile(const uint8_t* data, size_t size) {
        fd_ = memfd_create("lila-fuzz", MFD_CLOEXEC);
        if (fd_ < 0) std::abort();
        for (size_t done = 0; done < size;) {
            const ssize_t n = ::write(fd_, data + done, size - done);
            if (n <= 0) std::abort();
            done += size_t(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemFile() { ::close(fd_); }
    MemFile(const MemFile&) = delete;
    MemFile& operator=(const MemFile&) = delete;

    const std::string& path() const { return path_; }

private:
    int fd_ = -1;
    std::string path_;
};

// ../shared (or $LILA_SHARED), as the test suites find it; aborts with a message when the
// file is missing, since a target without its vocabulary would fuzz nothing.
inline std::string shared_path(const std::string& rel) {
    const char* env = std::getenv("LILA_SHARED");
    const std::filesystem::path p = std::filesystem::path(env ? env : LILA_SHARED_DEFAULT) / rel;
    if (!std::filesystem::exists(p)) {
        std::fprintf(stderr, "shared data missing: %s (set LILA_SHARED)\n", p.c_str());
        std::abort();
    }
    return p.string();
}

// A property the code under test promises was broken: stop with a crash libFuzzer records.
inline void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "property violated: %s\n", what);
        std::abort();
    }
}

// The first byte of an input, as option bits, and the rest.
struct Flags {
    uint8_t bits;
    std::string_view rest;

    bool bit(int i) const { return (bits >> i) & 1; }
};

inline Flags split_flags(const uint8_t* data, size_t size) {
    if (size == 0) return {0, {}};
    return {data[0], std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

}  // namespace lila::fuzz
