// The `lila` binary on bad input, as a user meets it: missing, empty, truncated and corrupt
// files, text that is not UTF-8, a prompt longer than the context, out-of-range and unknown
// flags. Each must end with a non-zero exit status (never a signal) and a one-line message
// that names the file or flag at fault.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "fixtures/stories.h"
#include "run_lila.h"
#include "src/io/gguf.h"
#include "test_util.h"

namespace lila {
namespace {

using Result = test::LilaResult;
using test::run_lila;

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        out.push_back(text.substr(start, nl - start));
    }
    if (start < text.size()) out.push_back(text.substr(start));
    return out;
}

// Fails unless `r` is a clean error exit whose stderr is exactly one line naming each of
// `names`. `after_load`: the problem showed only once the model was loaded, so the progress
// report ("loaded ...", "tokenized ...") comes first, and the error is the last line.
void expect_failure(const Result& r, const std::vector<std::string>& names,
                    bool after_load = false) {
    ASSERT_FALSE(WIFSIGNALED(r.status))
        << "killed by signal " << WTERMSIG(r.status) << ": " << r.err;
    ASSERT_TRUE(WIFEXITED(r.status));
    EXPECT_NE(WEXITSTATUS(r.status), 0) << r.err;
    std::vector<std::string> err = lines(r.err);
    if (after_load && err.size() > 1) {
        EXPECT_TRUE(err.front().starts_with("loaded ")) << r.err;
        err.erase(err.begin(), err.end() - 1);
    }
    ASSERT_EQ(err.size(), 1u) << "stderr:\n" << r.err;
    EXPECT_TRUE(err[0].starts_with("lila: error: ")) << err[0];
    for (const std::string& name : names) {
        EXPECT_NE(err[0].find(name), std::string::npos) << "'" << name << "' not in: " << err[0];
    }
}

void expect_error(const std::vector<std::string>& args, const std::vector<std::string>& names,
                  bool after_load = false) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run_lila(args), names, after_load);
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// stories260K converted by the binary itself, as a user would, once for the whole suite.
class BadInput : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new test::TempDir;
        model_ = dir_->path("stories260K.gguf");
        const Result r = run_lila({"convert", test::stories_checkpoint(), "--tokenizer",
                                   test::stories_tokenizer(), "-o", model_, "--type", "q8_0"});
        ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }

    const std::string& model() const { return model_; }
    std::string path(const std::string& name) const { return dir_->path(name); }
    // A copy of the model with `edit` applied to its bytes.
    std::string edited_model(const std::string& name,
                             const std::function<void(std::string&)>& edit) const {
        std::string bytes = test::read_file(model_);
        edit(bytes);
        write_bytes(path(name), bytes);
        return path(name);
    }

private:
    static test::TempDir* dir_;
    static std::string model_;
};

test::TempDir* BadInput::dir_ = nullptr;
std::string BadInput::model_;

// Every command that reads a model file, with what else it needs to get that far.
std::vector<std::vector<std::string>> model_commands(const std::string& m) {
    return {
        {"info", m},
        {"generate", "-m", m, "-p", "Once", "-n", "4"},
        {"tokenize", "-m", m, "-p", "Once"},
        {"perplexity", "-m", m, "-f", test::shared_path("data/tinystories/tinystories_val.txt")},
        {"bench", "-m", m, "-p", "8", "-n", "4", "-r", "1"},
        {"chat", "-m", m},
        {"convert", m, "-o", m + ".out.gguf"}};
}

TEST_F(BadInput, MissingModelFile) {
    const std::string missing = path("no-such-model.gguf");
    for (const auto& args : model_commands(missing)) expect_error(args, {missing});
}

TEST_F(BadInput, DirectoryInsteadOfModelFile) {
    const std::string dir = path("a-directory");
    std::filesystem::create_directory(dir);
    for (auto args : model_commands(dir)) {
        if (args[0] == "convert") continue;  // a directory is a Hugging Face model: below
        expect_error(args, {dir});
    }
    expect_error({"convert", dir, "-o", path("out.gguf")}, {dir, "config.json"});
}

TEST_F(BadInput, EmptyModelFile) {
    const std::string empty = path("empty.gguf");
    write_bytes(empty, "");
    for (const auto& args : model_commands(empty)) {
        if (args[0] == "convert") {
            // Not GGUF: taken for a llama2.c checkpoint, which needs a tokenizer first.
            expect_error({"convert", empty, "--tokenizer", test::stories_tokenizer(), "-o",
                          path("out.gguf")},
                         {empty});
            continue;
        }
        expect_error(args, {empty});
    }
}

