#include "src/tokenizer/sentencepiece_model.h"

#include <cstring>
#include <string_view>

#include "src/base/error.h"
#include "src/io/mapped_file.h"

namespace lila {

namespace {

// Field numbers from sentencepiece_model.proto.
enum : uint32_t {
    kModelPieces = 1,  // ModelProto: repeated SentencePiece
    kModelTrainerSpec = 2,
    kModelNormalizerSpec = 3,
    kPieceText = 1,  // SentencePiece: string piece, float score, Type type
    kPieceScore = 2,
    kPieceType = 3,
    kTrainerModelType = 3,  // TrainerSpec: enum ModelType (UNIGRAM 1, BPE 2, WORD 3, CHAR 4)
    kTrainerUnkId = 40,
    kTrainerBosId = 41,
    kTrainerEosId = 42,
    kTrainerPadId = 43,
    kNormalizerAddDummyPrefix = 3,  // NormalizerSpec: bool, default true
};

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a message: its number, wire type and value (varint/fixed value or bytes).
struct Field {
    uint32_t number;
    uint32_t wire;
    uint64_t value;
    std::string_view bytes;
};

// Walks the fields of one protobuf message; every read is bounds-checked.
class ProtoReader {
public:
    ProtoReader(std::string_view data, const std::string& path) : data_(data), path_(path) {}

    bool next(Field& f) {
        if (data_.empty()) return false;
        const uint64_t tag = varint();
        f.number = static_cast<uint32_t>(tag >> 3);
        f.wire = static_cast<uint32_t>(tag & 7);
        f.value = 0;
        f.bytes = {};
        switch (f.wire) {
            case kVarint:
                f.value = varint();
                break;
            case kFixed64:
                f.value = fixed(8);
                break;
            case kFixed32:
                f.value = fixed(4);
                break;
            case kLengthDelimited: {
                const uint64_t n = varint();
                if (n > data_.size()) fail("a field runs past the end of its message");
                f.bytes = data_.substr(0, n);
                data_.remove_prefix(n);
                break;
            }
            default:
                fail("unsupported protobuf wire type " + std::to_string(f.wire));
        }
        return true;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(path_ + ": not a valid SentencePiece model (" + what + ")");
    }

private:
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (data_.empty()) fail("truncated varint");
            const auto b = static_cast<uint8_t>(data_[0]);
            data_.remove_prefix(1);
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("varint longer than 10 bytes");
    }

    uint64_t fixed(size_t n) {
        if (data_.size() < n) fail("truncated fixed-width field");
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) v |= uint64_t(static_cast<uint8_t>(data_[i])) << (8 * i);
        data_.remove_prefix(n);
        return v;
    }

    std::string_view data_;
    const std::string& path_;
};

// SentencePiece's Type enum has the same values as GGUF's token types (1..6).
TokenType piece_type(uint64_t v, const ProtoReader& r) {
    if (v < 1 || v > 6) r.fail("unknown piece type " + std::to_string(v));
    return static_cast<TokenType>(v);
}

void read_piece(std::string_view msg, Vocab& v, const std::string& path) {
    ProtoReader r(msg, path);
    std::string text;
    float score = 0.0f;
    TokenType type = TokenType::Normal;
    for (Field f; r.next(f);) {
        if (f.number == kPieceText && f.wire == kLengthDelimited) {
            text = f.bytes;
        } else if (f.number == kPieceScore && f.wire == kFixed32) {
            const auto bits = static_cast<uint32_t>(f.value);
            std::memcpy(&score, &bits, sizeof score);
        } else if (f.number == kPieceType && f.wire == kVarint) {
            type = piece_type(f.value, r);
        }
    }
    v.tokens.push_back(std::move(text));
    v.scores.push_back(score);
    v.types.push_back(type);
}

// Proto int32 fields are sign-extended to 64 bits on the wire.
int32_t as_int32(uint64_t v) {
    return static_cast<int32_t>(static_cast<int64_t>(v));
}

}  // namespace

Vocab read_sentencepiece_model(const std::string& path) {
    const std::string data = read_file(path);
    Vocab v;
    v.model = "llama";
    v.add_bos = true;
    v.add_eos = false;
    // Proto defaults, used when the model leaves the fields out.
    uint64_t model_type = 1;  // UNIGRAM
    v.unk = 0, v.bos = 1, v.eos = 2, v.pad = -1;
    v.add_space_prefix = true;

    ProtoReader r(data, path);
    for (Field f; r.next(f);) {
        if (f.number == kModelPieces && f.wire == kLengthDelimited) {
            read_piece(f.bytes, v, path);
        } else if (f.number == kModelTrainerSpec && f.wire == kLengthDelimited) {
            ProtoReader t(f.bytes, path);
            for (Field g; t.next(g);) {
                if (g.wire != kVarint) continue;
                if (g.number == kTrainerModelType) model_type = g.value;
                if (g.number == kTrainerUnkId) v.unk = as_int32(g.value);
                if (g.number == kTrainerBosId) v.bos = as_int32(g.value);
                if (g.number == kTrainerEosId) v.eos = as_int32(g.value);
                if (g.number == kTrainerPadId) v.pad = as_int32(g.value);
            }
        } else if (f.number == kModelNormalizerSpec && f.wire == kLengthDelimited) {
            ProtoReader n(f.bytes, path);
            for (Field g; n.next(g);) {
                if (g.number == kNormalizerAddDummyPrefix && g.wire == kVarint) {
                    v.add_space_prefix = g.value != 0;
                }
            }
        }
    }

    if (v.tokens.empty()) r.fail("no pieces");
    if (model_type != 2) {
        throw Error(path + ": SentencePiece model type " + std::to_string(model_type) +
                    " is not supported (only BPE, type 2)");
    }
    // A negative id means "none"; an id past the vocabulary would be a broken model.
    for (int32_t* id : {&v.unk, &v.bos, &v.eos, &v.pad}) {
        if (*id >= v.size()) r.fail("special token id " + std::to_string(*id) + " out of range");
        if (*id < 0) *id = -1;
    }
    return v;
}

}  // namespace lila
