// Matrix multiply, row lookup and RoPE angles on top of the kernel tables, with OpenMP.
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ggml_lite {
namespace {

// Tokens processed per pass over the weights: their quantized activations (~2 KiB each for
// 2048 columns) stay in L2 while every row tile of W visits them.
constexpr int64_t kTokenChunk = 64;

}  // namespace

void matmul(Context& ctx, const Matrix& W, const float* x, int64_t n_tokens, float* y) {
    const Kernels& k = ctx.kern();
    const TypeTraits& wt = traits(W.type);
    if (W.cols % wt.block_size != 0) {
        throw std::invalid_argument("matmul: columns not a multiple of the block size");
    }
    const TypeKernels& tk = k.types[type_index(W.type)];
    const Type act = wt.vec_dot_type;
    const size_t x_row = row_size(act, W.cols);
    const size_t w_row = row_size(W.type, W.cols);
    const auto* w = static_cast<const uint8_t*>(W.data);

    // Float activations are used in place; quantized ones are converted once per call into
    // scratch, which only ever grows, so steady-state decode allocates nothing.
    const bool convert = act != Type::F32;
    const size_t need = convert ? x_row * static_cast<size_t>(n_tokens) : 0;
    if (ctx.scratch.size() < need) ctx.scratch.resize(need);
    uint8_t* xq = ctx.scratch.data();
    const uint8_t* xa = convert ? xq : reinterpret_cast<const uint8_t*>(x);
    const auto from_float = k.types[type_index(act)].from_float;

    const int64_t row_tiles = (W.rows + kTileRows - 1) / kTileRows;
#pragma omp parallel num_threads(std::max(1, ctx.n_threads))
    {
        if (convert) {
#pragma omp for schedule(static)
            for (int64_t t = 0; t < n_tokens; t++)
                from_float(x + t * W.cols, xq + t * x_row, W.cols);
        }
        // The tiling depends only on the shapes, never on the thread count, and every output
        // element belongs to exactly one tile: results are identical for any thread count.
        for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokenChunk) {
            const int64_t t_end = std::min(n_tokens, t0 + kTokenChunk);
#pragma omp for schedule(static) nowait
            for (int64_t rt = 0; rt < row_tiles; rt++) {
                const int64_t r0 = rt * kTileRows;
                const int nr = static_cast<int>(std::min<int64_t>(kTileRows, W.rows - r0));
                for (int64_t t = t0; t < t_end; t += kTileTokens) {
                    const int nt = static_cast<int>(std::min<int64_t>(kTileTokens, t_end - t));
                    tk.gemm_tile(W.cols, w + r0 * w_row, w_row, xa + t * x_row, x_row,
                                 y + t * W.rows + r0, W.rows, nr, nt);
                }
            }
        }
    }
}

void get_row(const Matrix& W, int64_t row, float* out) {
    if (row < 0 || row >= W.rows) throw std::out_of_range("get_row: row out of range");
    const auto* w = static_cast<const uint8_t*>(W.data);
    traits(W.type).to_float(w + row * row_size(W.type, W.cols), out, W.cols);
}

void rope_angles(float* cos, float* sin, int64_t pos, int64_t rot_dim, float theta,
                 const float* freq_factors) {
    // In double: angles grow with the position, and float's 24 bits would lose the fraction
    // of a turn that actually matters at long contexts.
    for (int64_t i = 0; i < rot_dim / 2; i++) {
        double freq = std::pow(static_cast<double>(theta),
                               -2.0 * static_cast<double>(i) / static_cast<double>(rot_dim));
        if (freq_factors) freq /= freq_factors[i];
        const double angle = static_cast<double>(pos) * freq;
        cos[i] = static_cast<float>(std::cos(angle));
        sin[i] = static_cast<float>(std::sin(angle));
    }
}

}  // namespace ggml_lite
