// Reference codecs (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q8_1, IQ4_NL, and the k-quants Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K, Q8_K): ggml's exact bytes on hand-computed blocks and on a row checked against
// ggml itself, round-trip error bounds on random data, and the k-quants' error against the 32-block
// types'.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
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

// ---- k-quants --------------------------------------------------------------------------------

std::vector<float> gaussian(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    return v;
}

double rms_error(Type type, const std::vector<float>& x) {
    const auto n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> q(row_size(type, n));
    std::vector<float> y(x.size());
    traits(type).from_float(x.data(), q.data(), n);
    traits(type).to_float(q.data(), y.data(), n);
    double se = 0.0;
    for (size_t i = 0; i < x.size(); i++) se += (static_cast<double>(x[i]) - y[i]) * (x[i] - y[i]);
    return std::sqrt(se / static_cast<double>(n));
}

// Distance from v to the interval [lo, hi] (0 inside).
double outside(double v, double lo, double hi) {
    return v < lo ? lo - v : v > hi ? v - hi : 0.0;
}

// Every value of sub-block j is (l % 16) - 8: min -8, max 7, 15 steps of 1. The search finds
// scale 1 and min 8 exactly (no other spacing has less than zero error), so every sub-block's
// scale and min are the block's largest: 63 in 6 bits, all twelve packed bytes 0xff. d =
// 1/63 -> half 0x2410 (0.015869140625), dmin = 8/63 -> 0x3010 (0.126953125); levels x + 8.
TEST(Q4_K, KnownBlockWithMins) {
    float x[QK_K];
    for (int i = 0; i < QK_K; i++) x[i] = static_cast<float>(i % 32 % 16 - 8);
    block_q4_K b;
    quantize_row_q4_K_ref(x, &b, QK_K);
    EXPECT_EQ(b.d, 0x2410);
    EXPECT_EQ(b.dmin, 0x3010);
    for (uint8_t s : b.scales) EXPECT_EQ(s, 0xff);
    // Byte 32g + l: value 64g + l (low nibble) and 64g + 32 + l (high), both l % 16 + 0.
    for (int i = 0; i < QK_K / 2; i++) EXPECT_EQ(b.qs[i], (i % 16) * 0x11) << i;

    float y[QK_K];
    dequantize_row_q4_K(&b, y, QK_K);
    // 63 d = 0.999755859375 per level, 63 dmin = 7.998046875 off: within 0.004 of x.
    for (int i = 0; i < QK_K; i++) {
        EXPECT_EQ(y[i], 0.999755859375f * static_cast<float>(i % 16) - 7.998046875f) << i;
    }
}

// Sub-block j holds (j + 1) * ((l + j) % 16): min 0, scale j + 1 found exactly. Against the
// largest (8), 6-bit scales round(63 (j + 1) / 8) = 8, 16, 24, 32 (31.5: ties to even), 39,
// 47, 55, 63 and mins 0. Packed: bytes 0-3 the low 6 bits of scales 0-3 with the top 2 bits
// of scales 4-7 above (39, 47 -> 2; 55, 63 -> 3), bytes 4-7 the mins (0), bytes 8-11 the low
// nibbles of scales 4-7. d = 8/63 -> 0x3010; dmin = 0. Levels (l + j) % 16 again.
TEST(Q4_K, KnownBlockSixBitScales) {
    float x[QK_K];
    for (int j = 0; j < 8; j++) {
        for (int l = 0; l < 32; l++) x[32 * j + l] = static_cast<float>((j + 1) * ((l + j) % 16));
    }
    block_q4_K b;
    quantize_row_q4_K_ref(x, &b, QK_K);
    EXPECT_EQ(b.d, 0x3010);
    EXPECT_EQ(b.dmin, 0x0000);
    const uint8_t scales[K_SCALE_SIZE] = {0x88, 0x90, 0xd8, 0xe0, 0,    0,
                                          0,    0,    0x07, 0x0f, 0x07, 0x0f};
    for (int i = 0; i < K_SCALE_SIZE; i++) EXPECT_EQ(b.scales[i], scales[i]) << i;
    for (int g = 0; g < 4; g++) {
        for (int l = 0; l < 32; l++) {
            EXPECT_EQ(b.qs[32 * g + l], ((l + 2 * g) % 16) | (((l + 2 * g + 1) % 16) << 4))
                << g << ' ' << l;
        }
    }
    const int sc[8] = {8, 16, 24, 32, 39, 47, 55, 63};
    for (int j = 0; j < 8; j++) {
        uint8_t s, m;
        get_scale_min_k4(j, b.scales, &s, &m);
        EXPECT_EQ(s, sc[j]) << j;
        EXPECT_EQ(m, 0) << j;
    }
}

