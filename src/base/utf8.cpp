#include "src/base/utf8.h"

namespace lila {

Utf8Char utf8_next(std::string_view s) {
    const auto b0 = static_cast<uint8_t>(s[0]);
    if (b0 < 0x80) return {Utf8Status::Valid, 1};

    // Length and the allowed range of the second byte, from Table 3-7 of the Unicode
    // standard: the narrowed ranges rule out overlong forms, surrogates and > U+10FFFF.
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return {Utf8Status::Invalid, 1};  // a stray continuation byte, C0, C1 or F5..FF
    }

    for (size_t i = 1; i < len; i++) {
        if (i == s.size()) return {Utf8Status::Incomplete, i};
        const auto b = static_cast<uint8_t>(s[i]);
        if (b < lo || b > hi) return {Utf8Status::Invalid, i};
        lo = 0x80, hi = 0xBF;
    }
    return {Utf8Status::Valid, len};
}

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string utf8_sanitize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    while (!s.empty()) {
        const Utf8Char c = utf8_next(s);
        if (c.status == Utf8Status::Valid) {
            out.append(s.substr(0, c.len));
        } else {
            out.append(kReplacementChar);
        }
        s.remove_prefix(c.len);
    }
    return out;
}

}  // namespace lila