// Cut in the header and every few kilobytes after: an error until the cut is at or past the end
// of the last tensor's data (only alignment padding is lost), then a model. Every byte is cut
// in-process by GGUF.TruncationAtEveryByteIsAnError; a process per cut (slow under the
// sanitizers) is for what the command adds, so the header is cut every few bytes here.
TEST_F(BadInput, TruncatedModelAtManyCutPoints) {
    const std::string bytes = test::read_file(model());
    const auto f = GGUFFile::open(model());
    const GGUFTensorInfo& last = f->tensors().back();
    const size_t data_end = f->data_offset() + last.offset + last.nbytes;
    std::vector<size_t> cuts;
    for (size_t c = 1; c < 200; c += 3) cuts.push_back(c);
    for (size_t c = 200; c < bytes.size(); c += bytes.size() / 97) cuts.push_back(c);
    for (size_t c : {f->data_offset() - 1, f->data_offset(), data_end - 1, data_end}) {
        cuts.push_back(c);
    }
    const std::string cut_path = path("truncated.gguf");
    for (size_t cut : cuts) {
        SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
        write_bytes(cut_path, bytes.substr(0, cut));
        const Result r = run_lila({"info", cut_path});
        if (cut >= data_end) {
            EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
        } else {
            expect_failure(r, {cut_path});
        }
    }
    // The commands that run the model fail the same way.
    write_bytes(cut_path, bytes.substr(0, bytes.size() / 2));
    for (const auto& args : model_commands(cut_path)) expect_error(args, {cut_path, "truncated"});
}

// Where the fields of each tensor info lie in a GGUF file, found by walking the header.
struct TensorInfoAt {
    std::string name;
    size_t dims, type, offset;  // byte positions of dims[0], the type id and the data offset
};

std::vector<TensorInfoAt> tensor_infos(const std::string& b) {
    size_t pos = 8;
    auto u32 = [&] {
        uint32_t v;
        std::memcpy(&v, b.data() + pos, 4);
        pos += 4;
        return v;
    };
    auto u64 = [&] {
        uint64_t v;
        std::memcpy(&v, b.data() + pos, 8);
        pos += 8;
        return v;
    };
    auto str = [&] {
        const uint64_t n = u64();
        pos += n;
        return b.substr(pos - n, n);
    };
    auto skip_value = [&](uint32_t type, auto& self) -> void {
        static constexpr size_t kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == uint32_t(GGUFType::STRING)) {
            str();
        } else if (type == uint32_t(GGUFType::ARRAY)) {
            const uint32_t elem = u32();
            for (uint64_t i = 0, n = u64(); i < n; i++) self(elem, self);
        } else {
            pos += kSize[type];
        }
    };
    const uint64_t n_tensors = u64(), n_kv = u64();
    for (uint64_t i = 0; i < n_kv; i++) {
        str();
        skip_value(u32(), skip_value);
    }
    std::vector<TensorInfoAt> infos;
    for (uint64_t i = 0; i < n_tensors; i++) {
        TensorInfoAt t;
        t.name = str();
        const uint32_t n_dims = u32();
        t.dims = pos;
        pos += 8 * n_dims;
        t.type = pos;
        pos += 4;
        t.offset = pos;
        pos += 8;
        infos.push_back(t);
    }
    return infos;
}

template <class T>
void poke(std::string& bytes, size_t pos, T v) {
    std::memcpy(bytes.data() + pos, &v, sizeof v);
}

const TensorInfoAt& info_of(const std::vector<TensorInfoAt>& infos, const std::string& name) {
    for (const TensorInfoAt& t : infos) {
        if (t.name == name) return t;
    }
    throw std::runtime_error("no tensor " + name);
}

TEST_F(BadInput, CorruptTensorOffset) {
    const auto infos = tensor_infos(test::read_file(model()));
    const TensorInfoAt& t = info_of(infos, "token_embd.weight");
    const std::string past_end = edited_model("offset-past-end.gguf", [&](std::string& b) {
        poke<uint64_t>(b, t.offset, uint64_t(1) << 40);
    });
    expect_error({"info", past_end}, {past_end, "token_embd.weight", "past the end"});
    expect_error({"generate", "-m", past_end, "-p", "x"}, {past_end, "token_embd.weight"});
    const std::string unaligned = edited_model(
        "offset-unaligned.gguf", [&](std::string& b) { poke<uint64_t>(b, t.offset, 1); });
    expect_error({"info", unaligned}, {unaligned, "token_embd.weight", "alignment"});
}

