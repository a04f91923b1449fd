// Whole files in memory: mapped read-only (POSIX mmap: instant "load", pages read only when
// touched, shared with the page cache), or copied for small files that are parsed at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lila {

class MappedFile {
public:
    // Error("PATH: reason") when the file is missing, a directory, not a regular file (a FIFO
    // is rejected without waiting for a writer), or cannot be mapped. An empty file maps to
    // data() == nullptr, size() == 0.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

    // Drops the pages that hold [p, p + n), part of the mapping, from this process's memory;
    // read again, they come back from the file (the page cache), so nothing is lost. For data
    // that has been copied elsewhere, so that memory holds it once.
    void release(const void* p, size_t n) const;

private:
    std::string path_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

// The contents of a small file; Error("PATH: reason") as MappedFile.
std::string read_file(const std::string& path);

}  // namespace lila
