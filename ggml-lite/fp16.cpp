// Exact IEEE half <-> float conversions, written out bit by bit so every compiler and CPU
// gives the same answer (round to nearest even, subnormals, inf and NaN kept).
#include "fp16.h"

namespace ggml_lite {

float fp16_to_fp32(fp16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in float.
        const float mag = static_cast<float>(mant) * bits_float(0x33800000);  // 2^-24
        return bits_float(sign | float_bits(mag));
    }
    if (exp == 31) return bits_float(sign | 0x7f800000 | (mant << 13));  // inf or NaN
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

fp16_t fp32_to_fp16(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t mag = x & 0x7fffffff;

    if (mag > 0x7f800000) {  // NaN: keep the top payload bits, force quiet so it stays a NaN
        return static_cast<fp16_t>(sign | 0x7e00 | ((mag >> 13) & 0x3ff));
    }
    if (mag >= 0x477ff000) return static_cast<fp16_t>(sign | 0x7c00);  // >= 65520 rounds to inf

    if (mag < 0x38800000) {  // below 2^-14: the result is a half subnormal (or zero)
        const uint32_t e = mag >> 23;
        if (e < 102) return static_cast<fp16_t>(sign);  // below 2^-25: rounds to zero
        // value = m * 2^(e-150) = (m >> shift) * 2^-24 plus the bits shifted out.
        const uint32_t m = (mag & 0x7fffff) | 0x800000;
        const uint32_t shift = 126 - e;  // 14..24
        uint32_t h = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1))) h++;  // may carry into the smallest normal
        return static_cast<fp16_t>(sign | h);
    }

    // Normal: rebias the exponent, drop 13 mantissa bits with round to nearest even. A carry
    // out of the mantissa correctly bumps the exponent.
    uint32_t h = (mag - (112u << 23)) >> 13;
    const uint32_t rest = mag & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return static_cast<fp16_t>(sign | h);
}

}  // namespace ggml_lite
