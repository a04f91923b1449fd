// GGUF: writer -> reader round trips, the exact byte layout, and rejection of corrupt files.
// Corrupt files are built by hand (not by GGUFWriter) so that any one field can be wrong.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "src/base/error.h"
#include "src/io/gguf.h"
#include "test_util.h"

namespace lila {
namespace {

using ggml_lite::Type;
namespace fs = std::filesystem;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// ---- Hand-built GGUF bytes -------------------------------------------------------------

template <class T>
std::string le(T v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string gstr(std::string_view s) {
    return le<uint64_t>(s.size()) + std::string(s);
}

std::string header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return "GGUF" + le(version) + le(n_tensors) + le(n_kv);
}

std::string kv(std::string_view key, GGUFType type, const std::string& payload) {
    return gstr(key) + le(uint32_t(type)) + payload;
}

std::string kv_u32(std::string_view key, uint32_t v) {
    return kv(key, GGUFType::UINT32, le(v));
}

std::string tensor_info(std::string_view name, std::vector<uint64_t> dims, uint32_t type,
                        uint64_t offset) {
    std::string s = gstr(name) + le(uint32_t(dims.size()));
    for (uint64_t d : dims) s += le(d);
    return s + le(type) + le(offset);
}

std::string padded(std::string s, size_t align = 32) {
    s.resize((s.size() + align - 1) / align * align, '\0');
    return s;
}

// A valid file: one f32 tensor "w" of 8 elements (32 bytes) after the given metadata.
std::string one_tensor_file(const std::string& kvs = "", uint64_t n_kv = 0) {
    return padded(header(1, n_kv) + kvs + tensor_info("w", {8}, 0, 0)) + std::string(32, '\1');
}

// ---- Fixture ---------------------------------------------------------------------------

class GGUF : public ::testing::Test {
protected:
    test::TempDir dir_;

