// The BF16 dot path (packed.h): the tables whose BF16 packed kernels round the activations to
// bfloat16 (the avx512_bf16 and amx tables) against the scalar twins. The conversion gives their
// bits (the amx table's in its chunked order); the gemm, whose vdpbf16ps or tdpbf16ps rounds
// inside a pair in its own order, agrees within the bound of two float summation orders of the
// same exact products, and with itself for every tiling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "ggml-lite/fp16.h"
#include "ggml-lite/packed.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

// The tables whose BF16 packed kernels convert the activations: the BF16 dot path. The others
// read floats and owe the scalar packed kernel its bits (test_packed.cpp).
std::vector<const Kernels*> dot_tables() {
    std::vector<const Kernels*> out;
    for (const Kernels* k : test::simd_tables()) {
        if (k->packed_of(Type::BF16).quantize) out.push_back(k);
    }
    return out;
}

// On a CPU with AVX512_BF16 the avx512_bf16 table exists and is the BF16 dot path.
TEST(PackedBf16, TableIsTheDotPath) {
    const Kernels* k = kernels_for(Isa::Avx512Bf16);
    if (!k) GTEST_SKIP() << "avx512_bf16: " << isa_unsupported_reason(Isa::Avx512Bf16);
    EXPECT_NE(k->packed_of(Type::BF16).quantize, nullptr);
    EXPECT_NE(k->packed_of(Type::BF16).gemm, kernels_for(Isa::Avx512)->packed_of(Type::BF16).gemm);
    // Every other type is the AVX-512 table's.
    for (Type t : all_types()) {
        if (t == Type::BF16) continue;
        EXPECT_EQ(std::memcmp(&k->of(t), &kernels_for(Isa::Avx512)->of(t), sizeof(TypeKernels)), 0);
        EXPECT_EQ(std::memcmp(&k->packed_of(t), &kernels_for(Isa::Avx512)->packed_of(t),
                              sizeof(PackedKernels)),
                  0)
            << type_name(t);
    }
}

float from_bits(uint32_t u) {
    return bits_float(u);
}

// The scalar twin is ggml's round to nearest even (fp32_to_bf16) except on subnormals, which
// become zeros of their sign; an odd row gets one zero after its last value.
TEST(PackedBf16, ReferenceActivations) {
    const float x[] = {1.0f,
                       from_bits(0x3f808000),   // a tie, even below: stays 0x3f80
                       from_bits(0x3f818000),   // a tie, odd below: up to 0x3f82
                       from_bits(0x3f808001),   // just above a tie: up
                       from_bits(0x00400000),   // subnormal: +0
                       from_bits(0x80000001),   // subnormal: -0
                       from_bits(0x00800000)};  // smallest normal: kept
    std::vector<bf16_t> y(8, 0xffff);
    bf16_activations_ref(x, y.data(), 7);
    const std::vector<bf16_t> want = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x0000, 0x8000, 0x0080, 0};
    EXPECT_EQ(y, want);
    const auto r = test::random_floats(1000, 3, -100.0f, 100.0f);
    std::vector<bf16_t> z(1000);
    bf16_activations_ref(r.data(), z.data(), 1000);
    for (int i = 0; i < 1000; i++) EXPECT_EQ(z[i], fp32_to_bf16(r[i])) << i;
}

// A table's scalar twin of its activations: the amx table's in chunks (packed.h).
void reference_activations(const Kernels& k, const float* x, void* y, int64_t n) {
    if (k.isa == Isa::Amx) {
        bf16_chunked_activations_ref(x, y, n);
    } else {
        bf16_activations_ref(x, y, n);
    }
}

// The chunked order is bf16_activations_ref's values with each whole chunk's pairs even first.
TEST(PackedBf16, ChunkedActivationsAreTheValuesReordered) {
    for (int64_t n : {1, 63, 64, 65, 128, 200}) {
        const auto x = test::random_floats(n, 5, -4.0f, 4.0f);
        std::vector<bf16_t> plain(n + 1), chunked(n + 1);
        bf16_activations_ref(x.data(), plain.data(), n);
        bf16_chunked_activations_ref(x.data(), chunked.data(), n);
        const auto* p = reinterpret_cast<const uint32_t*>(plain.data());
        const auto* c = reinterpret_cast<const uint32_t*>(chunked.data());
        for (int64_t pair = 0; pair < (n + 1) / 2; pair++) {
            const int64_t chunk = pair / 32, in = pair % 32;
            const int64_t at = pair < n / 64 * 32 ? chunk * 32 + in % 2 * 16 + in / 2 : pair;
            EXPECT_EQ(c[at], p[pair]) << "n=" << n << " pair " << pair;
        }
    }
}

