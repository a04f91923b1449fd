// The type table: one row per element type, the one list every per-type lookup and array
// derives from.
#include "type.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <string>

#include "quant.h"

namespace ggml_lite {
namespace {

void f32_to_float(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void f32_from_float(const float* src, void* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

// Half and bfloat16 rows, value by value.
template <float (*Widen)(uint16_t)>
void halves_to_float(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; i++) dst[i] = Widen(h[i]);
}
template <uint16_t (*Narrow)(float)>
void halves_from_float(const float* src, void* dst, int64_t n) {
    auto* h = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; i++) h[i] = Narrow(src[i]);
}

// The quantized types' rows of blocks, through quant.h's codecs.
template <class Block, void (*Decode)(const Block*, float*, int64_t)>
void blocks_to_float(const void* src, float* dst, int64_t n) {
    Decode(static_cast<const Block*>(src), dst, n);
}
template <class Block, void (*Encode)(const float*, Block*, int64_t)>
void blocks_from_float(const float* src, void* dst, int64_t n) {
    Encode(src, static_cast<Block*>(dst), n);
}
template <class Block>
void grid_block(const void* src, int64_t i, GridLevels* levels, float* d) {
    const Block& b = static_cast<const Block*>(src)[i];
    grid_levels(b, levels);
    *d = grid_d(b) * Block::kScale;  // kScale is a power of 2: exact
}

// Float weights are dotted with float activations; quantized ones with 8-bit activations of
// the same block size (Q8_0, Q8_1, Q8_K), so the inner loop is an integer dot product. The order of
// the rows is the order of per-type arrays (type_slot) and of all_types().
constexpr TypeTraits kTypes[] = {
    {Type::F32, "f32", 1, sizeof(float), false, true, Type::F32, f32_to_float, f32_from_float},
    {Type::F16, "f16", 1, sizeof(fp16_t), false, true, Type::F32, halves_to_float<fp16_to_fp32>,
     halves_from_float<fp32_to_fp16>},
    {Type::BF16, "bf16", 1, sizeof(bf16_t), false, true, Type::F32, halves_to_float<bf16_to_fp32>,
     halves_from_float<fp32_to_bf16>},
    {Type::Q8_0, "q8_0", QK8_0, sizeof(block_q8_0), true, true, Type::Q8_0,
     blocks_to_float<block_q8_0, dequantize_row_q8_0>,
     blocks_from_float<block_q8_0, quantize_row_q8_0_ref>},
    {Type::Q4_0, "q4_0", QK4_0, sizeof(block_q4_0), true, true, Type::Q8_0,
     blocks_to_float<block_q4_0, dequantize_row_q4_0>,
     blocks_from_float<block_q4_0, quantize_row_q4_0_ref>},
    // Types with a min meet Q8_1, whose sum the min multiplies.
    {Type::Q4_1, "q4_1", QK4_1, sizeof(block_q4_1), true, true, Type::Q8_1,
     blocks_to_float<block_q4_1, dequantize_row_q4_1>,
     blocks_from_float<block_q4_1, quantize_row_q4_1_ref>},
    {Type::Q5_0, "q5_0", QK5_0, sizeof(block_q5_0), true, true, Type::Q8_0,
     blocks_to_float<block_q5_0, dequantize_row_q5_0>,
     blocks_from_float<block_q5_0, quantize_row_q5_0_ref>},
    {Type::Q5_1, "q5_1", QK5_1, sizeof(block_q5_1), true, true, Type::Q8_1,
     blocks_to_float<block_q5_1, dequantize_row_q5_1>,
     blocks_from_float<block_q5_1, quantize_row_q5_1_ref>},
    {Type::IQ4_NL, "iq4_nl", QK4_NL, sizeof(block_iq4_nl), true, true, Type::Q8_0,
     blocks_to_float<block_iq4_nl, dequantize_row_iq4_nl>,
     blocks_from_float<block_iq4_nl, quantize_row_iq4_nl>},
    // The k-quants work on 256-value super-blocks, and so do their activations.
    {Type::Q2_K, "q2_k", QK_K, sizeof(block_q2_K), true, true, Type::Q8_K,
     blocks_to_float<block_q2_K, dequantize_row_q2_K>,
     blocks_from_float<block_q2_K, quantize_row_q2_K_ref>},
    {Type::Q3_K, "q3_k", QK_K, sizeof(block_q3_K), true, true, Type::Q8_K,
     blocks_to_float<block_q3_K, dequantize_row_q3_K>,
     blocks_from_float<block_q3_K, quantize_row_q3_K_ref>},
    {Type::Q4_K, "q4_k", QK_K, sizeof(block_q4_K), true, true, Type::Q8_K,
     blocks_to_float<block_q4_K, dequantize_row_q4_K>,
     blocks_from_float<block_q4_K, quantize_row_q4_K_ref>},
    {Type::Q5_K, "q5_k", QK_K, sizeof(block_q5_K), true, true, Type::Q8_K,
     blocks_to_float<block_q5_K, dequantize_row_q5_K>,
     blocks_from_float<block_q5_K, quantize_row_q5_K_ref>},
    {Type::IQ4_XS, "iq4_xs", QK_K, sizeof(block_iq4_xs), true, true, Type::Q8_K,
     blocks_to_float<block_iq4_xs, dequantize_row_iq4_xs>,
     blocks_from_float<block_iq4_xs, quantize_row_iq4_xs>},
    {Type::Q6_K, "q6_k", QK_K, sizeof(block_q6_K), true, true, Type::Q8_K,
     blocks_to_float<block_q6_K, dequantize_row_q6_K>,
     blocks_from_float<block_q6_K, quantize_row_q6_K_ref>},
    // The grid types, read only: llama-quantize writes them with an importance matrix.
    {Type::IQ2_XXS, "iq2_xxs", QK_K, sizeof(block_iq2_xxs), true, true, Type::Q8_K,
     blocks_to_float<block_iq2_xxs, dequantize_row_iq2_xxs>, nullptr, grid_block<block_iq2_xxs>},
    {Type::IQ2_XS, "iq2_xs", QK_K, sizeof(block_iq2_xs), true, true, Type::Q8_K,
     blocks_to_float<block_iq2_xs, dequantize_row_iq2_xs>, nullptr, grid_block<block_iq2_xs>},
    {Type::IQ2_S, "iq2_s", QK_K, sizeof(block_iq2_s), true, true, Type::Q8_K,
     blocks_to_float<block_iq2_s, dequantize_row_iq2_s>, nullptr, grid_block<block_iq2_s>},
    {Type::IQ3_XXS, "iq3_xxs", QK_K, sizeof(block_iq3_xxs), true, true, Type::Q8_K,
     blocks_to_float<block_iq3_xxs, dequantize_row_iq3_xxs>, nullptr, grid_block<block_iq3_xxs>},
    {Type::IQ3_S, "iq3_s", QK_K, sizeof(block_iq3_s), true, true, Type::Q8_K,
     blocks_to_float<block_iq3_s, dequantize_row_iq3_s>, nullptr, grid_block<block_iq3_s>},
    {Type::IQ1_S, "iq1_s", QK_K, sizeof(block_iq1_s), true, true, Type::Q8_K,
     blocks_to_float<block_iq1_s, dequantize_row_iq1_s>, nullptr, grid_block<block_iq1_s>},
    {Type::IQ1_M, "iq1_m", QK_K, sizeof(block_iq1_m), true, true, Type::Q8_K,
     blocks_to_float<block_iq1_m, dequantize_row_iq1_m>, nullptr, grid_block<block_iq1_m>},
    // Not tensor types: ggml never stores them and no kernel takes them as weights.
    {Type::Q8_1, "q8_1", QK8_1, sizeof(block_q8_1), true, false, Type::Q8_1,
     blocks_to_float<block_q8_1, dequantize_row_q8_1>,
     blocks_from_float<block_q8_1, quantize_row_q8_1_ref>},
    {Type::Q8_K, "q8_k", QK_K, sizeof(block_q8_K), true, false, Type::Q8_K,
     blocks_to_float<block_q8_K, dequantize_row_q8_K>,
     blocks_from_float<block_q8_K, quantize_row_q8_K_ref>},
};
static_assert(std::size(kTypes) == kTypeCount,
              "kTypeCount (type.h) sizes the per-type arrays: one element per row here");

constexpr uint32_t id_of(Type t) {
    return static_cast<uint32_t>(t);
}

// The checks a new row must pass: its id and name are its own, and its activation type has a
// row too.
constexpr bool has_row(Type t) {
    return std::any_of(std::begin(kTypes), std::end(kTypes),
                       [t](const TypeTraits& r) { return r.type == t; });
}
constexpr bool rows_distinct() {
    for (size_t i = 0; i < std::size(kTypes); i++) {
        for (size_t j = 0; j < i; j++) {
            if (kTypes[i].type == kTypes[j].type) return false;
            if (std::string_view(kTypes[i].name) == kTypes[j].name) return false;
        }
    }
    return true;
}
static_assert(rows_distinct(), "two rows of the type table share an id or a name");
static_assert(std::all_of(std::begin(kTypes), std::end(kTypes),
                          [](const TypeTraits& r) { return has_row(r.vec_dot_type); }),
              "a row's vec_dot_type has no row");

// Slot of each type id (-1: no row), so that type_slot() is one load.
constexpr uint32_t kIdLimit = [] {
    uint32_t limit = 0;
    for (const TypeTraits& r : kTypes) limit = std::max(limit, id_of(r.type) + 1);
    return limit;
}();
constexpr std::array<int8_t, kIdLimit> kSlotOfId = [] {
    std::array<int8_t, kIdLimit> slots{};
    slots.fill(-1);
    for (size_t i = 0; i < std::size(kTypes); i++)
        slots[id_of(kTypes[i].type)] = static_cast<int8_t>(i);
    return slots;
}();

constexpr size_t kTensorTypeCount = std::count_if(std::begin(kTypes), std::end(kTypes),
                                                  [](const TypeTraits& r) { return r.tensor; });
constexpr std::array<Type, kTensorTypeCount> kTensorTypes = [] {
    std::array<Type, kTensorTypeCount> types{};
    size_t n = 0;
    for (const TypeTraits& r : kTypes) {
        if (r.tensor) types[n++] = r.type;
    }
    return types;
}();

}  // namespace

int type_slot(Type t) {
    const uint32_t i = id_of(t);
    if (i < kIdLimit && kSlotOfId[i] >= 0) return kSlotOfId[i];
    // Only reachable through a cast from an unchecked integer; type_from_id() guards files.
    throw std::invalid_argument("ggml-lite: unknown type id " + std::to_string(i));
}

const TypeTraits& traits(Type t) {
    return kTypes[type_slot(t)];
}

std::span<const TypeTraits> type_table() {
    return kTypes;
}

std::span<const Type> all_types() {
    return kTensorTypes;
}

std::optional<Type> type_from_id(uint32_t id) {
    for (Type t : kTensorTypes) {
        if (static_cast<uint32_t>(t) == id) return t;
    }
    return std::nullopt;
}

std::optional<Type> type_from_name(std::string_view name) {
    for (Type t : kTensorTypes) {
        const std::string_view known = traits(t).name;
        if (known.size() != name.size()) continue;
        bool same = true;
        for (size_t i = 0; i < name.size() && same; i++) {
            same = std::tolower(static_cast<unsigned char>(name[i])) == known[i];
        }
        if (same) return t;
    }
    return std::nullopt;
}

}  // namespace ggml_lite
