// GGUF writer. The header (metadata and tensor infos) is laid out in memory, then tensor
// data is produced and written one tensor at a time into PATH.tmp, which is renamed to PATH
// only once everything is on disk: an interrupted or failed write never leaves a broken PATH.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "src/base/error.h"
#include "src/io/gguf.h"

namespace lila {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian");

namespace {

constexpr uint32_t kVersion = 3;
constexpr size_t kDefaultAlignment = 32;
constexpr size_t kMaxNameBytes = 63;  // llama.cpp's GGML_MAX_NAME, less the NUL

bool is_float(GGUFType t) {
    return t == GGUFType::FLOAT32 || t == GGUFType::FLOAT64;
}

// The range of an integer type (or BOOL) as GGUFValue holds it, in int64_t.
std::pair<int64_t, int64_t> int_range(GGUFType t) {
    auto range = [](auto type_tag) -> std::pair<int64_t, int64_t> {
        using T = decltype(type_tag);
        return {int64_t(std::numeric_limits<T>::min()),
                int64_t(std::min<uint64_t>(std::numeric_limits<T>::max(),
                                           std::numeric_limits<int64_t>::max()))};
    };
    switch (t) {
        case GGUFType::UINT8:
            return range(uint8_t{});
        case GGUFType::INT8:
            return range(int8_t{});
        case GGUFType::UINT16:
            return range(uint16_t{});
        case GGUFType::INT16:
            return range(int16_t{});
        case GGUFType::UINT32:
            return range(uint32_t{});
        case GGUFType::INT32:
            return range(int32_t{});
        case GGUFType::UINT64:
            return range(uint64_t{});
        case GGUFType::INT64:
            return range(int64_t{});
        default:
            return {0, 1};  // BOOL
    }
}

// A value must hold the variant alternative its type implies, with integers in range.
void check_value(const std::string& key, const GGUFValue& v) {
    auto fail = [&](const std::string& problem) {
        throw Error("GGUF key " + key + ": " + problem);
    };
    const GGUFType t = v.is_array() ? v.elem_type : v.type;
    if (uint32_t(v.type) > uint32_t(GGUFType::FLOAT64) || uint32_t(t) > uint32_t(GGUFType::FLOAT64))
        fail("unknown value type");
    if (t == GGUFType::ARRAY) fail("nested arrays are not supported");
    // GGUFValue::value holds int64_t, double or std::string (indexes 0-2), or for an array a
    // vector of one of them (indexes 3-5).
    const size_t scalar_index = t == GGUFType::STRING ? 2 : is_float(t) ? 1 : 0;
    if (v.value.index() != scalar_index + (v.is_array() ? 3 : 0))
        fail(std::string("the value does not match its type ") + gguf_type_name(t));
    if (scalar_index != 0) return;

    // Not a structured binding: clang before 16 cannot capture one in a lambda (C++20).
    const std::pair<int64_t, int64_t> range = int_range(t);
    auto check = [&](int64_t x) {
        if (x < range.first || x > range.second)
            fail(std::to_string(x) + " does not fit in " + gguf_type_name(t));
    };
    if (v.is_array()) {
        for (int64_t x : std::get<std::vector<int64_t>>(v.value)) check(x);
    } else {
        check(std::get<int64_t>(v.value));
    }
}

// Little-endian serialization into memory.
struct Bytes {
    std::vector<uint8_t> b;

    template <class T>
    void put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + sizeof v);
    }
    void put_string(std::string_view s) {
        put<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
    }
    void put_int(GGUFType t, int64_t v) {
        switch (gguf_type_size(t)) {
            case 1:
                return put<uint8_t>(uint8_t(v));
            case 2:
                return put<uint16_t>(uint16_t(v));
            case 4:
                return put<uint32_t>(uint32_t(v));
            default:
                return put<uint64_t>(uint64_t(v));
        }
    }
    void put_float(GGUFType t, double v) {
        if (t == GGUFType::FLOAT32) return put<float>(float(v));
        put<double>(v);
    }
    void put_value(const GGUFValue& v) {
        put<uint32_t>(uint32_t(v.type));
        if (v.is_array()) {
            put<uint32_t>(uint32_t(v.elem_type));
            put<uint64_t>(v.array_size());
        }
        std::visit([&](const auto& x) { put_payload(v.is_array() ? v.elem_type : v.type, x); },
                   v.value);
    }
    void put_payload(GGUFType t, int64_t x) { put_int(t, x); }
    void put_payload(GGUFType t, double x) { put_float(t, x); }
    void put_payload(GGUFType, const std::string& x) { put_string(x); }
    template <class T>
    void put_payload(GGUFType t, const std::vector<T>& xs) {
        for (const T& x : xs) put_payload(t, x);
    }
};

size_t align_up(size_t n, size_t a) {
    return (n + a - 1) / a * a;
}

