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

}  // namespace

bool packable(Type t) {
    return t == Type::Q4_0 || t == Type::Q8_0;
}

size_t packed_group_size(Type t, int64_t cols) {
    if (!packable(t)) throw std::invalid_argument("packed_group_size: type has no packed layout");
    return kPackRows * row_size(t, cols);
}

void pack_groups(Type t, const void* src, int64_t rows, int64_t cols, void* dst, int64_t g0,
                 int64_t g1) {
    const size_t row_bytes = row_size(t, cols), group_bytes = packed_group_size(t, cols);
    const int64_t nb = cols / 32;
    for (int64_t g = g0; g < g1; g++) {
        const auto* s = static_cast<const uint8_t*>(src) + g * kPackRows * row_bytes;
        auto* d = static_cast<uint8_t*>(dst) + g * group_bytes;
        const int64_t left = rows - g * kPackRows;
        if (t == Type::Q4_0) {
            pack_group<block_q4_0, block_q4_0x16, 4>(s, left, nb, row_bytes,
                                                     reinterpret_cast<block_q4_0x16*>(d), 0);
        } else {
            pack_group<block_q8_0, block_q8_0x16, 8>(
                s, left, nb, row_bytes, reinterpret_cast<block_q8_0x16*>(d), 0x80808080u);
        }
    }
}

}  // namespace ggml_lite
