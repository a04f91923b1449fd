// The lattice grids of the grid types (quant.h: IQ2_XXS ... IQ3_S): format constants, ggml's
// tables (iq_grids.cpp says where from, and their license).
//
// A grid row holds 8 (IQ2) or 4 (IQ3) unsigned magnitudes, one per byte, first value in the
// lowest byte; the block's sign bits then negate some of them.
#pragma once

#include <cstdint>

namespace ggml_lite {

extern const uint64_t iq2xxs_grid[256];  // magnitudes 8, 25, 43
extern const uint64_t iq2xs_grid[512];
extern const uint64_t iq2s_grid[1024];
extern const uint32_t iq3xxs_grid[256];  // magnitudes 4, 12, ..., 62
extern const uint32_t iq3s_grid[512];    // magnitudes 1, 3, ..., 15

// IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per 8 values: the eighth makes the number of
// negated values even (the quantizer flips the least costly sign to make it so).
constexpr uint8_t even_signs(uint32_t seven) {
    uint32_t parity = 0;
    for (int b = 0; b < 7; b++) parity ^= (seven >> b) & 1;
    return static_cast<uint8_t>((seven & 0x7f) | (parity << 7));
}

}  // namespace ggml_lite