// PATH.tmp while it is being written: removed on destruction unless renamed into place.
class TempFile {
public:
    TempFile(std::string tmp_path) : path_(std::move(tmp_path)) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd_ < 0) throw Error("cannot create " + path_ + ": " + std::strerror(errno));
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(path_.c_str());
    }

    void write(const void* data, size_t n) {
        const auto* p = static_cast<const uint8_t*>(data);
        while (n > 0) {
            ssize_t k = ::write(fd_, p, n);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) throw Error("write failed: " + std::string(std::strerror(errno)));
            p += k;
            n -= size_t(k);
        }
    }

    void write_zeros(size_t n) {
        static const uint8_t zeros[4096] = {};
        for (size_t k; n > 0; n -= k) {
            k = std::min(n, sizeof zeros);
            write(zeros, k);
        }
    }

    // fsync before rename, so that after a crash PATH is either the old file or the whole
    // new one; then fsync the directory so that the rename itself is durable.
    void commit(const std::string& final_path) {
        if (::fsync(fd_) != 0) throw Error("fsync failed: " + std::string(std::strerror(errno)));
        int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw Error("close failed: " + std::string(std::strerror(errno)));
        if (::rename(path_.c_str(), final_path.c_str()) != 0)
            throw Error("cannot rename " + path_ + ": " + std::strerror(errno));
        committed_ = true;
        std::string dir = std::filesystem::path(final_path).parent_path().string();
        int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            ::fsync(dfd);  // best effort: some file systems refuse to fsync a directory
            ::close(dfd);
        }
    }

private:
    std::string path_;
    int fd_ = -1;
    bool committed_ = false;
};

}  // namespace

void GGUFWriter::set(const std::string& key, GGUFValue value) {
    check_value(key, value);
    if (key == "general.alignment") {
        // llama.cpp reads this key as a u32 only.
        int64_t a = value.type == GGUFType::UINT32 ? std::get<int64_t>(value.value) : 0;
        if (a <= 0 || (a & (a - 1)) != 0)
            throw Error("GGUF key general.alignment: must be a u32 power of two");
    }
    for (auto& [k, v] : kv_) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    kv_.emplace_back(key, std::move(value));
}

void GGUFWriter::add_tensor(const std::string& name, ggml_lite::Type type,
                            std::vector<int64_t> shape, Producer produce) {
    auto fail = [&](const std::string& problem) {
        throw Error("GGUF tensor '" + name + "': " + problem);
    };
    if (name.empty() || name.size() > kMaxNameBytes)
        fail("the name must be 1 to " + std::to_string(kMaxNameBytes) + " bytes");
    for (const PendingTensor& t : tensors_)
        if (t.name == name) fail("added twice");
    if (shape.empty() || shape.size() > 4) fail("a tensor has 1 to 4 dimensions");
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0) fail("dimensions must be positive");
        if (d > std::numeric_limits<int64_t>::max() / n) fail("the element count overflows");
        n *= d;
    }
    const ggml_lite::TypeTraits& tr = ggml_lite::traits(type);
    if (shape[0] % tr.block_size != 0)
        fail("row length " + std::to_string(shape[0]) + " is not a multiple of the " + tr.name +
             " block size " + std::to_string(tr.block_size));
    size_t nbytes = ggml_lite::row_size(type, shape[0]) * size_t(n / shape[0]);
    tensors_.push_back({name, type, std::move(shape), std::move(produce), nbytes});
}

size_t GGUFWriter::alignment() const {
    for (const auto& [k, v] : kv_)
        if (k == "general.alignment") return size_t(std::get<int64_t>(v.value));
    return kDefaultAlignment;
}

void GGUFWriter::write(const std::string& path, const Progress& progress) const {
    const size_t align = alignment();
    Bytes header;
    header.b.assign({'G', 'G', 'U', 'F'});
    header.put<uint32_t>(kVersion);
    header.put<uint64_t>(tensors_.size());
    header.put<uint64_t>(kv_.size());
    for (const auto& [key, value] : kv_) {
        header.put_string(key);
        header.put_value(value);
    }
    size_t offset = 0;  // from the start of the data section; each tensor padded to `align`
    for (const PendingTensor& t : tensors_) {
        header.put_string(t.name);
        header.put<uint32_t>(uint32_t(t.shape.size()));
        for (int64_t d : t.shape) header.put<uint64_t>(uint64_t(d));
        header.put<uint32_t>(uint32_t(t.type));
        header.put<uint64_t>(offset);
        offset += align_up(t.nbytes, align);
    }

    try {
        TempFile out(path + ".tmp");
        out.write(header.b.data(), header.b.size());
        out.write_zeros(align_up(header.b.size(), align) - header.b.size());
        std::vector<uint8_t> data;
        for (size_t i = 0; i < tensors_.size(); ++i) {
            const PendingTensor& t = tensors_[i];
            data.clear();
            try {
                t.produce(data);
            } catch (const std::exception& e) {
                throw Error("tensor '" + t.name + "': " + e.what());
            }
            if (data.size() != t.nbytes)
                throw Error("tensor '" + t.name + "': produced " + std::to_string(data.size()) +
                            " bytes, expected " + std::to_string(t.nbytes));
            out.write(data.data(), data.size());
            out.write_zeros(align_up(t.nbytes, align) - t.nbytes);
            if (progress) progress(i, tensors_.size(), t.name);
        }
        out.commit(path);
    } catch (const std::exception& e) {
        throw Error(path + ": not written: " + e.what());
    }
}

}  // namespace lila
