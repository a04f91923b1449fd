// The safetensors reader: valid files in every supported dtype, unaligned data, shards; and
// corrupt files (truncated anywhere, bad header length, bad JSON, offsets outside the data,
// wrong sizes or dtypes) are an Error naming the file, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>

#include "fixtures/hf_fixture.h"
#include "src/base/error.h"
#include "src/io/safetensors.h"

namespace lila {
namespace {

using ggml_lite::Type;
using nlohmann::json;
using test::StTensor;

std::vector<StTensor> sample_tensors(Type type = Type::F32) {
    return {
        {"a.weight", type, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
        {"a.bias", type, {3}, {-1, 0.5f, 0.25f}},
        {"scalar", type, {}, {42}},
        {"empty", type, {0, 4}, {}},
    };
}

// The error a file with these bytes gets, or "" when it opens.
std::string open_error(const std::string& bytes) {
    test::TempDir dir;
    const std::string path = dir.path("x.safetensors");
    test::write_bytes(path, bytes);
    try {
        SafetensorsFile f(path);
        return "";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path), std::string::npos) << msg;  // names the file
        return msg;
    }
}

// A header (as JSON text) with `data` after it.
std::string with_header(const std::string& header, const std::string& data = "") {
    const uint64_t len = header.size();
    return std::string(reinterpret_cast<const char*>(&len), 8) + header + data;
}

TEST(Safetensors, ReadsEveryDtype) {
    for (Type type : {Type::F32, Type::F16, Type::BF16}) {
        test::TempDir dir;
        test::write_bytes(dir.path("m.safetensors"), test::safetensors_bytes(sample_tensors(type)));
        SafetensorsFile f(dir.path("m.safetensors"));
        ASSERT_EQ(f.tensors().size(), 4u);
        const SafeTensor& w = f.tensors()[0];
        EXPECT_EQ(w.name, "a.weight");
        EXPECT_EQ(w.type, type);
        EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 4}));
        EXPECT_EQ(w.rows(), 3);
        EXPECT_EQ(w.cols(), 4);
        float row[4];
        w.rows_to_float(1, 1, row);
        EXPECT_EQ(std::vector<float>(row, row + 4), (std::vector<float>{5, 6, 7, 8}));
        const SafeTensor& b = f.tensors()[1];
        EXPECT_EQ(b.rows(), 1);
        float bias[3];
        b.rows_to_float(0, 1, bias);
        EXPECT_EQ(std::vector<float>(bias, bias + 3), (std::vector<float>{-1, 0.5f, 0.25f}));
        EXPECT_EQ(f.tensors()[2].n_elements(), 1);
        EXPECT_EQ(f.tensors()[3].n_elements(), 0);
    }
}

// The format does not align tensor data; reads must not assume it.
TEST(Safetensors, UnalignedData) {
    test::TempDir dir;
    std::vector<StTensor> t = {{"odd", Type::BF16, {1}, {3}},
                               {"f", Type::F32, {2, 3}, {1, 2, 3, 4, 5, 6}}};
    test::write_bytes(dir.path("m.safetensors"), test::safetensors_bytes(t, false));
    SafetensorsFile f(dir.path("m.safetensors"));
    ASSERT_EQ(f.tensors().size(), 2u);
    float v[6];
    f.tensors()[1].rows_to_float(0, 2, v);
    EXPECT_EQ(std::vector<float>(v, v + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Safetensors, TruncatedAnywhereIsAnError) {
    const std::string good = test::safetensors_bytes(sample_tensors());
    ASSERT_EQ(open_error(good), "");
    for (size_t n = 0; n < good.size(); n++) {
        EXPECT_NE(open_error(good.substr(0, n)), "") << "truncated to " << n << " bytes";
    }
}

TEST(Safetensors, CorruptHeaders) {
    const std::string entry = R"("t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
    const std::string data(8, '\0');
    EXPECT_EQ(open_error(with_header("{" + entry + "}", data)), "");

    // Header lengths past the end of the file, and absurd ones.
    std::string bad = with_header("{" + entry + "}", data);
    for (uint64_t len : {uint64_t(bad.size()), uint64_t(1) << 40, ~uint64_t(0)}) {
        std::memcpy(bad.data(), &len, 8);
        EXPECT_NE(open_error(bad).find("header length"), std::string::npos);
    }
    EXPECT_NE(open_error(with_header("", data)).find("JSON"), std::string::npos);
    EXPECT_NE(open_error(with_header("{\"t\": ", data)).find("JSON"), std::string::npos);
    EXPECT_NE(open_error(with_header("[1, 2]", data)), "");

    auto tensor_error = [&](const std::string& t) {
        return open_error(with_header("{" + t + "}", data));
    };
    // Offsets past the end, reversed, or not matching the shape.
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 9]})")
                  .find("outside"),
              std::string::npos);
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})"), "");
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})")
                  .find("needs 12"),
              std::string::npos);
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F16", "shape": [2], "data_offsets": [0, 8]})"), "");
    EXPECT_NE(
        tensor_error(
            R"("t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]})"),
        "");
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})"), "");
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})"), "");
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "shape": [2], "data_offsets": [0]})"), "");
    EXPECT_NE(tensor_error(R"("t": {"dtype": "F32", "data_offsets": [0, 8]})"), "");
    EXPECT_NE(tensor_error(R"("t": {"shape": [2], "data_offsets": [0, 8]})"), "");
    EXPECT_NE(tensor_error(R"("t": [1, 2])"), "");
    // Dtypes lila does not convert: named in the message.
    for (const char* dtype : {"I32", "F64", "F8_E4M3", "BOOL", "nonsense"}) {
        const std::string msg = tensor_error(std::string(R"("t": {"dtype": ")") + dtype +
                                             R"(", "shape": [2], "data_offsets": [0, 8]})");
        EXPECT_NE(msg.find(dtype), std::string::npos) << msg;
        EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
    }
    // __metadata__ is not a tensor.
    EXPECT_EQ(tensor_error(R"("__metadata__": {"format": "pt"}, )" + entry), "");
}

