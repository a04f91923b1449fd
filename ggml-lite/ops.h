// The operations a transformer needs, on the active kernel table, threaded with OpenMP.
// Results are bit-identical for any thread count: every output element is computed by
// exactly one thread, in a fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels.h"
#include "type.h"

namespace ggml_lite {

// A 2-D weight matrix in place (usually mmap'd): `rows` rows of `cols` elements of `type`,
// rows stored contiguously (row_size(type, cols) bytes each).
struct Matrix {
    Type type;
    int64_t rows;
    int64_t cols;
    const void* data;
};

// Per-context state for ops: thread count and scratch memory reused across calls, so the
// decode loop allocates nothing once the first call has sized it.
struct Context {
    int n_threads = 1;
    const Kernels* k = nullptr;  // nullptr: the active table
    std::vector<uint8_t> scratch;

    const Kernels& kern() const { return k ? *k : kernels(); }
};

// y[t][r] = W[r] . x[t] for t < n_tokens, r < W.rows.
// x: n_tokens rows of W.cols floats; y: n_tokens rows of W.rows floats.
// Activations are converted once to W's vec_dot_type, then rows × tokens are shared
// among threads.
void matmul(Context& ctx, const Matrix& W, const float* x, int64_t n_tokens, float* y);

// out = row `row` of W, dequantized to float (embedding lookup).
void get_row(const Matrix& W, int64_t row, float* out);

// cos/sin of the RoPE angles for one position: angle_i = pos * theta^(-2i/rot_dim) * (1 /
// freq_factors[i] when given), i < rot_dim/2.
void rope_angles(float* cos, float* sin, int64_t pos, int64_t rot_dim, float theta,
                 const float* freq_factors);

}  // namespace ggml_lite
