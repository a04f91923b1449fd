#include "src/serve/scheduler.h"

#include <algorithm>
#include <cmath>

#include "src/base/clock.h"
#include "src/base/error.h"

namespace lila::serve {

Task::Progress Task::take(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [&] { return done_ || !text_.empty(); });
    Progress p;
    p.text = std::move(text_);
    text_.clear();
    p.done = done_;
    p.finish = finish_;
    p.error = error_;
    p.usage = usage_;
    return p;
}

void Task::append(std::string_view text) {
    std::lock_guard lock(mutex_);
    text_ += text;
    changed_.notify_all();
}

void Task::finish(const std::string& reason, const Usage& usage) {
    std::lock_guard lock(mutex_);
    done_ = true;
    finish_ = reason;
    usage_ = usage;
    changed_.notify_all();
}

void Task::fail(const std::string& error) {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = error;
    changed_.notify_all();
}

Scheduler::Scheduler(Session& session, const SchedulerParams& params, Metrics* metrics)
    : session_(session),
      tok_(session.model().tokenizer()),
      params_(params),
      metrics_(metrics),
      slots_(session.n_seq()) {
    if (session.n_batch() < session.n_seq()) {
        throw Error("batch size " + std::to_string(session.n_batch()) +
                    " is smaller than the slot count " + std::to_string(session.n_seq()) +
                    ": every slot needs room for its token in a step");
    }
    if (params.max_queue < 0) throw Error("queue size must not be negative");
    for (int32_t id = 0; id < tok_.n_vocab(); id++) {
        if (tok_.is_eog(id) || id == tok_.vocab().bos) end_tokens_.push_back(id);
    }
    publish_status();
}

void Scheduler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (const auto& t : queue_) t->fail("the server is shutting down");
        queue_.clear();
    }
    work_.notify_all();
    if (thread_.joinable()) thread_.join();
    for (Slot& s : slots_) {
        if (s.task) s.task->fail("the server is shutting down");
        s.task.reset();
    }
}

bool Scheduler::submit(std::shared_ptr<Task> task) {
    {
        std::lock_guard lock(mutex_);
        // Tasks wait in the queue until the next step gives them a slot: the free slots'
        // worth of them are not waiting for long.
        const size_t room = static_cast<size_t>(params_.max_queue + status_.slots - status_.busy);
        if (stopping_ || queue_.size() >= room) return false;
        queue_.push_back(std::move(task));
    }
    work_.notify_all();
    return true;
}

void Scheduler::start() {
    thread_ = std::thread([this] {
        for (;;) {
            {
                std::unique_lock lock(mutex_);
                work_.wait(lock, [&] { return stopping_ || !queue_.empty() || status_.busy > 0; });
                if (stopping_) return;
            }
            step();
        }
    });
}

SchedulerStatus Scheduler::status() const {
    std::lock_guard lock(mutex_);
    SchedulerStatus s = status_;
    s.queued = static_cast<int64_t>(queue_.size());
    return s;
}

void Scheduler::publish_status() {
    SchedulerStatus s;
    s.slots = static_cast<int>(slots_.size());
    for (const Slot& slot : slots_) {
        s.busy += slot.task != nullptr;
        s.kv_used += static_cast<int64_t>(slot.cached.size());
    }
    s.kv_total = s.slots * session_.n_ctx();
    std::lock_guard lock(mutex_);
    status_ = s;
}

bool Scheduler::step() {
    bool worked = false;
    // Cancelled tasks leave the queue and their slots.
    {
        std::lock_guard lock(mutex_);
        worked |= std::erase_if(queue_, [&](const std::shared_ptr<Task>& t) {
                      if (t->cancelled() && metrics_) metrics_->finished("cancelled");
                      return t->cancelled();
                  }) > 0;
    }
    for (Slot& s : slots_) {
        if (s.task && s.task->cancelled()) {
            release(s, "cancelled");
            worked = true;
        }
    }

    // Waiting tasks take free slots: each the one whose cache shares the most with its prompt.
    for (;;) {
        std::shared_ptr<Task> task;
        Slot* best = nullptr;
        size_t best_common = 0;
        {
            std::lock_guard lock(mutex_);
            if (queue_.empty()) break;
            const std::vector<int32_t>& prompt = queue_.front()->job().prompt;
            for (Slot& s : slots_) {
                if (s.task) continue;
                const auto diff =
                    std::mismatch(s.cached.begin(), s.cached.end(), prompt.begin(), prompt.end());
                const size_t common = diff.first - s.cached.begin();
                // On a tie, the slot with less in its cache: others keep what they have.
                if (!best || common > best_common ||
                    (common == best_common && s.cached.size() < best->cached.size())) {
                    best = &s;
                    best_common = common;
                }
            }
            if (!best) break;
            task = std::move(queue_.front());
            queue_.pop_front();
            status_.busy++;  // at once, so submit() counts the slot as taken
        }
        assign(*best, std::move(task));
        worked = true;
    }

    // The batch: the next token of every generating slot, then prompt chunks up to n_batch.
    batch_.clear();
    batch_rows_.clear();
    for (size_t i = 0; i < slots_.size(); i++) {
        Slot& s = slots_[i];
        if (!s.task || s.next < 0) continue;
        batch_.push_back({s.next, static_cast<int>(i), true});
        batch_rows_.push_back(static_cast<int>(i));
        s.cached.push_back(s.next);
        s.next = -1;
    }
    for (size_t i = 0; i < slots_.size(); i++) {
        Slot& s = slots_[i];
        if (!s.task) continue;
        const std::vector<int32_t>& prompt = s.task->job().prompt;
        const size_t room = session_.n_batch() - batch_.size();
        const size_t n = std::min(prompt.size() - s.n_prompt_done, room);
        for (size_t t = 0; t < n; t++) {
            const bool last = ++s.n_prompt_done == prompt.size();
            batch_.push_back({prompt[s.n_prompt_done - 1], static_cast<int>(i), last});
            s.cached.push_back(prompt[s.n_prompt_done - 1]);
            if (last) batch_rows_.push_back(static_cast<int>(i));
        }
    }

    if (!batch_.empty()) {
        worked = true;
        try {
            float* logits = const_cast<float*>(session_.eval_batch(batch_));
            const int64_t nv = session_.model().hp.n_vocab;
            for (size_t r = 0; r < batch_rows_.size(); r++) {
                sample(slots_[batch_rows_[r]], logits + r * nv);
            }
        } catch (const std::exception& e) {
            // Requests are checked before they reach a slot, so this is a bug: fail the
            // requests of the batch rather than the server, and forget their caches.
            for (const BatchToken& b : batch_) {
                Slot& s = slots_[b.seq];
                if (s.task) {
                    s.task->fail(std::string("internal error: ") + e.what());
                    if (metrics_) metrics_->finished("error");
                    s.task.reset();
                }
                s.cached.clear();
                session_.truncate(0, b.seq);
            }
        }
    }
    publish_status();
    return worked;
}

