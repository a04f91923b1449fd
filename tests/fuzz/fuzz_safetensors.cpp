// The safetensors reader on arbitrary bytes, then what the Hugging Face converter does with
// each tensor it accepted: every row converted to float.
//
// Promise under test (src/io/safetensors.h): a truncated or corrupt file is a lila::Error,
// never a crash or another exception; an accepted tensor's bytes lie inside the file's data
// and match its shape and dtype. The bounds are checked here against the header as parsed
// independently, so a reader bug that lets a tensor run past the file is caught exactly.
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "fuzz_util.h"
#include "src/io/safetensors.h"

namespace lila {
namespace {

// The accepted tensor `t` as the header describes it: [begin, end) inside the data.
void check_bounds(const SafeTensor& t, const nlohmann::json& header, size_t data_size) {
    const nlohmann::json& offsets = header.at(t.name).at("data_offsets");
    const uint64_t begin = offsets.at(0).get<uint64_t>(), end = offsets.at(1).get<uint64_t>();
    fuzz::check(begin <= end && end <= data_size, "tensor data inside the file");
    fuzz::check(end - begin == t.nbytes, "tensor size as the header says");
    fuzz::check(uint64_t(t.n_elements()) * ggml_lite::traits(t.type).type_size == t.nbytes,
                "tensor size matches its shape and dtype");
}

// Every row to float, a few rows at a time as the converter reads them.
void convert_rows(const SafeTensor& t) {
    const int64_t rows = t.rows(), cols = t.cols();
    if (cols == 0) return;
    constexpr int64_t kRowsPerStep = 3;
    std::vector<float> out(size_t(std::min(rows, kRowsPerStep) * cols));
    for (int64_t r = 0; r < rows; r += kRowsPerStep) {
        t.rows_to_float(r, std::min(kRowsPerStep, rows - r), out.data());
    }
}

}  // namespace
}  // namespace lila

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace lila;
    const fuzz::MemFile file(data, size);
    std::unique_ptr<SafetensorsFile> st;
    try {
        st = std::make_unique<SafetensorsFile>(file.path());
    } catch (const Error&) {
        return 0;
    }
    fuzz::check(st->size() == size, "the whole file is mapped");
    uint64_t header_len;
    std::memcpy(&header_len, data, 8);
    const char* text = reinterpret_cast<const char*>(data) + 8;
    const auto header = nlohmann::json::parse(text, text + header_len);
    for (const SafeTensor& t : st->tensors()) {
        check_bounds(t, header, size - 8 - header_len);
        convert_rows(t);
    }
    return 0;
}
