// The packed weight layout of the matmul kernels (kernels.h: PackedKernels) and the
// activation blocks they read.
//
// A matrix is cut into groups of kPackRows = 16 rows (the last one padded with zero rows); a
// group is stored 4 columns by 4 columns (block column by block column for the quantized types),
// the 16 rows' values of those columns together:
// - F32, F16, BF16: columns c..c + 3 (c a multiple of 4) are 16 rows of 4 values, row 0 first
//   (packed_float_index). A vector of R rows' 4 values (AVX2 2, AVX-512 4, NEON 1) has lane k on
//   column c + k, i.e. the reference's partial sum k (kernels.h), and meets the token's
//   x[c..c + 3] broadcast to every 4 lanes by one load, whatever R. The last n % 4 columns
//   are 16 rows of n % 4 values.
// - Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K: within a block
//   column, word m (4 bytes) of every row sits side by side, so one 64-byte load is 4 bytes of
//   each of the 16 rows: exactly a vpdpbusd operand whose int32 lane r sums row r. The per-row
//   scales are side by side too (16 lanes).
// - IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S: 4 stripes of 4 rows, each row's fields of a
//   sub-block side by side (block_grid_xxsx4 below): their decode is table lookups per row, and
//   4 rows are what one step's registers hold.
// The bytes are the same as the original file's, rearranged (Q8_0's offset to unsigned, Q3_K's,
// Q5_K's and Q6_K's levels stored whole, the IQ2_XXS, IQ2_XS and IQ3_XXS signs coded anew in as
// many bits), so a packed matrix takes the memory of the original.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fp16.h"
#include "kernels.h"
#include "type.h"

