#include "bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

namespace ggml_lite {

double measure_read_bandwidth(int n_threads, size_t bytes, int reps) {
    constexpr size_t kChunk = 4096;  // uint64s per work item: 32 KiB
    const size_t n = bytes / sizeof(uint64_t) / kChunk * kChunk;
    std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
    uint64_t* data = buf.get();
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (size_t i = 0; i < n; i++) data[i] = i;  // first touch by the thread that reads it

    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        uint64_t total = 0;
        // Eight independent accumulators keep enough loads in flight to saturate memory.
#pragma omp parallel for num_threads(n_threads) reduction(+ : total) schedule(static)
        for (size_t c = 0; c < n; c += kChunk) {
            uint64_t s[8] = {};
            for (size_t i = c; i < c + kChunk; i += 8) {
                for (int j = 0; j < 8; j++) s[j] += data[i + j];
            }
            for (uint64_t v : s) total += v;
        }
        sink = sink + total;
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, n * sizeof(uint64_t) / secs);
    }
    return best;
}

}  // namespace ggml_lite
