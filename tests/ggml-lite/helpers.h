// Helpers shared by the ggml-lite tests: random data, the kernel tables this CPU can run.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ggml-lite/kernels.h"
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

// A weight matrix of `type` made from random floats with the reference codec.
inline std::vector<uint8_t> random_matrix(Type type, int64_t rows, int64_t cols, uint32_t seed) {
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