namespace ggml_lite {

// One block column of a group of 16 Q4_0 rows: the rows' scales, then qs[m][r] = bytes
// 4m..4m+3 of row r's quants (elements 4m..4m+3 in the low nibbles, 16+4m..16+4m+3 in the
// high nibbles), m < 4.
struct block_q4_0x16 {
    fp16_t d[kPackRows];
    uint8_t qs[4][kPackRows][4];
};
static_assert(sizeof(block_q4_0x16) == 288);  // 16 Q4_0 blocks

// IQ4_NL: Q4_0's shape, the nibbles being indices into kvalues_iq4nl (a type of its own for the
// kernels' overloads).
struct block_iq4_nlx16 : block_q4_0x16 {};
static_assert(sizeof(block_iq4_nlx16) == 288);  // 16 IQ4_NL blocks

// Q5_0: Q4_0's nibbles plus qh[r] = row r's 32 fifth bits, side by side, element 4i + k's at bit i
// of byte k (ggml has element j's at bit j). The kernels' operand i holds elements 4i..4i+3 of each
// row (a 4-byte lane), so one shift of the word by 4 - i puts the operand's four bits at bit 4 of
// their bytes, where the fifth bit belongs.
struct block_q5_0x16 {
    fp16_t d[kPackRows];
    uint8_t qh[kPackRows][4];
    uint8_t qs[4][kPackRows][4];
};
static_assert(sizeof(block_q5_0x16) == 16 * 22);  // 16 Q5_0 blocks

// Q4_1 and Q5_1: Q4_0's and Q5_0's block columns with the rows' minimums beside their scales.
struct block_q4_1x16 {
    fp16_t d[kPackRows];
    fp16_t m[kPackRows];
    uint8_t qs[4][kPackRows][4];
};
static_assert(sizeof(block_q4_1x16) == 16 * 20);  // 16 Q4_1 blocks

struct block_q5_1x16 {
    fp16_t d[kPackRows];
    fp16_t m[kPackRows];
    uint8_t qh[kPackRows][4];
    uint8_t qs[4][kPackRows][4];
};
static_assert(sizeof(block_q5_1x16) == 16 * 24);  // 16 Q5_1 blocks

// The same for Q8_0, the values stored offset to unsigned (w + 128, i.e. w ^ 0x80, as
// vpdpbusd wants its first operand): qs[m][r] = elements 4m..4m+3 of row r, m < 8.
struct block_q8_0x16 {
    fp16_t d[kPackRows];
    uint8_t qs[8][kPackRows][4];
};
static_assert(sizeof(block_q8_0x16) == 544);  // 16 Q8_0 blocks

// One super-block column of 16 Q4_K rows: scales[k][r] = byte k of row r's 12 packed scale
// bytes (get_scale_min_k4 reads them), qs[w][r] = bytes 4w..4w+3 of row r's qs: sub-block 2g's
// values 4m..4m+3 in the low nibbles and sub-block 2g + 1's in the high ones, w = 8g + m.
struct block_q4_Kx16 {
    fp16_t d[kPackRows];
    fp16_t dmin[kPackRows];
    uint8_t scales[12][kPackRows];
    uint8_t qs[32][kPackRows][4];
};
static_assert(sizeof(block_q4_Kx16) == 16 * 144);

// Q5_K: Q4_K's scales, and q[j][k][r] = row r's plane k of sub-block j (values 32j..32j + 31),
// where each value's 5-bit level (the qs nibble and the qh bit of quant.h's block_q5_K) is stored
// whole. Byte i of the five planes holds the levels v_m of values 32j + 4m + i, m < 8
// (q5_K_pack_levels): plane k < 5 = v_k | 3 bits << 5, the top bits holding v_5 (plane 0, and
// bits 3-4 in plane 1's bits 5-6), v_6 (bit 0 in plane 1's bit 7, bits 1-3 in plane 2, bit 4 in
// plane 3's bit 5) and v_7 (bits 0-1 in plane 3's bits 6-7, bits 2-4 in plane 4). Words 0-4 are
// then one mask each, the other three five to eight steps: 2.9 a word, where the file's
// nibbles and separate fifth bits took 4.4.
struct block_q5_Kx16 {
    fp16_t d[kPackRows];
    fp16_t dmin[kPackRows];
    uint8_t scales[12][kPackRows];
    uint8_t q[8][5][kPackRows][4];
};
static_assert(sizeof(block_q5_Kx16) == 16 * 176);

// Q5_K's packed levels (block_q5_Kx16): v[0..7] into byte i of a sub-block's planes p[0..4], and
// level m back out of them.
inline void q5_K_pack_levels(const uint8_t* v, uint8_t* p) {
    const int extra[5] = {v[5] & 7, (v[5] >> 3) | (v[6] & 1) << 2, (v[6] >> 1) & 7,
                          (v[6] >> 4) | (v[7] & 3) << 1, v[7] >> 2};
    for (int k = 0; k < 5; k++) p[k] = static_cast<uint8_t>(v[k] | extra[k] << 5);
}
inline int q5_K_packed_level(const uint8_t* p, int m) {
    switch (m) {
        case 5:
            return p[0] >> 5 | (p[1] >> 5 & 3) << 3;
        case 6:
            return p[1] >> 7 | (p[2] >> 5) << 1 | (p[3] >> 5 & 1) << 4;
        case 7:
            return p[3] >> 6 | (p[4] >> 5) << 2;
        default:
            return p[m] & 31;
    }
}

// One super-block column of 16 Q6_K rows: scales[g][r] = row r's scale of values 16g..16g+15;
// q[g][j][r] = row r's plane j of sub-block g, where each value's level q + 32 (0..63: the ql
// nibble and 2 qh bits of quant.h's block_q6_K) is stored whole. Byte i of the three planes holds
// the levels v_m of values 16g + 4m + i, m < 4 (q6_K_pack_levels): plane j = v_j | (bits 2j and
// 2j + 1 of v_3) << 6. Words 0-2 are then one mask each, word 3 three shifts, three masks and two
// ORs, where the file's nibbles and separate 2-bit fields took up to five steps a word.
struct block_q6_Kx16 {
    fp16_t d[kPackRows];
    int8_t scales[16][kPackRows];
    uint8_t q[16][3][kPackRows][4];
};
static_assert(sizeof(block_q6_Kx16) == 16 * 210);

// Q6_K's packed levels (block_q6_Kx16): v[0..3] into byte i of a sub-block's planes p[0..2], and
// level m back out of them.
inline void q6_K_pack_levels(const uint8_t* v, uint8_t* p) {
    for (int j = 0; j < 3; j++) p[j] = static_cast<uint8_t>(v[j] | (v[3] >> (2 * j) & 3) << 6);
}
inline int q6_K_packed_level(const uint8_t* p, int m) {
    if (m < 3) return p[m] & 63;
    return p[0] >> 6 | (p[1] >> 6) << 2 | (p[2] >> 6) << 4;
}

// One super-block column of 16 IQ4_XS rows: scales_h[k][r] = byte k of row r's scales_h (the
// top 2 bits of scales 4k..4k+3), scales_l[k][r] = row r's scales_l[k], qs[w][r] = bytes
// 4w..4w+3 of row r's qs. Sub-block j's nibbles are words 4j..4j+3, laid out as one IQ4_NL
// block column (block_iq4_nlx16::qs).
struct block_iq4_xsx16 {
    fp16_t d[kPackRows];
    uint8_t scales_h[2][kPackRows];
    uint8_t scales_l[4][kPackRows];
    uint8_t qs[32][kPackRows][4];
};
static_assert(sizeof(block_iq4_xsx16) == 16 * 136);

// One super-block column of 16 Q3_K rows: scales[k][r] = byte k of row r's 12 packed scale bytes
// (quant.h: q3_K_scale decodes them); q[u][j][r] = row r's plane j of unit u (values 32u..32u +
// 31), where each value's level q + 4 (0..7: the 2 bits of qs and the hmask bit of quant.h's
// block_q3_K) is stored whole. Byte i of the three planes holds the levels v_m of values 32u + 4m
// + i, m < 8 (q3_K_pack_levels): plane 0 = v0 | v1 << 3 | (v2 & 3) << 6, plane 1 = v3 | v4 << 3 |
// (v5 & 3) << 6, plane 2 = v6 | v7 << 3 | (v2 >> 2) << 6 | (v5 >> 2) << 7. So word m of a unit (4
// bytes of each row) is one mask, or a shift and a mask, for six of the eight and two shifts,
// two masks and an OR for the other two, where the file's 2-bit fields and separate hmask bit took
// up to five steps each (kernels.md, "levels are stored whole").
struct block_q3_Kx16 {
    fp16_t d[kPackRows];
    uint8_t scales[12][kPackRows];
    uint8_t q[8][3][kPackRows][4];  // 8 units of 32 values
};

// Q3_K's packed levels (block_q3_Kx16): v[0..7] into byte i of a unit's planes p[0..2], and level
// m back out of them.
inline void q3_K_pack_levels(const uint8_t* v, uint8_t* p) {
    p[0] = static_cast<uint8_t>(v[0] | v[1] << 3 | (v[2] & 3) << 6);
    p[1] = static_cast<uint8_t>(v[3] | v[4] << 3 | (v[5] & 3) << 6);
    p[2] = static_cast<uint8_t>(v[6] | v[7] << 3 | (v[2] >> 2) << 6 | (v[5] >> 2) << 7);
}
inline int q3_K_packed_level(const uint8_t* p, int m) {
    switch (m) {
        case 2:
            return (p[0] >> 6) | ((p[2] >> 4) & 4);
        case 5:
            return (p[1] >> 6) | ((p[2] >> 5) & 4);
        default:
            return (p[m / 3] >> (3 * (m % 3))) & 7;
    }
}
static_assert(sizeof(block_q3_Kx16) == 16 * 110);

// One super-block column of 16 Q2_K rows: scales[g][r] = row r's byte of values 16g..16g+15
// (scale in the low nibble, min in the high one), qs[w][r] = bytes 4w..4w+3 of row r's qs.
struct block_q2_Kx16 {
    fp16_t d[kPackRows];
    fp16_t dmin[kPackRows];
    uint8_t scales[16][kPackRows];
    uint8_t qs[16][kPackRows][4];
};
static_assert(sizeof(block_q2_Kx16) == 16 * 84);

// The grid types: a group of 16 rows as 4 stripes of 4 rows (rows 4k..4k + 3 in stripe k), each
// stripe nb super-block columns of one type's x4 block one after the other, so one token reads a
// stripe front to back and decodes its 4 rows' signs and scales a sub-block (32 values) at a time
// with one instruction each (ik_llama.cpp's _R4 idea, with lila's bits). In a column, d[i] is row
// i's d (IQ1_M has none: below). IQ2_XXS and IQ3_XXS (block_grid_xxsx4): grid[ib][i] row i's grid
// indices of sub-block ib in order (IQ2_XXS: 4 into iq2xxs_grid, 8 values each; IQ3_XXS: 8 into
// iq3xxs_grid, 4 each); signs[ib][i][l] the signs of its values 8l..8l + 7 as grid_sign_code
// writes them, with bit l of the sub-block's scale s in bit 0. The same number of bytes as the
// rows' (the sign code takes 7 bits, as the file's sign index does).
template <int Indices>
struct block_grid_xxsx4 {
    fp16_t d[4];
    uint8_t grid[8][4][Indices];
    uint8_t signs[8][4][4];
};
using block_iq2_xxsx4 = block_grid_xxsx4<4>;
using block_iq3_xxsx4 = block_grid_xxsx4<8>;
static_assert(sizeof(block_iq2_xxsx4) == 4 * 66);
static_assert(sizeof(block_iq3_xxsx4) == 4 * 98);

// IQ2_XS, IQ2_S and IQ3_S in the same stripes, row i's fields of sub-block ib side by side:
// - IQ2_XS: qs[ib][i][l] = the file's qs of values 8l..8l + 7, the 9-bit grid index with the 7
//   sign bits above it replaced by grid_sign_code's bits 1..7 (so the high byte is the code,
//   bit 0 the index's ninth bit); scales[ib][i] = the file's scale byte of the sub-block (values
//   0..15 in the low nibble, 16..31 in the high).
// - IQ2_S: grid[ib][i][l] the low 8 bits of the index of values 8l..8l + 7, qh[ib][i] their top
//   2 bits (bits 2l, 2l + 1), signs[ib][i][l] their 8 sign bits; scales as IQ2_XS's.
// - IQ3_S: grid[ib][i][g] the low 8 bits of the index of values 4g..4g + 3, bit g of qh[ib][i]
//   its ninth bit, signs[ib][i][l] the sign bits of values 8l..8l + 7, scales[ib / 2][i] the
//   file's byte of sub-blocks ib and ib + 1 (low nibble the even one).
struct block_iq2_xsx4 {
    fp16_t d[4];
    uint16_t qs[8][4][4];
    uint8_t scales[8][4];
};
struct block_iq2_sx4 {
    fp16_t d[4];
    uint8_t grid[8][4][4];
    uint8_t qh[8][4];
    uint8_t signs[8][4][4];
    uint8_t scales[8][4];
};
struct block_iq3_sx4 {
    fp16_t d[4];
    uint8_t grid[8][4][8];
    uint8_t qh[8][4];
    uint8_t signs[8][4][4];
    uint8_t scales[4][4];
};
static_assert(sizeof(block_iq2_xsx4) == 4 * 74);
static_assert(sizeof(block_iq2_sx4) == 4 * 82);
static_assert(sizeof(block_iq3_sx4) == 4 * 110);

// IQ1_S and IQ1_M, whose levels are signed already (8g + delta, quant.h), keep their fields:
// - IQ1_S: qs[ib][i][l] the low 8 bits of the grid index of values 8l..8l + 7, qh[ib][i] the
//   file's word of sub-block ib (the indices' top bits, s, the delta's sign).
// - IQ1_M: qs as IQ1_S's; qh[ib][i] the file's bytes 2ib and 2ib + 1 as a little-endian word
//   (nibble l: group l's top index bits, the sign of its delta in bit 3); scales[w][i] the file's
//   scale word w (sub-blocks 2w and 2w + 1, and d's bits 4w..4w + 3 on top).
struct block_iq1_sx4 {
    fp16_t d[4];
    uint8_t qs[8][4][4];
    uint16_t qh[8][4];
};
struct block_iq1_mx4 {
    uint8_t qs[8][4][4];
    uint16_t qh[8][4];
    uint16_t scales[4][4];
};
static_assert(sizeof(block_iq1_sx4) == 4 * 50);
static_assert(sizeof(block_iq1_mx4) == 4 * 56);

// A group's 8 signs (bit j: value j negated; an even number of them, iq_grids.h: even_signs) as
// bits 1..7 of a byte, bit i holding s_i ^ s_i+1 ^ ... ^ s_7. grid_signs gives all 8 back, bit
// 0 included (s_1 ^ ... ^ s_7 is s_0 by the parity), with two operations that SIMD code runs on
// 16 or 64 bytes at once, where the file's 7-bit index needs a table lookup per group; bit 0 of
// the byte is left free for the scale.
constexpr uint8_t grid_sign_code(uint8_t signs) {
    uint32_t code = 0, suffix = 0;
    for (int i = 7; i >= 1; i--) {
        suffix ^= (signs >> i) & 1u;
        code |= suffix << i;
    }
    return static_cast<uint8_t>(code);
}
constexpr uint8_t grid_signs(uint8_t code) {
    const uint32_t c = code & 0xfeu;
    return static_cast<uint8_t>(c ^ (c >> 1));
}

// The grid types (IQ1_S ... IQ3_S) in prefill: one super-block column of 16 rows decoded
// (quant.h: GridLevels), d[r] = row r's d kScale, scales[g][r] = its ls of values 16g..16g+15
// (odd, at most 31), qs[w][r] = its levels of values 4w..4w+3 plus 64 (|q| <= 62, so 2..126:
// vpdpbusd's unsigned operand, and two of vpmaddubsw's products stay below 2^15). It takes
// 2.5-5.5 times the rows' bytes, so no matrix is kept so: matmul decodes each 16-row group
// into a buffer of its thread for one batch (ops.cpp), and Kernels::grid_gemm reads it.
struct block_gridx16 {
    float d[kPackRows];
    uint8_t scales[16][kPackRows];
    uint8_t qs[64][kPackRows][4];
};
static_assert(sizeof(block_gridx16) == 4416);
constexpr int kGridOffset = 64;

// An activation block for the packed kernels: Q8_0's values (the same bytes
// quantize_row_q8_0_ref writes), the scale already as float, and the integer correction of the
// unsigned weight operand: c = -8 sum(qs) facing Q4_0 (levels q - 8 stored as q), -16 sum(qs)
// facing Q5_0 (q - 16), -128 sum(qs) facing Q8_0 (w stored as w + 128) and IQ4_NL (its table's
// values read as value + 128).
struct block_q8_0c {
    float d;
    int32_t c;
    int8_t qs[32];
};
static_assert(sizeof(block_q8_0c) == 40);

// The activation block facing Q4_1 and Q5_1 (levels q, no offset, plus the row's minimum m):
// Q8_1's values (quantize_row_q8_1_ref's bytes), its d and s (d sum(qs), rounded to fp16 as
// Q8_1 stores it) as floats; a block adds d_w d sum(q x) + m s.
struct block_q8_1c {
    float d;
    float s;
    int8_t qs[32];
};
static_assert(sizeof(block_q8_1c) == 40);

// The BF16 dot path (the avx512_bf16 table's BF16 kernels, vdpbf16ps): the activations are
// rounded to bfloat16, each 32-bit word a pair of consecutive columns, in the float row
// packed_activation_size gives (half of it used). Their scalar twins:
// - bf16_activations_ref: x rounded to nearest even, subnormals to zero as vcvtne2ps2bf16 does;
//   for odd n one zero bf16 after the last, so the last pair is whole.
void bf16_activations_ref(const float* x, void* y, int64_t n);
// - packed_gemm_bf16_dot_ref: PackedKernels::gemm on those activations: column pair p
//   (columns 2p, 2p + 1; a missing last column is 0) into partial sum p % 2, the odd column's
//   product added first, then p0 + p1. vdpbf16ps rounds inside a pair as it likes, so a SIMD
//   kernel agrees within the accumulation error bound of two float summation orders of the same
//   exact products (tests/ggml-lite/test_packed_bf16.cpp), and with itself for every tiling (the
//   amx table: its full tiles of 16 tokens, on the tile unit, with each other; its smaller
//   ones, on vdpbf16ps, with each other).
void packed_gemm_bf16_dot_ref(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                              int64_t y_stride, int nr, int nt);
// The amx table's BF16 activations (x86/packed_amx.cpp): bf16_activations_ref's values with each
// whole chunk of 64 columns (32 pairs, pair P = columns 2P and 2P + 1 of the chunk) as its 16 even
// pairs, then its 16 odd ones, so that 64 bytes hold one partial sum's pairs (p % 2 above); the
// columns past the last whole chunk as bf16_activations_ref has them.
void bf16_chunked_activations_ref(const float* x, void* y, int64_t n);
constexpr int64_t kBf16Chunk = 64;

// Where column c of row r is in a float group of n columns, in values.
constexpr int64_t packed_float_index(int64_t n, int64_t c, int r) {
    const int64_t c0 = c - c % 4, width = n - c0 < 4 ? n - c0 : 4;
    return kPackRows * c0 + r * width + c % 4;
}

// True for the types that have a packed layout (a row of packed.cpp's layouts): F32, F16, BF16,
// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K, and the grid types
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M.
// The functions below throw std::invalid_argument for the others.
bool packable(Type t);
// Bytes of one activation row of `cols` values as the packed kernels of weight type t read it:
// floats for F32/F16/BF16, block_q8_0c for Q4_0/Q5_0/IQ4_NL/Q8_0, block_q8_1c for Q4_1/Q5_1,
// block_q8_K for Q4_K/Q5_K/Q6_K/IQ4_XS/Q3_K/Q2_K and the grid types.
size_t packed_activation_size(Type t, int64_t cols);
// Bytes of one packed group of 16 rows of `cols` columns: those of the 16 rows.
size_t packed_group_size(Type t, int64_t cols);
// Bytes of one block_gridx16 group of `cols` columns.
size_t grid_group_size(int64_t cols);
// Decodes `rows` (at most kPackRows) rows of grid type t, row_size(t, cols) bytes apart from src,
// with `decode` (t's TypeTraits::grid_block or a table's TypeKernels::grid_block) into one group
// of block_gridx16 columns at dst; rows past `rows` are zeros.
void pack_grid_group(Type t, GridBlockFn decode, const void* src, int rows, int64_t cols,
                     void* dst);
// The first `rows` rows (at most kPackRows) of one packed group of `cols` columns back in the
// file's layout, row_size(t, cols) bytes apart at dst: the scalar table's to_grid decodes them
// (the SIMD ones decode the stripes directly). Throws std::invalid_argument for the types whose
// layout has no inverse here (all but the grid types').
void unpack_group(Type t, const void* src, int rows, int64_t cols, void* dst);
// Packs groups [g0, g1) of a matrix of `rows` rows (row_size(t, cols) bytes each, contiguous)
// into dst, which holds the packed groups from group 0 on. Rows past `rows` are zeros.
void pack_groups(Type t, const void* src, int64_t rows, int64_t cols, void* dst, int64_t g0,
                 int64_t g1);

}  // namespace ggml_lite
