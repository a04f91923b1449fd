// GGUF reader: maps the file read-only and checks every count, length, offset, type and
// shape against the file before using it, so a truncated or corrupt file is an Error
// naming the file and the problem, never a crash or an out-of-bounds read.
//
// Layout (little-endian): "GGUF", u32 version, u64 n_tensors, u64 n_kv; n_kv entries
// (string key, u32 value type, value); n_tensors infos (string name, u32 n_dims,
// u64 dims[n_dims], u32 type, u64 offset); zero padding to the alignment; tensor data, each
// tensor at its offset from the start of the data. A string is a u64 length and its bytes.

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>

#include "src/base/error.h"
#include "src/io/gguf.h"

namespace lila {

static_assert(std::endian::native == std::endian::little, "GGUF data is read in place");

namespace {

constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr uint32_t kMaxDims = 4;
// The smallest possible entries: counts are checked against what the rest of the file
// could hold before anything is allocated for them.
// A key-value pair: key length, type, a u8. A tensor info: name length, n_dims, one dim,
// type, offset.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// ggml's names for type ids, so that a file with a type lila lacks says which one.
const char* ggml_type_name(uint32_t id) {
    static const char* const names[] = {
        "f32",     "f16",    "q4_0",    "q4_1",  nullptr,  nullptr, "q5_0",  "q5_1",
        "q8_0",    "q8_1",   "q2_K",    "q3_K",  "q4_K",   "q5_K",  "q6_K",  "q8_K",
        "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs",
        "i8",      "i16",    "i32",     "i64",   "f64",    "iq1_m", "bf16",  nullptr,
        nullptr,   nullptr,  "tq1_0",   "tq2_0", nullptr,  nullptr, nullptr, "mxfp4"};
    return id < std::size(names) ? names[id] : nullptr;
}

// A name from the file, safe to print: quoted, control bytes escaped, cut short.
std::string quoted(std::string_view s) {
    constexpr size_t kMax = 80;
    std::string out = "'";
    for (size_t i = 0; i < s.size() && i < kMax; ++i) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != 0x7f) {
            out += char(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out + (s.size() > kMax ? "...'" : "'");
}

std::string str(uint64_t v) {
    return std::to_string(v);
}

}  // namespace

// Parses the mapped bytes into a GGUFFile. `where_` names what is being read, so that running
// out of bytes anywhere reads "truncated: tensor info 3 of 201 ends past the end of ...".
class GGUFReader {
public:
    GGUFReader(GGUFFile& f, const uint8_t* data) : f_(f), data_(data), size_(f.size_) {}

    void parse() {
        auto [n_tensors, n_kv] = read_header();
        read_metadata(n_kv);
        read_alignment();
        read_tensor_infos(n_tensors);
        place_tensors();
    }

private:
    GGUFFile& f_;
    const uint8_t* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
    std::string where_;

    [[noreturn]] void fail(const std::string& problem) const {
        throw Error(f_.path_ + ": " + problem);
    }
    [[noreturn]] void truncated() const {
        fail("truncated: " + where_ + " ends past the end of the file (" + str(size_) + " bytes)");
    }
    uint64_t remaining() const { return size_ - pos_; }

    const uint8_t* take(uint64_t n) {
        if (n > remaining()) truncated();
        const uint8_t* p = data_ + pos_;
        pos_ += n;
        return p;
    }

    template <class T>
    T read() {
        T v;
        std::memcpy(&v, take(sizeof v), sizeof v);
        return v;
    }

    std::string read_string() {
        uint64_t n = read<uint64_t>();
        if (n > remaining())
            fail("truncated or corrupt: " + where_ + ": a string of " + str(n) +
                 " bytes, with only " + str(remaining()) + " bytes left in the file");
        return std::string(reinterpret_cast<const char*>(take(n)), n);
    }

