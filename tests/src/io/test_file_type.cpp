// The file types --type accepts: names, and the general.file_type ids llama.cpp gives them.
#include <gtest/gtest.h>

#include "src/io/file_type.h"

namespace lila {
namespace {

using ggml_lite::Type;

TEST(FileTypes, NamesAndGgufIds) {
    EXPECT_EQ(file_type_names(), "f32, f16, bf16, q8_0, q4_0, q4_k, q6_k, q4_k_m");
    struct Case {
        const char* name;
        Type base;
        bool q4_k_m;
        uint32_t id;  // llama.cpp's LLAMA_FTYPE_*
    };
    for (const Case& c :
         {Case{"f32", Type::F32, false, 0}, Case{"F16", Type::F16, false, 1},
          Case{"q4_0", Type::Q4_0, false, 2}, Case{"q8_0", Type::Q8_0, false, 7},
          Case{"q4_k", Type::Q4_K, false, 14}, Case{"Q4_K_M", Type::Q4_K, true, 15},
          Case{"q6_k", Type::Q6_K, false, 18}, Case{"bf16", Type::BF16, false, 32}}) {
        const std::optional<FileType> ft = file_type_from_name(c.name);
        ASSERT_TRUE(ft.has_value()) << c.name;
        EXPECT_EQ(ft->base, c.base) << c.name;
        EXPECT_EQ(ft->q4_k_m, c.q4_k_m) << c.name;
        EXPECT_EQ(gguf_file_type(*ft), c.id) << c.name;
    }
    EXPECT_EQ(file_type_name(FileType::Q4_K_M()), "q4_k_m");
    for (const char* bad : {"q8_k", "q5_k", "q4_k_s", "q4_0_m", "", "q4"}) {
        EXPECT_FALSE(file_type_from_name(bad).has_value()) << bad;
    }
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
