// The one exception type lila throws for bad input: its message names the file (or flag)
// and the problem, ready to print as a one-line error.
#pragma once

#include <stdexcept>
#include <string>

namespace lila {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace lila
