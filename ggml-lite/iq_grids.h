// The lattice grids of the grid types (quant.h: IQ1_S ... IQ3_S): format constants, ggml's
// tables (iq_grids.cpp says where from, and their license).
//
// A grid row holds 8 (IQ2) or 4 (IQ3) unsigned magnitudes, one per byte, first value in the
// lowest byte; the block's sign bits then negate some of them. IQ1_S's and IQ1_M's rows are
// signed already: 8 bytes of -1, 0 or 1 (iq1s_grid.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace ggml_lite {

extern const uint64_t iq2xxs_grid[256];  // magnitudes 8, 25, 43
extern const uint64_t iq2xs_grid[512];
extern const uint64_t iq2s_grid[1024];
extern const uint32_t iq3xxs_grid[256];  // magnitudes 4, 12, ..., 62
extern const uint32_t iq3s_grid[512];    // magnitudes 1, 3, ..., 15
extern const uint64_t iq1s_grid[2048];   // int8 values -1, 0, 1

// iq3s_grid's two halves side by side: entry k is row k (low word) and row 256 + k (high), so
// one load at an index's low 8 bits fetches both rows its ninth bit chooses between.
extern const std::array<uint64_t, 256> iq3s_grid_pairs;

// IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per 8 values: the eighth makes the number of
// negated values even (the quantizer flips the least costly sign to make it so).
constexpr uint8_t even_signs(uint32_t seven) {
    uint32_t parity = 0;
    for (int b = 0; b < 7; b++) parity ^= (seven >> b) & 1;
    return static_cast<uint8_t>((seven & 0x7f) | (parity << 7));
}

// even_signs for every 7 bits as a mask of 8 bytes, 0xff for each value to negate: what the SIMD
// steps look up (the other types' plain sign bytes are spread bit by bit instead).
constexpr std::array<uint64_t, 128> kEvenSignMask = [] {
    std::array<uint64_t, 128> t{};
    for (uint32_t i = 0; i < 128; i++) {
        for (int j = 0; j < 8; j++)
            t[i] |= static_cast<uint64_t>((even_signs(i) >> j) & 1) * (0xffull << (8 * j));
    }
    return t;
}();

// 4 bytes of a block's qs or signs as one word (blocks hold them at 2-byte alignment). Static:
// the SIMD files that use it are compiled with their ISA's flags, and no copy of theirs may be
// the one the linker picks for portable code.
static inline uint32_t grid_le32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

}  // namespace ggml_lite