void Scheduler::assign(Slot& slot, std::shared_ptr<Task> task) {
    const Job& job = task->job();
    const int seq = static_cast<int>(&slot - slots_.data());
    // Keep what the cache shares with the prompt, but evaluate at least the last prompt
    // token: its logits choose the first reply token.
    const auto diff =
        std::mismatch(slot.cached.begin(), slot.cached.end(), job.prompt.begin(), job.prompt.end());
    const size_t common = std::min<size_t>(diff.first - slot.cached.begin(), job.prompt.size() - 1);
    session_.truncate(static_cast<int64_t>(common), seq);
    slot.cached.resize(common);
    slot.n_prompt_done = common;
    slot.n_cached_prompt = static_cast<int64_t>(common);
    slot.n_generated = 0;
    slot.next = -1;
    slot.started = false;
    slot.sampler = std::make_unique<Sampler>(job.sampling, tok_.n_vocab());
    for (int32_t id : job.prompt) slot.sampler->accept(id);
    slot.decoder = std::make_unique<StreamDecoder>(tok_);
    slot.stop = std::make_unique<StopText>(job.stop);
    slot.task = std::move(task);
    if (metrics_) {
        metrics_->prompt(static_cast<int64_t>(job.prompt.size() - common),
                         static_cast<int64_t>(common));
    }
}

bool Scheduler::is_stop_token(const Job& job, int32_t id) const {
    // A BOS mid-stream starts a new document (llama2.c's story models): the reply is over.
    return tok_.is_eog(id) || id == tok_.vocab().bos ||
           std::find(job.stop_tokens.begin(), job.stop_tokens.end(), id) != job.stop_tokens.end();
}

void Scheduler::sample(Slot& slot, float* logits) {
    const Job& job = slot.task->job();
    if (job.ignore_eos) {
        for (int32_t id : end_tokens_) logits[id] = -INFINITY;
    }
    const int32_t id = slot.sampler->sample(logits);
    if (!job.ignore_eos && is_stop_token(job, id)) {
        release(slot, "stop");
        return;
    }
    slot.sampler->accept(id);
    slot.n_generated++;
    const auto now = Clock::now();
    if (metrics_) {
        const bool first = slot.n_generated == 1;
        metrics_->token(
            std::chrono::duration<double>(now - (first ? slot.task->arrived() : slot.last_token))
                .count(),
            first);
    }
    slot.last_token = now;
    emit(slot, slot.stop->add(slot.decoder->push(id)));
    if (slot.stop->stopped()) {
        release(slot, "stop");
    } else if ((job.max_tokens > 0 && slot.n_generated >= job.max_tokens) ||
               static_cast<int64_t>(slot.cached.size()) == session_.n_ctx()) {
        release(slot, "length");
    } else {
        slot.next = id;
    }
}

void Scheduler::emit(Slot& slot, std::string text) {
    if (slot.task->job().trim_leading_space && !slot.started) {
        const size_t start = text.find_first_not_of(" \t\r\n");
        text.erase(0, std::min(start, text.size()));
        slot.started = !text.empty();
    }
    if (!text.empty()) slot.task->append(text);
}

// Ends the slot's task: what the decoder and the stop-string matcher still hold goes out
// first (unless a stop string ended it), and the slot keeps its cache for the next request.
void Scheduler::release(Slot& slot, const std::string& reason) {
    if (reason != "cancelled" && !slot.stop->stopped()) {
        std::string rest = slot.stop->add(slot.decoder->flush());
        if (!slot.stop->stopped()) rest += slot.stop->finish();
        emit(slot, std::move(rest));
    }
    const Usage usage{static_cast<int64_t>(slot.task->job().prompt.size()), slot.n_cached_prompt,
                      slot.n_generated};
    slot.task->finish(reason, usage);
    if (metrics_) metrics_->finished(reason);
    slot.task.reset();
    slot.next = -1;
}

}  // namespace lila::serve
