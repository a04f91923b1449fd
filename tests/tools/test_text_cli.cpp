// `lila generate` and `lila tokenize` at the edges of their text: an empty prompt, an empty
// text, and a model file whose special-token ids are out of range.
#include <gtest/gtest.h>

#include <string>

#include "fixtures/arch_models.h"
#include "fixtures/stories.h"
#include "run_lila.h"
#include "src/io/gguf.h"
#include "test_util.h"

namespace lila {
namespace {

using test::run_lila;

// After BOS a piece's leading space is the SentencePiece word marker, not text: llama2.c
// prints none, and neither does lila.
TEST(TextCli, EmptyPromptContinuesWithoutALeadingSpace) {
    const std::string model = test::stories_model(ggml_lite::Type::F32);
    const test::LilaResult r =
        run_lila({"generate", "-m", model, "-p", "", "-n", "4", "--temp", "0"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "Once upon a time\n");
}

TEST(TextCli, EmptyTextHasNoTokens) {
    const std::string model = test::stories_model(ggml_lite::Type::F32);
    test::LilaResult r = run_lila({"tokenize", "-m", model, "-p", "", "--ids", "--no-bos"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "[]\n");
    r = run_lila({"tokenize", "-m", model, "-p", "", "--no-bos"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    r = run_lila({"tokenize", "-m", model, "-p", "", "--ids"});  // the model adds BOS
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "[1]\n");
}

// llama.cpp's llama-convert-llama2c-to-ggml writes padding_token_id = -1 as a u32: the file
// loads, with a warning naming the key.
TEST(TextCli, OutOfRangeSpecialIdIsAWarning) {
    test::TempDir dir;
    const auto src = GGUFFile::open(test::stories_model(ggml_lite::Type::F32));
    GGUFWriter w;
    for (const auto& [key, value] : src->metadata()) w.set(key, value);
    w.set("tokenizer.ggml.padding_token_id", GGUFValue::u32(4294967295u));
    for (const GGUFTensorInfo& t : src->tensors()) {
        w.add_tensor(t.name, t.type, t.shape, [&t](std::vector<uint8_t>& bytes) {
            const auto* p = static_cast<const uint8_t*>(t.data);
            bytes.assign(p, p + t.nbytes);
        });
    }
    const std::string path = dir.path("pad.gguf");
    w.write(path);
    const test::LilaResult r = run_lila({"tokenize", "-m", path, "-p", "Once", "--ids"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("lila: warning: " + path +
                         ": tokenizer.ggml.padding_token_id: token id 4294967295 is out of range"),
              std::string::npos)
        << r.err;
}

// Every architecture's file is named by `lila info`, generates and scores text.
TEST(TextCli, EveryArchitectureRunsEveryJob) {
    const std::string text = test::shared_path("data/tinystories/tinystories_val.txt");
    for (const ModelPreset& p : test::tiny_arch_presets()) {
        SCOPED_TRACE(p.name);
        const std::string model = test::tiny_arch_model(p.name);
        test::LilaResult r = run_lila({"info", model});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find(std::string("arch:        ") + p.arch + "\n"), std::string::npos);
        r = run_lila({"generate", "-m", model, "-p", "Once", "-n", "8", "--temp", "0"});
        EXPECT_EQ(r.status, 0) << r.err;
        r = run_lila({"perplexity", "-m", model, "-f", text, "-c", "64", "--chunks", "1"});
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("Final estimate: PPL = "), std::string::npos) << r.out;
    }
}

}  // namespace
}  // namespace lila
