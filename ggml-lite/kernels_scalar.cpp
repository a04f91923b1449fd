// The scalar reference kernels: plain loops, the definition every SIMD table is tested against.
// Float dot products accumulate in double so the reference is more accurate than what it
// checks; quantized dots follow ggml (exact integer sum per block, float across blocks).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "iq_grids.h"
#include "kernels.h"
#include "packed.h"
#include "quant.h"

namespace ggml_lite {
namespace {

float dot_f32(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const float*>(w);
    const auto* b = static_cast<const float*>(x);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += static_cast<double>(a[i]) * b[i];
    return static_cast<float>(sum);
}

float dot_f16(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const fp16_t*>(w);
    const auto* b = static_cast<const float*>(x);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += static_cast<double>(fp16_to_fp32(a[i])) * b[i];
    return static_cast<float>(sum);
}

float dot_bf16(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const bf16_t*>(w);
    const auto* b = static_cast<const float*>(x);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += static_cast<double>(bf16_to_fp32(a[i])) * b[i];
    return static_cast<float>(sum);
}

// ---- Quantized dots: each type's levels, as ggml defines them, and one loop per block family --

// Value j of a 32-value block of nibbles: the low nibble of byte j (j < 16), else the high
// nibble of byte j - 16.
int nibble(const uint8_t* qs, int j) {
    return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4;
}

// Q5_0 and Q5_1: the nibble and a fifth bit from qh.
int five_bit(const uint8_t* qs, const uint8_t* qh, int j) {
    return nibble(qs, j) | (((qh[j / 8] >> (j % 8)) & 1) << 4);
}

int level(const block_q8_0& b, int j) {
    return b.qs[j];
}
int level(const block_q4_0& b, int j) {
    return nibble(b.qs, j) - 8;
}
int level(const block_q4_1& b, int j) {
    return nibble(b.qs, j);
}
int level(const block_q5_0& b, int j) {
    return five_bit(b.qs, b.qh, j) - 16;
}
int level(const block_q5_1& b, int j) {
    return five_bit(b.qs, b.qh, j);
}
// The table's values are at most 127 in magnitude, so the integer sum is still exact.
int level(const block_iq4_nl& b, int j) {
    return kvalues_iq4nl[nibble(b.qs, j)];
}

// 32-value blocks: d_w d_x sum(level x) per block, an exact integer sum; the types with a
// minimum (against Q8_1) add m_w s_x, s_x = d_x sum(x).
template <class Block, class Act>
float dot_block32(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const Block*>(w);
    const auto* b = static_cast<const Act*>(x);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 32; i++) {
        int32_t isum = 0;
        for (int j = 0; j < 32; j++) isum += level(a[i], j) * b[i].qs[j];
        float block = static_cast<float>(isum) * (fp16_to_fp32(a[i].d) * fp16_to_fp32(b[i].d));
        if constexpr (std::is_same_v<Act, block_q8_1>)
            block += fp16_to_fp32(a[i].m) * fp16_to_fp32(b[i].s);
        sum += block;
    }
    return sum;
}

// Q4_K and Q5_K: value l of sub-block j (32 values); sub-blocks 2g and 2g + 1 share 32 bytes of
// qs, and Q5_K's fifth bit of value 32j + l is bit j of qh byte l.
int level(const block_q4_K& b, int j, int l) {
    return (b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0f;
}
int level(const block_q5_K& b, int j, int l) {
    return ((b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0f) | (((b.qh[l] >> j) & 1) << 4);
}
// Q4_K's and Q5_K's 6-bit scales and mins of 32 values, packed alike.
template <class Block>
void packed_scale_min(const Block& b, int j, int* sc, int* m) {
    uint8_t s, n;
    get_scale_min_k4(j, b.scales, &s, &n);
    *sc = s;
    *m = n;
}
void scale_min(const block_q4_K& b, int j, int* sc, int* m) {
    packed_scale_min(b, j, sc, m);
}
void scale_min(const block_q5_K& b, int j, int* sc, int* m) {
    packed_scale_min(b, j, sc, m);
}
constexpr int sub_size(const block_q4_K&) {
    return 32;
}
constexpr int sub_size(const block_q5_K&) {
    return 32;
}

// Q2_K's levels and Q3_K's low 2 bits: value 128h + 32k + l of the super-block in bits 2k,
// 2k + 1 of qs byte 32h + l; so value l of 16-value sub-block j in byte
// 32 (j / 8) + 16 (j % 2) + l, bits 2 (j % 8 / 2) on (written so, a sub-block's loop is
// contiguous bytes under one shift, which the compiler vectorizes).
int two_bit(const uint8_t* qs, int j, int l) {
    return (qs[32 * (j / 8) + 16 * (j % 2) + l] >> (2 * (j % 8 / 2))) & 3;
}

// Q2_K: 16 values per sub-block, whose scale and min are the two nibbles of one byte.
int level(const block_q2_K& b, int j, int l) {
    return two_bit(b.qs, j, l);
}
void scale_min(const block_q2_K& b, int j, int* sc, int* m) {
    *sc = b.scales[j] & 0x0f;
    *m = b.scales[j] >> 4;
}
constexpr int sub_size(const block_q2_K&) {
    return 16;
}

// Super-blocks with scales and mins: sum_j d sc_j sum(q x) - dmin m_j sum(x), the x sums being
// Q8_K's bsums (one per 16 values). Both parts are exact integer sums; only the scales are float.
template <class Block>
float dot_k_min(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const Block*>(w);
    const auto* b = static_cast<const block_q8_K*>(x);
    constexpr int sub = sub_size(Block{});
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int32_t isum = 0;
        int32_t imin = 0;
        for (int j = 0; j < QK_K / sub; j++) {
            int sc, m;
            scale_min(a[i], j, &sc, &m);
            int32_t dot = 0;
            for (int l = 0; l < sub; l++) dot += level(a[i], j, l) * b[i].qs[sub * j + l];
            isum += sc * dot;
            for (int k = j * sub / 16; k < (j + 1) * sub / 16; k++) imin += m * b[i].bsums[k];
        }
        const float d = fp16_to_fp32(a[i].d) * b[i].d;
        const float dmin = fp16_to_fp32(a[i].dmin) * b[i].d;
        sum += d * static_cast<float>(isum) - dmin * static_cast<float>(imin);
    }
    return sum;
}

// Q6_K: value l of sub-block k is value e = 16k + l = 128h + r of the super-block, its low 4
// bits in ql, its top 2 in qh; levels q - 32, 16 values per scale.
int level(const block_q6_K& b, int k, int l) {
    const int e = 16 * k + l, h = e / 128, r = e % 128;
    const int lo = (b.ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0f;
    const int hi = (b.qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
    return (lo | (hi << 4)) - 32;
}
int sub_scale(const block_q6_K& b, int k) {
    return b.scales[k];
}
constexpr int sub_size(const block_q6_K&) {
    return 16;
}
// Q3_K: value e's third bit in hmask, bit e / 32 of byte e % 32 (for value l of sub-block k:
// bit k / 2 of byte 16 (k % 2) + l); levels q - 4, 16 values per scale.
int level(const block_q3_K& b, int k, int l) {
    return two_bit(b.qs, k, l) + 4 * ((b.hmask[16 * (k % 2) + l] >> (k / 2)) & 1) - 4;
}
int sub_scale(const block_q3_K& b, int k) {
    return q3_K_scale(b, k);
}
constexpr int sub_size(const block_q3_K&) {
    return 16;
}
// IQ4_XS: the table's values, 32 per scale, each block of 32 packed as IQ4_NL's.
int level(const block_iq4_xs& b, int k, int l) {
    return kvalues_iq4nl[nibble(b.qs + 16 * k, l)];
}
int sub_scale(const block_iq4_xs& b, int k) {
    return iq4_xs_scale(b, k);
}
constexpr int sub_size(const block_iq4_xs&) {
    return 32;
}

// Super-blocks with signed scales and no mins: d sum_k sc_k sum(level x), one exact integer sum.
template <class Block>
float dot_k_scaled(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const Block*>(w);
    const auto* b = static_cast<const block_q8_K*>(x);
    constexpr int sub = sub_size(Block{});
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int32_t isum = 0;
        for (int k = 0; k < QK_K / sub; k++) {
            int32_t dot = 0;
            for (int l = 0; l < sub; l++) dot += level(a[i], k, l) * b[i].qs[sub * k + l];
            isum += sub_scale(a[i], k) * dot;
        }
        sum += fp16_to_fp32(a[i].d) * b[i].d * static_cast<float>(isum);
    }
    return sum;
}

// The grid types: their levels and scales decoded (grid_levels), an exact integer sum
// sum_k ls_k sum(q x) per super-block, and the float step of the packed kernels (kernels.h:
// PackedKernels::gemm) with the type's constant factor in the block's scale: sum = fma(isum,
// (d kScale) d_x, sum). Prefill's kernel on the decoded levels (Kernels::grid_gemm) takes the
// same steps, so a grid row gives the same bits in decode and in prefill.
template <class Block>
float dot_grid(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const Block*>(w);
    const auto* b = static_cast<const block_q8_K*>(x);
    GridLevels v;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        grid_levels(a[i], &v);
        int32_t isum = 0;
        for (int k = 0; k < QK_K / 16; k++) {
            int32_t dot = 0;
            for (int l = 0; l < 16; l++) dot += v.q[16 * k + l] * b[i].qs[16 * k + l];
            isum += v.ls[k] * dot;
        }
        sum = std::fma(static_cast<float>(isum), grid_d(a[i]) * Block::kScale * b[i].d, sum);
    }
    return sum;
}

// Each weight type's dot against its activation type.
constexpr auto dot_q8_0 = dot_block32<block_q8_0, block_q8_0>;
constexpr auto dot_q4_0 = dot_block32<block_q4_0, block_q8_0>;
constexpr auto dot_q4_1 = dot_block32<block_q4_1, block_q8_1>;
constexpr auto dot_q5_0 = dot_block32<block_q5_0, block_q8_0>;
constexpr auto dot_q5_1 = dot_block32<block_q5_1, block_q8_1>;
constexpr auto dot_iq4_nl = dot_block32<block_iq4_nl, block_q8_0>;
constexpr auto dot_q2_K = dot_k_min<block_q2_K>;
constexpr auto dot_q3_K = dot_k_scaled<block_q3_K>;
constexpr auto dot_q4_K = dot_k_min<block_q4_K>;
constexpr auto dot_q5_K = dot_k_min<block_q5_K>;
constexpr auto dot_q6_K = dot_k_scaled<block_q6_K>;
constexpr auto dot_iq4_xs = dot_k_scaled<block_iq4_xs>;
constexpr auto dot_iq2_xxs = dot_grid<block_iq2_xxs>;
constexpr auto dot_iq2_xs = dot_grid<block_iq2_xs>;
constexpr auto dot_iq2_s = dot_grid<block_iq2_s>;
constexpr auto dot_iq3_xxs = dot_grid<block_iq3_xxs>;
constexpr auto dot_iq3_s = dot_grid<block_iq3_s>;
constexpr auto dot_iq1_s = dot_grid<block_iq1_s>;
constexpr auto dot_iq1_m = dot_grid<block_iq1_m>;

template <float (*Dot)(int64_t, const void*, const void*)>
void gemm_tile(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride, float* y,
               int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    for (int t = 0; t < nt; t++) {
        for (int r = 0; r < nr; r++)
            y[t * y_stride + r] = Dot(n, wb + r * w_stride, xb + t * x_stride);
    }
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) ss += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
    for (int64_t i = 0; i < n; i++) out[i] = x[i] * scale * weight[i];
}

void softmax(float* x, int64_t n) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) max = std::fmax(max, x[i]);
    if (max == -INFINITY) {  // everything masked: no distribution, all weights zero
        for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
        return;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = std::exp(x[i] - max);  // exp(-inf) = 0: masked entries drop out
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

void silu_mul(float* h, const float* g, int64_t n) {
    for (int64_t i = 0; i < n; i++) h[i] = h[i] / (1.0f + std::exp(-h[i])) * g[i];
}

void add(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}

void scale(float* x, float s, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] *= s;
}

