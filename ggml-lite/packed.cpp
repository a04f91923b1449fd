// Rearranging Q4_0 and Q8_0 rows into the packed layout of packed.h.
#include "packed.h"

#include <cstring>
#include <stdexcept>

#include "quant.h"

namespace ggml_lite {
namespace {

// One block column of a group: `words` 4-byte words of each row's quants side by side,
// xor-ed with `flip` (0x80808080 turns Q8_0's signed values into w + 128).
template <class Block, class Packed, int Words>
void pack_group(const uint8_t* src, int64_t rows_left, int64_t nb, size_t row_bytes, Packed* dst,
                uint32_t flip) {
    for (int64_t b = 0; b < nb; b++) {
        Packed& p = dst[b];
        if (rows_left < kPackRows) std::memset(&p, 0, sizeof p);
        for (int r = 0; r < kPackRows && r < rows_left; r++) {
            const auto* blk = reinterpret_cast<const Block*>(src + r * row_bytes) + b;
            p.d[r] = blk->d;
            for (int m = 0; m < Words; m++) {
                uint32_t w;
                std::memcpy(&w, reinterpret_cast<const uint8_t*>(blk->qs) + 4 * m, 4);
                w ^= flip;
                std::memcpy(p.qs[m][r], &w, 4);
            }
        }
    }
}

// A group of 16 rows of `cols` float, half or bfloat16 values, column by column.
template <class Elem>
void pack_float_group(const uint8_t* src, int64_t rows_left, int64_t cols, size_t row_bytes,
                      Elem* dst) {
    if (rows_left < kPackRows) std::memset(dst, 0, sizeof(Elem) * kPackRows * cols);
    for (int r = 0; r < kPackRows && r < rows_left; r++) {
        const auto* row = reinterpret_cast<const Elem*>(src + r * row_bytes);
        for (int64_t c = 0; c < cols; c++) dst[c * kPackRows + r] = row[c];
    }
}

}  // namespace

bool packable(Type t) {
    switch (t) {
        case Type::F32:
        case Type::F16:
        case Type::BF16:
        case Type::Q8_0:
        case Type::Q4_0:
            return true;
        default:
            return false;
    }
}

size_t packed_group_size(Type t, int64_t cols) {
    if (!packable(t)) throw std::invalid_argument("packed_group_size: type has no packed layout");
    return kPackRows * row_size(t, cols);
}

void pack_groups(Type t, const void* src, int64_t rows, int64_t cols, void* dst, int64_t g0,
                 int64_t g1) {
    const size_t row_bytes = row_size(t, cols), group_bytes = packed_group_size(t, cols);
    const int64_t nb = cols / 32;  // block columns of Q4_0 and Q8_0
    for (int64_t g = g0; g < g1; g++) {
        const auto* s = static_cast<const uint8_t*>(src) + g * kPackRows * row_bytes;
        auto* d = static_cast<uint8_t*>(dst) + g * group_bytes;
        const int64_t left = rows - g * kPackRows;
        if (t == Type::F32) {
            pack_float_group(s, left, cols, row_bytes, reinterpret_cast<float*>(d));
        } else if (t == Type::F16 || t == Type::BF16) {
            pack_float_group(s, left, cols, row_bytes, reinterpret_cast<uint16_t*>(d));
        } else if (t == Type::Q4_0) {
            pack_group<block_q4_0, block_q4_0x16, 4>(s, left, nb, row_bytes,
                                                     reinterpret_cast<block_q4_0x16*>(d), 0);
        } else {
            pack_group<block_q8_0, block_q8_0x16, 8>(
                s, left, nb, row_bytes, reinterpret_cast<block_q8_0x16*>(d), 0x80808080u);
        }
    }
}

}  // namespace ggml_lite
