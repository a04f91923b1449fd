// Q8_0 / Q4_0 reference codecs: ggml's exact bytes on hand-computed blocks, and round-trip
// error bounds on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ggml-lite/quant.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

TEST(Q8_0, KnownBlockRoundsHalfAwayFromZero) {
    // amax = 127 gives d = 1 exactly, so q = round(x) and ties show ggml's roundf (away from
    // zero), not the round-to-even of SIMD rounding instructions.
    float x[QK8_0] = {127.0f, 2.5f, 0.5f, -1.5f, -2.5f, -0.5f, 1.49f, -126.6f};
    block_q8_0 b;
    quantize_row_q8_0_ref(x, &b, QK8_0);
    EXPECT_EQ(b.d, 0x3c00);  // 1.0 in half precision
    const int8_t expected[8] = {127, 3, 1, -2, -3, -1, 1, -127};
    for (int j = 0; j < 8; j++) EXPECT_EQ(b.qs[j], expected[j]) << j;
    for (int j = 8; j < QK8_0; j++) EXPECT_EQ(b.qs[j], 0) << j;
}

TEST(Q8_0, KnownRamp) {
    // x = j - 16: amax 16, d = 16/127 = 0.125984 -> half 0x3008 (2^-3 * (1 + 8/1024)),
    // 1/d = 7.9375 exactly, q = round((j - 16) * 7.9375).
    float x[QK8_0];
    for (int j = 0; j < QK8_0; j++) x[j] = static_cast<float>(j - 16);
    block_q8_0 b;
    quantize_row_q8_0_ref(x, &b, QK8_0);
    EXPECT_EQ(b.d, 0x3008);
    EXPECT_EQ(b.qs[0], -127);
    EXPECT_EQ(b.qs[1], -119);  // -119.0625
    EXPECT_EQ(b.qs[8], -64);   // -63.5, a tie
    EXPECT_EQ(b.qs[15], -8);   // -7.9375
    EXPECT_EQ(b.qs[16], 0);
    EXPECT_EQ(b.qs[20], 32);   // 31.75
    EXPECT_EQ(b.qs[31], 119);  // 119.0625
}

TEST(Q8_0, ZeroBlock) {
    float x[QK8_0] = {};
    block_q8_0 b;
    quantize_row_q8_0_ref(x, &b, QK8_0);
    EXPECT_EQ(b.d, 0);
    for (int8_t q : b.qs) EXPECT_EQ(q, 0);
}

TEST(Q8_0, RoundTripWithinHalfAStep) {
    const int64_t n = 64 * QK8_0;
    const std::vector<float> x = test::random_floats(n, 1, -3.0f, 3.0f);
    std::vector<block_q8_0> q(n / QK8_0);
    std::vector<float> y(n);
    quantize_row_q8_0_ref(x.data(), q.data(), n);
    dequantize_row_q8_0(q.data(), y.data(), n);
    for (int64_t b = 0; b < n / QK8_0; b++) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) amax = std::max(amax, std::fabs(x[b * QK8_0 + j]));
        // Rounding to the step d costs at most d/2; the stored scale is d rounded to half
        // precision, which moves each of up to 127 steps by |d - d16|.
        const float d = amax / 127.0f;
        const float d16 = fp16_to_fp32(q[b].d);
        const float bound = d / 2 + 127 * std::fabs(d - d16) + 1e-7f;
        for (int j = 0; j < QK8_0; j++) {
            EXPECT_LE(std::fabs(x[b * QK8_0 + j] - y[b * QK8_0 + j]), bound) << b << ' ' << j;
        }
    }
}