void axpy_f16(float* y, float a, const fp16_t* x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * fp16_to_fp32(x[i]);
}

void rope(float* x, int64_t n_heads, int64_t head_dim, int64_t rot_dim, const float* cos,
          const float* sin) {
    for (int64_t h = 0; h < n_heads; h++) {
        float* v = x + h * head_dim;
        for (int64_t i = 0; i < rot_dim / 2; i++) {
            const float x0 = v[2 * i];
            const float x1 = v[2 * i + 1];
            v[2 * i] = x0 * cos[i] - x1 * sin[i];
            v[2 * i + 1] = x0 * sin[i] + x1 * cos[i];
        }
    }
}

// ---- Packed weights (packed.h) --------------------------------------------------------------

// Q8_0's bytes (quantize_row_q8_0_ref) with the scale as float and c = -Offset sum(qs).
template <int Offset>
void q8_0c_from_float(const float* x, void* y, int64_t n) {
    auto* out = static_cast<block_q8_0c*>(y);
    for (int64_t b = 0; b < n / QK8_0; b++) {
        block_q8_0 q;
        quantize_row_q8_0_ref(x + b * QK8_0, &q, QK8_0);
        int32_t sum = 0;
        for (int j = 0; j < QK8_0; j++) sum += q.qs[j];
        out[b].d = fp16_to_fp32(q.d);
        out[b].c = -Offset * sum;
        std::memcpy(out[b].qs, q.qs, QK8_0);
    }
}