TEST_F(BadInput, UnsupportedAndUnknownTensorType) {
    const auto infos = tensor_infos(test::read_file(model()));
    const TensorInfoAt& t = info_of(infos, "blk.0.attn_q.weight");
    const std::string mxfp4 = edited_model("type-mxfp4.gguf", [&](std::string& b) {
        poke<uint32_t>(b, t.type, 39);  // ggml's MXFP4: a real type lila does not implement
    });
    for (const auto& args : model_commands(mxfp4)) {
        expect_error(args, {mxfp4, "blk.0.attn_q.weight", "mxfp4", "not supported"});
    }
    const std::string unknown =
        edited_model("type-unknown.gguf", [&](std::string& b) { poke<uint32_t>(b, t.type, 1000); });
    expect_error({"info", unknown}, {unknown, "blk.0.attn_q.weight", "unknown type id 1000"});
}

TEST_F(BadInput, CorruptTensorShape) {
    const auto infos = tensor_infos(test::read_file(model()));
    // A norm of 32 floats where the model needs 64: the file is consistent, the model not.
    const TensorInfoAt& norm = info_of(infos, "blk.0.attn_norm.weight");
    const std::string narrow = edited_model(
        "shape-narrow.gguf", [&](std::string& b) { poke<uint64_t>(b, norm.dims, 32); });
    expect_error({"info", narrow}, {narrow, "blk.0.attn_norm.weight", "shape"});
    expect_error({"generate", "-m", narrow, "-p", "x"}, {narrow, "blk.0.attn_norm.weight"});
    // A Q8_0 row of 63 elements: not a whole number of 32-element blocks.
    const TensorInfoAt& q = info_of(infos, "blk.0.attn_q.weight");
    const std::string ragged =
        edited_model("shape-ragged.gguf", [&](std::string& b) { poke<uint64_t>(b, q.dims, 63); });
    expect_error({"info", ragged}, {ragged, "blk.0.attn_q.weight", "block size"});
    // More rows than the file holds.
    const std::string huge = edited_model("shape-huge.gguf", [&](std::string& b) {
        poke<uint64_t>(b, q.dims + 8, uint64_t(1) << 40);
    });
    expect_error({"info", huge}, {huge, "blk.0.attn_q.weight"});
}

TEST_F(BadInput, TextFileThatIsNotUtf8) {
    const std::string latin1 = path("latin1.txt");
    write_bytes(latin1, "Once upon a time there was a caf\xE9.\n");
    expect_error({"generate", "-m", model(), "-f", latin1}, {latin1, "UTF-8", "offset 32"});
    expect_error({"tokenize", "-m", model(), "-f", latin1}, {latin1, "UTF-8"});
    expect_error({"perplexity", "-m", model(), "-f", latin1}, {latin1, "UTF-8"});
}

TEST_F(BadInput, MissingOrDirectoryTextFile) {
    const std::string missing = path("no-such.txt"), dir = path("text-dir");
    std::filesystem::create_directory(dir);
    for (const std::string& f : {missing, dir}) {
        expect_error({"generate", "-m", model(), "-f", f}, {f});
        expect_error({"tokenize", "-m", model(), "-f", f}, {f});
        expect_error({"perplexity", "-m", model(), "-f", f}, {f});
    }
}

TEST_F(BadInput, PromptLongerThanTheContext) {
    std::string prompt;
    for (int i = 0; i < 40; i++) prompt += "Once upon a time ";
    expect_error({"generate", "-m", model(), "-c", "16", "-p", prompt}, {"prompt", "-c"}, true);
    // Perplexity scores the second half of each context, so it needs two contexts of text.
    const std::string short_text = path("short.txt");
    write_bytes(short_text, "Once upon a time.\n");
    expect_error({"perplexity", "-m", model(), "-c", "512", "-f", short_text},
                 {"needs at least 1024"}, true);
}

TEST_F(BadInput, ChatMessageLongerThanTheContextIsRefusedAndChatGoesOn) {
    const std::string input = path("long-message.txt");
    std::string message;
    for (int i = 0; i < 40; i++) message += "Once upon a time ";
    write_bytes(input, message + "\nHello\n");
    const Result r = run_lila({"chat", "-m", model(), "-c", "64", "-n", "4", "--temp", "0"}, input);
    ASSERT_TRUE(WIFEXITED(r.status)) << r.err;
    EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
    EXPECT_NE(r.err.find("too long"), std::string::npos) << r.err;
}

