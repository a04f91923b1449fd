// Tensor element types and the one table that describes them.
//
// Type ids and block layouts are ggml's, bit for bit, so GGUF files move freely between
// lila and llama.cpp. Adding a type is one value here and one row of the table in type.cpp,
// then its kernels (docs/kernels.md: "Adding a weight type").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ggml_lite {

struct GridLevels;  // quant.h

// The grid types' decoder: super-block i of the row at src as its levels and scales (quant.h:
// grid_levels) and its d times the type's kScale (TypeTraits::grid_block).
using GridBlockFn = void (*)(const void* src, int64_t i, GridLevels* levels, float* d);

enum class Type : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,  // activations for Q4_1 and Q5_1 only: no file stores it (type_from_id rejects it)
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,  // activations for the k-quants only: no file stores it (type_from_id rejects it)
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    IQ1_M = 29,
    BF16 = 30,
};

// A row of the type table.
struct TypeTraits {
    Type type;
    const char* name;    // lower-case, as users type it: "q4_0"
    int64_t block_size;  // elements per block (1 for float types)
    size_t type_size;    // bytes per block
    bool quantized;
    // A type tensors have, which files and users may name; false for Q8_1 and Q8_K, which only
    // ever hold activations.
    bool tensor;
    Type vec_dot_type;  // what activations are converted to before a dot product with this type
    // Scalar reference conversions; n is a multiple of block_size. from_float is nullptr for the
    // grid types (IQ1_S ... IQ3_S), which lila reads but cannot write: their quantizer needs
    // an importance matrix.
    void (*to_float)(const void* src, float* dst, int64_t n);
    void (*from_float)(const float* src, void* dst, int64_t n);
    // The grid types (IQ1_S ... IQ3_S): the scalar reference of their decoder, whose output
    // prefill packs (packed.h: block_gridx16). nullptr for every other type.
    GridBlockFn grid_block = nullptr;
};

// The number of rows of the type table: the size of per-type arrays (kernels.h). type.cpp
// checks it against the table at compile time.
constexpr int kTypeCount = 24;

// t's row. Throws std::invalid_argument for a value that is not a type of the table (a cast
// from an unchecked integer; type_from_id() guards files).
const TypeTraits& traits(Type t);

// The position of t's row in the type table, 0 <= slot < kTypeCount: the index of per-type
// arrays. Throws as traits() does.
int type_slot(Type t);

// Every row of the type table, in slot order.
std::span<const TypeTraits> type_table();
// The tensor types (the rows with `tensor` set), in the table's order.
std::span<const Type> all_types();

// A type id read from a file: nullopt when lila does not know it as a tensor type.
std::optional<Type> type_from_id(uint32_t id);
// "q4_0" -> Type::Q4_0 (case-insensitive); nullopt when unknown or not a tensor type (q8_1, q8_k).
std::optional<Type> type_from_name(std::string_view name);

inline const char* type_name(Type t) {
    return traits(t).name;
}
inline int64_t block_size(Type t) {
    return traits(t).block_size;
}

// Bytes of a row of n elements; n must be a multiple of the block size.
inline size_t row_size(Type t, int64_t n) {
    return static_cast<size_t>(n / traits(t).block_size) * traits(t).type_size;
}

}  // namespace ggml_lite
