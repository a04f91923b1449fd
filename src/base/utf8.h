// UTF-8 helpers shared by the tokenizers and the streaming decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lila {

enum class Utf8Status {
    Valid,       // a complete, well-formed character of `len` bytes
    Incomplete,  // the text ends inside a character that could still become valid
    Invalid,     // `len` bytes (at least 1) that can never start a valid character
};

struct Utf8Char {
    Utf8Status status;
    size_t len;
};

// Classifies the character at the start of `s` (non-empty) by the Unicode rules of
// well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF). An invalid
// sequence's length is its maximal subpart, so each bad run becomes one U+FFFD, as
// browsers and Python do.
Utf8Char utf8_next(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (<= U+10FFFF).
void utf8_append(std::string& out, uint32_t cp);

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// `s` with every invalid or truncated sequence replaced by U+FFFD.
std::string utf8_sanitize(std::string_view s);

}  // namespace lila
