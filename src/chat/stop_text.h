// Text as it streams out of a model, cut at the first stop string (a chat template's
// end-of-turn marker, a client's `stop`). A stop string may arrive split over several tokens,
// so text that could be the start of one is held back until it is known not to be: a stop
// string is never passed on, not even in part.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lila {

class StopText {
public:
    explicit StopText(std::vector<std::string> stops);  // empty strings are left out

    // Adds decoded text; returns the text that can be passed on now. When it completes a stop
    // string, stopped() turns true and the text is cut where the stop string begins.
    std::string add(std::string_view piece);
    // What is still held back, once no more text is coming ("" after a stop).
    std::string finish();

    bool stopped() const { return stopped_; }
    const std::string& text() const { return text_; }  // all the text, up to the stop

private:
    std::string pass_on(size_t end);
    size_t held_back() const;

    std::vector<std::string> stops_;
    std::string text_;
    size_t shown_ = 0;  // text_[0, shown_) has been passed on
    bool stopped_ = false;
};

}  // namespace lila
