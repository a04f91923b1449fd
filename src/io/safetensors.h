// Reader for Hugging Face safetensors checkpoints: one file, or shards listed by
// model.safetensors.index.json.
//
// A file is an 8-byte little-endian header length, a JSON header describing each tensor
// (dtype, shape, byte range), then the tensor data. Files are memory-mapped and tensors
// are read in place, so a converter touches one tensor at a time and a model larger than
// RAM converts. Every header field is checked against the file before use: a truncated or
// corrupt file is an Error naming it, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ggml-lite/type.h"
#include "src/io/mapped_file.h"

namespace lila {

struct SafeTensor {
    std::string name;
    ggml_lite::Type type;        // F32, F16 or BF16: the dtypes language models ship in
    std::vector<int64_t> shape;  // PyTorch order: shape[0] is the outermost dimension
    const uint8_t* data;         // into the mapping; not aligned
    size_t nbytes;

    int64_t n_elements() const;
    // Rows of a tensor seen as [shape[0]][rest]; a 1-D tensor is one row.
    int64_t rows() const { return shape.size() < 2 ? 1 : shape[0]; }
    int64_t cols() const { return rows() == 0 ? 0 : n_elements() / rows(); }
    // Converts rows [row, row + n) to float.
    void rows_to_float(int64_t row, int64_t n, float* dst) const;
};

class SafetensorsFile {
public:
    // Error("PATH: problem") for a missing, truncated or malformed file, or a dtype other
    // than F32/F16/BF16.
    explicit SafetensorsFile(const std::string& path);

    const std::string& path() const { return file_.path(); }
    size_t size() const { return file_.size(); }
    const std::vector<SafeTensor>& tensors() const { return tensors_; }

private:
    MappedFile file_;
    std::vector<SafeTensor> tensors_;
};

// All tensors of a checkpoint directory: model.safetensors, or the shards named by
// model.safetensors.index.json (each tensor must be in the shard the index names).
class SafetensorsModel {
public:
    static std::shared_ptr<const SafetensorsModel> open(const std::string& dir);

    const SafeTensor* find(std::string_view name) const;
    // Tensors in file order, shard by shard.
    const std::vector<const SafeTensor*>& tensors() const { return order_; }
    size_t file_bytes() const;  // of all shards together

private:
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, const SafeTensor*, std::less<>> by_name_;
    std::vector<const SafeTensor*> order_;
};

}  // namespace lila
