#include "team.h"

#include <omp.h>
#include <strings.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <exception>

namespace ggml_lite {
namespace {

// How many times a waiting thread checks (with a pause between) before it sleeps: as libgomp,
// whose settings it takes. lila's command sets GOMP_SPINCOUNT=10000 unless the user has set
// it or OMP_WAIT_POLICY (tools/common.cpp): about 0.2 ms here (a pause is about 20 ns on Zen
// 4/5), which covers the gaps between the jobs of a token (a norm, a rotation: a few µs), so
// the team stays awake while a model runs. OMP_WAIT_POLICY=passive: sleep at once. With more
// threads than CPUs a spinning thread takes the CPU from one with work: as libgomp does then,
// hardly spin at all.
constexpr int kSpins = 10000;
constexpr int kSpinsOversubscribed = 16;

int spin_count(int n_threads) {
    static const int configured = [] {
        const char* policy = std::getenv("OMP_WAIT_POLICY");
        if (policy && strcasecmp(policy, "passive") == 0) return 0;
        if (const char* count = std::getenv("GOMP_SPINCOUNT")) {
            if (strcasecmp(count, "infinite") == 0) return INT_MAX;
            char* end;
            const long n = std::strtol(count, &end, 10);
            if (end != count && n >= 0) return static_cast<int>(std::min<long>(n, INT_MAX));
        }
        return kSpins;
    }();
    return n_threads <= omp_get_num_procs() ? configured
                                            : std::min(configured, kSpinsOversubscribed);
}

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
    team.spins_ = spin_count(n_threads);
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
