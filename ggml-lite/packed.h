// The packed weight layout of the matmul kernels (kernels.h: PackedKernels) and the
// activation blocks they read.
//
// A matrix is cut into groups of kPackRows = 16 rows (the last one padded with zero rows); a
// group is stored column by column (block column by block column for Q4_0 and Q8_0), the 16
// rows' values of a column together:
// - F32, F16, BF16: column c is 16 values, row 0 first: one vector load is one column of all
//   16 rows, and one FMA with the column's activation broadcast advances 16 row sums.
// - Q4_0, Q8_0: within a block column, word m of every row sits side by side, so one 64-byte
//   load is 4 bytes of each of the 16 rows: exactly a vpdpbusd operand whose int32 lane r
//   sums row r.
// The bytes are the same as the original file's, rearranged (Q8_0's offset to unsigned), so a
// packed matrix takes the memory of the original.
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

// The same for Q8_0, the values stored offset to unsigned (w + 128, i.e. w ^ 0x80, as
// vpdpbusd wants its first operand): qs[m][r] = elements 4m..4m+3 of row r, m < 8.
struct block_q8_0x16 {
    fp16_t d[kPackRows];
    uint8_t qs[8][kPackRows][4];
};
static_assert(sizeof(block_q8_0x16) == 544);  // 16 Q8_0 blocks

// An activation block for the packed kernels: Q8_0's values (the same bytes
// quantize_row_q8_0_ref writes), the scale already as float, and the integer correction of the
// unsigned weight operand: c = -8 sum(qs) facing Q4_0 (levels q - 8 stored as q), -128 sum(qs)
// facing Q8_0 (w stored as w + 128).
struct block_q8_0c {
    float d;
    int32_t c;
    int8_t qs[32];
};
static_assert(sizeof(block_q8_0c) == 40);

// True for the types that have a packed layout (F32, F16, BF16, Q4_0, Q8_0).
bool packable(Type t);
// Bytes of one packed group of 16 rows of `cols` columns.
size_t packed_group_size(Type t, int64_t cols);
// Packs groups [g0, g1) of a matrix of `rows` rows (row_size(t, cols) bytes each, contiguous)
// into dst, which holds the packed groups from group 0 on. Rows past `rows` are zeros.
void pack_groups(Type t, const void* src, int64_t rows, int64_t cols, void* dst, int64_t g0,
                 int64_t g1);

}  // namespace ggml_lite