TEST(Q4_0, KnownRampUsesFullRange) {
    // x = (j % 16) - 8: the first -8 is the max magnitude, d = -8 / -8 = 1, q = x + 8 = j % 16,
    // so byte j holds j in both nibbles (element j low, element j + 16 high).
    float x[QK4_0];
    for (int j = 0; j < QK4_0; j++) x[j] = static_cast<float>(j % 16 - 8);
    block_q4_0 b;
    quantize_row_q4_0_ref(x, &b, QK4_0);
    EXPECT_EQ(b.d, 0x3c00);
    for (int j = 0; j < QK4_0 / 2; j++) EXPECT_EQ(b.qs[j], j | (j << 4)) << j;
}

TEST(Q4_0, KnownBlockPositiveMaxClampsAt15) {
    // Max magnitude +4: d = 4 / -8 = -0.5 (half 0xb800), 1/d = -2, q = min(15, trunc(-2x + 8.5)).
    float x[QK4_0] = {};
    x[0] = 4.0f;    // -8 + 8.5 -> 0
    x[1] = -2.0f;   // 4 + 8.5 -> 12
    x[2] = -4.0f;   // 8 + 8.5 = 16.5 -> 16 -> clamped to 15
    x[16] = 2.1f;   // -4.2 + 8.5 = 4.3 -> 4
    x[17] = -2.2f;  // 4.4 + 8.5 = 12.9 -> 12
    block_q4_0 b;
    quantize_row_q4_0_ref(x, &b, QK4_0);
    EXPECT_EQ(b.d, 0xb800);
    EXPECT_EQ(b.qs[0], 0x40);
    EXPECT_EQ(b.qs[1], 0xcc);
    EXPECT_EQ(b.qs[2], 0x8f);
    for (int j = 3; j < QK4_0 / 2; j++) EXPECT_EQ(b.qs[j], 0x88) << j;  // zeros -> q = 8

    float y[QK4_0];
    dequantize_row_q4_0(&b, y, QK4_0);
    EXPECT_EQ(y[0], 4.0f);
    EXPECT_EQ(y[1], -2.0f);
    EXPECT_EQ(y[2], -3.5f);  // the clamped one
    EXPECT_EQ(y[16], 2.0f);
    EXPECT_EQ(y[17], -2.0f);
    EXPECT_EQ(y[3], 0.0f);
}

TEST(Q4_0, RoundTripErrorBounds) {
    const int64_t n = 256 * QK4_0;
    const std::vector<float> x = test::random_floats(n, 2);
    std::vector<block_q4_0> q(n / QK4_0);
    std::vector<float> y(n);
    quantize_row_q4_0_ref(x.data(), q.data(), n);
    dequantize_row_q4_0(q.data(), y.data(), n);
    double se = 0.0;
    for (int64_t b = 0; b < n / QK4_0; b++) {
        const float d = std::fabs(fp16_to_fp32(q[b].d));
        for (int j = 0; j < QK4_0; j++) {
            const float e = std::fabs(x[b * QK4_0 + j] - y[b * QK4_0 + j]);
            // Nearest of 16 levels: d/2, except that +8 steps (opposite the max) clamps to
            // +7, one step; plus the half-precision scale's rounding over 8 steps.
            EXPECT_LE(e, d * (1.0f + 8 * 0x1p-11f) + 1e-7f) << b << ' ' << j;
            se += static_cast<double>(e) * e;
        }
    }
    // Uniform data on [-1, 1] gives d ~ 1/8 and a uniform rounding error of RMS d/sqrt(12)
    // ~ 0.036; 0.04 leaves room for the clamped values and blocks with a smaller max.
    const double rms = std::sqrt(se / static_cast<double>(n));
    EXPECT_LT(rms, 0.040);
    EXPECT_GT(rms, 0.025);  // a codec that stored the floats would not be Q4_0
}

TEST(Q4_0, ZeroBlock) {
    float x[QK4_0] = {};
    block_q4_0 b;
    quantize_row_q4_0_ref(x, &b, QK4_0);
    EXPECT_EQ(b.d, 0x8000);  // 0 / -8 = -0.0, as ggml writes it
    for (uint8_t q : b.qs) EXPECT_EQ(q, 0x88);
}

}  // namespace
}  // namespace ggml_lite
