// Quantized block layouts (identical to ggml's) and their scalar reference codecs.
#pragma once

#include <cstdint>

#include "fp16.h"

namespace ggml_lite {

constexpr int QK8_0 = 32;
struct block_q8_0 {
    fp16_t d;  // scale: max|x| / 127
    int8_t qs[QK8_0];
};
static_assert(sizeof(block_q8_0) == 34);

constexpr int QK4_0 = 32;
struct block_q4_0 {
    fp16_t d;               // scale: (value of max magnitude) / -8
    uint8_t qs[QK4_0 / 2];  // byte j: element j in the low nibble, j+16 in the high; value d*(q-8)
};
static_assert(sizeof(block_q4_0) == 18);

constexpr int QK4_1 = 32;
struct block_q4_1 {
    fp16_t d;  // scale: (max - min) / 15
    fp16_t m;  // min; value d*q + m, q in [0, 15], nibbles as in block_q4_0
    uint8_t qs[QK4_1 / 2];
};
static_assert(sizeof(block_q4_1) == 20);

constexpr int QK5_0 = 32;
struct block_q5_0 {
    fp16_t d;               // scale: (value of max magnitude) / -16; value d*(q-16), q in [0, 31]
    uint8_t qh[4];          // bit j (little-endian uint32): the fifth bit of element j
    uint8_t qs[QK5_0 / 2];  // the low 4 bits, nibbles as in block_q4_0
};
static_assert(sizeof(block_q5_0) == 22);

constexpr int QK5_1 = 32;
struct block_q5_1 {
    fp16_t d;  // scale: (max - min) / 31
    fp16_t m;  // min; value d*q + m, q in [0, 31], bits as in block_q5_0
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
};
static_assert(sizeof(block_q5_1) == 24);

// The activation type Q4_1 and Q5_1 are dotted with: Q8_0's values plus s = d * sum(qs), which
// the weights' min multiplies.
constexpr int QK8_1 = 32;
struct block_q8_1 {
    fp16_t d;
    fp16_t s;
    int8_t qs[QK8_1];
};
static_assert(sizeof(block_q8_1) == 36);

// 4.5 bits per value, non-linear: value = d * kvalues_iq4nl[q], nibbles as in block_q4_0.
constexpr int QK4_NL = 32;
struct block_iq4_nl {
    fp16_t d;
    uint8_t qs[QK4_NL / 2];
};
static_assert(sizeof(block_iq4_nl) == 18);
// The 16 levels, denser near zero where weights are.
inline constexpr int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                             1,    13,   25,  38,  53,  69,  89,  113};

// ---- k-quants: super-blocks of QK_K = 256 values ------------------------------------------

constexpr int QK_K = 256;
constexpr int K_SCALE_SIZE = 12;

// 2.625 bits per value: 16 sub-blocks of 16 values, each with a 4-bit scale sc and a 4-bit min
// m; value = d * sc * q - dmin * m, q in [0, 3].
struct block_q2_K {
    uint8_t scales[QK_K / 16];  // byte k: sub-block k's sc in the low nibble, m in the high
    uint8_t qs[QK_K / 4];       // byte 32h + l, bits 2k, 2k + 1: value 128h + 32k + l (h < 2)
    fp16_t d;                   // scale of the sub-block scales
    fp16_t dmin;                // scale of the sub-block mins
};
static_assert(sizeof(block_q2_K) == 84);

// 3.4375 bits per value: 16 sub-blocks of 16 values, each with a 6-bit signed scale sc;
// value = d * sc * (q - 4), q in [0, 7]. The low 2 bits of q are packed as Q2_K's qs; hmask
// byte l holds the third bit of value 32k + l in bit k (k < 8).
struct block_q3_K {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];  // the 16 scales + 32, 6 bits each: q3_K_scale()
    fp16_t d;
};
static_assert(sizeof(block_q3_K) == 110);

// 4.5 bits per value: 8 sub-blocks of 32 values, each with a 6-bit scale sc and a 6-bit min m;
// value = d * sc * q - dmin * m, q in [0, 15].
struct block_q4_K {
    fp16_t d;                      // scale of the sub-block scales
    fp16_t dmin;                   // scale of the sub-block mins
    uint8_t scales[K_SCALE_SIZE];  // 8 scales and 8 mins packed in 6 bits: get_scale_min_k4()
    uint8_t qs[QK_K / 2];          // byte 32g + l: value 64g + l in the low nibble, 64g + 32 + l
                                   // in the high nibble (g < 4, l < 32)
};
static_assert(sizeof(block_q4_K) == 144);