// The layout read back from a block written by hand from ggml's description: value 32j + l is
// d * sc_j * q - dmin * m_j with q the low (j even) or high (j odd) nibble of byte 32(j/2) + l.
TEST(Q4_K, DequantizeHandPackedBlock) {
    const int sc[8] = {1, 2, 3, 4, 20, 33, 47, 63}, m[8] = {0, 5, 10, 15, 16, 31, 48, 62};
    block_q4_K b{};
    b.d = 0x3c00;     // 1
    b.dmin = 0x3800;  // 0.5
    for (int j = 0; j < 4; j++) {
        b.scales[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
        b.scales[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
        b.scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0x0f) | (m[j + 4] & 0x0f) << 4);
    }
    for (int i = 0; i < QK_K / 2; i++) b.qs[i] = static_cast<uint8_t>((i * 7) % 256);
    float y[QK_K];
    dequantize_row_q4_K(&b, y, QK_K);
    for (int j = 0; j < 8; j++) {
        for (int l = 0; l < 32; l++) {
            const uint8_t byte = b.qs[32 * (j / 2) + l];
            const int q = j % 2 ? byte >> 4 : byte & 0x0f;
            EXPECT_EQ(y[32 * j + l],
                      static_cast<float>(sc[j] * q) - 0.5f * static_cast<float>(m[j]))
                << j << ' ' << l;
        }
    }
}

// Values i % 16 - 8 in every 16-value sub-block: the largest magnitude, -8, maps to -32
// (level 0), so scale 1/4 exactly; all sixteen equal, the first maps to -128: d = -1/512 ->
// half 0x9800, scales -128. Levels 4x + 32 = 4 (i % 16): the low nibbles 4 (i % 4), the high
// bits (i % 16) / 4. Decodes to x exactly.
TEST(Q6_K, KnownBlock) {
    float x[QK_K];
    for (int i = 0; i < QK_K; i++) x[i] = static_cast<float>(i % 16 - 8);
    block_q6_K b;
    quantize_row_q6_K_ref(x, &b, QK_K);
    EXPECT_EQ(b.d, 0x9800);
    for (int8_t s : b.scales) EXPECT_EQ(s, -128);
    for (int j = 0; j < QK_K / 2; j++) EXPECT_EQ(b.ql[j], 4 * (j % 4) * 0x11) << j;
    for (int l = 0; l < QK_K / 4; l++) EXPECT_EQ(b.qh[l], (l % 16) / 4 * 0x55) << l;
    float y[QK_K];
    dequantize_row_q6_K(&b, y, QK_K);
    for (int i = 0; i < QK_K; i++) EXPECT_EQ(y[i], x[i]) << i;
}

// The layout read back from a block written by hand from ggml's description: in half h,
// value 128h + r takes its low 4 bits from ql byte 64h + r % 64 (nibble r / 64) and its high 2
// bits from qh byte 32h + r % 32 (bits 2 (r / 32)); scale r / 16 of the half's 8.
TEST(Q6_K, DequantizeHandPackedBlock) {
    block_q6_K b{};
    b.d = 0x3800;  // 0.5
    for (int k = 0; k < 16; k++) b.scales[k] = static_cast<int8_t>(k % 2 ? -3 * k : 2 * k + 1);
    auto level = [](int e) { return (e * 37 + 11) % 64; };
    for (int e = 0; e < QK_K; e++) {
        const int h = e / 128, r = e % 128;
        b.ql[64 * h + r % 64] |= static_cast<uint8_t>((level(e) & 0x0f) << (4 * (r / 64)));
        b.qh[32 * h + r % 32] |= static_cast<uint8_t>((level(e) >> 4) << (2 * (r / 32)));
    }
    float y[QK_K];
    dequantize_row_q6_K(&b, y, QK_K);
    for (int e = 0; e < QK_K; e++) {
        EXPECT_EQ(y[e], 0.5f * static_cast<float>(b.scales[e / 16] * (level(e) - 32))) << e;
    }
}

