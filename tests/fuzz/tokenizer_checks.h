// What every tokenizer promises (src/tokenizer/tokenizer.h), checked on arbitrary input: ids in
// range, decode(encode(s)) == s for any bytes, the streaming decoder agreeing with decode(), and
// ids outside the vocabulary rejected with an Error.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "src/base/utf8.h"
#include "src/tokenizer/tokenizer.h"

namespace lila::fuzz {

// The streamed text of `ids` (from the start of a text) is decode() made valid UTF-8.
inline void check_stream(const Tokenizer& tok, const std::vector<int32_t>& ids) {
    StreamDecoder stream(tok, true);
    std::string streamed;
    for (int32_t id : ids) {
        const std::string piece = stream.push(id);
        check(utf8_sanitize(piece) == piece, "the stream emits only whole UTF-8 characters");
        streamed += piece;
    }
    streamed += stream.flush();
    check(streamed == utf8_sanitize(tok.decode(ids)), "streaming equals decode()");
}

// `text` encoded with the given options. `lossless`: the vocabulary spells every byte (byte
// tokens), so decoding must give the text back.
inline void check_encode(const Tokenizer& tok, std::string_view text, bool add_bos,
                         bool parse_special, bool lossless) {
    const std::vector<int32_t> ids = tok.encode(text, add_bos, parse_special);
    for (int32_t id : ids) check(id >= 0 && id < tok.n_vocab(), "encode gives ids in range");
    if (add_bos && tok.vocab().bos >= 0) {
        check(!ids.empty() && ids[0] == tok.vocab().bos, "BOS first when asked for");
    }
    // SentencePiece's space marker U+2581 in a text decodes as the space it stands for, as
    // in SentencePiece itself, so such a text does not come back byte for byte.
    const bool marker = tok.vocab().model == "llama" && text.find("\xE2\x96\x81") != text.npos;
    if (lossless && !parse_special && !marker) {
        check(tok.decode(ids) == text, "decode(encode(s)) == s");
    }
    check_stream(tok, ids);
}

// Arbitrary ids, mostly inside the vocabulary and a few just outside it: those must be an
// Error, the rest decode.
inline void check_decode(const Tokenizer& tok, std::string_view bytes, bool special) {
    std::vector<int32_t> ids;
    bool out_of_range = false;
    const int64_t span = int64_t(tok.n_vocab()) + 8;
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        uint32_t w;
        std::memcpy(&w, bytes.data() + i, 4);
        const int32_t id = int32_t(int64_t(w % uint64_t(span)) - 4);
        out_of_range |= id < 0 || id >= tok.n_vocab();
        ids.push_back(id);
    }
    try {
        (void)tok.decode(ids, special);
        check(!out_of_range, "decode rejects ids outside the vocabulary");
    } catch (const Error&) {
        check(out_of_range, "decode takes every id of the vocabulary");
        return;
    }
    check_stream(tok, ids);
}

// The input's first byte chooses: bit 0 add BOS, bit 1 parse special tokens, bit 2 decode
// the rest as ids instead of encoding it as text.
inline void fuzz_tokenizer(const Tokenizer& tok, const uint8_t* data, size_t size, bool lossless) {
    const Flags f = split_flags(data, size);
    if (f.bit(2)) {
        check_decode(tok, f.rest, f.bit(1));
    } else {
        check_encode(tok, f.rest, f.bit(0), f.bit(1), lossless);
    }
}

}  // namespace lila::fuzz
