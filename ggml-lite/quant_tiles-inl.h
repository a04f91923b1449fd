// The tile loops of the quantized dot products (every quantized weight type), written once and
// instantiated by each ISA translation unit with its own step types, e.g.
// QuantTiles<Q4K>::gemm_tile. What walks rows, tokens and blocks lives here; what one step of
// one weight row does to its tokens' sums (the intrinsics) stays in the ISA file. Scalar
// helpers that every ISA's steps call live here too.
//
// Include only from the ISA translation units (x86/*.cpp, arm/*.cpp); everything here has
// internal linkage, for the reasons simd_float-inl.h gives.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fp16.h"
#include "packed.h"
#include "quant.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

// Q8_0 blocks, and the packed kernels' activations (packed.h: block_q8_0c: the levels, the
// scale as float and c = -Offset sum(qs)), from a quantizer of one block: Block(x) quantizes
// 32 values as quantize_row_q8_0_ref; d16() is its scale in fp16, d() that fp16 scale as
// float, store(qs) writes the levels. c sums the stored bytes, not an ISA's int32 lanes: for
// NaN or infinite activations those lanes are out of the byte range (INT_MIN), and their sum
// would overflow and differ from the reference's.
template <class Block>
void quantize_q8_0_blocks(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0*>(vy);
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        const Block q(x);
        y[b].d = q.d16();
        q.store(y[b].qs);
    }
}

template <int Offset, class Block>
void quantize_q8_0c_blocks(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_0c*>(vy);
    for (int64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        const Block q(x);
        y[b].d = q.d();
        q.store(y[b].qs);
        int32_t sum = 0;
        for (const int8_t v : y[b].qs) sum += v;
        y[b].c = -Offset * sum;
    }
}

// The Block of an ISA whose bit-exact Q8_0 quantizer writes a whole block_q8_0 (the x86 ISAs
// keep the levels in registers instead: their Q8Lanes).
template <void (*Quantize)(const float*, void*, int64_t)>
struct Q8Block {
    block_q8_0 q;
    explicit Q8Block(const float* x) { Quantize(x, &q, QK8_0); }
    fp16_t d16() const { return q.d; }
    float d() const { return fp16_to_fp32(q.d); }
    void store(int8_t* qs) const { std::memcpy(qs, q.qs, QK8_0); }
};

template <int Offset, void (*Quantize)(const float*, void*, int64_t)>
void quantize_q8_0c(const float* x, void* vy, int64_t n) {
    quantize_q8_0c_blocks<Offset, Q8Block<Quantize>>(x, vy, n);
}

// One block of 32 values quantized to Q8_0 by Quantize (into q: Q8_1's values and d); returns
// Q8_1's s, d sum(qs) rounded to fp16 with d before its rounding (amax / 127, as
// quantize_row_q8_1_ref finds it, NaN behaviour included).
template <void (*Quantize)(const float*, void*, int64_t)>
fp16_t q8_1_block(const float* xb, block_q8_0& q) {
    Quantize(xb, &q, QK8_1);
    float amax = 0.0f;
    for (int j = 0; j < QK8_1; j++) {
        const float a = std::fabs(xb[j]);
        amax = amax > a ? amax : a;
    }
    int32_t sum = 0;
    for (const int8_t v : q.qs) sum += v;
    return fp32_to_fp16(static_cast<float>(sum) * (amax / 127.0f));
}

// The activations of Q4_1's and Q5_1's packed kernels (packed.h: block_q8_1c) from the same
// quantizer: Q8_1's blocks with d and s as floats.
template <void (*Quantize)(const float*, void*, int64_t)>
void quantize_q8_1c(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_1c*>(vy);
    for (int64_t b = 0; b < n / QK8_1; b++) {
        block_q8_0 q;
        y[b].s = fp16_to_fp32(q8_1_block<Quantize>(x + b * QK8_1, q));
        y[b].d = fp16_to_fp32(q.d);
        std::memcpy(y[b].qs, q.qs, QK8_1);
    }
}

// Q8_1 itself (quantize_row_q8_1_ref's bytes), for the row dots of Q4_1 and Q5_1.
template <void (*Quantize)(const float*, void*, int64_t)>
void quantize_q8_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_1*>(vy);
    for (int64_t b = 0; b < n / QK8_1; b++) {
        block_q8_0 q;
        y[b].s = q8_1_block<Quantize>(x + b * QK8_1, q);
        y[b].d = q.d;
        std::memcpy(y[b].qs, q.qs, QK8_1);
    }
}