    std::pair<uint64_t, uint64_t> read_header() {
        where_ = "header";
        if (std::memcmp(data_, kMagic, std::min<uint64_t>(size_, 4)) != 0)
            fail("not a GGUF file (bad magic)");
        take(4);
        uint32_t version = read<uint32_t>();
        if (version == 1)
            fail(
                "GGUF version 1 is not supported (lila reads versions 2 and 3); convert the "
                "model again with a current converter");
        if (version != 2 && version != 3) {
            uint32_t swapped = __builtin_bswap32(version);
            if (swapped == 2 || swapped == 3) fail("big-endian GGUF files are not supported");
            fail("unsupported GGUF version " + str(version) + " (lila reads versions 2 and 3)");
        }
        f_.version_ = version;
        uint64_t n_tensors = read<uint64_t>();
        uint64_t n_kv = read<uint64_t>();
        if (n_kv > remaining() / kMinKvBytes)
            fail("truncated or corrupt: the header declares " + str(n_kv) +
                 " metadata entries, more than the remaining " + str(remaining()) +
                 " bytes can hold");
        if (n_tensors > (remaining() - n_kv * kMinKvBytes) / kMinTensorInfoBytes)
            fail("truncated or corrupt: the header declares " + str(n_tensors) +
                 " tensors, more than the remaining " + str(remaining()) + " bytes can hold");
        return {n_tensors, n_kv};
    }

    void read_metadata(uint64_t n) {
        f_.kv_.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
            where_ = "metadata entry " + str(i + 1) + " of " + str(n);
            std::string key = read_string();
            where_ += " (" + quoted(key) + ")";
            if (!f_.kv_index_.emplace(key, f_.kv_.size()).second)
                fail("duplicate metadata key " + quoted(key));
            GGUFValue v = read_value(value_type(read<uint32_t>()));
            f_.kv_.emplace_back(std::move(key), std::move(v));
        }
    }

    GGUFType value_type(uint32_t id) {
        if (id > uint32_t(GGUFType::FLOAT64)) fail(where_ + ": unknown value type " + str(id));
        return GGUFType(id);
    }

    GGUFValue read_value(GGUFType t) {
        GGUFValue v;
        v.type = t;
        if (t == GGUFType::STRING) {
            v.value = read_string();
        } else if (t == GGUFType::ARRAY) {
            read_array(v);
        } else if (t == GGUFType::FLOAT32 || t == GGUFType::FLOAT64) {
            v.value = read_float(t);
        } else {
            v.value = read_int(t);
        }
        return v;
    }

    double read_float(GGUFType t) {
        return t == GGUFType::FLOAT32 ? read<float>() : read<double>();
    }

    int64_t read_int(GGUFType t) {
        switch (t) {
            case GGUFType::UINT8:
                return read<uint8_t>();
            case GGUFType::INT8:
                return read<int8_t>();
            case GGUFType::UINT16:
                return read<uint16_t>();
            case GGUFType::INT16:
                return read<int16_t>();
            case GGUFType::UINT32:
                return read<uint32_t>();
            case GGUFType::INT32:
                return read<int32_t>();
            case GGUFType::INT64:
                return read<int64_t>();
            case GGUFType::BOOL: {
                uint8_t b = read<uint8_t>();
                if (b > 1) fail(where_ + ": bool value " + str(b) + " is neither 0 nor 1");
                return b;
            }
            case GGUFType::UINT64: {
                uint64_t u = read<uint64_t>();
                // Values are held as int64_t; no real key comes near 2^63.
                if (u > uint64_t(std::numeric_limits<int64_t>::max()))
                    fail(where_ + ": u64 value " + str(u) + " is out of range");
                return int64_t(u);
            }
            default:
                fail(where_ + ": " + gguf_type_name(t) + " is not an integer type");
        }
    }

    void read_array(GGUFValue& v) {
        v.elem_type = value_type(read<uint32_t>());
        // llama.cpp does not read nested arrays either, and no model file uses them.
        if (v.elem_type == GGUFType::ARRAY) fail(where_ + ": nested arrays are not supported");
        uint64_t n = read<uint64_t>();
        uint64_t min_elem_bytes = v.elem_type == GGUFType::STRING ? 8 : gguf_type_size(v.elem_type);
        if (n > remaining() / min_elem_bytes)
            fail("truncated or corrupt: " + where_ + ": an array of " + str(n) + " " +
                 gguf_type_name(v.elem_type) + " values, with only " + str(remaining()) +
                 " bytes left in the file");
        if (v.elem_type == GGUFType::STRING) {
            v.value = read_n<std::string>(n, [&] { return read_string(); });
        } else if (v.elem_type == GGUFType::FLOAT32 || v.elem_type == GGUFType::FLOAT64) {
            v.value = read_n<double>(n, [&] { return read_float(v.elem_type); });
        } else {
            v.value = read_n<int64_t>(n, [&] { return read_int(v.elem_type); });
        }
    }

    template <class T, class F>
    std::vector<T> read_n(uint64_t n, F read_one) {
        std::vector<T> out;
        out.reserve(n);
        for (uint64_t i = 0; i < n; ++i) out.push_back(read_one());
        return out;
    }

