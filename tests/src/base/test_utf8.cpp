#include <gtest/gtest.h>

#include <string>

#include "src/base/utf8.h"

namespace lila {
namespace {

Utf8Char next(const std::string& s) {
    return utf8_next(s);
}

TEST(Utf8, ValidCharacters) {
    EXPECT_EQ(next("a").len, 1u);
    EXPECT_EQ(next("\xC3\xA9").len, 2u);          // é
    EXPECT_EQ(next("\xE4\xB8\x96x").len, 3u);     // 世, followed by more text
    EXPECT_EQ(next("\xF0\x9F\xA6\x99").len, 4u);  // 🦙
    for (const char* s :
         {"a", "\xC3\xA9", "\xE4\xB8\x96", "\xF0\x9F\xA6\x99", "\xF4\x8F\xBF\xBF"}) {
        EXPECT_EQ(next(s).status, Utf8Status::Valid) << s;
    }
}

TEST(Utf8, IncompleteAtEnd) {
    for (const char* s : {"\xC3", "\xE4", "\xE4\xB8", "\xF0\x9F", "\xF0\x9F\xA6"}) {
        const Utf8Char c = next(s);
        EXPECT_EQ(c.status, Utf8Status::Incomplete) << s;
        EXPECT_EQ(c.len, std::string(s).size());
    }
}

TEST(Utf8, InvalidSequencesAreMaximalSubparts) {
    struct Case {
        const char* s;
        size_t len;
    };
    const Case cases[] = {
        {"\x80", 1},      // stray continuation byte
        {"\xC0\x80", 1},  // overlong lead bytes never start a character
        {"\xC1\xBF", 1},
        {"\xE0\x80\x80", 1},      // overlong 3-byte form
        {"\xED\xA0\x80", 1},      // UTF-16 surrogate
        {"\xF0\x80\x80\x80", 1},  // overlong 4-byte form
        {"\xF4\x90\x80\x80", 1},  // past U+10FFFF
        {"\xF5", 1},
        {"\xFF", 1},
        {"\xE4\xB8x", 2},  // a valid start, cut short by another character
        {"\xF0\x9F\xA6x", 3},
        {"\xC3x", 1},
    };
    for (const Case& c : cases) {
        const Utf8Char r = next(c.s);
        EXPECT_EQ(r.status, Utf8Status::Invalid) << testing::PrintToString(std::string(c.s));
        EXPECT_EQ(r.len, c.len) << testing::PrintToString(std::string(c.s));
    }
}

TEST(Utf8, AppendRoundTripsEveryScalarValue) {
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        std::string s;
        utf8_append(s, cp);
        const Utf8Char c = utf8_next(s);
        const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
        ASSERT_EQ(c.status, surrogate ? Utf8Status::Invalid : Utf8Status::Valid) << cp;
        if (!surrogate) {
            ASSERT_EQ(c.len, s.size()) << cp;
        }
    }
}

TEST(Utf8, SanitizeReplacesEachBadRunOnce) {
    EXPECT_EQ(utf8_sanitize("plain ascii"), "plain ascii");
    EXPECT_EQ(utf8_sanitize("caf\xC3\xA9"), "caf\xC3\xA9");
    EXPECT_EQ(utf8_sanitize("a\xE4\xB8"
                            "b"),
              "a\xEF\xBF\xBD"
              "b");
    EXPECT_EQ(utf8_sanitize("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(utf8_sanitize("end\xF0\x9F\xA6"), "end\xEF\xBF\xBD");
    EXPECT_EQ(utf8_sanitize(""), "");
}

}  // namespace
}  // namespace lila
