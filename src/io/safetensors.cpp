#include "src/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "src/base/error.h"

namespace lila {

static_assert(std::endian::native == std::endian::little, "safetensors is little-endian");

namespace {

using ggml_lite::Type;
using nlohmann::json;

constexpr size_t kMaxHeaderBytes = 100u << 20;  // the limit the safetensors library sets
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

std::optional<Type> dtype_type(const std::string& dtype) {
    if (dtype == "F32") return Type::F32;
    if (dtype == "F16") return Type::F16;
    if (dtype == "BF16") return Type::BF16;
    return std::nullopt;
}

// A JSON array of non-negative integers, or nullopt.
std::optional<std::vector<uint64_t>> unsigned_array(const json& j) {
    if (!j.is_array()) return std::nullopt;
    std::vector<uint64_t> v;
    for (const json& x : j) {
        if (!x.is_number_unsigned()) return std::nullopt;
        v.push_back(x.get<uint64_t>());
    }
    return v;
}

SafeTensor parse_entry(const std::string& path, const std::string& name, const json& entry,
                       const uint8_t* data, size_t data_size) {
    auto fail = [&](const std::string& problem) -> SafeTensor {
        throw Error(path + ": tensor " + name + ": " + problem);
    };
    if (!entry.is_object()) return fail("header entry is not an object");
    const auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) return fail("no dtype");
    const std::optional<Type> type = dtype_type(dtype->get<std::string>());
    if (!type) {
        return fail("dtype " + dtype->get<std::string>() + " is not supported (F32, F16, BF16)");
    }
    const auto shape_it = entry.find("shape");
    const auto shape = shape_it == entry.end() ? std::nullopt : unsigned_array(*shape_it);
    if (!shape) return fail("shape is not a list of sizes");
    const auto offsets_it = entry.find("data_offsets");
    const auto offsets = offsets_it == entry.end() ? std::nullopt : unsigned_array(*offsets_it);
    if (!offsets || offsets->size() != 2) return fail("data_offsets is not [begin, end]");

    SafeTensor t{name, *type, {}, nullptr, 0};
    uint64_t n = 1;
    for (uint64_t d : *shape) {
        if (d > kMaxElements || (d > 0 && n > kMaxElements / d)) return fail("shape is too large");
        n *= d;
        t.shape.push_back(int64_t(d));
    }
    const uint64_t begin = (*offsets)[0], end = (*offsets)[1];
    if (begin > end || end > data_size) {
        return fail("data [" + std::to_string(begin) + ", " + std::to_string(end) +
                    ") lies outside the " + std::to_string(data_size) + " bytes of data");
    }
    const uint64_t want = n * ggml_lite::traits(*type).type_size;
    if (end - begin != want) {
        return fail(std::to_string(end - begin) + " bytes of data for a shape that needs " +
                    std::to_string(want));
    }
    t.data = data + begin;
    t.nbytes = size_t(want);
    return t;
}

}  // namespace

int64_t SafeTensor::n_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

void SafeTensor::rows_to_float(int64_t row, int64_t n, float* dst) const {
    const auto& tr = ggml_lite::traits(type);
    const int64_t count = n * cols();
    if (count == 0) return;
    const uint8_t* src = data + size_t(row * cols()) * tr.type_size;
    if (reinterpret_cast<uintptr_t>(src) % tr.type_size == 0) {
        tr.to_float(src, dst, count);
        return;
    }
    // The header may leave tensor data unaligned; typed reads need aligned copies.
    constexpr int64_t kChunk = 4096;
    alignas(8) uint8_t buf[kChunk * sizeof(float)];
    for (int64_t i = 0; i < count; i += kChunk) {
        const int64_t m = std::min(kChunk, count - i);
        std::memcpy(buf, src + size_t(i) * tr.type_size, size_t(m) * tr.type_size);
        tr.to_float(buf, dst + i, m);
    }
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
    const size_t size = file_.size();
    if (size < 8) throw Error(path + ": too small for a safetensors file");
    uint64_t header_len;
    std::memcpy(&header_len, file_.data(), 8);
    if (header_len > size - 8 || header_len > kMaxHeaderBytes) {
        throw Error(path + ": header length " + std::to_string(header_len) +
                    " runs past the end of the file (" + std::to_string(size) + " bytes)");
    }
    const char* text = reinterpret_cast<const char*>(file_.data() + 8);
    json header;
    try {
        header = json::parse(text, text + header_len);
    } catch (const json::exception& e) {
        throw Error(path + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw Error(path + ": header is not a JSON object");

    const uint8_t* data = file_.data() + 8 + header_len;
    const size_t data_size = size - 8 - size_t(header_len);
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") continue;
        tensors_.push_back(parse_entry(path, name, entry, data, data_size));
    }
    std::sort(tensors_.begin(), tensors_.end(),
              [](const SafeTensor& a, const SafeTensor& b) { return a.data < b.data; });
}

std::shared_ptr<const SafetensorsModel> SafetensorsModel::open(const std::string& dir) {
    namespace fs = std::filesystem;
    auto m = std::shared_ptr<SafetensorsModel>(new SafetensorsModel());
    const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
    const fs::path single = fs::path(dir) / "model.safetensors";

    // Which shard each tensor is in; empty for a single-file checkpoint.
    std::map<std::string, std::string> shard_of;
    std::vector<std::string> shards;
    if (fs::exists(index_path)) {
        const std::string where = index_path.string();
        json index;
        try {
            std::ifstream in(index_path);
            index = json::parse(in);
        } catch (const json::exception& e) {
            throw Error(where + ": not valid JSON: " + e.what());
        }
        const auto map = index.find("weight_map");
        if (!index.is_object() || map == index.end() || !map->is_object()) {
            throw Error(where + ": no weight_map object");
        }
        for (const auto& [name, file] : map->items()) {
            if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
                throw Error(where + ": tensor " + name + ": not a file name in this directory");
            }
            shard_of[name] = file.get<std::string>();
            if (std::find(shards.begin(), shards.end(), shard_of[name]) == shards.end()) {
                shards.push_back(shard_of[name]);
            }
        }
        std::sort(shards.begin(), shards.end());
    } else if (fs::exists(single)) {
        shards.push_back(single.filename().string());
    } else {
        throw Error(dir + ": no model.safetensors or model.safetensors.index.json");
    }

    for (const std::string& shard : shards) {
        auto& f = m->files_.emplace_back(
            std::make_unique<SafetensorsFile>((fs::path(dir) / shard).string()));
        for (const SafeTensor& t : f->tensors()) {
            if (!shard_of.empty()) {
                auto it = shard_of.find(t.name);
                if (it == shard_of.end() || it->second != shard) {
                    throw Error(f->path() + ": tensor " + t.name +
                                " is not listed for this file in the index");
                }
            }
            if (!m->by_name_.emplace(t.name, &t).second) {
                throw Error(f->path() + ": tensor " + t.name + " appears twice in the checkpoint");
            }
            m->order_.push_back(&t);
        }
    }
    for (const auto& [name, shard] : shard_of) {
        if (!m->by_name_.count(name)) {
            throw Error(index_path.string() + ": tensor " + name + " is missing from " + shard);
        }
    }
    return m;
}

const SafeTensor* SafetensorsModel::find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

size_t SafetensorsModel::file_bytes() const {
    size_t total = 0;
    for (const auto& f : files_) total += f->size();
    return total;
}

}  // namespace lila
