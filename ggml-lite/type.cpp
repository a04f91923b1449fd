// The type table: one row per element type.
#include "type.h"

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

void f16_to_float(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const fp16_t*>(src);
    for (int64_t i = 0; i < n; i++) dst[i] = fp16_to_fp32(h[i]);
}
void f16_from_float(const float* src, void* dst, int64_t n) {
    auto* h = static_cast<fp16_t*>(dst);
    for (int64_t i = 0; i < n; i++) h[i] = fp32_to_fp16(src[i]);
}

void bf16_to_float(const void* src, float* dst, int64_t n) {
    const auto* h = static_cast<const bf16_t*>(src);
    for (int64_t i = 0; i < n; i++) dst[i] = bf16_to_fp32(h[i]);
}
void bf16_from_float(const float* src, void* dst, int64_t n) {
    auto* h = static_cast<bf16_t*>(dst);
    for (int64_t i = 0; i < n; i++) h[i] = fp32_to_bf16(src[i]);
}

void q8_0_to_float(const void* src, float* dst, int64_t n) {
    dequantize_row_q8_0(static_cast<const block_q8_0*>(src), dst, n);
}
void q8_0_from_float(const float* src, void* dst, int64_t n) {
    quantize_row_q8_0_ref(src, static_cast<block_q8_0*>(dst), n);
}

void q4_0_to_float(const void* src, float* dst, int64_t n) {
    dequantize_row_q4_0(static_cast<const block_q4_0*>(src), dst, n);
}
void q4_0_from_float(const float* src, void* dst, int64_t n) {
    quantize_row_q4_0_ref(src, static_cast<block_q4_0*>(dst), n);
}

void q4_K_to_float(const void* src, float* dst, int64_t n) {
    dequantize_row_q4_K(static_cast<const block_q4_K*>(src), dst, n);
}
void q4_K_from_float(const float* src, void* dst, int64_t n) {
    quantize_row_q4_K_ref(src, static_cast<block_q4_K*>(dst), n);
}

void q6_K_to_float(const void* src, float* dst, int64_t n) {
    dequantize_row_q6_K(static_cast<const block_q6_K*>(src), dst, n);
}
void q6_K_from_float(const float* src, void* dst, int64_t n) {
    quantize_row_q6_K_ref(src, static_cast<block_q6_K*>(dst), n);
}

void q8_K_to_float(const void* src, float* dst, int64_t n) {
    dequantize_row_q8_K(static_cast<const block_q8_K*>(src), dst, n);
}
void q8_K_from_float(const float* src, void* dst, int64_t n) {
    quantize_row_q8_K_ref(src, static_cast<block_q8_K*>(dst), n);
}

// Float weights are dotted with float activations; quantized ones with 8-bit activations of
// the same block size (Q8_0, Q8_K), so the inner loop is an integer dot product.
constexpr TypeTraits kF32Traits{"f32",         1, sizeof(float), false, Type::F32, f32_to_float,
                                f32_from_float};
constexpr TypeTraits kF16Traits{"f16",         1, sizeof(fp16_t), false, Type::F32, f16_to_float,
                                f16_from_float};
constexpr TypeTraits kBF16Traits{"bf16",         1, sizeof(bf16_t), false, Type::F32, bf16_to_float,
                                 bf16_from_float};
constexpr TypeTraits kQ8_0Traits{"q8_0",     QK8_0,         sizeof(block_q8_0), true,
                                 Type::Q8_0, q8_0_to_float, q8_0_from_float};
constexpr TypeTraits kQ4_0Traits{"q4_0",     QK4_0,         sizeof(block_q4_0), true,
                                 Type::Q8_0, q4_0_to_float, q4_0_from_float};
// The k-quants work on 256-value super-blocks, and so do their activations.
constexpr TypeTraits kQ4_KTraits{"q4_k",     QK_K,          sizeof(block_q4_K), true,
                                 Type::Q8_K, q4_K_to_float, q4_K_from_float};
constexpr TypeTraits kQ6_KTraits{"q6_k",     QK_K,          sizeof(block_q6_K), true,
                                 Type::Q8_K, q6_K_to_float, q6_K_from_float};
constexpr TypeTraits kQ8_KTraits{"q8_k",     QK_K,          sizeof(block_q8_K), true,
                                 Type::Q8_K, q8_K_to_float, q8_K_from_float};

// The tensor types, which files and users may name. Q8_K is not among them: ggml never stores
// it and no kernel takes it as weights.
constexpr Type kAllTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q8_0,
                              Type::Q4_0, Type::Q4_K, Type::Q6_K};

}  // namespace

const TypeTraits& traits(Type t) {
    switch (t) {
        case Type::F32:
            return kF32Traits;
        case Type::F16:
            return kF16Traits;
        case Type::BF16:
            return kBF16Traits;
        case Type::Q8_0:
            return kQ8_0Traits;
        case Type::Q4_0:
            return kQ4_0Traits;
        case Type::Q4_K:
            return kQ4_KTraits;
        case Type::Q6_K:
            return kQ6_KTraits;
        case Type::Q8_K:
            return kQ8_KTraits;
    }
    // Only reachable through a cast from an unchecked integer; type_from_id() guards files.
    throw std::invalid_argument("ggml-lite: unknown type id " +
                                std::to_string(static_cast<uint32_t>(t)));
}

std::optional<Type> type_from_id(uint32_t id) {
    for (Type t : kAllTypes) {
        if (static_cast<uint32_t>(t) == id) return t;
    }
    return std::nullopt;
}

std::optional<Type> type_from_name(std::string_view name) {
    for (Type t : kAllTypes) {
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
