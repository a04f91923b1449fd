// The operations a transformer needs, on the active kernel table, threaded with OpenMP (a
// team per call, or the caller's: with_team).
// Results are bit-identical for any thread count: every output element is computed by
// exactly one thread, in a fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels.h"
#include "team.h"
#include "type.h"

namespace ggml_lite {

// A 2-D weight matrix in place (usually mmap'd): `rows` rows of `cols` elements of `type`,
// rows stored contiguously (row_size(type, cols) bytes each).
struct Matrix {
    Type type;
    int64_t rows;
    int64_t cols;
    const void* data;
    // The same rows in the packed layout (packed.h), or nullptr: see pack_weights.
    const void* packed = nullptr;
};

// Memory that holds packed weights: one block, on transparent huge pages when large (a 2 MiB
// page per TLB entry while weights stream through).
class PackedBuffer {
public:
    PackedBuffer() = default;
    explicit PackedBuffer(size_t bytes);
    uint8_t* data() const { return data_.get(); }
    size_t size() const { return size_; }

private:
    struct Free {
        void operator()(uint8_t* p) const;
    };
    std::unique_ptr<uint8_t, Free> data_;
    size_t size_ = 0;
};

// Rearranges every matrix in `ws` that the active kernel table has a packed path for (every
// type with a packed layout: packed.h, packable) into one buffer and points its `packed` at it;
// the others are left alone. The buffer must outlive every use of the matrices. It takes as
// much memory as the originals, whose pages matmul no longer reads (get_row still does):
// `packed`, when given, is called (from any thread) with each matrix as soon as it has been
// copied, so a caller whose weights are mapped from a file can drop those pages and keep the
// peak memory near one copy. n_threads 0: OpenMP's default.
using PackedFn = std::function<void(const Matrix& W)>;
PackedBuffer pack_weights(std::span<Matrix* const> ws, int n_threads, const PackedFn& packed = {});

// Per-context state for ops: thread count and scratch memory reused across calls, so the
// decode loop allocates nothing once the first call has sized it.
struct Context {
    int n_threads = 1;
    const Kernels* k = nullptr;  // nullptr: the active table
    std::vector<uint8_t> scratch;
    Team* team = nullptr;  // within with_team: the threads every operation runs on

    const Kernels& kern() const { return k ? *k : kernels(); }
};

// Runs body() with every operation on ctx going to one team of ctx.n_threads threads
// (team.h): a forward pass forks its threads once instead of once per matmul.
template <class Body>
void with_team(Context& ctx, Body&& body) {
    Team::lead(ctx.n_threads, [&](Team& team) {
        struct Leave {
            Context& ctx;
            ~Leave() { ctx.team = nullptr; }
        } leave{ctx};
        ctx.team = &team;
        body();
    });
}

// Runs job(ith, nth) on n threads (nth ≤ n): on ctx's team within with_team.
void parallel(Context& ctx, int n, JobRef job);

// y[t][r] = W[r] . x[t] for t < n_tokens, r < W.rows.
// x: n_tokens rows of W.cols floats; y: n_tokens rows of W.rows floats.
// Activations are converted once to what W's kernel reads, then groups of rows × panels of
// tokens are shared among threads; small products run on one thread, where waking others
// would cost more than it saves.
void matmul(Context& ctx, const Matrix& W, const float* x, int64_t n_tokens, float* y);

// y = W x for several matrices of the same width applied to the same activations (q/k/v,
// gate/up): the activations are converted once and all rows are shared out in one parallel
// region, so threads meet at one barrier instead of one per matrix.
struct MatmulOut {
    const Matrix* W;
    float* y;
};
void matmul(Context& ctx, const float* x, int64_t n_tokens, std::initializer_list<MatmulOut> outs);

// Threads worth waking for `work` multiply-adds, at most n_threads.
int threads_for_work(int64_t work, int n_threads);

// How matmul multiplies weights of type t with the active kernel table (or with k), in words,
// so users can tell whether a fast path is in use, e.g. "avx512, packed 16-row groups
// (vpdpbusd)", or "scalar reference (no avx2 kernel for q4_0)" where the table runs the
// scalar table's kernel for t.
std::string kernel_path(Type t);
std::string kernel_path(const Kernels& k, Type t);

// out = row `row` of W, dequantized to float (embedding lookup).
void get_row(const Matrix& W, int64_t row, float* out);

// cos/sin of the RoPE angles for one position: angle_i = pos * theta^(-2i/rot_dim) * (1 /
// freq_factors[i] when given), i < rot_dim/2.
void rope_angles(float* cos, float* sin, int64_t pos, int64_t rot_dim, float theta,
                 const float* freq_factors);

// ---- Block variants of some architectures (scalar; not in the kernel tables) ---------------

// As Kernels::rope, but rotating the pairs (x[i], x[i + rot_dim/2]) of each head: the NEOX
// layout of Hugging Face checkpoints, which qwen2, qwen3, gemma2/3, phi3 and olmo2 files keep.
void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rot_dim, const float* cos,
               const float* sin);

// h = gelu(h) * g with GELU's tanh approximation, 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))
// (Gemma's gated FFN).
void gelu_tanh_mul(float* h, const float* g, int64_t n);

// x = cap * tanh(x / cap): logit soft-capping (Gemma 2).
void softcap(float* x, int64_t n, float cap);

// Attention as Kernels::attend_f32/attend_f16 computes it (kernels.h: AttendFn, same cache
// layout and arguments), over positions first..n_pos-1 only (a sliding window), and with
// softcap > 0 each score s soft-capped to softcap * tanh(s / softcap) before the softmax.
// scores: n_q * n_pos floats.
template <class Elem>
void attend_window(const float* q, int64_t n_q, int64_t head_dim, const Elem* k, const Elem* v,
                   int64_t first, int64_t n_pos, float scale, float softcap, float* scores,
                   float* out);

}  // namespace ggml_lite
