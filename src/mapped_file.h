// A whole file mapped read-only into memory (POSIX mmap): instant "load", pages read only
// when touched, shared with the page cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lila {

class MappedFile {
public:
    // Error("PATH: reason") when the file is missing, a directory, or cannot be mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace lila