// x = i - 128: the first value, -128, is the largest in magnitude, so iscale = -127 / -128 =
// 0.9921875 exactly and d = 128/127; q = round(0.9921875 x) with ties to even (ggml's
// nearest_int, unlike Q8_0's roundf): -63.5 -> -64, 63.5 -> 64.
TEST(Q8_K, KnownBlock) {
    float x[QK_K];
    for (int i = 0; i < QK_K; i++) x[i] = static_cast<float>(i - 128);
    block_q8_K b;
    quantize_row_q8_K_ref(x, &b, QK_K);
    EXPECT_EQ(b.d, 1.0f / 0.9921875f);
    EXPECT_EQ(b.qs[0], -127);
    EXPECT_EQ(b.qs[64], -64);
    EXPECT_EQ(b.qs[128], 0);
    EXPECT_EQ(b.qs[192], 64);
    EXPECT_EQ(b.qs[255], 126);
    for (int k = 0; k < QK_K / 16; k++) {
        int sum = 0;
        for (int l = 0; l < 16; l++) sum += b.qs[16 * k + l];
        EXPECT_EQ(b.bsums[k], sum) << k;
    }
    EXPECT_EQ(b.bsums[0], -1912);

    // Scale 1 (max -127): ties round to even.
    float t[QK_K] = {-127.0f, 2.5f, 3.5f, -0.5f, 0.5f, -2.5f};
    quantize_row_q8_K_ref(t, &b, QK_K);
    EXPECT_EQ(b.d, 1.0f);
    const int8_t want[6] = {-127, 2, 4, 0, 0, -2};
    for (int i = 0; i < 6; i++) EXPECT_EQ(b.qs[i], want[i]) << i;
}

TEST(KQuants, ZeroBlocks) {
    const float x[QK_K] = {};
    block_q4_K a;
    quantize_row_q4_K_ref(x, &a, QK_K);
    EXPECT_EQ(a.d, 0);
    EXPECT_EQ(a.dmin, 0);
    block_q6_K b;
    quantize_row_q6_K_ref(x, &b, QK_K);
    EXPECT_EQ(b.d, 0);
    block_q8_K c;
    quantize_row_q8_K_ref(x, &c, QK_K);
    EXPECT_EQ(c.d, 0.0f);
    float y[QK_K];
    dequantize_row_q4_K(&a, y, QK_K);
    for (float v : y) EXPECT_EQ(v, 0.0f);
    dequantize_row_q6_K(&b, y, QK_K);
    for (float v : y) EXPECT_EQ(v, 0.0f);
    block_q2_K e;
    quantize_row_q2_K_ref(x, &e, QK_K);
    EXPECT_EQ(e.d, 0);
    EXPECT_EQ(e.dmin, 0);
    dequantize_row_q2_K(&e, y, QK_K);
    for (float v : y) EXPECT_EQ(v, 0.0f);
    block_q3_K f;
    quantize_row_q3_K_ref(x, &f, QK_K);
    EXPECT_EQ(f.d, 0);
    dequantize_row_q3_K(&f, y, QK_K);
    for (float v : y) EXPECT_EQ(v, 0.0f);
}

// A row every platform computes alike (integer LCG, exact float steps): roughly Gaussian with
// an outlier every 61 values.
std::vector<float> golden_row(int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    uint32_t s = 12345;
    auto u = [&s] {
        s = s * 1664525u + 1013904223u;
        return static_cast<float>(s >> 8) * 0x1p-24f;
    };
    for (int64_t i = 0; i < n; i++) {
        float v = (u() + u() + u() + u() - 2.0f) * 0.05f;
        if (i % 61 == 7) v *= 16.0f;
        x[i] = v;
    }
    return x;
}

