// GGUF v3 (v2 accepted): the single-file model format shared with llama.cpp.
//
// GGUFFile maps a file read-only and validates every count, length, offset, type and shape
// before use, so a truncated or corrupt file is an Error naming the file and the problem.
// Tensor data is used in place. GGUFWriter writes OUT.tmp, then renames it to OUT.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ggml-lite/type.h"
#include "src/io/mapped_file.h"

namespace lila {

enum class GGUFType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};

const char* gguf_type_name(GGUFType t);
// Bytes of one value of a fixed-size type in the file; 0 for STRING and ARRAY.
size_t gguf_type_size(GGUFType t);

// A metadata value. Integers of every width are held as int64_t (u64 values above INT64_MAX
// are rejected as corrupt), floats as double, bools as 0/1 ints; arrays as vectors of these
// or of strings. `type` is the type in the file; arrays have type ARRAY and elem_type.
struct GGUFValue {
    GGUFType type = GGUFType::UINT32;
    GGUFType elem_type = GGUFType::UINT32;  // arrays only
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                 std::vector<std::string>>
        value;

    bool is_array() const { return type == GGUFType::ARRAY; }
    size_t array_size() const;  // 0 for scalars

    // Builders for writers.
    static GGUFValue u32(uint32_t v);
    static GGUFValue i32(int32_t v);
    static GGUFValue u64(uint64_t v);
    static GGUFValue f32(float v);
    static GGUFValue boolean(bool v);
    static GGUFValue string(std::string v);
    static GGUFValue array_i32(std::vector<int64_t> v);
    static GGUFValue array_f32(std::vector<double> v);
    static GGUFValue array_string(std::vector<std::string> v);
    // Any integer type (or BOOL), any float type; the writer checks the value fits the type.
    static GGUFValue integer(GGUFType t, int64_t v);
    static GGUFValue f64(double v);
    static GGUFValue array_int(GGUFType elem, std::vector<int64_t> v);
    static GGUFValue array_float(GGUFType elem, std::vector<double> v);

    bool operator==(const GGUFValue&) const = default;
};

struct GGUFTensorInfo {
    std::string name;
    ggml_lite::Type type;
    std::vector<int64_t> shape;  // ggml order: shape[0] is the innermost (contiguous) dim
    uint64_t offset;             // relative to the start of the data section
    size_t nbytes;
    const void* data;  // points into the mapping

    int64_t n_elements() const;
};

class GGUFFile {
public:
    // Throws Error("PATH: problem") for a missing, unreadable, truncated or corrupt file.
    static std::unique_ptr<GGUFFile> open(const std::string& path);
    ~GGUFFile();
    GGUFFile(const GGUFFile&) = delete;
    GGUFFile& operator=(const GGUFFile&) = delete;

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    size_t file_size() const { return size_; }
    size_t alignment() const { return alignment_; }
    size_t data_offset() const { return data_offset_; }  // where the tensor data section starts

    // Metadata in file order.
    const std::vector<std::pair<std::string, GGUFValue>>& metadata() const { return kv_; }
    const GGUFValue* find(std::string_view key) const;

    // Typed getters: nullopt when the key is absent; Error("PATH: key K: expected ...")
    // when present with the wrong type. get_int accepts any integer type (and bool).
    std::optional<int64_t> get_int(std::string_view key) const;
    std::optional<double> get_float(std::string_view key) const;  // floats or integers
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string> get_string(std::string_view key) const;
    std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
    std::optional<std::vector<double>> get_float_array(std::string_view key) const;
    std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;
    // Error("PATH: missing metadata key K") when absent.
    int64_t require_int(std::string_view key) const;

    const std::vector<GGUFTensorInfo>& tensors() const { return tensors_; }
    const GGUFTensorInfo* find_tensor(std::string_view name) const;

    // MappedFile::release of part of the file: once a tensor has been copied elsewhere.
    void release(const void* p, size_t n) const { map_->release(p, n); }

private:
    GGUFFile() = default;
    std::string path_;
    uint32_t version_ = 0;
    size_t size_ = 0;
    size_t alignment_ = 32;
    size_t data_offset_ = 0;
    std::unique_ptr<MappedFile> map_;
    std::vector<std::pair<std::string, GGUFValue>> kv_;
    std::vector<GGUFTensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> kv_index_, tensor_index_;

    [[noreturn]] void wrong_type(std::string_view key, const char* expected,
                                 const GGUFValue& v) const;

    friend class GGUFReader;
};

// Writes a GGUF v3 file. Tensor data is produced on demand, one tensor at a time, so a
// converter never holds the whole model in memory.
class GGUFWriter {
public:
    // Fills `out` with exactly row_size(type, shape[0]) * rows bytes of tensor data.
    using Producer = std::function<void(std::vector<uint8_t>& out)>;
    // Called after each tensor is written: (index from 0, count, name).
    using Progress = std::function<void(size_t i, size_t n, const std::string& name)>;

    // Replaces an existing key in place. Error when the value does not fit its type.
    void set(const std::string& key, GGUFValue value);
    // Error for a duplicate or over-long name (llama.cpp allows 63 bytes) or a bad shape.
    void add_tensor(const std::string& name, ggml_lite::Type type, std::vector<int64_t> shape,
                    Producer produce);
    // Writes PATH.tmp, fsyncs, renames to PATH. On any failure (including a producer
    // throwing) PATH.tmp is removed, an existing PATH is untouched, and Error is thrown.
    void write(const std::string& path, const Progress& progress = {}) const;

private:
    struct PendingTensor {
        std::string name;
        ggml_lite::Type type;
        std::vector<int64_t> shape;
        Producer produce;
        size_t nbytes;
    };
    size_t alignment() const;
    std::vector<std::pair<std::string, GGUFValue>> kv_;
    std::vector<PendingTensor> tensors_;
};

}  // namespace lila
