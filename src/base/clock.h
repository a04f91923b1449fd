// The clock of every figure lila prints (load time, tokens/s): monotonic, so a change of the
// system time never shows up as a negative or huge rate.
#pragma once

#include <chrono>

namespace lila {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace lila
