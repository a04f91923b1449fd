// MappedFile: the bytes of a file in place, clear errors for what cannot be mapped, and
// release() dropping pages without losing their contents.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "src/base/error.h"
#include "src/io/mapped_file.h"
#include "test_util.h"

namespace lila {
namespace {

std::string write(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
    const std::string path = dir.path(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

// The Error opening `path` gives ("" when it opens).
std::string open_error(const std::string& path) {
    try {
        MappedFile f(path);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

TEST(MappedFile, HoldsTheFileBytes) {
    test::TempDir dir;
    std::string bytes(3 * 4096 + 17, '\0');  // several pages and a partial one, NULs included
    for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<char>(i * 131 % 251);
    const std::string path = write(dir, "data.bin", bytes);
    const MappedFile f(path);
    EXPECT_EQ(f.path(), path);
    ASSERT_EQ(f.size(), bytes.size());
    EXPECT_EQ(std::memcmp(f.data(), bytes.data(), bytes.size()), 0);
    EXPECT_EQ(read_file(path), bytes);
}

TEST(MappedFile, EmptyFileMapsToNothing) {
    test::TempDir dir;
    const std::string path = write(dir, "empty", "");
    const MappedFile f(path);
    EXPECT_EQ(f.size(), 0u);
    EXPECT_EQ(f.data(), nullptr);
    EXPECT_EQ(read_file(path), "");
}

TEST(MappedFile, ErrorsNameTheFileAndTheProblem) {
    test::TempDir dir;
    const std::string missing = dir.path("missing.gguf");
    EXPECT_EQ(open_error(missing), missing + ": cannot open: No such file or directory");
    EXPECT_EQ(open_error(dir.path("")), dir.path("") + ": is a directory, not a file");
    // A FIFO is refused at once: opening it for reading must not wait for a writer.
    const std::string fifo = dir.path("fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(open_error(fifo), fifo + ": not a regular file");
    EXPECT_THROW(read_file(missing), Error);
}

// Released pages come back from the file when read again: nothing is lost, whatever the range
// (unaligned, inside one page, the whole file, empty).
TEST(MappedFile, ReleasedPagesReadTheSame) {
    test::TempDir dir;
    std::string bytes(5 * 4096 + 100, '\0');
    for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<char>(i % 253);
    const MappedFile f(write(dir, "data.bin", bytes));
    f.release(f.data() + 4096 + 10, 2 * 4096);
    f.release(f.data() + 7, 3);
    f.release(f.data(), 0);
    EXPECT_EQ(std::memcmp(f.data(), bytes.data(), bytes.size()), 0);
    f.release(f.data(), f.size());
    EXPECT_EQ(std::memcmp(f.data(), bytes.data(), bytes.size()), 0);
}

}  // namespace
}  // namespace lila
