// The avx512_bf16 table: the AVX-512 one with BF16 weights' packed kernels on vdpbf16ps (32
// multiply-adds per instruction, the F32 FMA's 16), the activations rounded to bfloat16 once per
// token (packed.h: the BF16 dot path; its scalar twins are in kernels_scalar.cpp).
//
// Compiled with -mavx512bf16 on top of the AVX-512 flags: as in kernels_avx512.cpp, only the
// table's entry point has external linkage.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "ggml-lite/cpu.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/x86/packed_bf16_avx512.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace avx512_bf16 {

// 32 floats to bfloat16 per instruction (vcvtne2ps2bf16: round to nearest even, subnormals to
// zero); the tail through masks, whose zeros past n give the zero bf16 that completes an odd
// row's last pair.
void bf16_activations(const float* x, void* y, int64_t n) {
    auto* out = static_cast<uint16_t*>(y);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
        _mm512_storeu_si512(out + i, reinterpret_cast<__m512i>(h));
    }
    if (i < n) {
        const int64_t left = n - i, words = left + left % 2;
        const auto lo = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
        const auto hi = static_cast<__mmask16>(left <= 16 ? 0 : (1u << (left - 16)) - 1);
        const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + i + 16),
                                               _mm512_maskz_loadu_ps(lo, x + i));
        _mm512_mask_storeu_epi16(out + i, static_cast<__mmask32>((uint64_t{1} << words) - 1),
                                 reinterpret_cast<__m512i>(h));
    }
}

}  // namespace avx512_bf16

namespace {

using avx512_bf16::bf16_activations;

// A 4-column block of a packed group is 16 rows of 4 values (packed.h): two vectors, rows 0-7
// and 8-15, whose 32-bit lane 2i + j holds row i's column pair j (columns c + 2j, c + 2j + 1),
// as vdpbf16ps wants, into partial sum j (pair p into p % 2, c a multiple of 4). The token's
// x[c..c + 3] in every 64-bit lane is one broadcast for both vectors.

// Tokens per pass: two row vectors each, 16 accumulators and 2 weight vectors in 32 registers.
// (One sum per token and all 16 tokens in one pass measured 30-50% slower in pp128.)
constexpr int kTokens = 8;

// NT tokens against G groups (G = 2 only for one token: PackedKernels::gemv2, the groups'
// blocks interleaved, two streams far apart). lead: how the pass prefetches the weights, as
// the F32-FMA float kernels do (pass_lead).
// Chunked: the activations in the amx table's order (packed.h: bf16_chunked_activations_ref), x[c..
// c + 3] of a whole chunk being its pair words k and 16 + k.
template <int NT, int G, bool Chunked>
void bf16_tile(int64_t n, const uint16_t* const* w, const uint8_t* x, size_t x_stride,
               float* const* y, int64_t y_stride, const __mmask16* rows, Lead lead) {
    static_assert(G == 1 || NT == 1);
    const auto quad = [&](const uint16_t* p) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        return reinterpret_cast<__m512bh>(_mm512_set1_epi64(static_cast<long long>(v)));
    };
    const auto xt = [&](int t) { return reinterpret_cast<const uint16_t*>(x + t * x_stride); };
    const int64_t whole = Chunked ? n / kBf16Chunk * kBf16Chunk : 0;
    // Token t's x[c..c + 3], c a multiple of 4.
    const auto x_quad = [&](int t, int64_t c) {
        if (Chunked && c < whole) {
            const uint16_t* chunk = xt(t) + c / kBf16Chunk * kBf16Chunk;
            const int64_t k = c % kBf16Chunk / 4;
            uint32_t even, odd;
            __builtin_memcpy(&even, chunk + 2 * k, 4);
            __builtin_memcpy(&odd, chunk + kBf16Chunk / 2 + 2 * k, 4);
            const uint64_t v = uint64_t{odd} << 32 | even;
            return reinterpret_cast<__m512bh>(_mm512_set1_epi64(static_cast<long long>(v)));
        }
        return quad(xt(t) + c);
    };
    // The fixed-count loops are unrolled so that acc[] lives in registers: GCC 12 otherwise
    // stores every accumulator to the stack at every step.
    __m512 acc[G][NT][2];
#pragma GCC unroll 16
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) acc[g][t][0] = acc[g][t][1] = _mm512_setzero_ps();
    }
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        // Chunked activations take a few steps to gather: once for both groups of a gemv2.
        __m512bh xv[NT];
        if constexpr (Chunked) {
#pragma GCC unroll 16
            for (int t = 0; t < NT; t++) xv[t] = x_quad(t, c);
        }
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) {
            const auto* wb = w[g] + c * kPackRows;
            prefetch_float_block(wb, lead);
            __m512bh wv[2];
#pragma GCC unroll 16
            for (int h = 0; h < 2; h++)
                wv[h] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(wb + 32 * h));