    void read_alignment() {
        std::optional<int64_t> a = f_.get_int("general.alignment");
        if (!a) return;
        if (*a <= 0 || (*a & (*a - 1)) != 0)
            fail("general.alignment " + std::to_string(*a) + " is not a power of two");
        f_.alignment_ = size_t(*a);
    }

    void read_tensor_infos(uint64_t n) {
        f_.tensors_.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
            where_ = "tensor info " + str(i + 1) + " of " + str(n);
            GGUFTensorInfo t{};
            t.name = read_string();
            where_ += " (" + quoted(t.name) + ")";
            if (!f_.tensor_index_.emplace(t.name, i).second)
                fail("duplicate tensor name " + quoted(t.name));
            uint32_t n_dims = read<uint32_t>();
            if (n_dims == 0 || n_dims > kMaxDims)
                fail(where_ + ": " + str(n_dims) + " dimensions (expected 1 to 4)");
            read_shape(t, n_dims);
            t.type = tensor_type(read<uint32_t>());
            t.offset = read<uint64_t>();
            t.nbytes = tensor_bytes(t);
            f_.tensors_.push_back(std::move(t));
        }
    }

    void read_shape(GGUFTensorInfo& t, uint32_t n_dims) {
        uint64_t n_elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            uint64_t dim = read<uint64_t>();
            if (dim == 0) fail(where_ + ": dimension " + str(d) + " is 0");
            if (dim > uint64_t(std::numeric_limits<int64_t>::max()) / n_elements)
                fail(where_ + ": the element count overflows 64 bits");
            n_elements *= dim;
            t.shape.push_back(int64_t(dim));
        }
    }

    ggml_lite::Type tensor_type(uint32_t id) {
        if (std::optional<ggml_lite::Type> t = ggml_lite::type_from_id(id)) return *t;
        if (const char* name = ggml_type_name(id))
            fail(where_ + ": type " + name + " (id " + str(id) + ") is not supported by lila");
        fail(where_ + ": unknown type id " + str(id));
    }

    // Bytes of tensor data; nothing here can overflow, as the element count fits in 63 bits.
    size_t tensor_bytes(const GGUFTensorInfo& t) {
        const ggml_lite::TypeTraits& tr = ggml_lite::traits(t.type);
        if (t.shape[0] % tr.block_size != 0)
            fail(where_ + ": row length " + str(t.shape[0]) + " is not a multiple of the " +
                 tr.name + " block size " + str(tr.block_size));
        uint64_t blocks = uint64_t(t.n_elements() / tr.block_size);
        if (blocks > size_ / tr.type_size)
            fail("truncated or corrupt: " + where_ + ": " + str(blocks * tr.block_size) +
                 " elements of " + tr.name + " are more than the whole file holds");
        return blocks * tr.type_size;
    }

    // The data section starts at the first aligned offset after the tensor infos.
    void place_tensors() {
        uint64_t a = f_.alignment_;
        // No overflow: pos_ <= size_ < 2^63 and a <= 2^62.
        uint64_t start = (pos_ + a - 1) / a * a;
        uint64_t avail = start <= size_ ? size_ - start : 0;
        f_.data_offset_ = start;
        for (size_t i = 0; i < f_.tensors_.size(); ++i) {
            GGUFTensorInfo& t = f_.tensors_[i];
            std::string what = "tensor " + quoted(t.name) + " (" + str(i + 1) + " of " +
                               str(f_.tensors_.size()) + ")";
            if (t.offset % a != 0)
                fail(what + ": data offset " + str(t.offset) +
                     " is not a multiple of the alignment " + str(a));
            if (t.offset > avail || t.nbytes > avail - t.offset)
                fail("truncated: " + what + ": its " + str(t.nbytes) + " bytes at data offset " +
                     str(t.offset) + " end past the end of the file (" + str(size_) + " bytes)");
            t.data = data_ + start + t.offset;
        }
    }
};

std::unique_ptr<GGUFFile> GGUFFile::open(const std::string& path) {
    auto map = std::make_unique<MappedFile>(path);
    if (map->size() == 0) throw Error(path + ": empty file, not a GGUF file");
    std::unique_ptr<GGUFFile> f(new GGUFFile());
    f->path_ = path;
    f->size_ = map->size();
    f->map_ = std::move(map);
    GGUFReader(*f, f->map_->data()).parse();
    return f;
}

}  // namespace lila