uint64_t fnv1a(const void* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= static_cast<const uint8_t*>(p)[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

// The hashes of what ggml itself (libggml-base of llama.cpp, called on the same row) writes:
// the quantizers produce ggml's bytes, search decisions included. (The same comparison on
// 12,800 blocks of assorted distributions found no difference.)
TEST(KQuants, GgmlBytes) {
    const int64_t nb = 16, n = nb * QK_K;
    const std::vector<float> x = golden_row(n);
    std::vector<block_q4_K> a(nb);
    std::vector<block_q6_K> b(nb);
    std::vector<block_q8_K> c(nb);
    quantize_row_q4_K_ref(x.data(), a.data(), n);
    quantize_row_q6_K_ref(x.data(), b.data(), n);
    quantize_row_q8_K_ref(x.data(), c.data(), n);
    EXPECT_EQ(fnv1a(a.data(), nb * sizeof(block_q4_K)), 0x71237801b3232ca5ull);
    EXPECT_EQ(fnv1a(b.data(), nb * sizeof(block_q6_K)), 0x172b8ac4ffbc42d6ull);
    EXPECT_EQ(fnv1a(c.data(), nb * sizeof(block_q8_K)), 0xc4f06952c694ab3cull);
}

// The same for the other types, from ggml-quants.c of llama.cpp (ggml/src at the checkout the
// issue #15 work used) compiled on its own with -ffp-contract=off and called on golden_row:
// quantize_row_{q4_1,q5_0,q5_1,q8_1,q5_K}_ref, and quantize_iq4_nl / quantize_iq4_xs
// (x, y, 1, n, NULL), which is what llama-quantize calls without an importance matrix. That harness
// gave Q4_K's hash above too. (Compared block by block on 16,000 32-blocks / 2,000 super-blocks of
// five distributions: no difference, and dequantize_row_* gave the same floats.)
template <class Block>
uint64_t hash_of(void (*quantize)(const float*, Block*, int64_t), int64_t block_values) {
    const int64_t n = 16 * QK_K;
    const std::vector<float> x = golden_row(n);
    std::vector<Block> q(static_cast<size_t>(n / block_values));
    quantize(x.data(), q.data(), n);
    return fnv1a(q.data(), q.size() * sizeof(Block));
}

TEST(Quants, GgmlBytes) {
    EXPECT_EQ(hash_of(quantize_row_q4_1_ref, QK4_1), 0x77e443a5f567fc6bull);
    EXPECT_EQ(hash_of(quantize_row_q5_0_ref, QK5_0), 0x14422551712b7375ull);
    EXPECT_EQ(hash_of(quantize_row_q5_1_ref, QK5_1), 0x30ac5d77a3ddcdd5ull);
    EXPECT_EQ(hash_of(quantize_row_q8_1_ref, QK8_1), 0xce099ba3b8afdb20ull);
    EXPECT_EQ(hash_of(quantize_row_q5_K_ref, QK_K), 0x66f267e3d7eb9070ull);
    EXPECT_EQ(hash_of(quantize_row_iq4_nl, QK4_NL), 0x71c73280a94425c6ull);
    EXPECT_EQ(hash_of(quantize_row_iq4_xs, QK_K), 0x79a814462055cafdull);
}

// Q2_K's and Q3_K's from llama.cpp's own build: libggml-base.so's quantize_row_q2_K_ref and
// quantize_row_q3_K_ref (what quantize_q2_K / quantize_q3_K, and so llama-quantize, call without an
// importance matrix) on golden_row, after a ggml_init() (which fills the fp16 table ggml's
// GGML_FP16_TO_FP32 reads). The same harness gave Q4_K's hash above. (Compared on 2,000
// super-blocks of five distributions with an all-zero super-block and sub-block: the same bytes,
// and dequantize_row_q2_K / q3_K gave the same floats.)
TEST(Quants, GgmlBytesQ2_KQ3_K) {
    EXPECT_EQ(hash_of(quantize_row_q2_K_ref, QK_K), 0x9bca7fef0c902a46ull);
    EXPECT_EQ(hash_of(quantize_row_q3_K_ref, QK_K), 0x9cd2bacbaf50f17cull);
}

// ggml writes an all-zero IQ4_XS super-block with d = -0 (-max_scale / 32), scales 0 (stored
// 32) and the levels nearest 0.
TEST(IQ4_XS, ZeroBlock) {
    const float x[QK_K] = {};
    block_iq4_xs q;
    quantize_row_iq4_xs(x, &q, QK_K);
    EXPECT_EQ(q.d, 0x8000);
    for (int ib = 0; ib < QK_K / 32; ib++) EXPECT_EQ(iq4_xs_scale(q, ib), 0);
    for (uint8_t b : q.qs) EXPECT_EQ(b, 0x88);
}

// ggml writes an all-zero IQ4_NL block as d = 0 with every level the one nearest 0 (index 8).
TEST(IQ4_NL, ZeroBlock) {
    const float x[QK4_NL] = {};
    block_iq4_nl q;
    quantize_row_iq4_nl(x, &q, QK4_NL);
    EXPECT_EQ(q.d, 0);
    for (uint8_t b : q.qs) EXPECT_EQ(b, 0x88);
    float y[QK4_NL];
    dequantize_row_iq4_nl(&q, y, QK4_NL);
    for (float v : y) EXPECT_EQ(v, 0.0f);
}

// Q4_1 and Q5_1 levels are the nearest of [min, max] split in 15 or 31 steps: within half a
// step, plus what storing d and the min in fp16 moves (2^-11 relative each, d times up to the
// top level).
template <class Block, int Top>
void expect_min_type_round_trip(void (*quantize)(const float*, Block*, int64_t),
                                void (*dequantize)(const Block*, float*, int64_t)) {
    const int64_t nb = 256, n = nb * 32;
    const std::vector<float> x = test::random_floats(n, 11, -2.0f, 3.0f);
    std::vector<Block> q(nb);
    std::vector<float> y(n);
    quantize(x.data(), q.data(), n);
    dequantize(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        const double d = fp16_to_fp32(q[b].d), m = std::fabs(fp16_to_fp32(q[b].m));
        ASSERT_GT(d, 0.0);
        for (int j = 0; j < 32; j++) {
            const int64_t i = 32 * b + j;
            const double bound = d / 2 + (Top * d + m) * 0x1p-11 + 1e-6;
            EXPECT_LE(std::fabs(x[i] - y[i]), bound) << b << ' ' << j;
        }
    }
}

TEST(Q4_1, RoundTripWithinHalfAStep) {
    expect_min_type_round_trip<block_q4_1, 15>(quantize_row_q4_1_ref, dequantize_row_q4_1);
}

TEST(Q5_1, RoundTripWithinHalfAStep) {
    expect_min_type_round_trip<block_q5_1, 31>(quantize_row_q5_1_ref, dequantize_row_q5_1);
}

// Q5_0 as Q4_0: the value of largest magnitude is level -16 exactly; the others round to the
// nearest level, except that +16 clamps to 15 (a whole step at most).
TEST(Q5_0, RoundTripErrorBounds) {
    const int64_t nb = 256, n = nb * QK5_0;
    const std::vector<float> x = test::random_floats(n, 12, -2.0f, 3.0f);
    std::vector<block_q5_0> q(nb);
    std::vector<float> y(n);
    quantize_row_q5_0_ref(x.data(), q.data(), n);
    dequantize_row_q5_0(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        const double d = std::fabs(fp16_to_fp32(q[b].d));
        ASSERT_GT(d, 0.0);
        for (int j = 0; j < QK5_0; j++) {
            const int64_t i = QK5_0 * b + j;
            const double level = std::fabs(x[i]) / d;
            const double step = level > 15.5 ? 1.0 : 0.5;
            EXPECT_LE(std::fabs(x[i] - y[i]), step * d + 16 * d * 0x1p-11 + 1e-6) << b << ' ' << j;
        }
    }
}

// Each IQ4_NL value decodes to the table level nearest x / d for the scale as stored (up to the
// fp16 rounding of d, which may move a value across a midpoint: then the other neighbour).
TEST(IQ4_NL, RoundTripNearestLevel) {
    const int64_t nb = 256, n = nb * QK4_NL;
    const std::vector<float> x = test::random_floats(n, 13, -2.0f, 3.0f);
    std::vector<block_iq4_nl> q(nb);
    std::vector<float> y(n);
    quantize_row_iq4_nl(x.data(), q.data(), n);
    dequantize_row_iq4_nl(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        const double d = fp16_to_fp32(q[b].d);
        ASSERT_NE(d, 0.0);
        for (int j = 0; j < QK4_NL; j++) {
            const int64_t i = QK4_NL * b + j;
            double best = INFINITY;
            for (int8_t v : kvalues_iq4nl) best = std::min(best, std::fabs(x[i] - d * v));
            EXPECT_LE(std::fabs(x[i] - y[i]), best + 128 * std::fabs(d) * 0x1p-10 + 1e-6)
                << b << ' ' << j;
        }
    }
}

// Each value decodes to its nearest level of the scales as stored: within half a step of x
// inside the sub-block's range of levels [0, top], and at the nearer end outside it (the scale
// search may give up the extremes of a sub-block for a better fit of the rest).
template <class Block>
void expect_nearest_k_min_level(void (*quantize)(const float*, Block*, int64_t),
                                void (*dequantize)(const Block*, float*, int64_t), int top,
                                uint64_t seed) {
    const int64_t nb = 64, n = nb * QK_K;
    const std::vector<float> x = test::random_floats(n, seed, -2.0f, 3.0f);
    std::vector<Block> q(nb);
    std::vector<float> y(n);
    quantize(x.data(), q.data(), n);
    dequantize(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        for (int j = 0; j < 8; j++) {
            uint8_t sc, m;
            get_scale_min_k4(j, q[b].scales, &sc, &m);
            const double d = fp16_to_fp32(q[b].d) * sc, dm = fp16_to_fp32(q[b].dmin) * m;
            ASSERT_GT(d, 0.0);
            for (int l = 0; l < 32; l++) {
                const int64_t i = b * QK_K + 32 * j + l;
                const double bound = d / 2 + outside(x[i], -dm, top * d - dm) + 1e-6;
                EXPECT_LE(std::fabs(x[i] - y[i]), bound) << b << ' ' << j << ' ' << l;
            }
        }
    }
}

TEST(Q4_K, RoundTripNearestLevel) {
    expect_nearest_k_min_level<block_q4_K>(quantize_row_q4_K_ref, dequantize_row_q4_K, 15, 5);
}

TEST(Q5_K, RoundTripNearestLevel) {
    expect_nearest_k_min_level<block_q5_K>(quantize_row_q5_K_ref, dequantize_row_q5_K, 31, 6);
}

// Q2_K as Q4_K, with 16 sub-blocks of 16 values, 4-bit scales and mins, and levels [0, 3].
TEST(Q2_K, RoundTripNearestLevel) {
    const int64_t nb = 64, n = nb * QK_K;
    const std::vector<float> x = test::random_floats(n, 7, -2.0f, 3.0f);
    std::vector<block_q2_K> q(nb);
    std::vector<float> y(n);
    quantize_row_q2_K_ref(x.data(), q.data(), n);
    dequantize_row_q2_K(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        for (int k = 0; k < 16; k++) {
            const double d = fp16_to_fp32(q[b].d) * (q[b].scales[k] & 0x0f);
            const double dm = fp16_to_fp32(q[b].dmin) * (q[b].scales[k] >> 4);
            ASSERT_GT(d, 0.0);
            for (int l = 0; l < 16; l++) {
                const int64_t i = b * QK_K + 16 * k + l;
                const double bound = d / 2 + outside(x[i], -dm, 3 * d - dm) + 1e-6;
                EXPECT_LE(std::fabs(x[i] - y[i]), bound) << b << ' ' << k << ' ' << l;
            }
        }
    }
}

// Q3_K as Q6_K: levels -4..3 times a signed 6-bit scale of 16 values.
TEST(Q3_K, RoundTripNearestLevel) {
    const int64_t nb = 64, n = nb * QK_K;
    const std::vector<float> x = test::random_floats(n, 8, -2.0f, 3.0f);
    std::vector<block_q3_K> q(nb);
    std::vector<float> y(n);
    quantize_row_q3_K_ref(x.data(), q.data(), n);
    dequantize_row_q3_K(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        for (int k = 0; k < 16; k++) {
            const double signed_d = fp16_to_fp32(q[b].d) * q3_K_scale(q[b], k);
            const double d = std::fabs(signed_d);
            ASSERT_GT(d, 0.0);
            for (int l = 0; l < 16; l++) {
                const int64_t i = b * QK_K + 16 * k + l;
                // [-4 d, 3 d] for a positive scale, its mirror image for a negative one.
                const double lo = signed_d > 0 ? -4 * d : -3 * d;
                const double bound = d / 2 + outside(x[i], lo, lo + 7 * d) + 1e-6;
                EXPECT_LE(std::fabs(x[i] - y[i]), bound) << b << ' ' << k << ' ' << l;
            }
        }
    }
}

TEST(Q6_K, RoundTripNearestLevel) {
    const int64_t nb = 64, n = nb * QK_K;
    const std::vector<float> x = test::random_floats(n, 6, -2.0f, 3.0f);
    std::vector<block_q6_K> q(nb);
    std::vector<float> y(n);
    quantize_row_q6_K_ref(x.data(), q.data(), n);
    dequantize_row_q6_K(q.data(), y.data(), n);
    for (int64_t b = 0; b < nb; b++) {
        for (int k = 0; k < 16; k++) {
            const double d = std::fabs(fp16_to_fp32(q[b].d) * q[b].scales[k]);
            ASSERT_GT(d, 0.0);
            for (int l = 0; l < 16; l++) {
                const int64_t i = b * QK_K + 16 * k + l;
                // Levels -32..31 times a signed scale: [-32 d, 31 d] or its mirror image.
                const double lo = q[b].scales[k] * fp16_to_fp32(q[b].d) > 0 ? -32 * d : -31 * d;
                const double bound = d / 2 + outside(x[i], lo, lo + 63 * d) + 1e-6;
                EXPECT_LE(std::fabs(x[i] - y[i]), bound) << b << ' ' << k << ' ' << l;
            }
        }
    }
}

// Error on Gaussian data (sigma 1, 65536 values), which is what ggml gets since the bytes are
// ggml's. Measured: Q8_0 0.0054, Q6_K 0.0177, Q4_K 0.0714, Q4_0 0.0861: Q4_K's scales and mins
// per 32 values, searched, beat Q4_0's max-based scale at the same 4.5 bits per value (0.83x);
// Q6_K at 6.56 bits is 3.3x Q8_0's error at 8.5 bits; Q3_K (3.44 bits) 0.1509 and Q2_K (2.63
// bits) 0.2975, each about twice the error of the type a bit above.
TEST(KQuants, GaussianRmsError) {
    const std::vector<float> x = gaussian(256 * QK_K, 3);
    const double q8_0 = rms_error(Type::Q8_0, x), q4_0 = rms_error(Type::Q4_0, x);
    const double q4_k = rms_error(Type::Q4_K, x), q6_k = rms_error(Type::Q6_K, x);
    const double q5_k = rms_error(Type::Q5_K, x), q5_0 = rms_error(Type::Q5_0, x);
    const double q4_1 = rms_error(Type::Q4_1, x), q5_1 = rms_error(Type::Q5_1, x);
    const double iq4_nl = rms_error(Type::IQ4_NL, x), iq4_xs = rms_error(Type::IQ4_XS, x);
    const double q3_k = rms_error(Type::Q3_K, x), q2_k = rms_error(Type::Q2_K, x);
    std::printf(
        "rms error: q8_0 %.5f q6_k %.5f q5_k %.5f q5_1 %.5f q5_0 %.5f q4_k %.5f "
        "iq4_nl %.5f iq4_xs %.5f q4_1 %.5f q4_0 %.5f q3_k %.5f q2_k %.5f\n",
        q8_0, q6_k, q5_k, q5_1, q5_0, q4_k, iq4_nl, iq4_xs, q4_1, q4_0, q3_k, q2_k);
    // One bit more halves the error, roughly; the non-linear table beats the even grid.
    EXPECT_LT(q5_k, 0.6 * q4_k);
    EXPECT_LT(q5_0, 0.6 * q4_0);
    EXPECT_LT(q5_1, 0.6 * q4_1);
    EXPECT_LT(iq4_nl, q4_0);
    EXPECT_LT(iq4_xs, q4_0);  // fewer bits than Q4_0, the table and the sub-block scales
    EXPECT_NEAR(q4_k, 0.0714, 0.003);
    EXPECT_NEAR(q6_k, 0.0177, 0.001);
    EXPECT_LT(q4_k, 0.87 * q4_0);
    EXPECT_LT(q6_k, 3.6 * q8_0);
    EXPECT_GT(q6_k, 2.5 * q8_0);  // 2 bits fewer than Q8_0: not a float copy
    EXPECT_NEAR(q3_k, 0.1509, 0.005);
    EXPECT_NEAR(q2_k, 0.2975, 0.01);
    EXPECT_LT(q4_k, 0.6 * q3_k);
    EXPECT_LT(q3_k, 0.6 * q2_k);
}

}  // namespace
}  // namespace ggml_lite
