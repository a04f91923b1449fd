// A team of threads that one thread hands jobs to, many times within one OpenMP parallel
// region: the threading of a forward pass.
//
// Why not a `#pragma omp parallel` per operation: libgomp's fork and join, and every barrier,
// wake the team with a futex_wake system call whether anyone sleeps or not. On the 2-vCPU Zen 5
// VM an empty region costs about 3.3 µs and one with a work-sharing loop and its barrier 5 µs,
// where two threads spinning on an atomic meet in 0.5 µs; a decode step of a small model runs
// a hundred regions or more (docs/PERF.md, "Where the time goes"). A team pays libgomp's fork
// once per forward pass. A job is handed over and joined through counters the waiting threads
// spin on; a thread that has waited longer than the gaps between the jobs of a token goes to
// sleep in the kernel (futex), so a team holds no CPU for long when no job comes. Waiting
// follows libgomp's settings (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace ggml_lite {

// A job: job(ith, nth) is thread ith's share of the work, nth the threads running it. A
// reference to a callable that outlives the call (a lambda at the call site); jobs must not
// throw.
class JobRef {
public:
    template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, JobRef>)
        JobRef(F&& f)  // NOLINT(google-explicit-constructor): called with a lambda
        : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, int i, int n) {
              (*static_cast<std::remove_reference_t<F>*>(o))(i, n);
          }) {}
    void operator()(int ith, int nth) const { call_(obj_, ith, nth); }

private:
    void* obj_;
    void (*call_)(void*, int, int);
};

// A counter threads wait on: spinning first, then asleep in the kernel. bump() calls the
// kernel only when someone sleeps.
class Signal {
public:
    uint32_t load() const { return value_.load(std::memory_order_acquire); }
    void bump();
    // Returns once the value is no longer `old`, after `spins` checks spinning at most.
    void wait_change(uint32_t old, int spins);

private:
    alignas(64) std::atomic<uint32_t> value_{0};
    alignas(64) std::atomic<int> sleepers_{0};
};

class Team {
public:
    // Runs body(team) on the calling thread as thread 0 of a team of n_threads (one inside
    // another parallel region, where OpenMP gives one); the others run the jobs of team.run
    // until body returns. An exception from body is rethrown here once the team has stopped.
    template <class Body>
    static void lead(int n_threads, Body&& body) {
        using B = std::remove_reference_t<Body>;
        lead(n_threads, &body, [](void* b, Team& t) { (*static_cast<B*>(b))(t); });
    }

    int size() const { return size_; }

    // Runs job(ith, nth) for ith < nth = min(n, size()) on threads 0..nth-1, the caller (thread
    // 0) included, and returns when every one has finished. Only thread 0 calls it.
    void run(int n, JobRef job);

private:
    static void lead(int n_threads, void* body, void (*call)(void*, Team&));
    void serve();

    int size_ = 1;
    int spins_ = 0;  // checks a waiting thread spins through before it sleeps (team.cpp)
    const JobRef* job_ = nullptr;
    int job_threads_ = 0;
    bool stop_ = false;
    uint32_t joined_ = 0;  // done_'s value when every other thread has finished the last job
    Signal posted_;        // bumped by thread 0 for each job, and to stop
    Signal done_;          // bumped by each other thread once it has seen a job through
};

// Runs body(team) on `team` when there is one (a forward pass's), else on a team of its own of
// n threads.
template <class Body>
void on_team(Team* team, int n, Body&& body) {
    if (team) {
        body(*team);
    } else {
        Team::lead(n, body);
    }
}

// Hands out [0, total) to the threads of a job as OpenMP's schedule(guided, 1) would, period
// by period: a claim takes 1/nth of what is left of its period (at least one item) and never
// crosses into the next, so threads move on to the next period without a barrier. A period
// of 1 hands out single items (schedule(dynamic)).
class Chunks {
public:
    Chunks(int64_t total, int64_t period) : total_(total), period_(period) {}
    // The next chunk [begin, end) for a job of nth threads; false once all are handed out.
    bool next(int nth, int64_t& begin, int64_t& end);

private:
    alignas(64) std::atomic<int64_t> next_{0};
    int64_t total_;
    int64_t period_;
};

}  // namespace ggml_lite