// Q8_1's bytes (quantize_row_q8_1_ref) with d and s as floats.
void q8_1c_from_float(const float* x, void* y, int64_t n) {
    auto* out = static_cast<block_q8_1c*>(y);
    for (int64_t b = 0; b < n / QK8_1; b++) {
        block_q8_1 q;
        quantize_row_q8_1_ref(x + b * QK8_1, &q, QK8_1);
        out[b].d = fp16_to_fp32(q.d);
        out[b].s = fp16_to_fp32(q.s);
        std::memcpy(out[b].qs, q.qs, QK8_1);
    }
}

// Value j (< 32) of row r in a block column as the unsigned level the correction c pairs with
// (block_q8_0c): the level plus the type's offset, as stored or as read; Q4_1 and Q5_1 (against
// block_q8_1c) have no offset.
int packed_nibble(const uint8_t (*qs)[kPackRows][4], int r, int j) {
    return j < 16 ? qs[j / 4][r][j % 4] & 0x0f : qs[(j - 16) / 4][r][j % 4] >> 4;
}
int packed_level(const block_q4_0x16& w, int r, int j) {
    return packed_nibble(w.qs, r, j);
}
int packed_level(const block_iq4_nlx16& w, int r, int j) {
    return kvalues_iq4nl[packed_nibble(w.qs, r, j)] + 128;
}
// Q5_0 and Q5_1: the nibble and the fifth bit from the row's qh (element j's at bit j / 4 of byte
// j % 4).
template <class Packed>
int packed_five_bit(const Packed& w, int r, int j) {
    return packed_nibble(w.qs, r, j) | (((w.qh[r][j % 4] >> (j / 4)) & 1) << 4);
}
int packed_level(const block_q5_0x16& w, int r, int j) {
    return packed_five_bit(w, r, j);
}
int packed_level(const block_q4_1x16& w, int r, int j) {
    return packed_nibble(w.qs, r, j);
}
int packed_level(const block_q5_1x16& w, int r, int j) {
    return packed_five_bit(w, r, j);
}
int packed_level(const block_q8_0x16& w, int r, int j) {
    return w.qs[j / 4][r][j % 4];
}

// Row r's integer dot in a block column: unsigned levels times values, from `init`.
template <class Packed>
int32_t packed_dot(const Packed& w, int r, const int8_t* xq, int32_t init) {
    int32_t sum = init;
    for (int j = 0; j < QK8_0; j++) sum += packed_level(w, r, j) * xq[j];
    return sum;
}

