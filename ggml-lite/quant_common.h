// Helpers the reference codecs (quant.cpp, quant_k.cpp) share, each as ggml computes it, so that
// they write ggml's bytes.
#pragma once

#include <cmath>
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

// The value of largest magnitude, with its sign (the first of equals, as ggml; NaNs skipped).
inline float signed_absmax(const float* x, int n) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

}  // namespace ggml_lite