// 5.5 bits per value: Q4_K with a fifth bit per value; value = d * sc * q - dmin * m,
// q in [0, 31]. qs as Q4_K's; qh byte l holds the fifth bit of value 32k + l in bit k (k < 8).
struct block_q5_K {
    fp16_t d;
    fp16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
};
static_assert(sizeof(block_q5_K) == 176);

// 4.25 bits per value: IQ4_NL's levels in 8 blocks of 32, each with a 6-bit signed scale;
// value = d * (sc - 32) * kvalues_iq4nl[q], q packed per 32-value block as block_iq4_nl's.
struct block_iq4_xs {
    fp16_t d;
    uint16_t scales_h;            // bits 2i, 2i + 1: the top 2 bits of block i's sc
    uint8_t scales_l[QK_K / 64];  // byte i / 2, nibble i % 2: the low 4 bits of block i's sc
    uint8_t qs[QK_K / 2];
};
static_assert(sizeof(block_iq4_xs) == 136);

// 6.5625 bits per value: 16 sub-blocks of 16 values, each with an 8-bit signed scale sc;
// value = d * sc * (q - 32), q in [0, 63]. Each half h of 128 values has 64 bytes of ql and 32 of
// qh: ql byte j holds the low 4 bits of value 128h + j (low nibble) and 128h + 64 + j (high
// nibble); qh byte l holds the high 2 bits of values 128h + l + 32k in bits 2k, 2k + 1 (k < 4).
struct block_q6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    fp16_t d;
};
static_assert(sizeof(block_q6_K) == 210);

// The activation type the k-quants are dotted with: value = d * q; bsums[i] is the sum of
// values 16i..16i+15, which the dot products need for the mins (Q4_K) and offsets (Q6_K).
struct block_q8_K {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
};
static_assert(sizeof(block_q8_K) == 292);

// ---- Grid types: super-blocks of 256 values on ggml's lattice grids (iq_grids.h) -----------
// Each group of 8 (IQ2) or 4 (IQ3) values is one row of a grid, chosen by an index, with sign
// bits; sub-blocks of 32 or 16 values have a 4-bit scale s. value = d * (2s + 1) * kScale * (grid
// magnitude, negated where its sign bit is set). Only llama-quantize writes them (its search
// needs an importance matrix): lila reads and runs them but has no quantizer (from_float).

// 2.0625 bits per value. Sub-block ib (32 values) is qs[4ib .. 4ib + 3] read as two little-endian
// uint32 a0, a1: byte l of a0 indexes iq2xxs_grid for values 8l .. 8l + 7, bits 7l .. 7l + 6 of a1
// are their signs (even_signs), bits 28 .. 31 of a1 are s.
struct block_iq2_xxs {
    fp16_t d;
    uint16_t qs[QK_K / 8];
    static constexpr float kScale = 0.125f;
};
static_assert(sizeof(block_iq2_xxs) == 66);

// 2.3125 bits per value. qs[g] for the 8 values of group g (< 32): the low 9 bits index
// iq2xs_grid, the top 7 are signs (even_signs); scales[ib]: s of values 32ib .. 32ib + 15 in the
// low nibble, of 32ib + 16 .. 32ib + 31 in the high.
struct block_iq2_xs {
    fp16_t d;
    uint16_t qs[QK_K / 8];
    uint8_t scales[QK_K / 32];
    static constexpr float kScale = 0.125f;
};
static_assert(sizeof(block_iq2_xs) == 74);

// 2.5625 bits per value. Group g (< 32) of 8 values: iq2s_grid index qs[g] | (bits 2(g % 4),
// 2(g % 4) + 1 of qh[g / 4]) << 8; its 8 signs are the bits of qs[32 + g]. Scales as IQ2_XS's.
struct block_iq2_s {
    fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
    static constexpr float kScale = 0.125f;
};
static_assert(sizeof(block_iq2_s) == 82);