    std::string write_bytes(const std::string& name, const std::string& bytes) {
        std::string path = dir_.path(name);
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

    // Opening `bytes` must throw Error("PATH: ...") whose message contains `what`.
    void expect_rejected(const std::string& bytes, const std::string& what) {
        std::string path = write_bytes("bad.gguf", bytes);
        expect_error(path, what);
    }

    static void expect_error(const std::string& path, const std::string& what) {
        try {
            GGUFFile::open(path);
            ADD_FAILURE() << "opened without an error; expected: " << what;
        } catch (const Error& e) {
            std::string msg = e.what();
            EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
            EXPECT_NE(msg.find(what), std::string::npos) << msg;
        }
    }
};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(n);
    for (uint8_t& x : b) x = uint8_t(rng());
    return b;
}

GGUFWriter::Producer bytes_of(std::vector<uint8_t> b) {
    return [b = std::move(b)](std::vector<uint8_t>& out) { out = b; };
}

// Every type lila knows, found through the type table so a new type is tested too.
std::vector<Type> all_tensor_types() {
    std::vector<Type> types;
    for (uint32_t id = 0; id < 256; ++id)
        if (std::optional<Type> t = ggml_lite::type_from_id(id)) types.push_back(*t);
    return types;
}

// ---- Round trips -----------------------------------------------------------------------

std::vector<std::pair<std::string, GGUFValue>> every_kind_of_value() {
    using V = GGUFValue;
    using T = GGUFType;
    constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
    constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
    return {
        {"u8", V::integer(T::UINT8, 255)},
        {"i8", V::integer(T::INT8, -128)},
        {"u16", V::integer(T::UINT16, 65535)},
        {"i16", V::integer(T::INT16, -32768)},
        {"u32", V::u32(4294967295u)},
        {"i32", V::i32(std::numeric_limits<int32_t>::min())},
        {"u64", V::u64(uint64_t(kI64Max))},
        {"i64", V::integer(T::INT64, kI64Min)},
        {"f32", V::f32(0.1f)},
        {"f64", V::f64(-1e300)},
        {"bool.true", V::boolean(true)},
        {"bool.false", V::boolean(false)},
        {"string", V::string("h\xc3\xa9llo \xe2\x96\x81world")},
        {"string.empty", V::string("")},
        {"string.nul", V::string(std::string("a\0b", 3))},
        {"arr.u8", V::array_int(T::UINT8, {0, 7, 255})},
        {"arr.i8", V::array_int(T::INT8, {-128, 127})},
        {"arr.u16", V::array_int(T::UINT16, {65535})},
        {"arr.i16", V::array_int(T::INT16, {-32768, 1})},
        {"arr.u32", V::array_int(T::UINT32, {4294967295, 0})},
        {"arr.i32", V::array_i32({-1, 2, -3})},
        {"arr.u64", V::array_int(T::UINT64, {kI64Max})},
        {"arr.i64", V::array_int(T::INT64, {kI64Min, kI64Max})},
        {"arr.bool", V::array_int(T::BOOL, {1, 0, 1})},
        {"arr.f32", V::array_f32({0.5, -2.25, 1e-3f})},
        {"arr.f64", V::array_float(T::FLOAT64, {0.1, -1e-300})},
        {"arr.string", V::array_string({"a", "", "\xe2\x96\x81the", std::string("\0", 1)})},
        {"arr.empty", V::array_i32({})},
        {"arr.string.empty", V::array_string({})},
    };
}

TEST_F(GGUF, MetadataOfEveryTypeRoundTrips) {
    GGUFWriter w;
    for (const auto& [key, value] : every_kind_of_value()) w.set(key, value);
    std::string path = dir_.path("meta.gguf");
    w.write(path);

    auto f = GGUFFile::open(path);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->metadata(), every_kind_of_value());
    EXPECT_TRUE(f->tensors().empty());
    EXPECT_EQ(f->find("arr.string")->array_size(), 4u);
    EXPECT_EQ(f->find("u32")->array_size(), 0u);
}

TEST_F(GGUF, TensorsOfEveryTypeRoundTripInPlace) {
    GGUFWriter w;
    std::vector<std::pair<std::string, std::vector<uint8_t>>> expected;
    uint32_t seed = 1;
    for (Type type : all_tensor_types()) {
        int64_t bs = ggml_lite::block_size(type);
        for (std::vector<int64_t> shape : {std::vector<int64_t>{bs}, {bs * 3, 5}, {bs, 2, 3, 2}}) {
            std::string name =
                std::string(ggml_lite::type_name(type)) + "." + std::to_string(shape.size());
            size_t nbytes = ggml_lite::row_size(type, shape[0]);
            for (size_t d = 1; d < shape.size(); ++d) nbytes *= size_t(shape[d]);
            expected.emplace_back(name, random_bytes(nbytes, seed++));
            w.add_tensor(name, type, shape, bytes_of(expected.back().second));
        }
    }
    std::string path = dir_.path("tensors.gguf");
    w.write(path);

    auto f = GGUFFile::open(path);
    ASSERT_EQ(f->tensors().size(), expected.size());
    const auto* base = static_cast<const uint8_t*>(f->tensors()[0].data) - f->data_offset();
    uint64_t next_offset = 0;  // llama.cpp wants tensors in order, each padded to the alignment
    for (size_t i = 0; i < expected.size(); ++i) {
        const GGUFTensorInfo& t = f->tensors()[i];
        SCOPED_TRACE(t.name);
        EXPECT_EQ(t.name, expected[i].first);
        EXPECT_EQ(f->find_tensor(t.name), &t);
        ASSERT_EQ(t.nbytes, expected[i].second.size());
        EXPECT_EQ(t.nbytes,
                  ggml_lite::row_size(t.type, t.shape[0]) * (t.n_elements() / t.shape[0]));
        EXPECT_EQ(t.offset, next_offset);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 32, 0u);
        EXPECT_EQ(static_cast<const uint8_t*>(t.data), base + f->data_offset() + t.offset);
        EXPECT_EQ(std::memcmp(t.data, expected[i].second.data(), t.nbytes), 0);
        next_offset += (t.nbytes + 31) / 32 * 32;
    }
    EXPECT_EQ(f->data_offset() % 32, 0u);
    EXPECT_EQ(f->file_size(), f->data_offset() + next_offset);
    EXPECT_EQ(f->find_tensor("absent"), nullptr);
}

