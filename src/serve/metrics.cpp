#include "src/serve/metrics.h"

#include <cstdio>

namespace lila::serve {

namespace {

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, double v) {
    out += name + " " + number(v) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) i++;
    counts_[i]++;
    sum_ += v;
}

std::string Histogram::text(const std::string& name) const {
    std::string out;
    uint64_t total = 0;
    for (size_t i = 0; i <= bounds_.size(); i++) {
        total += counts_[i];
        const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
        out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(total) + "\n";
    }
    sample(out, name + "_sum", sum_);
    out += name + "_count " + std::to_string(total) + "\n";
    return out;
}

Metrics::Metrics()
    : ttft_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      token_latency_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

void Metrics::response(int status) {
    std::lock_guard lock(mutex_);
    responses_[status]++;
}

void Metrics::finished(const std::string& reason) {
    std::lock_guard lock(mutex_);
    finished_[reason]++;
}

void Metrics::prompt(int64_t evaluated, int64_t cached) {
    std::lock_guard lock(mutex_);
    prompt_tokens_ += evaluated;
    cached_tokens_ += cached;
}

void Metrics::token(double seconds, bool first) {
    std::lock_guard lock(mutex_);
    generated_tokens_++;
    (first ? ttft_ : token_latency_).observe(seconds);
}

std::string Metrics::text(const SchedulerStatus& s) const {
    std::lock_guard lock(mutex_);
    std::string out;
    header(out, "lila_http_responses_total", "counter", "HTTP responses by status code.");
    for (const auto& [status, n] : responses_) {
        sample(out, "lila_http_responses_total{code=\"" + std::to_string(status) + "\"}", n);
    }
    header(out, "lila_requests_finished_total", "counter",
           "Completions by how they ended: stop, length, cancelled (the client went away).");
    for (const auto& [reason, n] : finished_) {
        sample(out, "lila_requests_finished_total{reason=\"" + reason + "\"}", n);
    }
    header(out, "lila_prompt_tokens_total", "counter", "Prompt tokens evaluated.");
    sample(out, "lila_prompt_tokens_total", prompt_tokens_);
    header(out, "lila_prompt_tokens_cached_total", "counter",
           "Prompt tokens found in a slot's cache, not evaluated again.");
    sample(out, "lila_prompt_tokens_cached_total", cached_tokens_);
    header(out, "lila_generated_tokens_total", "counter", "Tokens generated.");
    sample(out, "lila_generated_tokens_total", generated_tokens_);
    header(out, "lila_queue_depth", "gauge", "Requests waiting for a slot.");
    sample(out, "lila_queue_depth", s.queued);
    header(out, "lila_slots", "gauge", "Slots (sequences evaluated together).");
    sample(out, "lila_slots", s.slots);
    header(out, "lila_slots_busy", "gauge", "Slots working on a request.");
    sample(out, "lila_slots_busy", s.busy);
    header(out, "lila_kv_cache_used_cells", "gauge", "KV cache positions holding tokens.");
    sample(out, "lila_kv_cache_used_cells", s.kv_used);
    header(out, "lila_kv_cache_cells", "gauge", "KV cache positions, all slots together.");
    sample(out, "lila_kv_cache_cells", s.kv_total);
    header(out, "lila_time_to_first_token_seconds", "histogram",
           "From a request's arrival to its first generated token.");
    out += ttft_.text("lila_time_to_first_token_seconds");
    header(out, "lila_time_per_token_seconds", "histogram",
           "Between consecutive generated tokens of a request.");
    out += token_latency_.text("lila_time_per_token_seconds");
    return out;
}

}  // namespace lila::serve