// 3.0625 bits per value. qs[0 .. 63]: the iq3xxs_grid index of each 4 values; then a
// little-endian uint32 per sub-block ib (32 values) at qs[64 + 4ib]: bits 7l .. 7l + 6 are the
// signs of values 32ib + 8l .. 32ib + 8l + 7 (even_signs), bits 28 .. 31 are s.
struct block_iq3_xxs {
    fp16_t d;
    uint8_t qs[3 * QK_K / 8];
    static constexpr float kScale = 0.25f;
};
static_assert(sizeof(block_iq3_xxs) == 98);

// 3.4375 bits per value. Group g (< 64) of 4 values: iq3s_grid index qs[g] | (bit g % 8 of
// qh[g / 8]) << 8; signs[k] holds the signs of values 8k .. 8k + 7; scales[i]: s of sub-block 2i
// (32 values) in the low nibble, of 2i + 1 in the high.
struct block_iq3_s {
    fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
    static constexpr float kScale = 1.0f;
};
static_assert(sizeof(block_iq3_s) == 110);

// IQ1_S and IQ1_M: each group of 8 values is a row of iq1s_grid (8 values g in {-1, 0, 1}) shifted
// by a delta of +-1/8: value = d * (2s + 1) * (g + delta), i.e. kScale * q with the odd integer
// level q = 8g + 8 delta (|q| <= 9), which is how lila holds them.

// 1.5625 bits per value. Sub-block ib (32 values): qh[ib] holds the top 3 bits of the 4 groups'
// 11-bit grid indices (bits 3l .. 3l + 2 above qs[4ib + l]), s (bits 12 .. 14) and the sign of
// the delta (bit 15: -1/8 where set).
struct block_iq1_s {
    fp16_t d;
    uint8_t qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
    static constexpr float kScale = 0.125f;
};
static_assert(sizeof(block_iq1_s) == 50);

// 1.75 bits per value, no d field: d is the fp16 whose 4-bit pieces are the top nibbles of the
// four little-endian words of scales (iq1_m_d). Group g (< 32) of 8 values: grid index qs[g] | (the
// low 3 bits of nibble g of qh) << 8, delta -1/8 where the nibble's bit 3 is set (nibble g is the
// low one of qh[g / 2] for even g); sub-block ib's two 16-value halves have s in bits 6(ib % 2)
// .. +2 and 6(ib % 2) + 3 .. +5 of scales word ib / 2.
struct block_iq1_m {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
    static constexpr float kScale = 0.125f;
};
static_assert(sizeof(block_iq1_m) == 56);

// A grid super-block as integers: value i = d * ls[i / 16] * kScale * q[i], with q the signed
// grid magnitude (|q| <= 62) or IQ1's level and ls = 2s + 1 the scale of its 16 values (a
// sub-block of 32 gives both its halves the same). The scalar dot products and to_float both read
// blocks through it, and the block's d through grid_d.
struct GridLevels {
    int8_t q[QK_K];
    uint8_t ls[QK_K / 16];
};
void grid_levels(const block_iq2_xxs& b, GridLevels* out);
void grid_levels(const block_iq2_xs& b, GridLevels* out);
void grid_levels(const block_iq2_s& b, GridLevels* out);
void grid_levels(const block_iq3_xxs& b, GridLevels* out);
void grid_levels(const block_iq3_s& b, GridLevels* out);
void grid_levels(const block_iq1_s& b, GridLevels* out);
void grid_levels(const block_iq1_m& b, GridLevels* out);
// A grid block's d: its fp16 field, or IQ1_M's, assembled from its scales' top nibbles
// (iq1_m_d). Out of line, as every function here: the SIMD files that call them are compiled
// with their ISA's flags, and no inline copy of theirs may serve portable code.
float grid_d(const block_iq2_xxs& b);
float grid_d(const block_iq2_xs& b);
float grid_d(const block_iq2_s& b);
float grid_d(const block_iq3_xxs& b);
float grid_d(const block_iq3_s& b);
float grid_d(const block_iq1_s& b);
float grid_d(const block_iq1_m& b);
fp16_t iq1_m_d(const block_iq1_m& b);
// Sets the d that iq1_m_d reads, leaving the scales' other bits.
void set_iq1_m_d(block_iq1_m* b, fp16_t d);

