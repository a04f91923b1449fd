// What the memory delivers: the roofline that decode speed is measured against.
#pragma once

#include <cstddef>

namespace ggml_lite {

// Read bandwidth in bytes/s of a read-only pass over `bytes` of memory with n_threads
// threads, the best of `reps` passes (the first touches the pages and is not counted).
double measure_read_bandwidth(int n_threads, size_t bytes = size_t{1} << 30, int reps = 3);

}  // namespace ggml_lite
