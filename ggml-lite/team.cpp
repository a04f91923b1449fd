#include "team.h"

#include <omp.h>

#include <algorithm>
#include <exception>

namespace ggml_lite {
namespace {

// Pauses a waiting thread spins through before it sleeps: about 45 µs on Zen 4/5 (a pause is
// about 20 ns there, longer on recent Intel cores). The gaps between the jobs of a decode step
// (a norm, a rotation) take a few µs; a longer wait is worth a system call to wake from. With
// more threads than CPUs, a spinning thread takes the CPU from one with work: as libgomp does
// then, hardly spin at all.
constexpr int kSpins = 2048;
constexpr int kSpinsOversubscribed = 16;

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

}  // namespace

// seq_cst on both sides: either bump sees the sleeper, or the sleeper sees the new value.
void Signal::bump() {
    value_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) value_.notify_all();
}

void Signal::wait_change(uint32_t old, int spins) {
    for (int i = 0; i < spins; i++) {
        if (value_.load(std::memory_order_acquire) != old) return;
        relax();
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (value_.load(std::memory_order_seq_cst) == old) {
        value_.wait(old, std::memory_order_seq_cst);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void Team::lead(int n_threads, void* body, void (*call)(void*, Team&)) {
    Team team;
    if (n_threads <= 1) {
        call(body, team);
        return;
    }
    team.spins_ = n_threads <= omp_get_num_procs() ? kSpins : kSpinsOversubscribed;
    std::exception_ptr error;
#pragma omp parallel num_threads(n_threads)
    {
        if (omp_get_thread_num() == 0) {
            team.size_ = omp_get_num_threads();
            try {
                call(body, team);
            } catch (...) {
                error = std::current_exception();
            }
            team.stop_ = true;
            team.posted_.bump();
        } else {
            team.serve();
        }
    }
    if (error) std::rethrow_exception(error);
}

// The other threads: each job once, then a bump of done_. Thread 0 posts the next job only
// when all have bumped, so posted_ moves on by exactly one each time.
void Team::serve() {
    const int ith = omp_get_thread_num();
    for (uint32_t seen = 0;; seen++) {
        posted_.wait_change(seen, spins_);
        if (stop_) return;
        if (ith < job_threads_) (*job_)(ith, job_threads_);
        done_.bump();
    }
}

void Team::run(int n, JobRef job) {
    const int nth = std::clamp(n, 1, size_);
    if (nth == 1) {
        job(0, 1);
        return;
    }
    job_ = &job;
    job_threads_ = nth;
    joined_ += size_ - 1;
    posted_.bump();
    job(0, nth);
    for (uint32_t v; (v = done_.load()) != joined_;) done_.wait_change(v, spins_);
}

bool Chunks::next(int nth, int64_t& begin, int64_t& end) {
    int64_t b = next_.load(std::memory_order_relaxed);
    for (;;) {
        if (b >= total_) return false;
        const int64_t left = std::min(period_ - b % period_, total_ - b);
        const int64_t e = b + (left + nth - 1) / nth;
        if (next_.compare_exchange_weak(b, e, std::memory_order_relaxed)) {
            begin = b;
            end = e;
            return true;
        }
    }
}

}  // namespace ggml_lite
