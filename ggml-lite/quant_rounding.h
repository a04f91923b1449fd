// Rounding helpers the reference codecs (quant.cpp, quant_k.cpp) share with ggml, so that they
// write ggml's bytes.
#pragma once

#include <cstdint>
#include <cstring>

namespace ggml_lite {

// ggml's nearest_int: adding 1.5 * 2^23 leaves round(f) (ties to even, by the addition itself)
// in the low mantissa bits. Valid for |f| < 2^22, which every caller guarantees.
inline int nearest_int(float f) {
    const float v = f + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &v, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

// ggml's threshold below which a group counts as all zeros.
constexpr float kGroupMaxEps = 1e-15f;

}  // namespace ggml_lite
