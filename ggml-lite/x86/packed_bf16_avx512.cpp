// The avx512_bf16 table: the AVX-512 one with BF16 weights' packed kernels on vdpbf16ps (32
// multiply-adds per instruction, the F32 FMA's 16), the activations rounded to bfloat16 once per
// token (packed.h: the BF16 dot path; its scalar twins are in kernels_scalar.cpp).
//
// Compiled with -mavx512bf16 on top of the AVX-512 flags: as in kernels_avx512.cpp, only the
// table's entry point has external linkage.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace {

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

// A packed group keeps column c's 16 rows together (packed.h); vdpbf16ps wants each 32-bit lane
// to hold one row's pair of columns. Columns 2p and 2p + 1 are 64 contiguous bytes: one vpermw
// interleaves them, lane r = (w[2p][r], w[2p + 1][r]). A weight pair serves every token of the
// tile, so the permutation costs 1/NT of the vdpbf16ps.
inline __m512i pair_index() {
    return _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                            6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
}

// Tokens per pass: two partial sums each (pair p into partial p % 2, so one token alone still has
// two chains), 16 accumulators, 2 weight pairs and the index in 32 registers. (One sum per token
// and all 16 tokens in one pass measured 30-50% slower in pp128.)
constexpr int kTokens = 8;

template <int NT>
void bf16_tile(int64_t n, const uint16_t* w, const uint8_t* x, size_t x_stride, float* y,
               int64_t y_stride, __mmask16 rows) {
    const __m512i index = pair_index();
    const auto pair = [&](int t, int64_t p) {
        uint32_t v;
        __builtin_memcpy(&v, x + t * x_stride + 4 * p, 4);
        return reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(v)));
    };
    __m512 acc[NT][2];
    for (int t = 0; t < NT; t++) acc[t][0] = acc[t][1] = _mm512_setzero_ps();
    const int64_t pairs = n / 2;
    int64_t p = 0;
    for (; p + 2 <= pairs; p += 2) {
        const auto* wp = w + 2 * p * kPackRows;
        // 2 KiB ahead into L1 and kFarAhead into L2, as the F32-FMA float kernels prefetch.
        const auto* wb = reinterpret_cast<const uint8_t*>(wp);
        prefetch_lines<128>(wb + 2048);
        prefetch_lines<128, 2>(wb + kFarAhead);
        __m512bh wv[2];
        for (int k = 0; k < 2; k++) {
            wv[k] = reinterpret_cast<__m512bh>(
                _mm512_permutexvar_epi16(index, _mm512_loadu_si512(wp + 2 * k * kPackRows)));
        }
        for (int t = 0; t < NT; t++) {
            for (int k = 0; k < 2; k++)
                acc[t][k] = _mm512_dpbf16_ps(acc[t][k], wv[k], pair(t, p + k));
        }
    }
    for (; p < (n + 1) / 2; p++) {
        // The last pair: whole, or an odd row's last column zero-extended beside its zero bf16.
        const auto* wp = w + 2 * p * kPackRows;
        const __m512i v =
            2 * p + 1 < n
                ? _mm512_permutexvar_epi16(index, _mm512_loadu_si512(wp))
                : _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp)));
        for (int t = 0; t < NT; t++) {
            acc[t][p % 2] =
                _mm512_dpbf16_ps(acc[t][p % 2], reinterpret_cast<__m512bh>(v), pair(t, p));
        }
    }
    for (int t = 0; t < NT; t++)
        _mm512_mask_storeu_ps(y + t * y_stride, rows, _mm512_add_ps(acc[t][0], acc[t][1]));
}

template <int Max, class F>
void with_count(int n, F&& f) {
    if constexpr (Max > 1) {
        if (n < Max) return with_count<Max - 1>(n, f);
    }
    f.template operator()<Max>();
}

void packed_gemm_bf16_dot(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                          int64_t y_stride, int nr, int nt) {
    const auto rows = static_cast<__mmask16>((1u << nr) - 1);
    const auto* wc = static_cast<const uint16_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t += kTokens) {
        with_count<kTokens>(nt - t < kTokens ? nt - t : kTokens, [&]<int NT>() {
            bf16_tile<NT>(n, wc, xb + t * x_stride, x_stride, y + t * y_stride, y_stride, rows);
        });
    }
}

constexpr PackedOverride kPacked[] = {
    {Type::BF16, {bf16_activations, packed_gemm_bf16_dot}},
};

}  // namespace

// Built on first use, which kernels_for() allows only when the CPU has AVX-512 (with VNNI, as
// the table below needs) and AVX512_BF16.
const Kernels* kernels_avx512_bf16() {
    static const Kernels table = with_overrides(*kernels_avx512(), Isa::Avx512Bf16, {}, kPacked);
    return &table;
}

}  // namespace ggml_lite
