// The file types --type accepts: names, and the general.file_type ids llama.cpp gives them.
#include <gtest/gtest.h>

#include "src/io/file_type.h"

namespace lila {
namespace {

using ggml_lite::Type;

TEST(FileTypes, NamesAndGgufIds) {
    EXPECT_EQ(file_type_names(),
              "f32, f16, bf16, q8_0, q4_0, q4_k, q6_k, q4_k_m, q4_1, q5_0, q5_1, q5_k, iq4_nl, "
              "iq4_xs, q4_k_s, q5_k_s, q5_k_m, q2_k, q3_k, q3_k_s, q3_k_m, q3_k_l");
    struct Case {
        const char* name;
        Type base;
        Mix mix;
        uint32_t id;  // llama.cpp's LLAMA_FTYPE_*
    };
    for (const Case& c : {Case{"f32", Type::F32, Mix::None, 0},
                          Case{"F16", Type::F16, Mix::None, 1},
                          Case{"q4_0", Type::Q4_0, Mix::Mostly, 2},
                          Case{"q4_1", Type::Q4_1, Mix::Mostly, 3},
                          Case{"q8_0", Type::Q8_0, Mix::None, 7},
                          Case{"q5_0", Type::Q5_0, Mix::Mostly, 8},
                          Case{"q5_1", Type::Q5_1, Mix::Mostly, 9},
                          Case{"q4_k", Type::Q4_K, Mix::None, 14},
                          Case{"q4_k_s", Type::Q4_K, Mix::S, 14},
                          Case{"Q4_K_M", Type::Q4_K, Mix::M, 15},
                          Case{"q5_k", Type::Q5_K, Mix::None, 16},
                          Case{"q5_k_s", Type::Q5_K, Mix::S, 16},
                          Case{"q5_k_m", Type::Q5_K, Mix::M, 17},
                          Case{"q6_k", Type::Q6_K, Mix::None, 18},
                          Case{"iq4_nl", Type::IQ4_NL, Mix::Mostly, 25},
                          Case{"iq4_xs", Type::IQ4_XS, Mix::Mostly, 30},
                          Case{"bf16", Type::BF16, Mix::None, 32},
                          Case{"q2_k", Type::Q2_K, Mix::Mostly, 10},
                          Case{"q3_k", Type::Q3_K, Mix::None, 11},
                          Case{"q3_k_s", Type::Q3_K, Mix::S, 11},
                          Case{"Q3_K_M", Type::Q3_K, Mix::M, 12},
                          Case{"q3_k_l", Type::Q3_K, Mix::L, 13}}) {
        const std::optional<FileType> ft = file_type_from_name(c.name);
        ASSERT_TRUE(ft.has_value()) << c.name;
        EXPECT_EQ(ft->base, c.base) << c.name;
        EXPECT_EQ(ft->mix, c.mix) << c.name;
        EXPECT_EQ(gguf_file_type(*ft), c.id) << c.name;
    }
    EXPECT_EQ(file_type_name(FileType::Q4_K_M()), "q4_k_m");
    EXPECT_EQ(file_type_name(FileType::Q2_K()), "q2_k");
    for (const char* bad : {"q8_k", "q8_1", "q6_k_m", "q4_0_m", "q2_k_s", "q4_k_l", "", "q4"}) {
        EXPECT_FALSE(file_type_from_name(bad).has_value()) << bad;
    }
}

// An id read back means what llama.cpp means by it: the _S mix where lila's one-type file
// shares its id.
TEST(FileTypes, FromGgufId) {
    EXPECT_EQ(file_type_from_gguf(15), FileType::Q4_K_M());
    EXPECT_EQ(file_type_from_gguf(14), FileType(Type::Q4_K, Mix::S));
    EXPECT_EQ(file_type_from_gguf(16), FileType(Type::Q5_K, Mix::S));
    EXPECT_EQ(file_type_from_gguf(11), FileType(Type::Q3_K, Mix::S));
    EXPECT_EQ(gguf_file_type(FileType(Type::Q4_K)), 14u);
    EXPECT_EQ(file_type_from_gguf(12), FileType(Type::Q3_K, Mix::M));
    EXPECT_EQ(file_type_from_gguf(13), FileType(Type::Q3_K, Mix::L));
    EXPECT_EQ(file_type_from_gguf(10), FileType::Q2_K());
    EXPECT_EQ(file_type_from_gguf(2), FileType(Type::Q4_0, Mix::Mostly));
    // A pure file has its named type's id, as llama-quantize --pure writes it.
    EXPECT_EQ(gguf_file_type(FileType(Type::Q4_0, Mix::Mostly).pure()), 2u);
    EXPECT_EQ(gguf_file_type(FileType::Q2_K().pure()), 10u);
    EXPECT_EQ(gguf_file_type(FileType(Type::IQ4_XS)), 30u);
    EXPECT_FALSE(file_type_from_gguf(21).has_value());  // Q2_K_S
    EXPECT_FALSE(file_type_from_gguf(1000).has_value());
}

TEST(FileTypes, EveryListedNameRoundTrips) {
    std::string names = file_type_names();
    for (size_t start = 0; start < names.size();) {
        const size_t end = std::min(names.find(", ", start), names.size());
        const std::string name = names.substr(start, end - start);
        const std::optional<FileType> ft = file_type_from_name(name);
        ASSERT_TRUE(ft.has_value()) << name;
        EXPECT_EQ(file_type_name(*ft), name);
        start = end + 2;
    }
}

}  // namespace
}  // namespace lila
