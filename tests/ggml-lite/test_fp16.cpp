// Half and bfloat16 conversions: exact, round to nearest even, subnormals, inf and NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ggml-lite/fp16.h"

namespace ggml_lite {
namespace {

// An independent oracle for float -> half: the nearest of all finite halves, ties to the one
// with an even mantissa, values past the largest half's rounding boundary to infinity.
fp16_t nearest_half(float f) {
    static const std::vector<std::pair<double, fp16_t>> table = [] {
        std::vector<std::pair<double, fp16_t>> t;
        for (uint32_t h = 0; h < 0x7c00; h++)
            t.emplace_back(fp16_to_fp32(static_cast<fp16_t>(h)), h);
        return t;
    }();
    const double a = std::fabs(static_cast<double>(f));
    const fp16_t sign = std::signbit(f) ? 0x8000 : 0;
    if (a >= 65520.0) return sign | 0x7c00;
    auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(a, fp16_t{0}));
    if (hi->first == a) return sign | hi->second;
    auto lo = hi - 1;
    const double dlo = a - lo->first, dhi = hi->first - a;
    if (dlo < dhi) return sign | lo->second;
    if (dhi < dlo) return sign | hi->second;
    return sign | ((lo->second & 1) ? hi->second : lo->second);
}

TEST(Fp16, EveryHalfRoundTripsExactly) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float f = fp16_to_fp32(static_cast<fp16_t>(h));
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
            EXPECT_TRUE(std::isnan(f)) << h;
            EXPECT_EQ(fp32_to_fp16(f) & 0x7e00, 0x7e00) << "NaN stays a (quiet) NaN: " << h;
            continue;
        }
        EXPECT_EQ(fp32_to_fp16(f), h) << std::hex << h;
    }
}

TEST(Fp16, KnownValues) {
    EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
    EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
    EXPECT_FLOAT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_FLOAT_EQ(fp16_to_fp32(0x03ff), std::ldexp(1023.0f, -24));
    EXPECT_FLOAT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
}

TEST(Fp16, RoundsToNearestEven) {
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0);
    // 1 + 3*2^-11 lies halfway between 1+2^-10 (odd) and 1+2^-9 (even).
    EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    EXPECT_EQ(fp32_to_fp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
    EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);               // just below the boundary to infinity
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);               // the tie goes to infinity (even)
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);     // tie 1 vs 2 -> even
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1023.5f, -24)), 0x0400);  // carry into the normals
}

TEST(Fp16, MatchesOracleOnRandomFloats) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> bits;
    int checked = 0;
    while (checked < 200000) {
        // Exponents spread over the half range and a bit beyond, any mantissa.
        const uint32_t exp = 98 + bits(rng) % 48;  // 2^-29 .. 2^18
        const float f = bits_float((bits(rng) & 0x807fffff) | (exp << 23));
        ASSERT_EQ(fp32_to_fp16(f), nearest_half(f)) << f;
        checked++;
    }
}

TEST(Fp16, NaNAndInfinity) {
    EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(std::nanf("")))));
    EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7c00)));
    EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7c01)));
    EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
    EXPECT_EQ(fp32_to_fp16(-1e10f), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(1e-10f), 0x0000);
}

TEST(Bf16, ExactValuesAndRounding) {
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(fp32_to_bf16(-2.0f), 0xc000);
    EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
    // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even wins; 1 + 3*2^-8 rounds up to even.
    EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
    EXPECT_EQ(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
    EXPECT_EQ(fp32_to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3f81);
    EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::nanf("")))));
    // A NaN whose payload lives only in the low bits must not round to infinity.
    EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(bits_float(0x7f800001)))));
    EXPECT_EQ(fp32_to_bf16(bits_float(0x00010000)), 0x0001);  // subnormals pass through
}

TEST(Bf16, EveryBf16RoundTrips) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float f = bf16_to_fp32(static_cast<bf16_t>(h));
        if (std::isnan(f)) continue;
        EXPECT_EQ(fp32_to_bf16(f), h);
    }
}

}  // namespace
}  // namespace ggml_lite
