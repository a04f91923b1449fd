// The type table: ggml's ids, block sizes and byte sizes, name and id lookups.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "ggml-lite/kernels.h"
#include "ggml-lite/type.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

TEST(Types, GgmlIdsAndLayouts) {
    EXPECT_EQ(static_cast<uint32_t>(Type::F32), 0u);
    EXPECT_EQ(static_cast<uint32_t>(Type::F16), 1u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q4_0), 2u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q4_1), 3u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q5_0), 6u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q5_1), 7u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q8_0), 8u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q8_1), 9u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q2_K), 10u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q3_K), 11u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q4_K), 12u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q5_K), 13u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q6_K), 14u);
    EXPECT_EQ(static_cast<uint32_t>(Type::Q8_K), 15u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ4_NL), 20u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ4_XS), 23u);
    EXPECT_EQ(static_cast<uint32_t>(Type::BF16), 30u);
    EXPECT_EQ(row_size(Type::F32, 64), 256u);
    EXPECT_EQ(row_size(Type::F16, 64), 128u);
    EXPECT_EQ(row_size(Type::BF16, 64), 128u);
    EXPECT_EQ(row_size(Type::Q8_0, 64), 68u);
    EXPECT_EQ(row_size(Type::Q4_0, 64), 36u);
    EXPECT_EQ(row_size(Type::Q4_1, 64), 40u);  // 5 bits per value
    EXPECT_EQ(row_size(Type::Q5_0, 64), 44u);  // 5.5
    EXPECT_EQ(row_size(Type::Q5_1, 64), 48u);  // 6
    EXPECT_EQ(row_size(Type::Q8_1, 64), 72u);
    EXPECT_EQ(row_size(Type::IQ4_NL, 64), 36u);  // 4.5
    EXPECT_EQ(row_size(Type::Q2_K, 512), 168u);  // 2.625 bits per value
    EXPECT_EQ(row_size(Type::Q3_K, 512), 220u);  // 3.4375
    EXPECT_EQ(row_size(Type::Q4_K, 512), 288u);  // 4.5
    EXPECT_EQ(row_size(Type::Q5_K, 512), 352u);
    EXPECT_EQ(row_size(Type::IQ4_XS, 512), 272u);  // 4.25  // 5.5
    EXPECT_EQ(row_size(Type::Q6_K, 512), 420u);    // 6.5625
    EXPECT_EQ(row_size(Type::Q8_K, 512), 584u);
    EXPECT_EQ(block_size(Type::Q4_0), 32);
    EXPECT_EQ(block_size(Type::Q4_K), 256);
    EXPECT_EQ(block_size(Type::Q6_K), 256);
    EXPECT_TRUE(traits(Type::Q4_0).quantized);
    EXPECT_FALSE(traits(Type::BF16).quantized);
}

TEST(Types, ActivationTypes) {
    EXPECT_EQ(traits(Type::Q4_0).vec_dot_type, Type::Q8_0);
    EXPECT_EQ(traits(Type::Q8_0).vec_dot_type, Type::Q8_0);
    EXPECT_EQ(traits(Type::F32).vec_dot_type, Type::F32);
    EXPECT_EQ(traits(Type::F16).vec_dot_type, Type::F32);
    EXPECT_EQ(traits(Type::BF16).vec_dot_type, Type::F32);
    EXPECT_EQ(traits(Type::Q2_K).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q3_K).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q4_K).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q6_K).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q5_K).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q5_0).vec_dot_type, Type::Q8_0);
    EXPECT_EQ(traits(Type::IQ4_NL).vec_dot_type, Type::Q8_0);
    EXPECT_EQ(traits(Type::IQ4_XS).vec_dot_type, Type::Q8_K);
    EXPECT_EQ(traits(Type::Q4_1).vec_dot_type, Type::Q8_1);
    EXPECT_EQ(traits(Type::Q5_1).vec_dot_type, Type::Q8_1);
    // Every activation type has a converter in every table; others have none. Every tensor
    // type has kernels; Q8_K, only ever activations, has none.
    for (const Kernels* k : test::all_tables()) {
        for (Type t : all_types()) {
            const bool activation = std::ranges::any_of(
                all_types(), [t](Type w) { return traits(w).vec_dot_type == t; });
            EXPECT_EQ(k->of(t).from_float != nullptr, activation)
                << isa_name(k->isa) << ' ' << type_name(t);
            EXPECT_NE(k->of(t).vec_dot, nullptr);
            EXPECT_NE(k->of(t).gemm_tile, nullptr);
        }
        EXPECT_NE(k->of(Type::Q8_K).from_float, nullptr) << isa_name(k->isa);
        EXPECT_EQ(k->of(Type::Q8_K).vec_dot, nullptr) << isa_name(k->isa);
        EXPECT_EQ(k->of(Type::Q8_K).gemm_tile, nullptr) << isa_name(k->isa);
        EXPECT_NE(k->of(Type::Q8_1).from_float, nullptr) << isa_name(k->isa);
        EXPECT_EQ(k->of(Type::Q8_1).vec_dot, nullptr) << isa_name(k->isa);
    }
}

