// What the memory delivers: the roofline that decode speed is measured against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml_lite {

// One read-only pass over `bytes` at p (a multiple of 8) with n_threads threads, each taking
// a 32 KiB piece of each half at a time through the active table's read_sum (kernels.h): two
// streams with the widest loads and the prefetching of the matmul kernels, as one-token decode
// reads. Returns the words' sum, so the reads cannot be elided.
uint64_t read_pass(const void* p, size_t bytes, int n_threads);

// Read bandwidth in bytes/s of read_pass over `bytes` of memory (a PackedBuffer, as weights
// use) with n_threads threads, the best of `reps` passes (pages are touched first).
double measure_read_bandwidth(int n_threads, size_t bytes = size_t{1} << 30, int reps = 3);

}  // namespace ggml_lite