// Random bytes in the header and data: every outcome is an Error naming the file, or a file
// whose every tensor is exactly the byte range its header entry gives, as large as its dtype
// and shape say.
TEST(Safetensors, RandomCorruptionNeverCrashes) {
    const std::string good = test::safetensors_bytes(sample_tensors());
    std::mt19937 rng(3);
    int opened = 0, rejected = 0;
    for (int i = 0; i < 2000; i++) {
        std::string bad = good;
        for (int k = 0, n = 1 + int(rng() % 4); k < n; k++) bad[rng() % bad.size()] = char(rng());
        test::TempDir dir;
        const std::string path = dir.path("x.safetensors");
        test::write_bytes(path, bad);
        try {
            SafetensorsFile f(path);
            opened++;
            uint64_t header_len;
            std::memcpy(&header_len, bad.data(), 8);
            const json header = json::parse(bad.substr(8, header_len));
            for (const SafeTensor& t : f.tensors()) {
                SCOPED_TRACE("iteration " + std::to_string(i) + ", tensor " + t.name);
                const json& offsets = header.at(t.name).at("data_offsets");
                const size_t begin = 8 + header_len + offsets[0].get<size_t>();
                const size_t end = 8 + header_len + offsets[1].get<size_t>();
                ASSERT_LE(begin, end);
                ASSERT_LE(end, bad.size());
                EXPECT_EQ(t.nbytes, end - begin);
                EXPECT_EQ(t.nbytes, ggml_lite::row_size(t.type, t.n_elements()));
                EXPECT_EQ(std::memcmp(t.data, bad.data() + begin, t.nbytes), 0);
            }
        } catch (const Error& e) {
            rejected++;
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    }
    // Both outcomes happen, or the corruption misses what it means to test.
    EXPECT_GT(opened, 0);
    EXPECT_GT(rejected, 0);
}

TEST(Safetensors, ShardedModel) {
    test::TempDir dir;
    std::vector<StTensor> all = sample_tensors();
    test::write_checkpoint(dir, all, 3);
    auto m = SafetensorsModel::open(dir.path(""));
    EXPECT_EQ(m->tensors().size(), all.size());
    for (const StTensor& t : all) {
        const SafeTensor* s = m->find(t.name);
        ASSERT_NE(s, nullptr) << t.name;
        EXPECT_EQ(s->shape, t.shape);
    }
    EXPECT_EQ(m->find("nope"), nullptr);
}

TEST(Safetensors, BrokenShardIndexes) {
    auto error = [](const std::function<void(test::TempDir&)>& setup) {
        test::TempDir dir;
        setup(dir);
        try {
            SafetensorsModel::open(dir.path(""));
            return std::string();
        } catch (const Error& e) {
            return std::string(e.what());
        }
    };
    const auto tensors = sample_tensors();
    EXPECT_NE(error([](test::TempDir&) {}).find("no model.safetensors"), std::string::npos);
    EXPECT_NE(error([&](test::TempDir& d) {
                  test::write_checkpoint(d, tensors, 2);
                  std::filesystem::remove(d.path("model-00002-of-00002.safetensors"));
              }).find("model-00002-of-00002.safetensors"),
              std::string::npos);
    // The index names a tensor the shard lacks, or the shard has one the index does not list.
    EXPECT_NE(error([&](test::TempDir& d) {
                  test::write_checkpoint(d, tensors, 2);
                  json index = json::parse(test::read_file(d.path("model.safetensors.index.json")));
                  index["weight_map"]["ghost"] = "model-00001-of-00002.safetensors";
                  test::write_json(d.path("model.safetensors.index.json"), index);
              }).find("ghost"),
              std::string::npos);
    EXPECT_NE(error([&](test::TempDir& d) {
                  test::write_checkpoint(d, tensors, 2);
                  json index = json::parse(test::read_file(d.path("model.safetensors.index.json")));
                  index["weight_map"].erase("a.bias");
                  test::write_json(d.path("model.safetensors.index.json"), index);
              }).find("a.bias"),
              std::string::npos);
    EXPECT_NE(error([&](test::TempDir& d) {
                  test::write_checkpoint(d, tensors, 2);
                  test::write_bytes(d.path("model.safetensors.index.json"), "{\"weight_map\": [");
              }).find("JSON"),
              std::string::npos);
    EXPECT_NE(error([&](test::TempDir& d) {
                  test::write_checkpoint(d, tensors, 2);
                  test::write_json(d.path("model.safetensors.index.json"),
                                   {{"weight_map", {{"a.weight", "../elsewhere.safetensors"}}}});
              }),
              "");
}

}  // namespace
}  // namespace lila