TEST_F(GGUF, CustomAlignmentIsRespected) {
    for (uint32_t align : {1u, 8u, 64u, 256u}) {
        SCOPED_TRACE(align);
        GGUFWriter w;
        w.set("general.alignment", GGUFValue::u32(align));
        w.add_tensor("a", Type::F32, {3}, bytes_of(random_bytes(12, 1)));
        w.add_tensor("b", Type::F16, {5, 3}, bytes_of(random_bytes(30, 2)));
        std::string path = dir_.path("aligned.gguf");
        w.write(path);

        auto f = GGUFFile::open(path);
        EXPECT_EQ(f->alignment(), align);
        EXPECT_EQ(f->data_offset() % align, 0u);
        EXPECT_EQ(f->tensors()[1].offset, (12 + align - 1) / align * align);
        for (const GGUFTensorInfo& t : f->tensors())
            EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % align, 0u);
        EXPECT_EQ(std::memcmp(f->tensors()[1].data, random_bytes(30, 2).data(), 30), 0);
    }
}

// The writer's bytes, field by field, as the GGUF spec lays them out.
TEST_F(GGUF, WriterProducesTheSpecifiedLayout) {
    GGUFWriter w;
    w.set("general.architecture", GGUFValue::string("llama"));
    w.set("n", GGUFValue::u32(7));
    w.add_tensor("w", Type::F32, {3}, bytes_of(std::vector<uint8_t>(12, 0xab)));
    w.add_tensor("v", Type::F32, {1}, bytes_of(std::vector<uint8_t>(4, 0xcd)));
    std::string path = dir_.path("layout.gguf");
    w.write(path);

    std::string expected =
        padded(header(2, 2) + kv("general.architecture", GGUFType::STRING, gstr("llama")) +
               kv_u32("n", 7) + tensor_info("w", {3}, 0, 0) + tensor_info("v", {1}, 0, 32)) +
        padded(std::string(12, '\xab')) + padded(std::string(4, '\xcd'));
    EXPECT_EQ(test::read_file(path), expected);
}

TEST_F(GGUF, SetReplacesInPlaceAndKeepsInsertionOrder) {
    GGUFWriter w;
    w.set("a", GGUFValue::u32(1));
    w.set("b", GGUFValue::u32(2));
    w.set("c", GGUFValue::u32(3));
    w.set("b", GGUFValue::string("two"));
    std::string path = dir_.path("order.gguf");
    w.write(path);

    auto f = GGUFFile::open(path);
    ASSERT_EQ(f->metadata().size(), 3u);
    EXPECT_EQ(f->metadata()[0].first, "a");
    EXPECT_EQ(f->metadata()[1].first, "b");
    EXPECT_EQ(f->metadata()[2].first, "c");
    EXPECT_EQ(f->get_string("b"), "two");
}