// Every length (the masked tail, odd rows' padding) and the special values: the scalar twin's
// bits, and nothing written past the padded row.
TEST(PackedBf16, ActivationsMatchScalarBitForBit) {
    const auto tables = dot_tables();
    if (tables.empty()) GTEST_SKIP() << "no BF16 dot path on this CPU";
    auto x = test::random_floats(2048, 7, -4.0f, 4.0f);
    const uint32_t specials[] = {0x7f800000, 0xff800000, 0x7fc00000, 0xffa00001, 0x7f7fffff,
                                 0x00000001, 0x807fffff, 0x80000000, 0x3f808000, 0x3f818000,
                                 0x00800000, 0x0080ffff, 0x477fff80};
    for (size_t i = 0; i < std::size(specials); i++) x[3 * i + 1] = from_bits(specials[i]);
    for (const Kernels* k : tables) {
        for (int64_t n = 1; n <= 2048; n = n < 80 ? n + 1 : n * 2 + 3) {
            const int64_t m = std::min<int64_t>(n, 2048);
            const size_t words = m + m % 2;
            std::vector<bf16_t> want(words + 40, 0x5555), got(words + 40, 0x5555);
            reference_activations(*k, x.data(), want.data(), m);
            k->packed_of(Type::BF16).quantize(x.data(), got.data(), m);
            ASSERT_EQ(got, want) << isa_name(k->isa) << " n=" << m;
        }
    }
}

// The float rounding error bound of a sum of products that are exact in float (bf16 * bf16):
// each sum, added in any order through at most d additions, is within gamma_d * sum |w_i x_i| of
// the exact one, gamma_d = d u / (1 - d u), u = 2^-24 (Higham, Accuracy and Stability, 4.2). A
// product passes at most n / 2 + 1 additions in the reference (its partial's chain of n / 4 + 1
// pairs, two additions each, then p0 + p1) and no more in a kernel of the same partials, however
// vdpbf16ps or tdpbf16ps orders a pair, so two results differ by at most 2 gamma_d sum |w_i x_i|.
double bound(int64_t n, double abs_sum) {
    const double u = std::ldexp(1.0, -24), d = static_cast<double>(n / 2 + 4);
    return 2 * d * u / (1 - d * u) * abs_sum;
}

struct Case {
    int64_t cols;
    std::vector<uint8_t> packed;  // one group of 16 BF16 rows
    std::vector<float> wf;        // the weights as floats, row-major
    std::vector<float> x;         // kPackTokens rows of cols activations
    std::vector<bf16_t> act;      // kPackTokens rows as the reference reads them, x_stride apart
    size_t x_stride;
    std::vector<float> want;  // the scalar twin, [t * kPackRows + r]
};

Case make_case(int64_t cols, uint32_t seed) {
    Case c{cols, {}, std::vector<float>(kPackRows * cols), {}, {}, 0, {}};
    const auto w = test::random_matrix(Type::BF16, kPackRows, cols, seed);
    c.packed.resize(packed_group_size(Type::BF16, cols));
    pack_groups(Type::BF16, w.data(), kPackRows, cols, c.packed.data(), 0, 1);
    for (int64_t i = 0; i < kPackRows * cols; i++)
        c.wf[i] = bf16_to_fp32(reinterpret_cast<const bf16_t*>(w.data())[i]);
    c.x = test::random_floats(kPackTokens * cols, seed + 1, -3.0f, 3.0f);
    c.x_stride = packed_activation_size(Type::BF16, cols);
    c.act.assign(kPackTokens * c.x_stride / sizeof(bf16_t), 0);
    auto* a = reinterpret_cast<uint8_t*>(c.act.data());
    for (int t = 0; t < kPackTokens; t++)
        bf16_activations_ref(c.x.data() + t * cols, a + t * c.x_stride, cols);
    c.want.resize(kPackTokens * kPackRows);
    packed_gemm_bf16_dot_ref(cols, c.packed.data(), c.act.data(), c.x_stride, c.want.data(),
                             kPackRows, kPackRows, kPackTokens);
    return c;
}

// sum |w x| of row r, token t, and the exact dot product, in double.
std::pair<double, double> exact(const Case& c, int r, int t) {
    const auto* xt = reinterpret_cast<const bf16_t*>(
        reinterpret_cast<const uint8_t*>(c.act.data()) + t * c.x_stride);
    double abs_sum = 0, dot = 0;
    for (int64_t i = 0; i < c.cols; i++) {
        const double p = double(c.wf[r * c.cols + i]) * bf16_to_fp32(xt[i]);
        abs_sum += std::fabs(p);
        dot += p;
    }
    return {abs_sum, dot};
}

// Table k's activations of the case's tokens, x_stride bytes apart.
std::vector<bf16_t> table_activations(const Kernels& k, const Case& c) {
    std::vector<bf16_t> act(c.act.size(), 0);
    auto* a = reinterpret_cast<uint8_t*>(act.data());
    for (int t = 0; t < kPackTokens; t++) {
        k.packed_of(Type::BF16).quantize(c.x.data() + t * c.cols, a + t * c.x_stride, c.cols);
    }
    return act;
}

constexpr int64_t kCols[] = {2, 7, 32, 37, 96, 172, 2048, 5632};