// One block column of row r added to sum: std::fma, as the SIMD kernels accumulate, so that
// every table gives these bits. Against block_q8_0c the dot starts from the correction;
// against block_q8_1c a second fma adds the minimum's m_w s_x.
template <class Packed>
float packed_block(const Packed& w, int r, const block_q8_0c& x, float sum) {
    const int32_t dot = packed_dot(w, r, x.qs, x.c);
    return std::fma(static_cast<float>(dot), fp16_to_fp32(w.d[r]) * x.d, sum);
}
template <class Packed>
float packed_block(const Packed& w, int r, const block_q8_1c& x, float sum) {
    const int32_t dot = packed_dot(w, r, x.qs, 0);
    sum = std::fma(static_cast<float>(dot), fp16_to_fp32(w.d[r]) * x.d, sum);
    return std::fma(fp16_to_fp32(w.m[r]), x.s, sum);
}

// Super-block columns against Q8_K activations: the integer sums of a super-block are exact,
// then two float steps (Q4_K, Q5_K, Q2_K: scales, then mins) or one (Q6_K,
// Q3_K, IQ4_XS), each an fma.

// Value i of sub-block j: Q4_K's the nibble of qs word 8 (j / 2) + i / 4 (high for odd j);
// Q5_K's word i / 4 of the sub-block's planes (packed.h: q5_K_packed_level).
int packed_k_level(const block_q4_Kx16& w, int r, int j, int i) {
    const uint8_t q = w.qs[8 * (j / 2) + i / 4][r][i % 4];
    return j % 2 ? q >> 4 : q & 0x0f;
}
int packed_k_level(const block_q5_Kx16& w, int r, int j, int i) {
    uint8_t planes[5];
    for (int k = 0; k < 5; k++) planes[k] = w.q[j][k][r][i % 4];
    return q5_K_packed_level(planes, i / 4);
}

template <class Packed>
float packed_min_block(const Packed& w, int r, const block_q8_K& x, float sum) {
    uint8_t packed_scales[K_SCALE_SIZE];
    for (int k = 0; k < K_SCALE_SIZE; k++) packed_scales[k] = w.scales[k][r];
    int32_t isum = 0, msum = 0;
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        get_scale_min_k4(j, packed_scales, &sc, &m);
        int32_t dot = 0;
        for (int i = 0; i < 32; i++) dot += packed_k_level(w, r, j, i) * x.qs[32 * j + i];
        isum += sc * dot;
        msum += m * (x.bsums[2 * j] + x.bsums[2 * j + 1]);
    }
    sum = std::fma(static_cast<float>(isum), fp16_to_fp32(w.d[r]) * x.d, sum);
    return std::fma(static_cast<float>(msum), -(fp16_to_fp32(w.dmin[r]) * x.d), sum);
}
float packed_block(const block_q4_Kx16& w, int r, const block_q8_K& x, float sum) {
    return packed_min_block(w, r, x, sum);
}
float packed_block(const block_q5_Kx16& w, int r, const block_q8_K& x, float sum) {
    return packed_min_block(w, r, x, sum);
}

// Q6_K: levels q - 32 stored as q (packed.h: block_q6_Kx16); one float step.
float packed_block(const block_q6_Kx16& w, int r, const block_q8_K& x, float sum) {
    int32_t isum = 0;
    for (int g = 0; g < QK_K / 16; g++) {
        int32_t dot = -32 * x.bsums[g];
        for (int i = 0; i < 16; i++) {
            const uint8_t planes[3] = {w.q[g][0][r][i % 4], w.q[g][1][r][i % 4],
                                       w.q[g][2][r][i % 4]};
            dot += q6_K_packed_level(planes, i / 4) * x.qs[16 * g + i];
        }
        isum += w.scales[g][r] * dot;
    }
    return std::fma(static_cast<float>(isum), fp16_to_fp32(w.d[r]) * x.d, sum);
}

// IQ4_XS: the scale of sub-block j (iq4_xs_scale on row r's bytes), times the exact dot of the
// table's values (packed_level's lookup without the + 128) with its 32 activations.
float packed_block(const block_iq4_xsx16& w, int r, const block_q8_K& x, float sum) {
    int32_t isum = 0;
    for (int j = 0; j < QK_K / 32; j++) {
        const int sc = (((w.scales_l[j / 2][r] >> (4 * (j % 2))) & 0x0f) |
                        (((w.scales_h[j / 4][r] >> (2 * (j % 4))) & 3) << 4)) -
                       32;
        int32_t dot = 0;
        for (int i = 0; i < 32; i++)
            dot += kvalues_iq4nl[packed_nibble(w.qs + 4 * j, r, i)] * x.qs[32 * j + i];
        isum += sc * dot;
    }
    return std::fma(static_cast<float>(isum), fp16_to_fp32(w.d[r]) * x.d, sum);
}

// Q2_K: value e = 128h + 32k + l (k < 4, l < 32) is bits 2k and 2k + 1 of qs byte 32h + l.
int packed_two_bit(const uint8_t (*qs)[kPackRows][4], int r, int e) {
    const int h = e / 128, k = e % 128 / 32, b = 32 * h + e % 32;
    return (qs[b / 4][r][b % 4] >> (2 * k)) & 3;
}

