// `lila convert --type` names what llama-quantize names: q4_0 is llama.cpp's Q4_0 file (the
// output matrix in Q6_K), --pure one type everywhere.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "fixtures/stories.h"
#include "run_lila.h"
#include "src/io/gguf.h"
#include "test_util.h"

namespace lila {
namespace {

using ggml_lite::Type;

std::map<std::string, Type> tensor_types(const std::string& path) {
    std::map<std::string, Type> types;
    const auto file = GGUFFile::open(path);
    for (const GGUFTensorInfo& t : file->tensors()) types[t.name] = t.type;
    return types;
}

// stories260K: 64-wide rows (the tied output's Q6_K falls back to Q8_0), FFN 172 (ffn_down F16).
TEST(ConvertCli, TypeNamesAreLlamaQuantizesAndPureIsOneType) {
    test::TempDir tmp;
    const std::string in = test::stories_model(Type::F32);
    const std::string named = tmp.path("q4_0.gguf"), pure = tmp.path("q4_0-pure.gguf");
    test::LilaResult r = test::run_lila({"convert", in, "--type", "q4_0", "-o", named});
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run_lila({"convert", in, "--type", "Q4_0", "--pure", "-o", pure});
    ASSERT_EQ(r.status, 0) << r.err;

    std::map<std::string, Type> types = tensor_types(named);
    EXPECT_EQ(types.at("token_embd.weight"), Type::Q8_0);
    EXPECT_EQ(types.at("blk.0.attn_q.weight"), Type::Q4_0);
    EXPECT_EQ(types.at("blk.4.ffn_down.weight"), Type::F16);
    EXPECT_EQ(types.at("blk.0.attn_norm.weight"), Type::F32);
    types = tensor_types(pure);
    EXPECT_EQ(types.at("token_embd.weight"), Type::Q4_0);
    EXPECT_EQ(types.at("blk.0.attn_q.weight"), Type::Q4_0);
    EXPECT_EQ(types.at("blk.4.ffn_down.weight"), Type::F16);
    // Both are llama.cpp's MOSTLY_Q4_0, as llama-quantize with and without --pure writes.
    EXPECT_EQ(GGUFFile::open(named)->get_int("general.file_type"), 2);
    EXPECT_EQ(GGUFFile::open(pure)->get_int("general.file_type"), 2);
}

}  // namespace
}  // namespace lila