// Every cache line of [p, p + Bytes): one prefetch per 64 bytes and one for the last byte,
// into L1 (Locality 3; prefetcht0 on x86) or L2 (2; prefetcht1).
// Always inlined, as is every helper that calls it. GCC counts a prefetch as no side effect, so a
// helper left out of line, or the part of one that its partial inlining splits off (the L2 lead
// of prefetch_block), is a const function, and its calls are deleted as dead code: GCC 12 had
// dropped every L2 lead of the AVX-512 packed kernels that way, and both leads of the
// avx512_bf16 pass.
template <size_t Bytes, int Locality = 3>
[[gnu::always_inline]] inline void prefetch_lines(const uint8_t* p) {
    for (size_t off = 0; off < Bytes; off += 64) __builtin_prefetch(p + off, 0, Locality);
    __builtin_prefetch(p + Bytes - 1, 0, Locality);
}

// The last n % 4 columns of a packed float group (packed.h) as a whole 4-column block, for the
// SIMD kernels' one step: the weights past n +0 and NT tokens' activations past n -0, so that a
// padding lane adds +0 * -0 = -0 to its partial sum, which leaves any sum as it is (-0 too).
template <class Elem, int NT>
struct FloatTail {
    Elem w[kPackRows * 4] = {};
    float x[NT][4];
    FloatTail(int64_t n, const Elem* group, const uint8_t* xb, size_t x_stride) {
        const int64_t c0 = n - n % 4;
        const int m = static_cast<int>(n % 4);
        for (int r = 0; r < kPackRows; r++) {
            for (int k = 0; k < m; k++) w[4 * r + k] = group[kPackRows * c0 + r * m + k];
        }
        for (int t = 0; t < NT; t++) {
            const auto* xt = reinterpret_cast<const float*>(xb + t * x_stride);
            for (int k = 0; k < 4; k++) x[t][k] = k < m ? xt[c0 + k] : -0.0f;
        }
    }
};

// What a step type S gives QuantTiles. This base holds the plain parts; S adds
//   Act, static Act act(const ActBlock*)   what its steps need of one token's activations,
//                                          made once per step for all rows
//   Acc                                    one pair's sum so far: zero when constructed,
//                                          float total() const reduces it
//   template <int NT> static void step(const Block& w, const Act* x, Acc* acc)
//                                          the kBlocks blocks from w against NT tokens
// and may hide prefetch where its ISA fetches less.
template <class WeightBlock, class ActivationBlock, int Blocks, int Tokens, bool FetchByRow>
struct TileStep {
    using Block = WeightBlock;
    using ActBlock = ActivationBlock;
    static constexpr int kBlocks = Blocks;  // blocks per step; a row's last step is zero-padded
    static constexpr int kTokens = Tokens;  // tokens per tile at most (registers permitting)
    // Where the step fetches ahead: just before each row's share (true) or for all rows before
    // the step (false). Measured on x86 gemm_tile, each kind loses 3-10% with the other's order:
    // super-blocks want the first, 32-blocks the second.
    static constexpr bool kFetchByRow = FetchByRow;
    // Called with the step's place in the weight rows of the next tile.
    static void prefetch(const uint8_t* p) { prefetch_lines<Blocks * sizeof(WeightBlock)>(p); }
};

// k-quant weights: one super-block per step, Q8_K activations read in place.
template <class WeightBlock>
struct SuperBlockStep : TileStep<WeightBlock, block_q8_K, 1, 2, true> {
    using Act = const block_q8_K*;
    static Act act(const block_q8_K* x) { return x; }
};

// A Q4_K block's 6-bit scales and mins as bytes: sc[0..7] then m[0..7] (get_scale_min_k4 on
// four words at once), for the ISAs' Q4_K steps.
inline void q4_K_scales_mins(const uint8_t* packed, uint8_t out[16]) {
    constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kTop2 = 0x03030303;
    uint32_t u[4];
    __builtin_memcpy(u, packed, K_SCALE_SIZE);
    u[3] = ((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kTop2) << 4);  // m[4..7]
    const uint32_t m_lo = u[1] & kLow6;                           // m[0..3]
    u[1] = (u[2] & kLow4) | (((u[0] >> 6) & kTop2) << 4);         // sc[4..7]
    u[2] = m_lo;
    u[0] &= kLow6;  // sc[0..3]
    __builtin_memcpy(out, u, 16);
}

template <class S>
struct QuantTiles {
    static_assert(S::kTokens == 1 || S::kTokens == 2, "rows() leaves at most one token over");
    using Block = typename S::Block;
    using ActBlock = typename S::ActBlock;

