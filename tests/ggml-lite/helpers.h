// Helpers shared by the ggml-lite tests: random data, the kernel tables this CPU can run.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/type.h"

namespace ggml_lite::test {

inline std::vector<float> random_floats(int64_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    return v;
}

// Sets a grid block's d: the leading fp16 every grid block has but IQ1_M, whose d is spread over
// its scales (quant.h: iq1_m_d).
inline void set_grid_d(Type type, uint8_t* block, fp16_t d) {
    if (type == Type::IQ1_M) {
        set_iq1_m_d(reinterpret_cast<block_iq1_m*>(block), d);
    } else {
        std::memcpy(block, &d, sizeof d);
    }
}

// `n` blocks of a grid type (IQ1_S ... IQ3_S, which have no quantizer): random bytes, each a
// valid block, with its d set to one in [2^-8, 2^-6), so the values stay within about +-8.
inline std::vector<uint8_t> random_grid_blocks(Type type, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> data(static_cast<size_t>(n) * traits(type).type_size);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng() >> 24);
    for (int64_t i = 0; i < n; i++) {
        set_grid_d(type, data.data() + i * traits(type).type_size,
                   static_cast<fp16_t>(0x1c00 | (rng() & 0x7ff)));
    }
    return data;
}

// A Q8_K block's sums of 16 values from its levels, as quantize_row_q8_K_ref writes them: the
// kernels read them (offsets, mins), so activations made by hand need them.
inline void set_bsums(block_q8_K& b) {
    for (int g = 0; g < QK_K / 16; g++) {
        int sum = 0;
        for (int i = 0; i < 16; i++) sum += b.qs[16 * g + i];
        b.bsums[g] = static_cast<int16_t>(sum);
    }
}

// A weight matrix of `type` made from random floats with the reference codec; for a grid type,
// random blocks.
inline std::vector<uint8_t> random_matrix(Type type, int64_t rows, int64_t cols, uint32_t seed) {
    if (!traits(type).from_float)
        return random_grid_blocks(type, rows * cols / block_size(type), seed);
    const std::vector<float> f = random_floats(rows * cols, seed);
    std::vector<uint8_t> data(row_size(type, cols) * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; r++) {
        traits(type).from_float(f.data() + r * cols, data.data() + r * row_size(type, cols), cols);
    }
    return data;
}

// Every SIMD table this binary has and this CPU runs (the scalar one excluded). Those it has but
// this CPU cannot run go untested; test_tables.cpp says which.
inline std::vector<const Kernels*> simd_tables() {
    std::vector<const Kernels*> out;
    for (Isa isa : all_isas()) {
        if (isa == Isa::Scalar) continue;
        if (const Kernels* k = kernels_for(isa)) out.push_back(k);
    }
    return out;
}

// The ISAs this binary has a table for, scalar first.
inline std::vector<Isa> built_isas() {
    std::vector<Isa> out;
    for (Isa isa : all_isas()) {
        if (isa_built(isa)) out.push_back(isa);
    }
    return out;
}

inline std::vector<const Kernels*> all_tables() {
    std::vector<const Kernels*> out{&kernels_scalar()};
    for (const Kernels* k : simd_tables()) out.push_back(k);
    return out;
}

// n rounded up to a whole number of `type`'s blocks: test shapes made for the 32-blocks grow to
// the k-quants' 256-value super-blocks.
inline int64_t whole_blocks(Type type, int64_t n) {
    const int64_t b = block_size(type);
    return (n + b - 1) / b * b;
}

}  // namespace ggml_lite::test