// Q3_K: levels q - 4 stored as q (packed.h: block_q3_Kx16), so each sub-block's dot starts at -4
// times its activations' sum. One float step, as Q6_K's.
float packed_block(const block_q3_Kx16& w, int r, const block_q8_K& x, float sum) {
    block_q3_K b{};  // row r's scale bytes, for q3_K_scale
    for (int k = 0; k < 12; k++) b.scales[k] = w.scales[k][r];
    int32_t isum = 0;
    for (int g = 0; g < QK_K / 16; g++) {
        int32_t dot = -4 * x.bsums[g];
        for (int i = 0; i < 16; i++) {
            const int e = 16 * g + i, u = e / 32;
            const uint8_t planes[3] = {w.q[u][0][r][e % 4], w.q[u][1][r][e % 4],
                                       w.q[u][2][r][e % 4]};
            dot += q3_K_packed_level(planes, e % 32 / 4) * x.qs[e];
        }
        isum += q3_K_scale(b, g) * dot;
    }
    return std::fma(static_cast<float>(isum), fp16_to_fp32(w.d[r]) * x.d, sum);
}

// Q2_K: levels q, a 4-bit scale and a 4-bit min per 16 values; two float steps, as Q4_K's.
float packed_block(const block_q2_Kx16& w, int r, const block_q8_K& x, float sum) {
    int32_t isum = 0, msum = 0;
    for (int g = 0; g < QK_K / 16; g++) {
        int32_t dot = 0;
        for (int i = 0; i < 16; i++) dot += packed_two_bit(w.qs, r, 16 * g + i) * x.qs[16 * g + i];
        isum += (w.scales[g][r] & 0x0f) * dot;
        msum += (w.scales[g][r] >> 4) * x.bsums[g];
    }
    sum = std::fma(static_cast<float>(isum), fp16_to_fp32(w.d[r]) * x.d, sum);
    return std::fma(static_cast<float>(msum), -(fp16_to_fp32(w.dmin[r]) * x.d), sum);
}

// The grid types' decoded levels (packed.h: block_gridx16), as dot_grid sums them.
float packed_block(const block_gridx16& w, int r, const block_q8_K& x, float sum) {
    int32_t isum = 0;
    for (int g = 0; g < QK_K / 16; g++) {
        int32_t dot = 0;
        for (int i = 0; i < 16; i++) {
            const int e = 16 * g + i;
            dot += (w.qs[e / 4][r][e % 4] - kGridOffset) * x.qs[e];
        }
        isum += w.scales[g][r] * dot;
    }
    return std::fma(static_cast<float>(isum), w.d[r] * x.d, sum);
}

// The grid types in their stripes (packed.h: block_grid_xxsx4 ...), as dot_grid sums them.
// Value j (< 32) of row i's sub-block ib: its level (stripe_level: the grid magnitude,
// stripe_magnitude, negated where stripe_negated says; IQ1's signed already), and ls = 2s + 1
// of its 16-value half h (stripe_ls); row i's d (stripe_d).
int stripe_magnitude(const block_iq2_xxsx4& w, int ib, int i, int j) {
    return static_cast<int>((iq2xxs_grid[w.grid[ib][i][j / 8]] >> (8 * (j % 8))) & 0xff);
}
int stripe_magnitude(const block_iq3_xxsx4& w, int ib, int i, int j) {
    return static_cast<int>((iq3xxs_grid[w.grid[ib][i][j / 4]] >> (8 * (j % 4))) & 0xff);
}
int stripe_magnitude(const block_iq2_xsx4& w, int ib, int i, int j) {
    return static_cast<int>((iq2xs_grid[w.qs[ib][i][j / 8] & 511] >> (8 * (j % 8))) & 0xff);
}
int stripe_magnitude(const block_iq2_sx4& w, int ib, int i, int j) {
    const int l = j / 8, idx = w.grid[ib][i][l] | ((w.qh[ib][i] >> (2 * l)) & 3) << 8;
    return static_cast<int>((iq2s_grid[idx] >> (8 * (j % 8))) & 0xff);
}
int stripe_magnitude(const block_iq3_sx4& w, int ib, int i, int j) {
    const int g = j / 4, idx = w.grid[ib][i][g] | ((w.qh[ib][i] >> g) & 1) << 8;
    return static_cast<int>((iq3s_grid[idx] >> (8 * (j % 4))) & 0xff);
}

template <int Indices>
bool stripe_negated(const block_grid_xxsx4<Indices>& w, int ib, int i, int j) {
    return (grid_signs(w.signs[ib][i][j / 8]) >> (j % 8)) & 1;
}
bool stripe_negated(const block_iq2_xsx4& w, int ib, int i, int j) {
    return (grid_signs(static_cast<uint8_t>(w.qs[ib][i][j / 8] >> 8)) >> (j % 8)) & 1;
}
template <class Quad>
bool stripe_negated(const Quad& w, int ib, int i, int j) {  // IQ2_S, IQ3_S: plain sign bits
    return (w.signs[ib][i][j / 8] >> (j % 8)) & 1;
}

template <class Quad>
int stripe_level(const Quad& w, int ib, int i, int j) {
    const int m = stripe_magnitude(w, ib, i, j);
    return stripe_negated(w, ib, i, j) ? -m : m;
}
// IQ1's 8g + delta: value j % 8 of grid row `index`.
int iq1_level(uint32_t index, bool negative_delta, int j) {
    const auto g = static_cast<int8_t>((iq1s_grid[index] >> (8 * (j % 8))) & 0xff);
    return 8 * g + (negative_delta ? -1 : 1);
}
int stripe_level(const block_iq1_sx4& w, int ib, int i, int j) {
    const uint32_t h = w.qh[ib][i];
    const int l = j / 8;
    return iq1_level(w.qs[ib][i][l] | ((h >> (3 * l)) & 7) << 8, (h & 0x8000) != 0, j);
}
int stripe_level(const block_iq1_mx4& w, int ib, int i, int j) {
    const int l = j / 8;
    const uint32_t nibble = (w.qh[ib][i] >> (4 * l)) & 15;
    return iq1_level(w.qs[ib][i][l] | (nibble & 7) << 8, (nibble & 8) != 0, j);
}

