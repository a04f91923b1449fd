// Stop strings in streamed text: found across piece boundaries, never passed on in part.
#include <gtest/gtest.h>

#include "src/chat/stop_text.h"

namespace lila {
namespace {

// Feeds the pieces; returns what was passed on, and whether a stop string was found.
std::pair<std::string, bool> stream(std::vector<std::string> stops,
                                    const std::vector<std::string>& pieces) {
    StopText st(std::move(stops));
    std::string out;
    for (const std::string& p : pieces) {
        out += st.add(p);
        if (st.stopped()) return {out, true};
    }
    return {out + st.finish(), false};
}

TEST(StopText, PassesTextOnWithoutStops) {
    EXPECT_EQ(stream({}, {"Once", " upon", " a time"}),
              std::make_pair(std::string("Once upon a time"), false));
}

TEST(StopText, CutsAtAStopSplitOverPieces) {
    EXPECT_EQ(stream({"\n\n"}, {"The end.", "\n", "\nMore"}),
              std::make_pair(std::string("The end."), true));
    EXPECT_EQ(stream({"<|end|>"}, {"Hi", "<|", "en", "d|>", "after"}),
              std::make_pair(std::string("Hi"), true));
    // Inside one piece, with text after it.
    EXPECT_EQ(stream({"STOP"}, {"abcSTOPdef"}), std::make_pair(std::string("abc"), true));
}

TEST(StopText, HoldsBackAPossibleStartUntilItIsNot) {
    StopText st({"world"});
    EXPECT_EQ(st.add("hello wor"), "hello ");
    EXPECT_EQ(st.add("m"), "worm");  // not the stop string after all
    EXPECT_EQ(st.add(" wo"), " ");
    EXPECT_EQ(st.finish(), "wo");  // the stream ended: what was held back comes out
    EXPECT_FALSE(st.stopped());
}

// The stop string that starts first wins, whichever piece completes it.
TEST(StopText, TheEarliestOfSeveralStopsWins) {
    EXPECT_EQ(stream({"b c", "c"}, {"a b c"}), std::make_pair(std::string("a "), true));
    EXPECT_EQ(stream({"xyz", "y"}, {"x", "yz"}), std::make_pair(std::string(""), true));
}

TEST(StopText, EmptyStopsAreIgnored) {
    EXPECT_EQ(stream({""}, {"abc"}), std::make_pair(std::string("abc"), false));
}

TEST(StopText, NothingAfterTheStop) {
    StopText st({"."});
    EXPECT_EQ(st.add("a.b"), "a");
    EXPECT_EQ(st.add("c"), "");
    EXPECT_EQ(st.finish(), "");
    EXPECT_EQ(st.text(), "a");
}

}  // namespace
}  // namespace lila