// The scalar twin is a float sum of the exact products: within half the bound of the exact dot.
TEST(PackedBf16, ReferenceIsTheDotOfRoundedValues) {
    for (int64_t cols : kCols) {
        const Case c = make_case(cols, 11);
        for (int t = 0; t < kPackTokens; t++) {
            for (int r = 0; r < kPackRows; r++) {
                const auto [abs_sum, dot] = exact(c, r, t);
                EXPECT_LE(std::fabs(c.want[t * kPackRows + r] - dot), bound(cols, abs_sum) / 2)
                    << "cols=" << cols;
            }
        }
    }
}

// Every table's gemm: within the bound of the scalar twin, the same bits for every tile shape
// (so decode and prefill agree) but on the amx table, whose full tiles of 16 tokens take the tile
// unit and every smaller one vdpbf16ps (the same bits among them), nothing written outside its
// tile.
TEST(PackedBf16, GemmMatchesScalarWithinBound) {
    const auto tables = dot_tables();
    if (tables.empty()) GTEST_SKIP() << "no BF16 dot path on this CPU";
    for (int64_t cols : kCols) {
        const Case c = make_case(cols, 21);
        for (const Kernels* k : tables) {
            const auto gemm = k->packed_of(Type::BF16).gemm;
            const auto act = table_activations(*k, c);
            // The full tile and the largest smaller one: every other shape gives one of them.
            std::vector<float> full(kPackTokens * kPackRows), part(kPackTokens * kPackRows);
            gemm(cols, c.packed.data(), act.data(), c.x_stride, full.data(), kPackRows, kPackRows,
                 kPackTokens);
            gemm(cols, c.packed.data(), act.data(), c.x_stride, part.data(), kPackRows, kPackRows,
                 kPackTokens - 1);
            for (int t = 0; t < kPackTokens; t++) {
                for (int r = 0; r < kPackRows; r++) {
                    const float w = c.want[t * kPackRows + r];
                    const double b = bound(cols, exact(c, r, t).first);
                    const float g = full[t * kPackRows + r];
                    ASSERT_LE(std::fabs(double(g) - w), b)
                        << isa_name(k->isa) << " cols=" << cols << " row " << r << " token " << t
                        << ": " << g << " vs " << w;
                    if (t == kPackTokens - 1) continue;
                    const float q = part[t * kPackRows + r];
                    ASSERT_LE(std::fabs(double(q) - w), b)
                        << isa_name(k->isa) << " cols=" << cols << " row " << r << " token " << t
                        << " of " << kPackTokens - 1 << ": " << q << " vs " << w;
                    // One kernel for every shape (so decode and prefill agree), but on the amx
                    // table, whose full tiles alone run on the tile unit.
                    if (k->isa != Isa::Amx) {
                        ASSERT_EQ(q, g) << isa_name(k->isa) << " cols=" << cols;
                    }
                }
            }
            for (int nr : {1, 5, 16}) {
                for (int nt = 1; nt <= kPackTokens; nt++) {
                    const std::vector<float>& same = nt == kPackTokens ? full : part;
                    std::vector<float> got(kPackTokens * kPackRows, -1.0f);
                    gemm(cols, c.packed.data(), act.data(), c.x_stride, got.data(), kPackRows, nr,
                         nt);
                    for (int t = 0; t < kPackTokens; t++) {
                        for (int r = 0; r < kPackRows; r++) {
                            const float g = got[t * kPackRows + r];
                            if (t >= nt || r >= nr) {
                                ASSERT_EQ(g, -1.0f) << "wrote outside the tile";
                            } else {
                                ASSERT_EQ(g, same[t * kPackRows + r])
                                    << isa_name(k->isa) << " cols=" << cols << " tile " << nr << 'x'
                                    << nt;
                            }
                        }
                    }
                }
            }
        }
    }
}

// gemv2 gives gemm's bits for each of its two groups (a short one too) and writes only their rows.
TEST(PackedBf16, Gemv2MatchesGemmBitForBit) {
    const auto tables = dot_tables();
    if (tables.empty()) GTEST_SKIP() << "no BF16 dot path on this CPU";
    for (int64_t cols : kCols) {
        const Case a = make_case(cols, 31), b = make_case(cols, 41);
        for (const Kernels* k : tables) {
            const PackedKernels& pk = k->packed_of(Type::BF16);
            ASSERT_NE(pk.gemv2, nullptr) << isa_name(k->isa);
            const auto act = table_activations(*k, a);
            for (const auto& [nr0, nr1] : {std::pair{16, 16}, std::pair{3, 16}}) {
                std::vector<float> want(2 * kPackRows, -1.0f), got(2 * kPackRows, -1.0f);
                pk.gemm(cols, a.packed.data(), act.data(), 0, want.data(), 0, nr0, 1);
                pk.gemm(cols, b.packed.data(), act.data(), 0, want.data() + kPackRows, 0, nr1, 1);
                pk.gemv2(cols, a.packed.data(), b.packed.data(), act.data(), got.data(),
                         got.data() + kPackRows, nr0, nr1);
                ASSERT_EQ(got, want) << isa_name(k->isa) << " cols=" << cols;
            }
        }
    }
}

}  // namespace
}  // namespace ggml_lite
