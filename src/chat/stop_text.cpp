#include "src/chat/stop_text.h"

#include <algorithm>

namespace lila {

StopText::StopText(std::vector<std::string> stops) {
    for (std::string& s : stops) {
        if (!s.empty()) stops_.push_back(std::move(s));
    }
}

std::string StopText::add(std::string_view piece) {
    if (stopped_) return {};
    const size_t old_size = text_.size();
    text_ += piece;
    size_t cut = std::string::npos;
    for (const std::string& stop : stops_) {
        // A new match ends inside the new piece.
        const size_t from = old_size >= stop.size() ? old_size - stop.size() + 1 : 0;
        cut = std::min(cut, text_.find(stop, from));
    }
    if (cut != std::string::npos) {
        text_.resize(cut);
        stopped_ = true;
        return pass_on(cut);
    }
    return pass_on(text_.size() - held_back());
}

std::string StopText::finish() {
    return pass_on(text_.size());
}

std::string StopText::pass_on(size_t end) {
    if (end <= shown_) return {};
    std::string out = text_.substr(shown_, end - shown_);
    shown_ = end;
    return out;
}

// The longest tail of the text not yet passed on that begins some stop string.
size_t StopText::held_back() const {
    const std::string_view unshown = std::string_view(text_).substr(shown_);
    size_t hold = 0;
    for (const std::string& stop : stops_) {
        for (size_t n = std::min(stop.size() - 1, unshown.size()); n > hold; n--) {
            if (unshown.ends_with(std::string_view(stop).substr(0, n))) {
                hold = n;
                break;
            }
        }
    }
    return hold;
}

}  // namespace lila
