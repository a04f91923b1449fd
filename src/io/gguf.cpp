// GGUF values, and lookups in an opened file. Reading is in gguf_reader.cpp, writing in
// gguf_writer.cpp.
#include "src/io/gguf.h"

#include <sys/mman.h>

#include "src/base/error.h"

namespace lila {

const char* gguf_type_name(GGUFType t) {
    switch (t) {
        case GGUFType::UINT8:
            return "u8";
        case GGUFType::INT8:
            return "i8";
        case GGUFType::UINT16:
            return "u16";
        case GGUFType::INT16:
            return "i16";
        case GGUFType::UINT32:
            return "u32";
        case GGUFType::INT32:
            return "i32";
        case GGUFType::FLOAT32:
            return "f32";
        case GGUFType::BOOL:
            return "bool";
        case GGUFType::STRING:
            return "string";
        case GGUFType::ARRAY:
            return "array";
        case GGUFType::UINT64:
            return "u64";
        case GGUFType::INT64:
            return "i64";
        case GGUFType::FLOAT64:
            return "f64";
    }
    return "unknown";
}

size_t gguf_type_size(GGUFType t) {
    switch (t) {
        case GGUFType::UINT8:
        case GGUFType::INT8:
        case GGUFType::BOOL:
            return 1;
        case GGUFType::UINT16:
        case GGUFType::INT16:
            return 2;
        case GGUFType::UINT32:
        case GGUFType::INT32:
        case GGUFType::FLOAT32:
            return 4;
        case GGUFType::UINT64:
        case GGUFType::INT64:
        case GGUFType::FLOAT64:
            return 8;
        case GGUFType::STRING:
        case GGUFType::ARRAY:
            return 0;
    }
    return 0;
}

// Integers and bools are held as int64_t, floats as double.
static bool is_int(GGUFType t) {
    return gguf_type_size(t) != 0 && t != GGUFType::FLOAT32 && t != GGUFType::FLOAT64;
}

static bool is_float(GGUFType t) {
    return t == GGUFType::FLOAT32 || t == GGUFType::FLOAT64;
}

size_t GGUFValue::array_size() const {
    if (auto* v = std::get_if<std::vector<int64_t>>(&value)) return v->size();
    if (auto* v = std::get_if<std::vector<double>>(&value)) return v->size();
    if (auto* v = std::get_if<std::vector<std::string>>(&value)) return v->size();
    return 0;
}

GGUFValue GGUFValue::integer(GGUFType t, int64_t v) {
    return {t, GGUFType::UINT32, v};
}
GGUFValue GGUFValue::u32(uint32_t v) {
    return integer(GGUFType::UINT32, v);
}
GGUFValue GGUFValue::i32(int32_t v) {
    return integer(GGUFType::INT32, v);
}
GGUFValue GGUFValue::u64(uint64_t v) {
    return integer(GGUFType::UINT64, static_cast<int64_t>(v));
}
GGUFValue GGUFValue::boolean(bool v) {
    return integer(GGUFType::BOOL, v);
}
GGUFValue GGUFValue::f32(float v) {
    return {GGUFType::FLOAT32, GGUFType::UINT32, double(v)};
}
GGUFValue GGUFValue::f64(double v) {
    return {GGUFType::FLOAT64, GGUFType::UINT32, v};
}
GGUFValue GGUFValue::string(std::string v) {
    return {GGUFType::STRING, GGUFType::UINT32, std::move(v)};
}

GGUFValue GGUFValue::array_int(GGUFType elem, std::vector<int64_t> v) {
    return {GGUFType::ARRAY, elem, std::move(v)};
}
GGUFValue GGUFValue::array_float(GGUFType elem, std::vector<double> v) {
    return {GGUFType::ARRAY, elem, std::move(v)};
}
GGUFValue GGUFValue::array_i32(std::vector<int64_t> v) {
    return array_int(GGUFType::INT32, std::move(v));
}
GGUFValue GGUFValue::array_f32(std::vector<double> v) {
    return array_float(GGUFType::FLOAT32, std::move(v));
}
GGUFValue GGUFValue::array_string(std::vector<std::string> v) {
    return {GGUFType::ARRAY, GGUFType::STRING, std::move(v)};
}

int64_t GGUFTensorInfo::n_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

GGUFFile::~GGUFFile() = default;

const GGUFValue* GGUFFile::find(std::string_view key) const {
    auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GGUFTensorInfo* GGUFFile::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GGUFFile::wrong_type(std::string_view key, const char* expected, const GGUFValue& v) const {
    std::string found = gguf_type_name(v.type);
    if (v.is_array()) found += std::string(" of ") + gguf_type_name(v.elem_type);
    throw Error(path_ + ": key " + std::string(key) + ": expected " + expected + ", found " +
                found);
}

std::optional<int64_t> GGUFFile::get_int(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (!is_int(v->type)) wrong_type(key, "an integer", *v);
    return std::get<int64_t>(v->value);
}

std::optional<double> GGUFFile::get_float(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (is_float(v->type)) return std::get<double>(v->value);
    if (is_int(v->type) && v->type != GGUFType::BOOL) return double(std::get<int64_t>(v->value));
    wrong_type(key, "a number", *v);
}

std::optional<bool> GGUFFile::get_bool(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != GGUFType::BOOL) wrong_type(key, "a bool", *v);
    return std::get<int64_t>(v->value) != 0;
}

std::optional<std::string> GGUFFile::get_string(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != GGUFType::STRING) wrong_type(key, "a string", *v);
    return std::get<std::string>(v->value);
}

std::optional<std::vector<std::string>> GGUFFile::get_string_array(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_array() || v->elem_type != GGUFType::STRING)
        wrong_type(key, "an array of strings", *v);
    return std::get<std::vector<std::string>>(v->value);
}

std::optional<std::vector<double>> GGUFFile::get_float_array(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_array() && is_float(v->elem_type)) return std::get<std::vector<double>>(v->value);
    if (!v->is_array() || !is_int(v->elem_type) || v->elem_type == GGUFType::BOOL)
        wrong_type(key, "an array of numbers", *v);
    const auto& ints = std::get<std::vector<int64_t>>(v->value);
    return std::vector<double>(ints.begin(), ints.end());
}

std::optional<std::vector<int64_t>> GGUFFile::get_int_array(std::string_view key) const {
    const GGUFValue* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_array() || !is_int(v->elem_type)) wrong_type(key, "an array of integers", *v);
    return std::get<std::vector<int64_t>>(v->value);
}

int64_t GGUFFile::require_int(std::string_view key) const {
    std::optional<int64_t> v = get_int(key);
    if (!v) throw Error(path_ + ": missing metadata key " + std::string(key));
    return *v;
}

}  // namespace lila
