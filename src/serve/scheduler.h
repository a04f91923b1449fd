// Continuous batching: the slots, the queue, and the loop that advances every request at once.
//
// Each slot is one sequence of the session's KV cache. A step gathers one batch: the next
// token of every slot that is generating, then chunks of the prompts of slots that are
// reading one, up to n_batch tokens in all; so the weights stream once per step for every
// client, and a long prompt is read in chunks between the other streams' tokens instead of
// stalling them. A request waits in a bounded queue until a slot is free; it gets the free
// slot whose cached tokens share the longest prefix with its prompt, and only the rest of the
// prompt is evaluated (a chat's next turn costs only its new tokens).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/chat/stop_text.h"
#include "src/runtime/sampler.h"
#include "src/runtime/session.h"
#include "src/serve/metrics.h"
#include "src/tokenizer/tokenizer.h"

namespace lila::serve {

// What a request asks of the scheduler, once the API layer has tokenized and checked it.
struct Job {
    std::vector<int32_t> prompt;  // at least one token, fewer than a slot's context
    int64_t max_tokens = 0;       // 0: until an end token, a stop string or a full context
    SamplerParams sampling;
    std::vector<std::string> stop;     // text that ends the reply (never sent)
    std::vector<int32_t> stop_tokens;  // tokens that end it besides end-of-generation ones
    bool ignore_eos = false;           // only max_tokens, stop strings or the context end it
    bool trim_leading_space = false;   // a chat reply starts at its first visible character
};

struct Usage {
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;  // of prompt_tokens, those found in the slot's cache
    int64_t completion_tokens = 0;
};

// One request's life in the scheduler, shared by the HTTP thread that waits for its text and
// the scheduler thread that makes it.
class Task {
public:
    explicit Task(Job job) : job_(std::move(job)), arrived_(std::chrono::steady_clock::now()) {}

    // What has happened since the last take().
    struct Progress {
        std::string text;    // new reply text
        bool done = false;   // the reply is complete (or failed: error is set)
        std::string finish;  // when done: "stop" or "length"
        std::string error;
        Usage usage;
    };
    // Waits up to `wait` for new text or the end.
    Progress take(std::chrono::milliseconds wait);
    // The client has gone: the scheduler drops the task at its next step, during its prompt
    // too, and its slot is free for the next request.
    void cancel() { cancelled_ = true; }

    // The scheduler's side.
    const Job& job() const { return job_; }
    bool cancelled() const { return cancelled_; }
    std::chrono::steady_clock::time_point arrived() const { return arrived_; }
    void append(std::string_view text);
    void finish(const std::string& reason, const Usage& usage);
    void fail(const std::string& error);

private:
    Job job_;
    std::chrono::steady_clock::time_point arrived_;
    std::atomic<bool> cancelled_ = false;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string text_;  // not yet taken
    bool done_ = false;
    std::string finish_, error_;
    Usage usage_;
};

struct SchedulerParams {
    int max_queue = 64;  // requests that may wait for a slot; more are refused (503)
};

class Scheduler {
public:
    // One slot per sequence of `session` (SessionParams::n_seq); a step evaluates at most
    // its n_batch tokens. Records into `metrics` when not null.
    Scheduler(Session& session, const SchedulerParams& params, Metrics* metrics = nullptr);
    ~Scheduler() { stop(); }
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Queues a task; false (and nothing queued) when the queue is full or the scheduler stopped.
    bool submit(std::shared_ptr<Task> task);

    // One step: drops cancelled tasks, gives free slots to waiting tasks, evaluates one batch
    // and samples the next token of every slot whose prompt is done. False when there was
    // nothing to do.
    bool step();
    // Runs step() on a thread of its own until stop(), sleeping while there is no work.
    void start();
    // Stops the loop thread, if started; every unfinished task fails ("the server is shutting
    // down") and later ones are refused.
    void stop();

    SchedulerStatus status() const;
    int64_t n_ctx() const { return session_.n_ctx(); }  // positions per slot

private:
    struct Slot {
        std::shared_ptr<Task> task;   // null when free
        std::vector<int32_t> cached;  // the tokens in this slot's KV cells, in order
        size_t n_prompt_done = 0;     // of the task's prompt, tokens in the cache
        int32_t next = -1;            // sampled, to be evaluated at the next step (-1: none)
        int64_t n_generated = 0;
        int64_t n_cached_prompt = 0;  // prompt tokens that were already in the cache
        std::unique_ptr<Sampler> sampler;
        std::unique_ptr<StreamDecoder> decoder;
        std::unique_ptr<StopText> stop;
        bool started = false;  // visible text has been sent (for trim_leading_space)
        std::chrono::steady_clock::time_point last_token;
    };

    void assign(Slot& slot, std::shared_ptr<Task> task);
    void sample(Slot& slot, float* logits);
    void emit(Slot& slot, std::string text);
    void release(Slot& slot, const std::string& reason);
    bool is_stop_token(const Job& job, int32_t id) const;
    void publish_status();

    Session& session_;
    const Tokenizer& tok_;
    SchedulerParams params_;
    Metrics* metrics_;
    std::vector<int32_t> end_tokens_;  // end-of-generation tokens and BOS: masked by ignore_eos
    std::vector<Slot> slots_;
    std::vector<BatchToken> batch_;
    std::vector<int> batch_rows_;  // the slot of each logits row of batch_

    mutable std::mutex mutex_;  // guards queue_, status_, stopping_
    std::condition_variable work_;
    std::deque<std::shared_ptr<Task>> queue_;
    SchedulerStatus status_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace lila::serve
