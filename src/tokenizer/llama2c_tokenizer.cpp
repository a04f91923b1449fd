#include "src/tokenizer/llama2c_tokenizer.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include "src/base/error.h"
#include "src/io/mapped_file.h"

namespace lila {

namespace {

// Little-endian reads with bounds checks; the message names the file and the token.
class Reader {
public:
    Reader(std::string_view data, const std::string& path) : data_(data), path_(path) {}

    int32_t i32(const char* what) {
        uint32_t u = 0;
        std::memcpy(&u, take(4, what).data(), 4);
        return static_cast<int32_t>(u);
    }
    float f32(const char* what) {
        const int32_t i = i32(what);
        float f;
        std::memcpy(&f, &i, 4);
        return f;
    }
    std::string_view take(size_t n, const char* what) {
        if (n > data_.size()) fail(std::string("truncated in ") + what);
        const std::string_view s = data_.substr(0, n);
        data_.remove_prefix(n);
        return s;
    }
    size_t left() const { return data_.size(); }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(path_ + ": not a valid llama2.c tokenizer (" + what + ")");
    }

private:
    std::string_view data_;
    const std::string& path_;
};

bool is_byte_piece(std::string_view s) {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
    return s.size() == 6 && s.substr(0, 3) == "<0x" && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

// llama2.c's export replaced SentencePiece's U+2581 by ' '; put it back.
std::string restore_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == ' ') {
            out += "\xE2\x96\x81";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

Vocab read_llama2c_tokenizer(const std::string& path, int32_t n_vocab) {
    const std::string data = read_file(path);
    Reader r(data, path);
    if (n_vocab < 3) r.fail("the model's vocabulary size " + std::to_string(n_vocab) + " < 3");
    if (r.i32("the header") < 0) r.fail("negative max_token_length");

    Vocab v;
    v.model = "llama";
    v.unk = 0, v.bos = 1, v.eos = 2;
    v.add_bos = true;
    v.add_space_prefix = true;
    v.tokens.reserve(n_vocab);
    v.scores.reserve(n_vocab);
    v.types.reserve(n_vocab);
    for (int32_t id = 0; id < n_vocab; id++) {
        const std::string where = "token " + std::to_string(id);
        const float score = r.f32(where.c_str());
        const int32_t len = r.i32(where.c_str());
        if (len < 0 || static_cast<size_t>(len) > r.left()) {
            r.fail(where + " has length " + std::to_string(len) + " with " +
                   std::to_string(r.left()) + " bytes left in the file");
        }
        if (std::isnan(score)) r.fail(where + " has a NaN score");
        const std::string_view piece = r.take(len, where.c_str());

        std::string text;
        TokenType type = TokenType::Normal;
        if (id == v.unk) {
            text = "<unk>", type = TokenType::Unknown;
        } else if (id == v.bos || id == v.eos) {
            text = id == v.bos ? "<s>" : "</s>", type = TokenType::Control;
        } else if (is_byte_piece(piece)) {
            text = piece, type = TokenType::Byte;
        } else {
            text = restore_spaces(piece);
        }
        v.tokens.push_back(std::move(text));
        v.scores.push_back(score);
        v.types.push_back(type);
    }
    if (r.left() != 0) {
        r.fail(std::to_string(r.left()) + " bytes after token " + std::to_string(n_vocab - 1) +
               ": it holds more tokens than the model's vocabulary of " + std::to_string(n_vocab));
    }
    return v;
}

}  // namespace lila