TEST_F(GGUF, GettersConvertAndCheckTypes) {
    GGUFWriter w;
    w.set("u8", GGUFValue::integer(GGUFType::UINT8, 200));
    w.set("u32", GGUFValue::u32(4096));
    w.set("i64", GGUFValue::integer(GGUFType::INT64, -5));
    w.set("f32", GGUFValue::f32(0.5f));
    w.set("flag", GGUFValue::boolean(true));
    w.set("name", GGUFValue::string("x"));
    w.set("ints", GGUFValue::array_int(GGUFType::UINT32, {1, 2}));
    w.set("floats", GGUFValue::array_f32({1.5}));
    w.set("strings", GGUFValue::array_string({"p", "q"}));
    std::string path = dir_.path("get.gguf");
    w.write(path);
    auto f = GGUFFile::open(path);

    EXPECT_EQ(f->get_int("u8"), 200);
    EXPECT_EQ(f->get_int("u32"), 4096);  // hyperparameters are u32 in real files
    EXPECT_EQ(f->get_int("i64"), -5);
    EXPECT_EQ(f->get_int("flag"), 1);
    EXPECT_EQ(f->require_int("u32"), 4096);
    EXPECT_EQ(f->get_float("f32"), 0.5);
    EXPECT_EQ(f->get_float("u32"), 4096.0);
    EXPECT_EQ(f->get_bool("flag"), true);
    EXPECT_EQ(f->get_string("name"), "x");
    EXPECT_EQ(f->get_int_array("ints"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(f->get_float_array("ints"), (std::vector<double>{1, 2}));
    EXPECT_EQ(f->get_float_array("floats"), (std::vector<double>{1.5}));
    EXPECT_EQ(f->get_string_array("strings"), (std::vector<std::string>{"p", "q"}));
    EXPECT_EQ(f->get_int("absent"), std::nullopt);
    EXPECT_EQ(f->find("absent"), nullptr);

    auto expect_throw = [&](auto get, const std::string& what) {
        try {
            get();
            ADD_FAILURE() << "no error; expected " << what;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(path + ": " + what), std::string::npos)
                << e.what();
        }
    };
    expect_throw([&] { f->get_int("name"); }, "key name: expected an integer, found string");
    expect_throw([&] { f->get_int("f32"); }, "key f32: expected an integer");
    expect_throw([&] { f->get_bool("u32"); }, "key u32: expected a bool");
    expect_throw([&] { f->get_string("ints"); }, "key ints: expected a string, found array of u32");
    expect_throw([&] { f->get_string_array("ints"); }, "key ints: expected an array of strings");
    expect_throw([&] { f->get_int_array("floats"); }, "key floats: expected an array of integers");
    expect_throw([&] { f->require_int("absent"); }, "missing metadata key absent");
}

TEST_F(GGUF, ProgressIsReportedPerTensor) {
    GGUFWriter w;
    for (std::string name : {"x", "y", "z"})
        w.add_tensor(name, Type::F32, {2}, bytes_of(std::vector<uint8_t>(8)));
    std::vector<std::string> seen;
    w.write(dir_.path("progress.gguf"), [&](size_t i, size_t n, const std::string& name) {
        EXPECT_EQ(i, seen.size());
        EXPECT_EQ(n, 3u);
        seen.push_back(name);
    });
    EXPECT_EQ(seen, (std::vector<std::string>{"x", "y", "z"}));
}

// ---- Writer errors and atomicity -------------------------------------------------------

TEST_F(GGUF, WriterRejectsBadInput) {
    GGUFWriter w;
    EXPECT_THROW(w.set("k", GGUFValue::integer(GGUFType::UINT8, 256)), Error);
    EXPECT_THROW(w.set("k", GGUFValue::integer(GGUFType::UINT64, -1)), Error);
    EXPECT_THROW(w.set("k", GGUFValue::array_int(GGUFType::INT8, {1, 200})), Error);
    EXPECT_THROW(w.set("k", GGUFValue::array_int(GGUFType::STRING, {1})), Error);
    EXPECT_THROW(w.set("k", GGUFValue{GGUFType::UINT32, GGUFType::UINT32, 1.0}), Error);
    EXPECT_THROW(w.set("k", GGUFValue{GGUFType::ARRAY, GGUFType::UINT32, int64_t(1)}), Error);
    EXPECT_THROW(w.set("k", GGUFValue{GGUFType(13), GGUFType::UINT32, int64_t(1)}), Error);
    EXPECT_THROW(w.set("k", GGUFValue::array_int(GGUFType(13), {})), Error);
    EXPECT_THROW(w.set("general.alignment", GGUFValue::u32(48)), Error);
    EXPECT_THROW(w.set("general.alignment", GGUFValue::u32(0)), Error);
    EXPECT_THROW(w.set("general.alignment", GGUFValue::u64(64)), Error);

    auto add = [&](std::string name, Type type, std::vector<int64_t> shape) {
        w.add_tensor(name, type, shape, bytes_of({}));
    };
    add("ok", Type::F32, {4});
    EXPECT_THROW(add("ok", Type::F32, {4}), Error);
    EXPECT_THROW(add("", Type::F32, {4}), Error);
    EXPECT_THROW(add(std::string(64, 'n'), Type::F32, {4}), Error);
    EXPECT_THROW(add("dims0", Type::F32, {}), Error);
    EXPECT_THROW(add("dims5", Type::F32, {1, 1, 1, 1, 1}), Error);
    EXPECT_THROW(add("zero", Type::F32, {4, 0}), Error);
    EXPECT_THROW(add("overflow", Type::F32, {int64_t(1) << 32, int64_t(1) << 32}), Error);
    EXPECT_THROW(add("block", Type::Q8_0, {16}), Error);
}

TEST_F(GGUF, ProducerOfTheWrongSizeIsAnError) {
    GGUFWriter w;
    w.add_tensor("t", Type::F32, {4}, bytes_of(std::vector<uint8_t>(15)));
    std::string path = dir_.path("short.gguf");
    try {
        w.write(path);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("produced 15 bytes, expected 16"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(GGUF, FailedWriteLeavesNoFileAndKeepsTheOldOne) {
    std::string path = dir_.path("model.gguf");
    GGUFWriter failing;
    failing.set("k", GGUFValue::u32(1));
    failing.add_tensor("good", Type::F32, {4}, bytes_of(std::vector<uint8_t>(16)));
    failing.add_tensor("bad", Type::F32, {4},
                       [](std::vector<uint8_t>&) { throw std::runtime_error("input vanished"); });

    try {
        failing.write(path);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("input vanished"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".tmp"));

    GGUFWriter good;
    good.set("k", GGUFValue::u32(2));
    good.write(path);
    const std::string before = test::read_file(path);
    EXPECT_THROW(failing.write(path), Error);
    EXPECT_EQ(test::read_file(path), before);
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    EXPECT_EQ(GGUFFile::open(path)->get_int("k"), 2);
}

TEST_F(GGUF, WriteIntoAMissingDirectoryIsAnError) {
    std::string path = dir_.path("no/such/dir/model.gguf");
    try {
        GGUFWriter().write(path);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    }
}

// Runs in a child process: writes under a 4 KiB file size limit, which makes write() fail
// part way through, like a full disk; exits 0 when that is a clean Error and no file is left.
[[noreturn]] void write_past_file_size_limit(const GGUFWriter& w, const std::string& path) {
    const rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::signal(SIGXFSZ, SIG_IGN);  // get EFBIG from write() instead of a signal
    try {
        w.write(path);
    } catch (const Error& e) {
        bool named = std::string(e.what()).rfind(path + ": ", 0) == 0;
        std::_Exit(named && !fs::exists(path) && !fs::exists(path + ".tmp") ? 0 : 2);
    }
    std::_Exit(3);
}

TEST_F(GGUF, ShortWriteRemovesTheTempFile) {
    std::string path = dir_.path("full.gguf");
    GGUFWriter w;
    w.add_tensor("big", Type::F32, {1 << 16}, bytes_of(std::vector<uint8_t>(1 << 18)));
    EXPECT_EXIT(write_past_file_size_limit(w, path), ::testing::ExitedWithCode(0), "");
}

// ---- Reader: rejection of corrupt files ------------------------------------------------

// A small file with a bit of everything, whose last tensor ends exactly at the end of the
// file: cutting it anywhere must be an error.
std::string small_valid_file(const std::string& path) {
    GGUFWriter w;
    w.set("general.architecture", GGUFValue::string("llama"));
    w.set("llama.block_count", GGUFValue::u32(2));
    w.set("eps", GGUFValue::f32(1e-5f));
    w.set("tokens", GGUFValue::array_string({"<s>", "a", ""}));
    w.set("types", GGUFValue::array_i32({3, 1, 1}));
    w.set("flag", GGUFValue::boolean(true));
    w.add_tensor("q", Type::Q8_0, {32, 2}, bytes_of(random_bytes(68, 1)));
    w.add_tensor("f", Type::F32, {8}, bytes_of(random_bytes(32, 2)));
    w.write(path);
    return test::read_file(path);
}

TEST_F(GGUF, TruncationAtEveryByteIsAnError) {
    const std::string bytes = small_valid_file(dir_.path("valid.gguf"));
    ASSERT_EQ(GGUFFile::open(dir_.path("valid.gguf"))->tensors().size(), 2u);
    for (size_t n = 0; n < bytes.size(); ++n) {
        SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
        std::string path = write_bytes("cut.gguf", bytes.substr(0, n));
        try {
            GGUFFile::open(path);
            ADD_FAILURE() << "opened";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
        }
    }
}

// Random corruption: every outcome is an Error naming the file, or a file whose tensors lie in
// bounds, hold the bytes at their stated offsets, and are as large as their shape and type say.
TEST_F(GGUF, CorruptBytesNeverCrash) {
    const std::string bytes = small_valid_file(dir_.path("valid.gguf"));
    std::mt19937 rng(42);
    int opened = 0, rejected = 0;
    for (int iter = 0; iter < 1000; ++iter) {
        std::string b = bytes;
        for (int k = 0; k < 1 + iter % 4; ++k) b[rng() % b.size()] = char(rng());
        std::string path = write_bytes("fuzz.gguf", b);
        try {
            auto f = GGUFFile::open(path);
            opened++;
            for (const GGUFTensorInfo& t : f->tensors()) {
                SCOPED_TRACE("iteration " + std::to_string(iter) + ", tensor " + t.name);
                int64_t rows = 1;
                for (size_t d = 1; d < t.shape.size(); d++) rows *= t.shape[d];
                EXPECT_EQ(t.nbytes, ggml_lite::row_size(t.type, t.shape[0]) * rows);
                const size_t start = f->data_offset() + t.offset;
                ASSERT_LE(start + t.nbytes, b.size());
                EXPECT_EQ(std::memcmp(t.data, b.data() + start, t.nbytes), 0);
            }
        } catch (const Error& e) {
            rejected++;
            EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
        }
    }
    // Both outcomes happen, or the corruption misses what it means to test.
    EXPECT_GT(opened, 0);
    EXPECT_GT(rejected, 0);
}

TEST_F(GGUF, RejectsWhatIsNotAGGUFFile) {
    expect_error(dir_.path("missing.gguf"), "cannot open: No such file or directory");
    expect_error(dir_.path(""), "is a directory");
    ASSERT_EQ(mkfifo(dir_.path("fifo").c_str(), 0600), 0);
    expect_error(dir_.path("fifo"), "not a regular file");
    expect_rejected("", "empty file");
    expect_rejected("hi", "not a GGUF file (bad magic)");
    expect_rejected("GGML" + one_tensor_file().substr(4), "not a GGUF file (bad magic)");
}

TEST_F(GGUF, ChecksTheVersion) {
    std::string file = one_tensor_file();
    expect_rejected(file.replace(4, 4, le<uint32_t>(1)), "GGUF version 1 is not supported");
    expect_rejected(file.replace(4, 4, le<uint32_t>(4)), "unsupported GGUF version 4");
    expect_rejected(file.replace(4, 4, le<uint32_t>(0x03000000)), "big-endian");

    auto f = GGUFFile::open(write_bytes("v2.gguf", file.replace(4, 4, le<uint32_t>(2))));
    EXPECT_EQ(f->version(), 2u);
    EXPECT_EQ(f->tensors().at(0).nbytes, 32u);
}

TEST_F(GGUF, RejectsHugeCounts) {
    expect_rejected(header(0, uint64_t(1) << 60), "declares 1152921504606846976 metadata entries");
    expect_rejected(header(kU64Max, 0) + std::string(64, '\0'), "tensors, more than the remaining");
    expect_rejected(header(3, 0) + tensor_info("w", {8}, 0, 0), "tensors, more than the remaining");
}

TEST_F(GGUF, RejectsBadMetadata) {
    const std::string tail = tensor_info("w", {8}, 0, 0);
    auto file = [&](const std::string& kvs, uint64_t n_kv = 1) {
        return padded(header(1, n_kv) + kvs + tail) + std::string(32, '\0');
    };
    expect_rejected(file(le<uint64_t>(uint64_t(1) << 63) + "key"),
                    "a string of 9223372036854775808 bytes");
    expect_rejected(file(kv("k", GGUFType::STRING, le<uint64_t>(1000) + "abc")),
                    "metadata entry 1 of 1 ('k'): a string of 1000 bytes");
    expect_rejected(file(kv("k", GGUFType(13), le<uint32_t>(0))),
                    "metadata entry 1 of 1 ('k'): unknown value type 13");
    expect_rejected(file(kv("k", GGUFType::BOOL, "\2")), "bool value 2 is neither 0 nor 1");
    expect_rejected(file(kv("k", GGUFType::UINT64, le(kU64Max))), "u64 value 18446744073709551615");
    expect_rejected(file(kv_u32("k", 1) + kv_u32("k", 2), 2), "duplicate metadata key 'k'");
    expect_rejected(file(kv("\x01key", GGUFType::BOOL, "\2")), "('\\x01key')");
    auto array = [](GGUFType elem, uint64_t n, const std::string& data) {
        return kv("a", GGUFType::ARRAY, le(uint32_t(elem)) + le(n) + data);
    };
    expect_rejected(file(array(GGUFType::UINT32, kU64Max / 2, "")),
                    "an array of 9223372036854775807 u32 values");
    expect_rejected(file(array(GGUFType::STRING, 1 << 20, "")), "an array of 1048576 string");
    expect_rejected(file(array(GGUFType::ARRAY, 1, le(uint32_t(4)) + le<uint64_t>(0))),
                    "nested arrays are not supported");
    expect_rejected(file(array(GGUFType(99), 0, "")), "unknown value type 99");
}

TEST_F(GGUF, ChecksTheAlignment) {
    expect_rejected(one_tensor_file(kv_u32("general.alignment", 0), 1), "not a power of two");
    expect_rejected(one_tensor_file(kv_u32("general.alignment", 48), 1), "not a power of two");
    expect_rejected(one_tensor_file(kv("general.alignment", GGUFType::STRING, gstr("32")), 1),
                    "key general.alignment: expected an integer");

    // The data section starts at the next multiple of 64, not 32.
    std::string infos =
        header(1, 1) + kv_u32("general.alignment", 64) + tensor_info("w", {2}, 0, 0);
    ASSERT_LT(padded(infos, 32).size(), padded(infos, 64).size());
    std::string data = le(1.5f) + le(-2.0f);
    auto f = GGUFFile::open(write_bytes("a64.gguf", padded(infos, 64) + data));
    EXPECT_EQ(f->alignment(), 64u);
    EXPECT_EQ(f->data_offset(), 128u);
    EXPECT_EQ(std::memcmp(f->tensors()[0].data, data.data(), 8), 0);
}

TEST_F(GGUF, RejectsBadTensorInfos) {
    auto file = [](const std::string& infos, uint64_t n = 1) {
        return padded(header(n, 0) + infos) + std::string(64, '\0');
    };
    expect_rejected(file(tensor_info("w", {}, 0, 0)), "tensor info 1 of 1 ('w'): 0 dimensions");
    expect_rejected(file(tensor_info("w", {1, 1, 1, 1, 1}, 0, 0)),
                    "5 dimensions (expected 1 to 4)");
    expect_rejected(file(tensor_info("w", {8, 0}, 0, 0)), "dimension 1 is 0");
    expect_rejected(file(tensor_info("w", {uint64_t(1) << 32, uint64_t(1) << 32}, 0, 0)),
                    "the element count overflows 64 bits");
    expect_rejected(file(tensor_info("w", {kU64Max}, 0, 0)), "the element count overflows");
    expect_rejected(file(tensor_info("w", {uint64_t(1) << 40}, 0, 0)),
                    "1099511627776 elements of f32 are more than the whole file holds");
    expect_rejected(file(tensor_info("w", {8}, 99, 0)), "('w'): unknown type id 99");
    expect_rejected(file(tensor_info("w", {256}, 34, 0)), "type tq1_0 (id 34) is not supported");
    // Q8_K is only ever an activation type: a tensor of it is no model lila (or ggml) runs.
    expect_rejected(file(tensor_info("w", {256}, 15, 0)), "type q8_K (id 15) is not supported");
    expect_rejected(file(tensor_info("w", {16}, 8, 0)),
                    "row length 16 is not a multiple of the q8_0 block size 32");
    // The grid types are sized by the type table as every other type: 256 values of IQ3_S
    // are 110 bytes, more than the 64 the file has after its header.
    expect_rejected(file(tensor_info("w", {128}, 21, 0)),
                    "row length 128 is not a multiple of the iq3_s block size 256");
    expect_rejected(file(tensor_info("w", {256}, 21, 0)), "end past the end of the file");
    expect_rejected(file(tensor_info("w", {256 * 64}, 16, 0)),
                    "16384 elements of iq2_xxs are more than the whole file holds");
    expect_rejected(file(tensor_info("w", {8}, 0, 0) + tensor_info("w", {8}, 0, 32), 2),
                    "duplicate tensor name 'w'");
    expect_rejected(file(tensor_info("w", {8}, 0, 4)),
                    "tensor 'w' (1 of 1): data offset 4 is not a multiple of the alignment 32");
    expect_rejected(file(tensor_info("w", {8}, 0, 64)), "truncated: tensor 'w' (1 of 1)");
    expect_rejected(file(tensor_info("w", {8}, 0, kU64Max - 31)), "end past the end of the file");
    expect_rejected(file(tensor_info("w", {32}, 0, 0)), "end past the end of the file");
}

TEST_F(GGUF, TruncationMessageNamesThePlace) {
    std::string file =
        header(2, 0) + tensor_info("a", {8}, 0, 0) + tensor_info("second", {8}, 0, 32);
    file.resize(file.size() - 5);
    expect_rejected(file,
                    "truncated: tensor info 2 of 2 ('second') ends past the end of the file (" +
                        std::to_string(file.size()) + " bytes)");
}

}  // namespace
}  // namespace lila