template <int Indices>
int stripe_ls(const block_grid_xxsx4<Indices>& w, int ib, int i, int) {
    int s = 0;
    for (int l = 0; l < 4; l++) s |= (w.signs[ib][i][l] & 1) << l;
    return 2 * s + 1;
}
template <class Quad>
int stripe_ls(const Quad& w, int ib, int i, int h) {  // IQ2_XS, IQ2_S: a nibble per half
    return 2 * ((w.scales[ib][i] >> (4 * h)) & 15) + 1;
}
int stripe_ls(const block_iq3_sx4& w, int ib, int i, int) {
    return 2 * ((w.scales[ib / 2][i] >> (4 * (ib % 2))) & 15) + 1;
}
int stripe_ls(const block_iq1_sx4& w, int ib, int i, int) {
    return 2 * ((w.qh[ib][i] >> 12) & 7) + 1;
}
int stripe_ls(const block_iq1_mx4& w, int ib, int i, int h) {
    return 2 * ((w.scales[ib / 2][i] >> (6 * (ib % 2) + 3 * h)) & 7) + 1;
}

template <class Quad>
float stripe_d(const Quad& w, int i) {
    return fp16_to_fp32(w.d[i]);
}
float stripe_d(const block_iq1_mx4& w, int i) {  // its 4 nibbles atop the scale words
    uint32_t d = 0;
    for (int k = 0; k < 4; k++) d |= (w.scales[k][i] >> 12u) << (4 * k);
    return fp16_to_fp32(static_cast<fp16_t>(d));
}

template <class Quad, class Block>
float stripe_block(const Quad& w, int i, const block_q8_K& x, float sum) {
    int32_t isum = 0;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        for (int h = 0; h < 2; h++) {
            int32_t dot = 0;
            for (int j = 16 * h; j < 16 * h + 16; j++)
                dot += stripe_level(w, ib, i, j) * x.qs[32 * ib + j];
            isum += stripe_ls(w, ib, i, h) * dot;
        }
    }
    return std::fma(static_cast<float>(isum), stripe_d(w, i) * Block::kScale * x.d, sum);
}

// Row r of a group of stripes against token t, super-block column by column.
template <class Quad, class Block>
void packed_gemm_stripes(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                         int64_t y_stride, int nr, int nt) {
    const auto* quads = static_cast<const Quad*>(w);
    const int64_t nb = n / QK_K;
    for (int t = 0; t < nt; t++) {
        const auto* xb =
            reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(x) + t * x_stride);
        for (int r = 0; r < nr; r++) {
            float sum = 0.0f;
            for (int64_t b = 0; b < nb; b++)
                sum = stripe_block<Quad, Block>(quads[r / 4 * nb + b], r % 4, xb[b], sum);
            y[t * y_stride + r] = sum;
        }
    }
}

// A group of stripes as prefill decodes it: its rows unpacked, then decoded by the type's
// reference decoder.
template <Type T>
void stripes_to_grid(int64_t n, const void* w, void* dst) {
    thread_local std::vector<uint8_t> rows;
    rows.resize(std::max(rows.size(), kPackRows * row_size(T, n)));
    unpack_group(T, w, kPackRows, n, rows.data());
    pack_grid_group(T, traits(T).grid_block, rows.data(), kPackRows, n, dst);
}

// Row r of the group against token t, block column by block column (Values values each).
template <class Packed, class Act, int Values>
void packed_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt) {
    const auto* wb = static_cast<const Packed*>(w);
    for (int t = 0; t < nt; t++) {
        const auto* xb =
            reinterpret_cast<const Act*>(static_cast<const uint8_t*>(x) + t * x_stride);
        for (int r = 0; r < nr; r++) {
            float sum = 0.0f;
            for (int64_t b = 0; b < n / Values; b++) sum = packed_block(wb[b], r, xb[b], sum);
            y[t * y_stride + r] = sum;
        }
    }
}

float to_float(float x) {
    return x;
}
float to_float(fp16_t x) {
    return fp16_to_fp32(x);
}
struct BF16 {  // bfloat16 weights: a type of their own, for the overload
    bf16_t bits;
};
float to_float(BF16 x) {
    return bf16_to_fp32(x.bits);
}

// Float weights (packed.h: packed_float_index); four partial sums per row.
template <class Elem>
void packed_float_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                       int64_t y_stride, int nr, int nt) {
    const auto* wc = static_cast<const Elem*>(w);
    for (int t = 0; t < nt; t++) {
        const auto* xt =
            reinterpret_cast<const float*>(static_cast<const uint8_t*>(x) + t * x_stride);
        for (int r = 0; r < nr; r++) {
            float p[4] = {};
            for (int64_t c = 0; c < n; c++)
                p[c % 4] = std::fma(to_float(wc[packed_float_index(n, c, r)]), xt[c], p[c % 4]);
            y[t * y_stride + r] = (p[0] + p[1]) + (p[2] + p[3]);
        }
    }
}

// ---- Attention -------------------------------------------------------------------------------