// Scale and min of sub-block j (< 8) of a Q4_K block's 12 packed bytes: j < 4 are the low 6 bits
// of bytes j and j + 4; j >= 4 keep their low 4 bits in byte j + 4 (scale low nibble, min high)
// and their top 2 bits in the top bits of bytes j - 4 (scale) and j (min).
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m);

// Scalar reference codecs; n is a multiple of the block size.
void quantize_row_q8_0_ref(const float* x, block_q8_0* y, int64_t n);
void dequantize_row_q8_0(const block_q8_0* x, float* y, int64_t n);
void quantize_row_q4_0_ref(const float* x, block_q4_0* y, int64_t n);
void dequantize_row_q4_0(const block_q4_0* x, float* y, int64_t n);
void quantize_row_q4_1_ref(const float* x, block_q4_1* y, int64_t n);
void dequantize_row_q4_1(const block_q4_1* x, float* y, int64_t n);
void quantize_row_q5_0_ref(const float* x, block_q5_0* y, int64_t n);
void dequantize_row_q5_0(const block_q5_0* x, float* y, int64_t n);
void quantize_row_q5_1_ref(const float* x, block_q5_1* y, int64_t n);
void dequantize_row_q5_1(const block_q5_1* x, float* y, int64_t n);
void quantize_row_q8_1_ref(const float* x, block_q8_1* y, int64_t n);
void dequantize_row_q8_1(const block_q8_1* x, float* y, int64_t n);
// IQ4_NL as llama-quantize writes it without an importance matrix (ggml's quantize_iq4_nl, which
// searches 15 scales per block; ggml's quantize_row_iq4_nl_ref tries only the first).
void quantize_row_iq4_nl(const float* x, block_iq4_nl* y, int64_t n);
void dequantize_row_iq4_nl(const block_iq4_nl* x, float* y, int64_t n);
// The k-quant quantizers search scales (and Q2_K's, Q4_K's and Q5_K's mins) that minimise a
// weighted error, as ggml's quantize_row_q2_K_ref ... quantize_row_q6_K_ref do, with the same
// bytes.
void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n);
void dequantize_row_q2_K(const block_q2_K* x, float* y, int64_t n);
void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n);
void dequantize_row_q3_K(const block_q3_K* x, float* y, int64_t n);
// Sub-block k's (< 16) signed scale, in [-32, 31]: the low 4 bits in byte k % 8 (the low nibble
// for k < 8, the high one after), the top 2 in byte 8 + k % 4, bits 2(k / 4), 2(k / 4) + 1.
int q3_K_scale(const block_q3_K& x, int k);
void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n);
void dequantize_row_q4_K(const block_q4_K* x, float* y, int64_t n);
void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n);
void dequantize_row_q5_K(const block_q5_K* x, float* y, int64_t n);
void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n);
void dequantize_row_q6_K(const block_q6_K* x, float* y, int64_t n);
// IQ4_XS as llama-quantize writes it without an importance matrix (ggml's quantize_iq4_xs, which
// quantize_row_iq4_xs_ref calls too).
void quantize_row_iq4_xs(const float* x, block_iq4_xs* y, int64_t n);
void dequantize_row_iq4_xs(const block_iq4_xs* x, float* y, int64_t n);
// Block ib's (< 8) signed scale, in [-32, 31].
int iq4_xs_scale(const block_iq4_xs& x, int ib);
// The grid types' decoders, bit for bit ggml's dequantize_row_iq2_xxs ... dequantize_row_iq1_m.
void dequantize_row_iq2_xxs(const block_iq2_xxs* x, float* y, int64_t n);
void dequantize_row_iq2_xs(const block_iq2_xs* x, float* y, int64_t n);
void dequantize_row_iq2_s(const block_iq2_s* x, float* y, int64_t n);
void dequantize_row_iq3_xxs(const block_iq3_xxs* x, float* y, int64_t n);
void dequantize_row_iq3_s(const block_iq3_s* x, float* y, int64_t n);
void dequantize_row_iq1_s(const block_iq1_s* x, float* y, int64_t n);
void dequantize_row_iq1_m(const block_iq1_m* x, float* y, int64_t n);
void quantize_row_q8_K_ref(const float* x, block_q8_K* y, int64_t n);
void dequantize_row_q8_K(const block_q8_K* x, float* y, int64_t n);

}  // namespace ggml_lite
