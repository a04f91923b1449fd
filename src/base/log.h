// Warnings: problems lila works around rather than refuses (a special-token id outside the
// vocabulary, a pre-tokenizer it does not know), said once on stderr so the user learns that
// results may differ from what the file's author intended.
#pragma once

#include <functional>
#include <string>

namespace lila {

// Prints "lila: warning: MESSAGE" to stderr, or hands MESSAGE to the sink set below.
void warn(const std::string& message);

// Where warnings go from now on (tests collect them); an empty sink restores stderr.
// Returns the previous sink.
using WarningSink = std::function<void(const std::string&)>;
WarningSink set_warning_sink(WarningSink sink);

}  // namespace lila
