// The float kernels, written once with xsimd and instantiated by each ISA translation unit
// (x86/kernels_avx2.cpp, x86/kernels_avx512.cpp, arm/kernels_neon.cpp) with its own
// architecture type, e.g. FloatKernels<xsimd::avx512bw>. Portable SIMD lives here; what
// only an ISA can do (half-precision loads) comes in as a small loader type.
//
// Include only from the ISA translation units, x86/*.cpp and arm/*.cpp (the -inl.h suffix
// says so). Each is compiled with its own -m flags, and everything here has internal linkage on
// purpose: an inline function or template with external linkage could be emitted there with,
// say, AVX-512 instructions, and the one-definition rule lets the linker pick that copy for the
// whole program, crashing CPUs without them.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "kernels.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): see above, internal linkage is the point

// Loads F32 weights; the ISA files provide the same interface for F16 and BF16.
template <class Arch>
struct LoadF32 {
    using Elem = float;
    static xsimd::batch<float, Arch> load(const float* p) {
        return xsimd::batch<float, Arch>::load_unaligned(p);
    }
    static float scalar(const float* p) { return *p; }
};

// (i ^ 1): swaps the two floats of each RoPE pair.
struct PairSwap {
    static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
};

template <class Arch>
struct FloatKernels {
    using B = xsimd::batch<float, Arch>;
    static constexpr int64_t N = B::size;

    static float hmax(B v) {
        alignas(64) float lanes[N];
        v.store_aligned(lanes);
        float m = lanes[0];
        for (int64_t i = 1; i < N; i++) m = lanes[i] > m ? lanes[i] : m;
        return m;
    }

