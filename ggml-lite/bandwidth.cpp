#include "bandwidth.h"

#include <algorithm>
#include <chrono>
#include "kernels.h"
#include "ops.h"

namespace ggml_lite {

uint64_t read_pass(const void* p, size_t bytes, int n_threads) {
    constexpr size_t kPiece = size_t{1} << 15;
    const auto read_sum = kernels().read_sum;
    // The two halves side by side, piece i of each in one call; an odd last word on its own.
    const size_t half = bytes / 16 * 8;
    const auto* first = static_cast<const uint8_t*>(p);
    const auto* second = first + half;
    const int64_t n_pieces = static_cast<int64_t>((half + kPiece - 1) / kPiece);
    uint64_t total = bytes % 16 ? *reinterpret_cast<const uint64_t*>(second + half) : 0;
#pragma omp parallel for num_threads(n_threads) reduction(+ : total) schedule(static)
    for (int64_t i = 0; i < n_pieces; i++) {
        const size_t at = static_cast<size_t>(i) * kPiece;
        total +=
            read_sum(first + at, second + at, static_cast<int64_t>(std::min(kPiece, half - at)));
    }
    return total;
}

double measure_read_bandwidth(int n_threads, size_t bytes, int reps) {
    bytes = bytes / 8 * 8;
    // The memory packed weights live in (huge pages, aligned): a 4 KiB-page buffer reads
    // 10-15% slower here, which would flatter decode's roofline fraction.
    const PackedBuffer buf(bytes);
    auto* data = reinterpret_cast<uint64_t*>(buf.data());
    // First touch by the thread that reads the page in the passes (the same static split of
    // the halves' words).
    const auto half_words = static_cast<int64_t>(bytes / 16);
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (int64_t i = 0; i < half_words; i++) {
        data[i] = static_cast<uint64_t>(i);
        data[half_words + i] = static_cast<uint64_t>(half_words + i);
    }
    if (bytes % 16) data[2 * half_words] = 0;

    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        sink = sink + read_pass(data, bytes, n_threads);
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(bytes) / secs);
    }
    return best;
}

}  // namespace ggml_lite