template <class Elem>
void attend(const float* q, int64_t n_q, int64_t head_dim, const Elem* k, const Elem* v,
            int64_t n_pos, float scale, float* scores, float* out) {
    const int64_t stride = (n_pos + kKvBlock - 1) / kKvBlock * kKvBlock;
    for (int64_t j = 0; j < n_q; j++) {
        const float* qj = q + j * head_dim;
        float* s = scores + j * stride;
        for (int64_t p = 0; p < n_pos; p++) {
            const Elem* kp = k + p / kKvBlock * kKvBlock * head_dim + p % kKvBlock;
            double dot = 0.0;
            for (int64_t d = 0; d < head_dim; d++)
                dot += double(qj[d]) * to_float(kp[d * kKvBlock]);
            s[p] = static_cast<float>(dot) * scale;
        }
        softmax(s, n_pos);
        for (int64_t d = 0; d < head_dim; d++) {
            double acc = 0.0;
            for (int64_t p = 0; p < n_pos; p++) acc += double(s[p]) * to_float(v[p * head_dim + d]);
            out[j * head_dim + d] = static_cast<float>(acc);
        }
    }
}

uint64_t read_sum(const void* p, const void* q, int64_t n) {
    const auto* a = static_cast<const uint64_t*>(p);
    const auto* b = static_cast<const uint64_t*>(q);
    uint64_t sum = 0;
    for (int64_t i = 0; i < n / 8; i++) sum += a[i] + b[i];
    return sum;
}

}  // namespace

// The BF16 dot path's activations: what vcvtne2ps2bf16 writes, round to nearest even with
// subnormal inputs as zeros of their sign (the instruction treats them so; vdpbf16ps would too).
void bf16_activations_ref(const float* x, void* y, int64_t n) {
    auto* out = static_cast<bf16_t*>(y);
    for (int64_t i = 0; i < n; i++) {
        const uint32_t u = float_bits(x[i]);
        out[i] = (u & 0x7f800000) == 0 ? static_cast<bf16_t>(u >> 16 & 0x8000) : fp32_to_bf16(x[i]);
    }
    if (n % 2) out[n] = 0;
}

void bf16_chunked_activations_ref(const float* x, void* y, int64_t n) {
    const int64_t whole = n / kBf16Chunk * kBf16Chunk;
    bf16_activations_ref(x + whole, static_cast<bf16_t*>(y) + whole, n - whole);
    auto* out = static_cast<uint32_t*>(y);
    for (int64_t c0 = 0; c0 < whole; c0 += kBf16Chunk) {
        bf16_t chunk[kBf16Chunk];
        bf16_activations_ref(x + c0, chunk, kBf16Chunk);
        for (int pair = 0; pair < kBf16Chunk / 2; pair++) {
            std::memcpy(&out[c0 / 2 + pair % 2 * (kBf16Chunk / 4) + pair / 2], &chunk[2 * pair], 4);
        }
    }
}

// Column pair p of a row into partial p % 2, each pair as vdpbf16ps's pseudo-code has it: the
// odd column's product added first, then the even one's (both exact in float).
void packed_gemm_bf16_dot_ref(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                              int64_t y_stride, int nr, int nt) {
    const auto* wc = static_cast<const bf16_t*>(w);
    const auto wv = [&](int64_t c, int r) {
        return c < n ? bf16_to_fp32(wc[packed_float_index(n, c, r)]) : 0.0f;
    };
    for (int t = 0; t < nt; t++) {
        const auto* xt =
            reinterpret_cast<const bf16_t*>(static_cast<const uint8_t*>(x) + t * x_stride);
        for (int r = 0; r < nr; r++) {
            float p[2] = {};
            for (int64_t c = 0; c < n; c += 2) {
                float& s = p[c / 2 % 2];
                s = std::fma(wv(c + 1, r), bf16_to_fp32(xt[c + 1]), s);
                s = std::fma(wv(c, r), bf16_to_fp32(xt[c]), s);
            }
            y[t * y_stride + r] = p[0] + p[1];
        }
    }
}

namespace {}  // namespace

