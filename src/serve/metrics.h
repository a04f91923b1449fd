// What GET /metrics reports, in Prometheus' text format: requests and responses, tokens,
// time to first token and the time between tokens, and the scheduler's state (queue depth,
// busy slots, KV cache cells in use). Thread-safe: the HTTP threads and the scheduler both
// record into it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace lila::serve {

// The scheduler's state at one moment.
struct SchedulerStatus {
    int slots = 0, busy = 0;
    int64_t queued = 0;
    int64_t kv_used = 0, kv_total = 0;  // KV cache positions, all slots together
};

class Histogram {
public:
    explicit Histogram(std::vector<double> bounds);
    void observe(double v);
    // The series NAME_bucket{le=...}, NAME_sum and NAME_count.
    std::string text(const std::string& name) const;

private:
    std::vector<double> bounds_;
    std::vector<uint64_t> counts_;  // per bound, plus +Inf; not cumulative
    double sum_ = 0;
};

class Metrics {
public:
    Metrics();

    void response(int status);                       // one HTTP response
    void finished(const std::string& reason);        // a completion ended: stop, length, cancelled
    void prompt(int64_t evaluated, int64_t cached);  // a request's prompt tokens
    void token(double seconds, bool first);          // a generated token: time since the request
                                                     // arrived (first) or since the previous token

    std::string text(const SchedulerStatus& s) const;

private:
    mutable std::mutex mutex_;
    std::map<int, uint64_t> responses_;
    std::map<std::string, uint64_t> finished_;
    uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, generated_tokens_ = 0;
    Histogram ttft_, token_latency_;
};

}  // namespace lila::serve