    static void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
        B acc(0.0f);
        int64_t i = 0;
        for (; i + N <= n; i += N) {
            const B v = B::load_unaligned(x + i);
            acc = xsimd::fma(v, v, acc);
        }
        float ss = xsimd::hadd(acc);
        for (; i < n; i++) ss += x[i] * x[i];
        const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
        i = 0;
        for (; i + N <= n; i += N) {
            const B v = B::load_unaligned(x + i) * B(scale);
            (v * B::load_unaligned(weight + i)).store_unaligned(out + i);
        }
        for (; i < n; i++) out[i] = x[i] * scale * weight[i];
    }

    static void softmax(float* x, int64_t n) {
        B vmax(-INFINITY);
        int64_t i = 0;
        for (; i + N <= n; i += N) vmax = xsimd::max(vmax, B::load_unaligned(x + i));
        float max = hmax(vmax);
        for (; i < n; i++) max = x[i] > max ? x[i] : max;
        if (max == -INFINITY) {  // everything masked: no distribution, all weights zero
            for (i = 0; i < n; i++) x[i] = 0.0f;
            return;
        }
        B acc(0.0f);
        i = 0;
        for (; i + N <= n; i += N) {
            const B e = xsimd::exp(B::load_unaligned(x + i) - B(max));  // exp(-inf) = 0
            e.store_unaligned(x + i);
            acc += e;
        }
        float sum = xsimd::hadd(acc);
        for (; i < n; i++) {
            x[i] = std::exp(x[i] - max);
            sum += x[i];
        }
        scale(x, 1.0f / sum, n);
    }

    static void silu_mul(float* h, const float* g, int64_t n) {
        int64_t i = 0;
        for (; i + N <= n; i += N) {
            const B v = B::load_unaligned(h + i);
            const B silu = v / (B(1.0f) + xsimd::exp(-v));
            (silu * B::load_unaligned(g + i)).store_unaligned(h + i);
        }
        for (; i < n; i++) h[i] = h[i] / (1.0f + std::exp(-h[i])) * g[i];
    }

    static void add(float* y, const float* x, int64_t n) {
        int64_t i = 0;
        for (; i + N <= n; i += N) {
            (B::load_unaligned(y + i) + B::load_unaligned(x + i)).store_unaligned(y + i);
        }
        for (; i < n; i++) y[i] += x[i];
    }

    static void scale(float* x, float s, int64_t n) {
        int64_t i = 0;
        for (; i + N <= n; i += N) (B::load_unaligned(x + i) * B(s)).store_unaligned(x + i);
        for (; i < n; i++) x[i] *= s;
    }

    template <class LoadHalf>
    static void axpy_f16(float* y, float a, const uint16_t* x, int64_t n) {
        int64_t i = 0;
        for (; i + N <= n; i += N) {
            const B v = xsimd::fma(B(a), LoadHalf::load(x + i), B::load_unaligned(y + i));
            v.store_unaligned(y + i);
        }
        for (; i < n; i++) y[i] += a * LoadHalf::scalar(x + i);
    }

    // Interleaved pairs: out = v * (c, c) + swap(v) * (-s, s), with the per-pair cos/sin
    // duplicated once per chunk of dimensions and reused by every head.
    static void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t rot_dim, const float* cos,
                     const float* sin) {
        constexpr int64_t kChunk = 256;  // dimensions per pass; a multiple of any N
        alignas(64) float cc[kChunk];
        alignas(64) float ss[kChunk];
        const auto swap = xsimd::make_batch_constant<xsimd::batch<uint32_t, Arch>, PairSwap>();
        for (int64_t c0 = 0; c0 < rot_dim; c0 += kChunk) {
            const int64_t len = rot_dim - c0 < kChunk ? rot_dim - c0 : kChunk;
            for (int64_t i = 0; i < len / 2; i++) {
                cc[2 * i] = cc[2 * i + 1] = cos[c0 / 2 + i];
                ss[2 * i] = -sin[c0 / 2 + i];
                ss[2 * i + 1] = sin[c0 / 2 + i];
            }
            for (int64_t h = 0; h < n_heads; h++) {
                float* v = x + h * head_dim + c0;
                int64_t i = 0;
                for (; i + N <= len; i += N) {
                    const B a = B::load_unaligned(v + i);
                    const B b = xsimd::swizzle(a, swap);
                    xsimd::fma(a, B::load_aligned(cc + i), b * B::load_aligned(ss + i))
                        .store_unaligned(v + i);
                }
                for (; i < len; i += 2) {
                    const float x0 = v[i], x1 = v[i + 1];
                    v[i] = x0 * cc[i] + x1 * ss[i];
                    v[i + 1] = x1 * cc[i + 1] + x0 * ss[i + 1];
                }
            }
        }
    }

    // Dot products of NR weight rows (elements loaded by W) with NT float activation rows.
    // Each pair keeps two accumulators (two FMA chains), summed at the end, then the scalar
    // tail: the same sequence for every pair whatever NR and NT are, so a tile equals vec_dot.
    template <class W, int NR, int NT>
    static void dot_block(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x,
                          size_t x_stride, float* y, int64_t y_stride) {
        using E = typename W::Elem;
        const E* wr[NR];
        const float* xt[NT];
        for (int r = 0; r < NR; r++) wr[r] = reinterpret_cast<const E*>(w + r * w_stride);
        for (int t = 0; t < NT; t++) xt[t] = reinterpret_cast<const float*>(x + t * x_stride);
        B acc[NR][NT][2];
        for (int r = 0; r < NR; r++) {
            for (int t = 0; t < NT; t++) acc[r][t][0] = acc[r][t][1] = B(0.0f);
        }
        int64_t i = 0;
        for (; i + 2 * N <= n; i += 2 * N) {
            for (int k = 0; k < 2; k++) {
                B xv[NT];
                for (int t = 0; t < NT; t++) xv[t] = B::load_unaligned(xt[t] + i + k * N);
                for (int r = 0; r < NR; r++) {
                    const B wv = W::load(wr[r] + i + k * N);
                    for (int t = 0; t < NT; t++) acc[r][t][k] = xsimd::fma(wv, xv[t], acc[r][t][k]);
                }
            }
        }
        for (int r = 0; r < NR; r++) {
            for (int t = 0; t < NT; t++) {
                float sum = xsimd::hadd(acc[r][t][0] + acc[r][t][1]);
                for (int64_t j = i; j < n; j++) sum += W::scalar(wr[r] + j) * xt[t][j];
                y[t * y_stride + r] = sum;
            }
        }
    }

    // Sub-tiles sized to the register file: 4 rows × 2 tokens × 2 chains fit AVX-512's and
    // NEON's 32 registers; AVX2's 16 take 2 × 2.
    static constexpr int kSubRows = (N >= 16 || N == 4) ? 4 : 2;

    template <class W, int NR>
    static void dot_rows(int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs,
                         float* y, int64_t ys, int nt) {
        for (int t = 0; t < nt; t += 2) {
            if (nt - t >= 2) {
                dot_block<W, NR, 2>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
            } else {
                dot_block<W, NR, 1>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
            }
        }
    }

    template <class W>
    static void gemm_tile(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride,
                          float* y, int64_t y_stride, int nr, int nt) {
        const auto* wb = static_cast<const uint8_t*>(w);
        const auto* xb = static_cast<const uint8_t*>(x);
        int r = 0;
        for (; r + kSubRows <= nr; r += kSubRows) {
            dot_rows<W, kSubRows>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride,
                                  nt);
        }
        for (; r < nr; r++) {
            dot_rows<W, 1>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride, nt);
        }
    }

    template <class W>
    static float vec_dot(int64_t n, const void* w, const void* x) {
        float y;
        dot_block<W, 1, 1>(n, static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(x), 0,
                           &y, 0);
        return y;
    }

    // The table entry of a float weight type whose elements W loads (kernels.h: TypeOverride).
    template <class W>
    static constexpr TypeKernels kernels() {
        return {vec_dot<W>, nullptr, gemm_tile<W>};
    }

    // ---- Attention (kernels.h: AttendFn, and the cache layout there) ----

    // Calls f.template operator()<n>() for a run-time 1 <= n <= Max: register-blocked loops
    // need their trip counts at compile time.
    template <int Max, class F>
    static void with_count(int n, F&& f) {
        if constexpr (Max > 1) {
            if (n < Max) return with_count<Max - 1>(n, f);
        }
        f.template operator()<Max>();
    }

    // Fewer than 8 independent accumulators leave the FMA latency exposed: loops whose
    // register block is smaller work on U positions (or blocks) side by side.
    static constexpr int unroll(int chains) { return chains >= 8 ? 1 : chains >= 4 ? 2 : 4; }

    // Scores of QN queries over n_blk blocks of keys: per dimension, one load of the block's
    // keys (NB batches of positions) and one FMA per query with the query value broadcast.
    static constexpr int kKeyBatches = kKvBlock / N;
    template <class L, int QN, int U>
    static void attend_scores_blocks(const float* q, int64_t hd, const typename L::Elem* k,
                                     float scale, float* s, int64_t stride) {
        constexpr int NB = kKeyBatches;
        B acc[U][QN][NB];
        for (int u = 0; u < U; u++) {
            for (int j = 0; j < QN; j++) {
                for (int c = 0; c < NB; c++) acc[u][j][c] = B(0.0f);
            }
        }
        for (int64_t d = 0; d < hd; d++) {
            for (int u = 0; u < U; u++) {
                B kv[NB];
                for (int c = 0; c < NB; c++)
                    kv[c] = L::load(k + u * kKvBlock * hd + d * kKvBlock + c * N);
                for (int j = 0; j < QN; j++) {
                    const B qd(q[j * hd + d]);
                    for (int c = 0; c < NB; c++) acc[u][j][c] = xsimd::fma(qd, kv[c], acc[u][j][c]);
                }
            }
        }
        for (int u = 0; u < U; u++) {
            for (int j = 0; j < QN; j++) {
                for (int c = 0; c < NB; c++)
                    (acc[u][j][c] * B(scale))
                        .store_unaligned(s + j * stride + u * kKvBlock + c * N);
            }
        }
    }

    template <class L, int QN>
    static void attend_scores(const float* q, int64_t hd, const typename L::Elem* k, int64_t n_blk,
                              float scale, float* s, int64_t stride) {
        constexpr int U = unroll(QN * kKeyBatches);
        int64_t blk = 0;
        for (; blk + U <= n_blk; blk += U) {
            attend_scores_blocks<L, QN, U>(q, hd, k + blk * kKvBlock * hd, scale,
                                           s + blk * kKvBlock, stride);
        }
        for (; blk < n_blk; blk++) {
            attend_scores_blocks<L, QN, 1>(q, hd, k + blk * kKvBlock * hd, scale,
                                           s + blk * kKvBlock, stride);
        }
    }

    // out_j = sum_p s_jp v_p for QN queries and DB batches of dimensions: one load of each
    // value row, one FMA per query with the weight broadcast. v and out start at the first
    // dimension of the batch; hd is the row length. With U > 1, position p goes to partial
    // sum p % U (then the last n_pos % U to the first), added up in order at the end.
    template <class L, int QN, int DB>
    static void attend_values(const float* s, int64_t stride, const typename L::Elem* v, int64_t hd,
                              int64_t n_pos, float* out) {
        constexpr int U = unroll(QN * DB);
        B acc[U][QN][DB];
        for (int u = 0; u < U; u++) {
            for (int j = 0; j < QN; j++) {
                for (int c = 0; c < DB; c++) acc[u][j][c] = B(0.0f);
            }
        }
        const auto step = [&](int u, int64_t p) {
            B vv[DB];
            for (int c = 0; c < DB; c++) vv[c] = L::load(v + p * hd + c * N);
            for (int j = 0; j < QN; j++) {
                const B w(s[j * stride + p]);
                for (int c = 0; c < DB; c++) acc[u][j][c] = xsimd::fma(w, vv[c], acc[u][j][c]);
            }
        };
        int64_t p = 0;
        for (; p + U <= n_pos; p += U) {
            for (int u = 0; u < U; u++) step(u, p + u);
        }
        for (; p < n_pos; p++) step(0, p);
        for (int j = 0; j < QN; j++) {
            for (int c = 0; c < DB; c++) {
                for (int u = 1; u < U; u++) acc[0][j][c] += acc[u][j][c];
                acc[0][j][c].store_unaligned(out + j * hd + c * N);
            }
        }
    }

    // Query heads per pass of attend (a bound for its stack array of sums).
    static constexpr int64_t kMaxGroup = 64;

    // Register blocking sized to the register file: AVX2 has 16, AVX-512 and NEON 32.
    static constexpr int kScoreQueries = N == 16 ? 8 : N == 8 ? 4 : 2;
    static constexpr int kValueQueries = N == 8 ? 2 : 4;
    static constexpr int kValueBatches = 4;

    // The two halves of attend, separate so that an ISA can run them at different widths.
    // Scores, then the softmax weights exp(s - max) and their sums, of n_q queries: scores has
    // rows of `stride` floats, a whole number of key blocks.
    template <class L>
    static void attend_probs(const float* q, int64_t n_q, int64_t hd, const typename L::Elem* k,
                             int64_t n_pos, float scale, float* scores, int64_t stride,
                             float* sums) {
        const int64_t n_blk = (n_pos + kKvBlock - 1) / kKvBlock;
        for (int64_t j = 0; j < n_q; j += kScoreQueries) {
            const int qn = static_cast<int>(n_q - j < kScoreQueries ? n_q - j : kScoreQueries);
            with_count<kScoreQueries>(qn, [&]<int QN>() {
                attend_scores<L, QN>(q + j * hd, hd, k, n_blk, scale, scores + j * stride, stride);
            });
        }
        // Softmax without its division (attend_sum divides the n_q output rows instead of
        // the n_q * n_pos weights), on whole vectors: positions past n_pos in the last block,
        // whatever the cache holds there, become -inf and so weigh 0.
        for (int64_t j = 0; j < n_q; j++) {
            float* sj = scores + j * stride;
            for (int64_t p = n_pos; p < stride; p++) sj[p] = -INFINITY;
            B vmax(-INFINITY);
            for (int64_t p = 0; p < stride; p += N)
                vmax = xsimd::max(vmax, B::load_unaligned(sj + p));
            const B max(hmax(vmax));
            B acc(0.0f);
            for (int64_t p = 0; p < stride; p += N) {
                const B e = xsimd::exp(B::load_unaligned(sj + p) - max);
                e.store_unaligned(sj + p);
                acc += e;
            }
            sums[j] = xsimd::hadd(acc);
        }
    }

    // out_j = sum_p probs_jp v_p / sums[j].
    template <class L>
    static void attend_sum(const float* probs, int64_t stride, const float* sums, int64_t n_q,
                           int64_t hd, const typename L::Elem* v, int64_t n_pos, float* out) {
        const int64_t hv = hd / N * N;  // dimensions in whole batches
        for (int64_t j = 0; j < n_q; j += kValueQueries) {
            const int qn = static_cast<int>(n_q - j < kValueQueries ? n_q - j : kValueQueries);
            for (int64_t d = 0; d < hv; d += kValueBatches * N) {
                const int db =
                    static_cast<int>((hv - d) / N < kValueBatches ? (hv - d) / N : kValueBatches);
                with_count<kValueQueries>(qn, [&]<int QN>() {
                    with_count<kValueBatches>(db, [&]<int DB>() {
                        attend_values<L, QN, DB>(probs + j * stride, stride, v + d, hd, n_pos,
                                                 out + j * hd + d);
                    });
                });
            }
        }
        for (int64_t j = 0; j < n_q; j++) {
            for (int64_t d = hv; d < hd; d++) {
                float acc = 0.0f;
                for (int64_t p = 0; p < n_pos; p++)
                    acc += probs[j * stride + p] * L::scalar(v + p * hd + d);
                out[j * hd + d] = acc;
            }
            scale(out + j * hd, 1.0f / sums[j], hd);
        }
    }

    // The memory bandwidth probe: the sum of the n / 8 64-bit words at p and at q (mod 2^64),
    // n a multiple of 8. Four vectors of each stream a step and every cache line prefetched
    // kReadAhead bytes ahead, as the streaming matmul kernels do, so it reads at the rate they
    // can hope for.
    static uint64_t read_sum(const void* p, const void* q, int64_t n) {
        using U = xsimd::batch<uint64_t, Arch>;
        constexpr int64_t W = U::size, kStep = 4 * W;  // words per step and stream
        constexpr int64_t kReadAhead = 2048;
        const auto* wp = static_cast<const uint64_t*>(p);
        const auto* wq = static_cast<const uint64_t*>(q);
        const int64_t words = n / 8;
        U a(uint64_t{0}), b(uint64_t{0}), c(uint64_t{0}), d(uint64_t{0});
        int64_t i = 0;
        for (; i + kStep <= words; i += kStep) {
            const char* line_p = reinterpret_cast<const char*>(wp + i) + kReadAhead;
            const char* line_q = reinterpret_cast<const char*>(wq + i) + kReadAhead;
            for (int64_t l = 0; l < kStep * 8; l += 64) {
                __builtin_prefetch(line_p + l);
                __builtin_prefetch(line_q + l);
            }
            a += U::load_unaligned(wp + i) + U::load_unaligned(wp + i + W);
            b += U::load_unaligned(wp + i + 2 * W) + U::load_unaligned(wp + i + 3 * W);
            c += U::load_unaligned(wq + i) + U::load_unaligned(wq + i + W);
            d += U::load_unaligned(wq + i + 2 * W) + U::load_unaligned(wq + i + 3 * W);
        }
        uint64_t sum = xsimd::hadd((a + b) + (c + d));
        for (; i < words; i++) sum += wp[i] + wq[i];
        return sum;
    }

    template <class L>
    static void attend(const float* q, int64_t n_q, int64_t hd, const typename L::Elem* k,
                       const typename L::Elem* v, int64_t n_pos, float scale, float* scores,
                       float* out) {
        const int64_t stride = (n_pos + kKvBlock - 1) / kKvBlock * kKvBlock;
        float sums[kMaxGroup];
        for (int64_t j = 0; j < n_q; j += kMaxGroup) {
            const int64_t nj = n_q - j < kMaxGroup ? n_q - j : kMaxGroup;
            attend_probs<L>(q + j * hd, nj, hd, k, n_pos, scale, scores, stride, sums);
            attend_sum<L>(scores, stride, sums, nj, hd, v, n_pos, out + j * hd);
        }
    }
};

// The per-function kernels of an ISA's table: FloatKernels<Arch>, with LoadHalf for F16 values.
template <class Arch, class LoadHalf>
void set_float_kernels(Kernels& k) {
    using FK = FloatKernels<Arch>;
    k.rmsnorm = FK::rmsnorm;
    k.softmax = FK::softmax;
    k.silu_mul = FK::silu_mul;
    k.add = FK::add;
    k.scale = FK::scale;
    k.axpy_f16 = FK::template axpy_f16<LoadHalf>;
    k.rope = FK::rope;
    k.attend_f32 = FK::template attend<LoadF32<Arch>>;
    k.attend_f16 = FK::template attend<LoadHalf>;
    k.read_sum = FK::read_sum;
}

}  // namespace
}  // namespace ggml_lite