    // NR weight rows × NT tokens. Each pair's steps run in order into one accumulator reduced
    // at the end: the same sequence whatever the tile, so a tile element equals vec_dot.
    template <int NR, int NT>
    static void block(int64_t n, const uint8_t* w, size_t w_stride, const uint8_t* x,
                      size_t x_stride, float* y, int64_t y_stride) {
        constexpr int64_t kStep = S::kBlocks;
        constexpr size_t kW = sizeof(Block), kX = sizeof(ActBlock);
        const int64_t nb = n / static_cast<int64_t>(sizeof(ActBlock::qs));  // one int8 a value
        typename S::Acc acc[NR][NT];
        const uint8_t* wp[NR];
        const uint8_t* xp[NT];
        // Rows are short streams (a 2048-column Q4_0 row is 18 cache lines), too short for the
        // hardware prefetchers to ramp up on; fetch the same place in the next NR rows, the ones
        // matmul hands over next, one tile ahead. fetch_ahead is std::true_type, or
        // std::false_type for the zero-padded copies of the last step: a type, not a bool, so
        // each call gets its own copy of the step and both stay inlined.
        const auto step = [&](auto fetch_ahead) {
            constexpr bool kFetch = decltype(fetch_ahead)::value;
            if constexpr (kFetch && !S::kFetchByRow) {
                for (int r = 0; r < NR; r++) S::prefetch(wp[r] + NR * w_stride);
            }
            typename S::Act xa[NT];
            for (int t = 0; t < NT; t++) xa[t] = S::act(reinterpret_cast<const ActBlock*>(xp[t]));
            for (int r = 0; r < NR; r++) {
                if constexpr (kFetch && S::kFetchByRow) S::prefetch(wp[r] + NR * w_stride);
                S::template step<NT>(*reinterpret_cast<const Block*>(wp[r]), xa, acc[r]);
            }
        };
        int64_t b = 0;
        for (; b + kStep <= nb; b += kStep) {
            for (int r = 0; r < NR; r++) wp[r] = w + r * w_stride + b * kW;
            for (int t = 0; t < NT; t++) xp[t] = x + t * x_stride + b * kX;
            step(std::true_type{});
        }
        if constexpr (kStep > 1) {
            if (b < nb) {
                // The last blocks, copied next to zero blocks (scale 0, quants 0) that add
                // nothing.
                alignas(64) uint8_t wtail[NR][kStep * kW] = {};
                alignas(64) uint8_t xtail[NT][kStep * kX] = {};
                const size_t k = static_cast<size_t>(nb - b);
                for (int r = 0; r < NR; r++) {
                    __builtin_memcpy(wtail[r], w + r * w_stride + b * kW, k * kW);
                    wp[r] = wtail[r];
                }
                for (int t = 0; t < NT; t++) {
                    __builtin_memcpy(xtail[t], x + t * x_stride + b * kX, k * kX);
                    xp[t] = xtail[t];
                }
                step(std::false_type{});
            }
        }
        for (int r = 0; r < NR; r++) {
            for (int t = 0; t < NT; t++) y[t * y_stride + r] = acc[r][t].total();
        }
    }

    template <int NR>
    static void rows(int64_t n, const uint8_t* w, size_t ws, const uint8_t* x, size_t xs, float* y,
                     int64_t ys, int nt) {
        constexpr int kT = S::kTokens;
        int t = 0;
        for (; t + kT <= nt; t += kT) block<NR, kT>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
        if (t < nt) block<NR, 1>(n, w, ws, x + t * xs, xs, y + t * ys, ys);
    }

    static void gemm_tile(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride,
                          float* y, int64_t y_stride, int nr, int nt) {
        const auto* wb = static_cast<const uint8_t*>(w);
        const auto* xb = static_cast<const uint8_t*>(x);
        int r = 0;
        for (; r + 4 <= nr; r += 4)
            rows<4>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride, nt);
        for (; r < nr; r++)
            rows<1>(n, wb + r * w_stride, w_stride, xb, x_stride, y + r, y_stride, nt);
    }

    static float vec_dot(int64_t n, const void* w, const void* x) {
        float y;
        block<1, 1>(n, static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(x), 0, &y, 0);
        return y;
    }

    // The table entry of the step's weight type (kernels.h: TypeOverride): vec_dot and
    // gemm_tile of one step, and from_float where the type is an activation type too (Q8_0).
    static constexpr TypeKernels kernels(void (*from_float)(const float*, void*,
                                                            int64_t) = nullptr) {
        return {vec_dot, from_float, gemm_tile};
    }
};

}  // namespace
}  // namespace ggml_lite