TEST(Types, Lookups) {
    EXPECT_EQ(type_from_id(2), Type::Q4_0);
    EXPECT_EQ(type_from_id(30), Type::BF16);
    EXPECT_EQ(type_from_id(12), Type::Q4_K);
    EXPECT_EQ(type_from_id(14), Type::Q6_K);
    EXPECT_EQ(type_from_id(13), Type::Q5_K);
    EXPECT_EQ(type_from_id(20), Type::IQ4_NL);
    EXPECT_FALSE(type_from_id(34).has_value());  // TQ1_0: not known
    EXPECT_FALSE(type_from_id(9).has_value());   // Q8_1: activations only, never in a file
    EXPECT_FALSE(type_from_id(15).has_value());  // Q8_K: activations only, never in a file
    EXPECT_EQ(type_from_name("q8_0"), Type::Q8_0);
    EXPECT_EQ(type_from_name("Q4_K"), Type::Q4_K);
    EXPECT_FALSE(type_from_name("q8_k").has_value());
    EXPECT_FALSE(type_from_name("q8_1").has_value());
    EXPECT_EQ(type_from_name("IQ4_NL"), Type::IQ4_NL);
    EXPECT_EQ(type_from_name("Q4_0"), Type::Q4_0);
    EXPECT_EQ(type_from_name("BF16"), Type::BF16);
    EXPECT_FALSE(type_from_name("q4").has_value());
    EXPECT_FALSE(type_from_name("").has_value());
    for (Type t : all_types()) EXPECT_EQ(type_from_name(type_name(t)), t);
}

// Every row of the table is at its own slot; the tensor types are the rows so marked. A value
// that is no type is an error wherever it is looked up.
TEST(Types, SlotsAndUnknownTypes) {
    ASSERT_EQ(type_table().size(), static_cast<size_t>(kTypeCount));
    std::vector<Type> tensors;
    for (int slot = 0; slot < kTypeCount; slot++) {
        const TypeTraits& row = type_table()[slot];
        EXPECT_EQ(type_slot(row.type), slot) << row.name;
        EXPECT_EQ(&traits(row.type), &row) << row.name;
        EXPECT_EQ(type_from_id(static_cast<uint32_t>(row.type)).has_value(), row.tensor);
        if (row.tensor) tensors.push_back(row.type);
    }
    EXPECT_EQ(tensors, std::vector<Type>(all_types().begin(), all_types().end()));
    EXPECT_FALSE(traits(Type::Q8_K).tensor);
    for (uint32_t id : {4u, 34u, 31u, 1000u}) {
        EXPECT_THROW(type_slot(static_cast<Type>(id)), std::invalid_argument) << id;
        EXPECT_THROW(traits(static_cast<Type>(id)), std::invalid_argument) << id;
        EXPECT_THROW(kernels_scalar().of(static_cast<Type>(id)), std::invalid_argument) << id;
        EXPECT_FALSE(type_from_id(id).has_value()) << id;
    }
}

TEST(Types, FloatCodecsRoundTrip) {
    const std::vector<float> x = {1.0f, -0.5f, 3.25f, 0.0f};
    std::vector<uint8_t> buf(16);
    std::vector<float> y(4);
    for (Type t : all_types()) {
        if (traits(t).quantized) continue;
        traits(t).from_float(x.data(), buf.data(), 4);
        traits(t).to_float(buf.data(), y.data(), 4);
        EXPECT_EQ(x, y) << type_name(t);  // all exactly representable
    }
}

}  // namespace
}  // namespace ggml_lite
