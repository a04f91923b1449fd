// Team (jobs handed to the threads of one parallel region) and Chunks (the guided schedule).
#include "ggml-lite/team.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ggml_lite {
namespace {

// Every thread of a job runs it once, with the job's thread count, and what the job wrote is
// seen by thread 0 when run returns; for many jobs in a row, on fewer threads than the team
// has, and past the team's size (clamped).
TEST(Team, RunsEachJobOnceOnEveryThread) {
    Team::lead(4, [](Team& team) {
        ASSERT_EQ(team.size(), 4);
        for (int job = 0; job < 2000; job++) {
            const int n = 1 + job % 6;  // 5 and 6: more than the team
            const int nth = std::min(n, 4);
            std::vector<int> calls(4, 0), seen_nth(4, 0);
            team.run(n, [&](int ith, int nth_) {
                calls[ith]++;
                seen_nth[ith] = nth_;
            });
            for (int i = 0; i < 4; i++) {
                ASSERT_EQ(calls[i], i < nth ? 1 : 0) << "job " << job << " thread " << i;
                ASSERT_EQ(seen_nth[i], i < nth ? nth : 0);
            }
        }
    });
}

// Between jobs thread 0 pauses longer than the others spin, so they sleep in the kernel: the
// next job must still wake them.
TEST(Team, WakesSleepingThreads) {
    Team::lead(3, [](Team& team) {
        for (int job = 0; job < 5; job++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::atomic<int> sum{0};
            team.run(3, [&](int ith, int) { sum += ith + 1; });
            EXPECT_EQ(sum.load(), 6);
        }
    });
}

TEST(Team, OneThreadRunsOnTheCaller) {
    const auto caller = std::this_thread::get_id();
    Team::lead(1, [&](Team& team) {
        EXPECT_EQ(team.size(), 1);
        team.run(3, [&](int ith, int nth) {
            EXPECT_EQ(ith, 0);
            EXPECT_EQ(nth, 1);
            EXPECT_EQ(std::this_thread::get_id(), caller);
        });
    });
}

// An exception from the body stops the team and reaches lead's caller.
TEST(Team, BodyExceptionReachesTheCaller) {
    EXPECT_THROW(Team::lead(2,
                            [](Team& team) {
                                team.run(2, [](int, int) {});
                                throw std::runtime_error("body failed");
                            }),
                 std::runtime_error);
}

// on_team uses the team it is given, else leads one of its own.
TEST(Team, OnTeamUsesTheGivenTeam) {
    Team::lead(2, [](Team& team) { on_team(&team, 2, [&](Team& t) { EXPECT_EQ(&t, &team); }); });
    on_team(nullptr, 2, [](Team& t) { EXPECT_EQ(t.size(), 2); });
}

// Claims from one thread: 1/nth of what is left of the period, at least one, never across a
// period's end; a period of 1 gives single items.
TEST(Chunks, GuidedWithinEachPeriod) {
    Chunks c(13, 8);
    std::vector<std::pair<int64_t, int64_t>> got;
    for (int64_t b, e; c.next(2, b, e);) got.emplace_back(b, e);
    const std::vector<std::pair<int64_t, int64_t>> want = {{0, 4},  {4, 6},   {6, 7},  {7, 8},
                                                           {8, 11}, {11, 12}, {12, 13}};
    EXPECT_EQ(got, want);
    Chunks single(3, 1);
    got.clear();
    for (int64_t b, e; single.next(4, b, e);) got.emplace_back(b, e);
    EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {2, 3}}));
}

// Shared by a team, every item is handed out exactly once.
TEST(Chunks, EveryItemOnceAcrossThreads) {
    constexpr int64_t kTotal = 10000;
    std::vector<std::atomic<int>> hits(kTotal);
    Chunks c(kTotal, 700);
    Team::lead(3, [&](Team& team) {
        team.run(3, [&](int, int nth) {
            for (int64_t b, e; c.next(nth, b, e);) {
                EXPECT_EQ(b / 700, (e - 1) / 700);  // within one period
                for (int64_t i = b; i < e; i++) hits[i]++;
            }
        });
    });
    for (int64_t i = 0; i < kTotal; i++) ASSERT_EQ(hits[i].load(), 1) << i;
}

}  // namespace
}  // namespace ggml_lite