TEST_F(BadInput, ZeroThreads) {
    expect_error({"generate", "-m", model(), "-p", "x", "-t", "0"}, {"--threads", "lila generate"});
    expect_error({"perplexity", "-m", model(), "-f", model(), "-t", "0"}, {"--threads"});
    expect_error({"bench", "-m", model(), "-t", "0"}, {"--threads"});
    expect_error({"bench", "-m", model(), "-t", "2,0"}, {"--threads"});
    expect_error({"chat", "-m", model(), "-t", "0"}, {"--threads"});
    expect_error({"convert", test::stories_checkpoint(), "--tokenizer", test::stories_tokenizer(),
                  "-o", path("t0.gguf"), "-t", "0"},
                 {"--threads"});
}

TEST_F(BadInput, ZeroContext) {
    expect_error({"generate", "-m", model(), "-p", "x", "-c", "0"}, {"--ctx-size"});
    expect_error({"perplexity", "-m", model(), "-f", model(), "-c", "0"}, {"--ctx-size"});
    expect_error({"chat", "-m", model(), "-c", "0"}, {"--ctx-size"});
}

TEST_F(BadInput, NegativeCounts) {
    expect_error({"generate", "-m", model(), "-p", "x", "-n", "-1"}, {"--n-predict", "-1"});
    expect_error({"chat", "-m", model(), "-n", "-2"}, {"--n-predict"});
    expect_error({"bench", "-m", model(), "-n", "-1"}, {"--n-gen"});
    expect_error({"bench", "-m", model(), "-p", "-8"}, {"--n-prompt"});
    expect_error({"bench", "-m", model(), "-d", "-1"}, {"--depth"});
    expect_error({"perplexity", "-m", model(), "-f", model(), "-b", "-1"}, {"--batch-size"});
}

TEST_F(BadInput, UnknownFlagsAndCommands) {
    const std::string text = test::shared_path("data/tinystories/tinystories_val.txt");
    const std::vector<std::vector<std::string>> commands = {
        {"convert", test::stories_checkpoint(), "-o", path("x.gguf")},
        {"generate", "-m", model(), "-p", "x"},
        {"info", model()},
        {"tokenize", "-m", model(), "-p", "x"},
        {"perplexity", "-m", model(), "-f", text},
        {"bench", "-m", model()},
        {"chat", "-m", model()}};
    for (std::vector<std::string> args : commands) {
        const std::string usage = "lila " + args[0] + " --help";
        args.push_back("--no-such-flag");
        expect_error(args, {"--no-such-flag", usage});
        // A required flag missing is named the same way.
        if (args[1] == "-m") expect_error({args[0]}, {"--model", usage});
    }
    expect_error({"frobnicate", "-m", model()}, {"frobnicate"});
    expect_error(std::vector<std::string>{}, {"subcommand"});
}

TEST_F(BadInput, ConvertInputs) {
    const std::string out = path("convert-out.gguf");
    const std::string missing = path("no-such.bin");
    expect_error({"convert", missing, "--tokenizer", test::stories_tokenizer(), "-o", out},
                 {missing});
    expect_error({"convert", test::stories_checkpoint(), "-o", out},
                 {test::stories_checkpoint(), "--tokenizer"});
    expect_error({"convert", test::stories_checkpoint(), "--tokenizer", missing, "-o", out},
                 {missing});
    const std::string half = path("half.bin");
    const std::string bin = test::read_file(test::stories_checkpoint());
    write_bytes(half, bin.substr(0, bin.size() / 2));
    expect_error({"convert", half, "--tokenizer", test::stories_tokenizer(), "-o", out},
                 {half, "truncated"});
    expect_error({"convert", test::stories_checkpoint(), "--tokenizer", test::stories_tokenizer(),
                  "-o", out, "--type", "q9_9"},
                 {"--type", "q9_9"});
    // A type lila reads but cannot write: named as such, not as unknown.
    expect_error({"convert", test::stories_checkpoint(), "--tokenizer", test::stories_tokenizer(),
                  "-o", out, "--type", "iq2_xxs"},
                 {"--type iq2_xxs", "cannot write", "importance matrix"});
    // A header of in-range sizes whose weights add up to just over 2^64 bytes: the size
    // check once wrapped around and took this 28-byte file for a whole model.
    const std::string wrapped = "tests/data/fuzz/llama2c/size-check-overflow.bin";  // from the root
    expect_error({"convert", wrapped, "--tokenizer", test::stories_tokenizer(), "-o", out},
                 {wrapped, "truncated"});
    const std::string no_dir = path("no-such-dir/out.gguf");
    expect_error({"convert", test::stories_checkpoint(), "--tokenizer", test::stories_tokenizer(),
                  "-o", no_dir},
                 {no_dir});
    EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace lila