#pragma GCC unroll 16
            for (int t = 0; t < NT; t++) {
#pragma GCC unroll 16
                for (int h = 0; h < 2; h++)
                    acc[g][t][h] =
                        _mm512_dpbf16_ps(acc[g][t][h], wv[h], Chunked ? xv[t] : quad(xt(t) + c));
            }
        }
    }
    if (c < n) {
        // The last n % 4 columns (16 rows of n % 4 values) widened to a block with zeros, against
        // the activations up to their zero bf16 after an odd n; a pair past it is skipped, not
        // added as zeros.
        const int m = static_cast<int>(n - c);
        const auto pairs = static_cast<__mmask16>(m > 2 ? 0xffff : 0x5555);
        for (int g = 0; g < G; g++) {
            uint16_t tail[kPackRows * 4] = {};
            for (int r = 0; r < kPackRows; r++) {
                for (int k = 0; k < m; k++) tail[4 * r + k] = w[g][c * kPackRows + r * m + k];
            }
            __m512bh wv[2];
#pragma GCC unroll 16
            for (int h = 0; h < 2; h++)
                wv[h] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(tail + 32 * h));
#pragma GCC unroll 16
            for (int t = 0; t < NT; t++) {
                uint16_t xq[4] = {};
                for (int k = 0; k < m + m % 2; k++) xq[k] = xt(t)[c + k];
                const __m512bh xv = quad(xq);
                // Not _mm512_mask_dpbf16_ps: GCC 12 loads its mask with kmovb (8 lanes).
#pragma GCC unroll 16
                for (int h = 0; h < 2; h++) {
                    acc[g][t][h] = _mm512_mask_blend_ps(pairs, acc[g][t][h],
                                                        _mm512_dpbf16_ps(acc[g][t][h], wv[h], xv));
                }
            }
        }
    }
    // p0 + p1 of adjacent lanes: in-lane lane 4i + j = row 2i + j of vector 0 (j < 2), row
    // 8 + 2i + j - 2 of vector 1; one permutation puts the rows in order.
    const __m512i order = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int g = 0; g < G; g++) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; t++) {
            const __m512 a = acc[g][t][0], b = acc[g][t][1];
            const __m512 sum = _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                                             _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
            _mm512_mask_storeu_ps(y[g] + t * y_stride, rows[g], _mm512_permutexvar_ps(order, sum));
        }
    }
}

template <int Max, class F>
void with_count(int n, F&& f) {
    if constexpr (Max > 1) {
        if (n < Max) return with_count<Max - 1>(n, f);
    }
    f.template operator()<Max>();
}

template <bool Chunked>
void packed_gemm_bf16_dot(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                          int64_t y_stride, int nr, int nt) {
    const __mmask16 rows = row_mask(nr);
    const auto* wc = static_cast<const uint16_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    const Lead lead = pass_lead(nt, Pass::Vdpbf16ps);
    for (int t = 0; t < nt; t += kTokens) {
        float* yt = y + t * y_stride;
        with_count<kTokens>(nt - t < kTokens ? nt - t : kTokens, [&]<int NT>() {
            bf16_tile<NT, 1, Chunked>(n, &wc, xb + t * x_stride, x_stride, &yt, y_stride, &rows,
                                      lead);
        });
    }
}

template <bool Chunked>
void packed_gemv2_bf16_dot(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                           float* y1, int nr0, int nr1) {
    const TwoGroups<uint16_t, __mmask16> g(w0, w1, y0, y1, row_mask(nr0), row_mask(nr1));
    bf16_tile<1, 2, Chunked>(n, g.w, static_cast<const uint8_t*>(x), 0, g.y, 0, g.rows,
                             pass_lead(1, Pass::Vdpbf16ps));
}

constexpr PackedOverride kPacked[] = {
    {Type::BF16, {bf16_activations, packed_gemm_bf16_dot<false>, packed_gemv2_bf16_dot<false>}},
};

}  // namespace

namespace avx512_bf16 {

void packed_gemm_bf16_chunked(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                              int64_t y_stride, int nr, int nt) {
    packed_gemm_bf16_dot<true>(n, w, x, x_stride, y, y_stride, nr, nt);
}

void packed_gemv2_bf16_chunked(int64_t n, const void* w0, const void* w1, const void* x, float* y0,
                               float* y1, int nr0, int nr1) {
    packed_gemv2_bf16_dot<true>(n, w0, w1, x, y0, y1, nr0, nr1);
}

}  // namespace avx512_bf16

// Built on first use, which kernels_for() allows only when the CPU has AVX-512 (with VNNI, as
// the table below needs) and AVX512_BF16.
const Kernels* kernels_avx512_bf16() {
    static const Kernels table = with_overrides(*kernels_avx512(), Isa::Avx512Bf16, {}, kPacked);
    return &table;
}

}  // namespace ggml_lite
