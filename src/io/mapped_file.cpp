#include "src/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"

namespace lila {

namespace {

// Closes a file descriptor on every path out of a function.
struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected just below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    FdCloser closer{fd};
    struct stat st {};
    if (fstat(fd, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, not a file");
    if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) return;
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(errno));
    data_ = static_cast<const uint8_t*>(p);
}

void MappedFile::release(const void* p, size_t n) const {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(p), end = begin + n;
    const uintptr_t first = begin / page * page, last = (end + page - 1) / page * page;
    if (n == 0) return;
    // Advice: when the kernel declines, the pages simply stay.
    madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
    if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

std::string read_file(const std::string& path) {
    const MappedFile f(path);
    return std::string(reinterpret_cast<const char*>(f.data()), f.size());
}

}  // namespace lila