const Kernels& kernels_scalar() {
    static const Kernels table = [] {
        // The activation types convert with the type table's reference codecs.
        const auto from_float = [](Type t) { return traits(t).from_float; };
        const auto grid_block = [](Type t) { return traits(t).grid_block; };
        const TypeOverride types[] = {
            {Type::F32, {dot_f32, from_float(Type::F32), gemm_tile<dot_f32>}},
            {Type::F16, {dot_f16, nullptr, gemm_tile<dot_f16>}},
            {Type::BF16, {dot_bf16, nullptr, gemm_tile<dot_bf16>}},
            {Type::Q8_0, {dot_q8_0, from_float(Type::Q8_0), gemm_tile<dot_q8_0>}},
            {Type::Q4_0, {dot_q4_0, nullptr, gemm_tile<dot_q4_0>}},
            {Type::Q4_1, {dot_q4_1, nullptr, gemm_tile<dot_q4_1>}},
            {Type::Q5_0, {dot_q5_0, nullptr, gemm_tile<dot_q5_0>}},
            {Type::Q5_1, {dot_q5_1, nullptr, gemm_tile<dot_q5_1>}},
            {Type::IQ4_NL, {dot_iq4_nl, nullptr, gemm_tile<dot_iq4_nl>}},
            {Type::Q8_1, {nullptr, from_float(Type::Q8_1), nullptr}},
            {Type::Q2_K, {dot_q2_K, nullptr, gemm_tile<dot_q2_K>}},
            {Type::Q3_K, {dot_q3_K, nullptr, gemm_tile<dot_q3_K>}},
            {Type::Q4_K, {dot_q4_K, nullptr, gemm_tile<dot_q4_K>}},
            {Type::Q5_K, {dot_q5_K, nullptr, gemm_tile<dot_q5_K>}},
            {Type::Q6_K, {dot_q6_K, nullptr, gemm_tile<dot_q6_K>}},
            {Type::IQ4_XS, {dot_iq4_xs, nullptr, gemm_tile<dot_iq4_xs>}},
            {Type::IQ2_XXS,
             {dot_iq2_xxs, nullptr, gemm_tile<dot_iq2_xxs>, grid_block(Type::IQ2_XXS)}},
            {Type::IQ2_XS, {dot_iq2_xs, nullptr, gemm_tile<dot_iq2_xs>, grid_block(Type::IQ2_XS)}},
            {Type::IQ2_S, {dot_iq2_s, nullptr, gemm_tile<dot_iq2_s>, grid_block(Type::IQ2_S)}},
            {Type::IQ3_XXS,
             {dot_iq3_xxs, nullptr, gemm_tile<dot_iq3_xxs>, grid_block(Type::IQ3_XXS)}},
            {Type::IQ3_S, {dot_iq3_s, nullptr, gemm_tile<dot_iq3_s>, grid_block(Type::IQ3_S)}},
            {Type::IQ1_S, {dot_iq1_s, nullptr, gemm_tile<dot_iq1_s>, grid_block(Type::IQ1_S)}},
            {Type::IQ1_M, {dot_iq1_m, nullptr, gemm_tile<dot_iq1_m>, grid_block(Type::IQ1_M)}},
            {Type::Q8_K, {nullptr, from_float(Type::Q8_K), nullptr}},
        };
        const PackedOverride packed[] = {
            {Type::F32, {nullptr, packed_float_gemm<float>}},
            {Type::F16, {nullptr, packed_float_gemm<fp16_t>}},
            {Type::BF16, {nullptr, packed_float_gemm<BF16>}},
            {Type::Q8_0, {q8_0c_from_float<128>, packed_gemm<block_q8_0x16, block_q8_0c, QK8_0>}},
            {Type::Q4_0, {q8_0c_from_float<8>, packed_gemm<block_q4_0x16, block_q8_0c, QK4_0>}},
            {Type::Q5_0, {q8_0c_from_float<16>, packed_gemm<block_q5_0x16, block_q8_0c, QK5_0>}},
            {Type::IQ4_NL,
             {q8_0c_from_float<128>, packed_gemm<block_iq4_nlx16, block_q8_0c, QK4_NL>}},
            {Type::Q4_1, {q8_1c_from_float, packed_gemm<block_q4_1x16, block_q8_1c, QK4_1>}},
            {Type::Q5_1, {q8_1c_from_float, packed_gemm<block_q5_1x16, block_q8_1c, QK5_1>}},
            {Type::Q4_K, {from_float(Type::Q8_K), packed_gemm<block_q4_Kx16, block_q8_K, QK_K>}},
            {Type::Q5_K, {from_float(Type::Q8_K), packed_gemm<block_q5_Kx16, block_q8_K, QK_K>}},
            {Type::Q6_K, {from_float(Type::Q8_K), packed_gemm<block_q6_Kx16, block_q8_K, QK_K>}},
            {Type::IQ4_XS,
             {from_float(Type::Q8_K), packed_gemm<block_iq4_xsx16, block_q8_K, QK_K>}},
            {Type::Q3_K, {from_float(Type::Q8_K), packed_gemm<block_q3_Kx16, block_q8_K, QK_K>}},
            {Type::Q2_K, {from_float(Type::Q8_K), packed_gemm<block_q2_Kx16, block_q8_K, QK_K>}},
            {Type::IQ2_XXS,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq2_xxsx4, block_iq2_xxs>, nullptr,
              stripes_to_grid<Type::IQ2_XXS>}},
            {Type::IQ2_XS,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq2_xsx4, block_iq2_xs>, nullptr,
              stripes_to_grid<Type::IQ2_XS>}},
            {Type::IQ2_S,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq2_sx4, block_iq2_s>, nullptr,
              stripes_to_grid<Type::IQ2_S>}},
            {Type::IQ3_XXS,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq3_xxsx4, block_iq3_xxs>, nullptr,
              stripes_to_grid<Type::IQ3_XXS>}},
            {Type::IQ3_S,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq3_sx4, block_iq3_s>, nullptr,
              stripes_to_grid<Type::IQ3_S>}},
            {Type::IQ1_S,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq1_sx4, block_iq1_s>, nullptr,
              stripes_to_grid<Type::IQ1_S>}},
            {Type::IQ1_M,
             {from_float(Type::Q8_K), packed_gemm_stripes<block_iq1_mx4, block_iq1_m>, nullptr,
              stripes_to_grid<Type::IQ1_M>}},
        };
        Kernels k = with_overrides(Kernels{}, Isa::Scalar, types, packed);
        k.rmsnorm = rmsnorm;
        k.softmax = softmax;
        k.silu_mul = silu_mul;
        k.add = add;
        k.scale = scale;
        k.axpy_f16 = axpy_f16;
        k.rope = rope;
        k.attend_f32 = attend<float>;
        k.attend_f16 = attend<fp16_t>;
        k.read_sum = read_sum;
        k.grid_gemm = packed_gemm<block_gridx16, block_q8_K, QK_K>;
        return k;
    }();
    return table;
}

}  // namespace ggml_lite
