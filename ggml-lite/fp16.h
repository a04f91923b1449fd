// IEEE half and bfloat16 <-> float, scalar and exact (round to nearest even).
#pragma once

#include <cstdint>
#include <cstring>

namespace ggml_lite {

using fp16_t = uint16_t;
using bf16_t = uint16_t;

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

float fp16_to_fp32(fp16_t h);
fp16_t fp32_to_fp16(float f);

inline float bf16_to_fp32(bf16_t h) {
    return bits_float(static_cast<uint32_t>(h) << 16);
}

inline bf16_t fp32_to_bf16(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000) return static_cast<bf16_t>((u >> 16) | 64);  // quiet NaN
    u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
    return static_cast<bf16_t>(u >> 16);
}

}  // namespace ggml_lite
