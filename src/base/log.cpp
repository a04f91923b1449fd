#include "src/base/log.h"

#include <cstdio>
#include <mutex>

namespace lila {

namespace {

std::mutex& sink_mutex() {
    static std::mutex m;
    return m;
}

WarningSink& current_sink() {
    static WarningSink sink;
    return sink;
}

}  // namespace

void warn(const std::string& message) {
    std::lock_guard lock(sink_mutex());
    if (const WarningSink& sink = current_sink()) {
        sink(message);
    } else {
        std::fprintf(stderr, "lila: warning: %s\n", message.c_str());
    }
}

WarningSink set_warning_sink(WarningSink sink) {
    std::lock_guard lock(sink_mutex());
    std::swap(current_sink(), sink);
    return sink;
}

}  // namespace lila
