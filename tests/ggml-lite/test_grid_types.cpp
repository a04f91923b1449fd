// The grid types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M: read only (no
// quantizer), decoded exactly as ggml decodes them.
//
// tests/data/iq_grids/<type>.bin and the hashes below were written once by a small C program
// outside this project, linked against llama.cpp's libggml-base (the /work/ext/llama.cpp build,
// after a ggml_init()). Each .bin holds two blocks, then ggml's to_float of them (its
// dequantize_row_iq2_xxs ...), 512 little-endian floats: block 37 of the first tensor of that
// type in a file llama-quantize wrote, and one block of random bytes with that block's fp16
// scale. The files: `lila convert --random stories110m --confident --type f16`, then
// `llama-quantize --imatrix` (a synthetic importance matrix) to its file types IQ2_XXS, IQ2_XS,
// IQ2_M (whose matrices are IQ2_S: its IQ2_S file type writes IQ2_XS), IQ3_XXS and IQ3_S. IQ1_S
// and IQ1_M (2026-12-05, llama.cpp c392e5094): the same program on the first of its tensors with
// 38 blocks in llama-quantize's IQ1_S and IQ1_M files of the padded reference model
// (docs/kernels.md, "The grid types"), the random block taking block 37's d. The hashes are
// FNV-1a of ggml's floats for lcg_blocks() below, which the program made alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-lite/iq_grids.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/ops.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/type.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

constexpr Type kGridTypes[] = {Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS,
                               Type::IQ3_S,   Type::IQ1_S,  Type::IQ1_M};

TEST(GridTypes, GgmlIdsAndLayouts) {
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ2_XXS), 16u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ2_XS), 17u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ3_XXS), 18u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ3_S), 21u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ2_S), 22u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ1_S), 19u);
    EXPECT_EQ(static_cast<uint32_t>(Type::IQ1_M), 29u);
    EXPECT_EQ(row_size(Type::IQ2_XXS, 512), 132u);  // 2.0625 bits per value
    EXPECT_EQ(row_size(Type::IQ2_XS, 512), 148u);   // 2.3125
    EXPECT_EQ(row_size(Type::IQ2_S, 512), 164u);    // 2.5625
    EXPECT_EQ(row_size(Type::IQ3_XXS, 512), 196u);  // 3.0625
    EXPECT_EQ(row_size(Type::IQ3_S, 512), 220u);    // 3.4375
    EXPECT_EQ(row_size(Type::IQ1_S, 512), 100u);    // 1.5625
    EXPECT_EQ(row_size(Type::IQ1_M, 512), 112u);    // 1.75
    for (Type t : kGridTypes) {
        EXPECT_EQ(type_from_id(static_cast<uint32_t>(t)), t);
        EXPECT_EQ(type_from_name(type_name(t)), t);
        EXPECT_EQ(block_size(t), QK_K);
        EXPECT_TRUE(traits(t).quantized);
        EXPECT_EQ(traits(t).vec_dot_type, Type::Q8_K);
        EXPECT_EQ(traits(t).from_float, nullptr) << type_name(t);  // lila cannot write them
    }
    EXPECT_EQ(type_from_name("IQ3_S"), Type::IQ3_S);
}

// ggml's ksigns_iq2xs table, at a few entries: the seven stored bits and their parity.
TEST(GridTypes, EvenSigns) {
    EXPECT_EQ(even_signs(0), 0);
    EXPECT_EQ(even_signs(1), 129);
    EXPECT_EQ(even_signs(3), 3);
    EXPECT_EQ(even_signs(17), 17);
    EXPECT_EQ(even_signs(18), 18);
    EXPECT_EQ(even_signs(19), 147);
    EXPECT_EQ(even_signs(127), 255);
    EXPECT_EQ(even_signs(0x80 | 1), 129);  // bits above the seventh are not signs
}

std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Block 37 of a llama-quantize file and a block of random bytes decode to ggml's floats, bit
// for bit.
TEST(GridTypes, DequantizeMatchesGgmlFixture) {
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> f =
            read_bytes(std::string("tests/data/iq_grids/") + type_name(t) + ".bin");
        const size_t blocks = 2 * traits(t).type_size;
        ASSERT_EQ(f.size(), blocks + 2 * QK_K * sizeof(float)) << type_name(t);
        std::vector<float> want(2 * QK_K), got(2 * QK_K);
        std::memcpy(want.data(), f.data() + blocks, want.size() * sizeof(float));
        traits(t).to_float(f.data(), got.data(), 2 * QK_K);
        for (int i = 0; i < 2 * QK_K; i++) {
            uint32_t a, b;
            std::memcpy(&a, &got[i], 4);
            std::memcpy(&b, &want[i], 4);
            ASSERT_EQ(a, b) << type_name(t) << " value " << i << ": " << got[i] << " vs ggml's "
                            << want[i];
        }
    }
}

// 256 blocks of LCG bytes (the generator of test_quant.cpp's golden_row), each with the fp16
// d 0x1c00 | 12 bits of its first two bytes: every grid index and sign pattern many times over.
std::vector<uint8_t> lcg_blocks(Type t) {
    const size_t bs = traits(t).type_size;
    std::vector<uint8_t> v(256 * bs);
    uint32_t s = 20240 + static_cast<uint32_t>(t);
    for (uint8_t& b : v) {
        s = s * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(s >> 24);
    }
    for (size_t b = 0; b < 256; b++) {
        const auto d = static_cast<uint16_t>(0x1c00 | ((v[b * bs] | v[b * bs + 1] << 8) & 0x0fff));
        test::set_grid_d(t, &v[b * bs], d);
    }
    return v;
}

uint64_t fnv1a(const void* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= static_cast<const uint8_t*>(p)[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

TEST(GridTypes, DequantizeMatchesGgmlHashes) {
    const std::pair<Type, uint64_t> cases[] = {
        {Type::IQ2_XXS, 0xd58d7e59c3cf92d9ull}, {Type::IQ2_XS, 0xca3341efd4e17f6eull},
        {Type::IQ2_S, 0xaab1ee6d83bfaaa4ull},   {Type::IQ3_XXS, 0xf1d08fd952eee706ull},
        {Type::IQ3_S, 0xd2b9ce2fba402278ull},   {Type::IQ1_S, 0xa21834af0888baaaull},
        {Type::IQ1_M, 0xeba49bde684202e4ull},
    };
    for (const auto& [t, hash] : cases) {
        const std::vector<uint8_t> blocks = lcg_blocks(t);
        std::vector<float> y(256 * QK_K);
        traits(t).to_float(blocks.data(), y.data(), 256 * QK_K);
        EXPECT_EQ(fnv1a(y.data(), y.size() * sizeof(float)), hash) << type_name(t);
    }
}

// Every table's dot of a grid row with Q8_K activations: exact integer sums, then float steps.
// With scales 1 and activation levels in [-3, 3] every step is exact (|sum| < 2^24), so the
// result is the dot of the decoded floats to the bit; a misread level or scale changes it.
// (test_kernels.cpp compares the tables on random blocks, to rounding.)
TEST(GridTypes, DotExactOnExactData) {
    constexpr int kBlocks = 3;
    for (Type t : kGridTypes) {
        std::vector<uint8_t> w = test::random_grid_blocks(t, kBlocks, 7);
        for (int b = 0; b < kBlocks; b++) test::set_grid_d(t, &w[b * traits(t).type_size], 0x3c00);
        std::vector<float> wf(kBlocks * QK_K);
        traits(t).to_float(w.data(), wf.data(), kBlocks * QK_K);
        std::vector<block_q8_K> x(kBlocks);
        double want = 0.0;
        for (int b = 0; b < kBlocks; b++) {
            x[b].d = 1.0f;
            for (int i = 0; i < QK_K; i++) {
                x[b].qs[i] = static_cast<int8_t>((b + i) % 7 - 3);
                want += static_cast<double>(wf[b * QK_K + i]) * x[b].qs[i];
            }
            test::set_bsums(x[b]);
        }
        for (const Kernels* k : test::all_tables()) {
            EXPECT_EQ(k->of(t).vec_dot(kBlocks * QK_K, w.data(), x.data()),
                      static_cast<float>(want))
                << isa_name(k->isa) << ' ' << type_name(t);
        }
    }
}

// Prefill's decoded form of a group (packed.h: block_gridx16) holds its rows' values: d kScale
// times ls times the level gives to_float's bits (scaling by kScale, a power of 2, is exact);
// rows past the group's are zeros.
TEST(GridTypes, PackedGroupHoldsTheValues) {
    constexpr int kRows = 13;
    constexpr int64_t kBlocks = 3, n = kBlocks * QK_K;
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kRows * kBlocks, 71);
        std::vector<block_gridx16> p(kBlocks);
        pack_grid_group(t, traits(t).grid_block, w.data(), kRows, n, p.data());
        std::vector<float> want(n);
        for (int r = 0; r < kPackRows; r++) {
            if (r < kRows) {
                traits(t).to_float(w.data() + r * row_size(t, n), want.data(), n);
            } else {
                std::fill(want.begin(), want.end(), 0.0f);
            }
            for (int64_t e = 0; e < n; e++) {
                const block_gridx16& c = p[e / QK_K];
                const int i = static_cast<int>(e % QK_K);
                const float got = c.d[r] * static_cast<float>(c.scales[i / 16][r]) *
                                  static_cast<float>(c.qs[i / 4][r][i % 4] - kGridOffset);
                ASSERT_EQ(got, want[e]) << type_name(t) << " row " << r << " value " << e;
            }
        }
    }
}

// n Q8_K activation blocks of every byte (-128 included) and scales over a wide range.
// Q8_K blocks of random values from `lowest` to 127.
std::vector<block_q8_K> random_q8_K(size_t n, uint32_t seed, int lowest = -128) {
    std::mt19937 rng(seed);
    std::vector<block_q8_K> x(n);
    for (block_q8_K& b : x) {
        b.d = std::ldexp(static_cast<float>(rng() % 1000 + 1), -static_cast<int>(rng() % 20));
        for (int8_t& q : b.qs)
            q = static_cast<int8_t>(std::max(lowest, static_cast<int>(rng() >> 24) - 128));
        test::set_bsums(b);
    }
    return x;
}

// Every SIMD table has a grid kernel of its own, and it gives the scalar one's bits for any
// number of rows and tokens: the integer sums are exact, then the one float step. The
// activations take every byte, -128 included.
TEST(GridTypes, GridGemmIsScalarBits) {
    const Kernels& scalar = kernels_scalar();
    constexpr int64_t kBlocks = 3, n = kBlocks * QK_K;
    const std::vector<block_q8_K> x = random_q8_K(kPackTokens * kBlocks, 82);
    const size_t x_stride = kBlocks * sizeof(block_q8_K);
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kPackRows * kBlocks, 81);
        std::vector<block_gridx16> p(kBlocks);
        pack_grid_group(t, traits(t).grid_block, w.data(), kPackRows, n, p.data());
        for (int nr : {16, 9, 5}) {
            for (int nt : {1, 3, 16}) {
                std::vector<float> want(kPackTokens * kPackRows, -1.0f);
                scalar.grid_gemm(n, p.data(), x.data(), x_stride, want.data(), kPackRows, nr, nt);
                for (const Kernels* k : test::simd_tables()) {
                    EXPECT_NE(k->grid_gemm, scalar.grid_gemm) << isa_name(k->isa);
                    std::vector<float> got(want.size(), -1.0f);
                    k->grid_gemm(n, p.data(), x.data(), x_stride, got.data(), kPackRows, nr, nt);
                    EXPECT_EQ(got, want)
                        << isa_name(k->isa) << ' ' << type_name(t) << " nr=" << nr << " nt=" << nt;
                }
            }
        }
    }
}

// Every table decodes grid blocks as the reference does: the same levels, scales and d kScale.
TEST(GridTypes, TablesDecodeAsTheReference) {
    constexpr int64_t kBlocks = 9;
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kBlocks, 91);
        for (const Kernels* k : test::all_tables()) {
            const GridBlockFn decode = k->of(t).grid_block;
            ASSERT_NE(decode, nullptr) << isa_name(k->isa) << ' ' << type_name(t);
            for (int64_t i = 0; i < kBlocks; i++) {
                GridLevels want, got;
                float want_d = 0.0f, got_d = 1.0f;
                traits(t).grid_block(w.data(), i, &want, &want_d);
                decode(w.data(), i, &got, &got_d);
                EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0)
                    << isa_name(k->isa) << ' ' << type_name(t) << " block " << i;
                EXPECT_EQ(got_d, want_d) << isa_name(k->isa) << ' ' << type_name(t);
            }
        }
    }
}

// The SIMD tables' dot products are the scalar kernel's bits on any data: each super-block's
// integer sum is exact, and the float steps after it are the scalar kernel's in its order. The
// activations take every byte (-128 included) and scales of every magnitude.
TEST(GridTypes, SimdDotsAreScalarBits) {
    const Kernels& scalar = kernels_scalar();
    for (Type t : kGridTypes) {
        for (int64_t blocks : {1, 2, 7}) {
            const int64_t n = blocks * QK_K;
            const std::vector<uint8_t> w = test::random_grid_blocks(t, blocks, 11);
            const std::vector<block_q8_K> x = random_q8_K(blocks, 12);
            const float want = scalar.of(t).vec_dot(n, w.data(), x.data());
            for (const Kernels* k : test::simd_tables()) {
                EXPECT_EQ(k->of(t).vec_dot(n, w.data(), x.data()), want)
                    << isa_name(k->isa) << ' ' << type_name(t) << " blocks=" << blocks;
            }
        }
    }
}

// The sign code of the stripes gives back all 8 signs of every 7-bit field,
// the parity bit included, and leaves bit 0 free for the scale.
TEST(GridTypes, SignCodeGivesEverySign) {
    for (uint32_t seven = 0; seven < 128; seven++) {
        const uint8_t signs = even_signs(seven), code = grid_sign_code(signs);
        EXPECT_EQ(code & 1, 0) << seven;
        EXPECT_EQ(grid_signs(code), signs) << seven;
        EXPECT_EQ(grid_signs(code | 1), signs) << seven;
    }
}

// Every grid type packs in stripes (packed.h: block_grid_xxsx4 ...), which hold their rows:
// unpack_group gives back the file's bytes of every row of a short last group, and the rows past it
// are zeros (d = 0).
TEST(GridTypes, StripesHoldTheRows) {
    constexpr int64_t kRows = 21, kBlocks = 3, n = kBlocks * QK_K;
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kRows * kBlocks, 23);
        const size_t group = packed_group_size(t, n), row = row_size(t, n);
        std::vector<uint8_t> p(2 * group, 0xa5);  // pack_groups must zero the padding
        pack_groups(t, w.data(), kRows, n, p.data(), 0, 2);
        std::vector<uint8_t> back(kPackRows * row, 0xa5);
        unpack_group(t, p.data(), kPackRows, n, back.data());
        EXPECT_EQ(0, std::memcmp(back.data(), w.data(), kPackRows * row)) << type_name(t);
        unpack_group(t, p.data() + group, kPackRows, n, back.data());
        EXPECT_EQ(0,
                  std::memcmp(back.data(), w.data() + kPackRows * row, (kRows - kPackRows) * row))
            << type_name(t);
        std::vector<float> f(n);
        for (int64_t r = kRows - kPackRows; r < kPackRows; r++) {
            traits(t).to_float(back.data() + r * row, f.data(), n);
            EXPECT_TRUE(std::all_of(f.begin(), f.end(), [](float v) { return v == 0.0f; }))
                << type_name(t) << " padding row " << r;
        }
    }
    EXPECT_THROW(unpack_group(Type::Q4_K, nullptr, 1, 256, nullptr), std::invalid_argument);
}

// Prefill's decoding of a packed group (PackedKernels::to_grid) gives what the rows' decoding
// gives (pack_grid_group) for every real row, in every table, the SIMD ones the scalar one's
// bytes for the padding rows too.
TEST(GridTypes, StripesDecodeAsTheRows) {
    constexpr int kRows = 13;
    constexpr int64_t kBlocks = 3, n = kBlocks * QK_K;
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kRows * kBlocks, 41);
        std::vector<uint8_t> p(packed_group_size(t, n));
        pack_groups(t, w.data(), kRows, n, p.data(), 0, 1);
        std::vector<block_gridx16> rows(kBlocks), want(kBlocks);
        pack_grid_group(t, traits(t).grid_block, w.data(), kRows, n, rows.data());
        kernels_scalar().packed_of(t).to_grid(n, p.data(), want.data());
        for (int64_t b = 0; b < kBlocks; b++) {
            for (int r = 0; r < kRows; r++) {
                EXPECT_EQ(want[b].d[r], rows[b].d[r]) << type_name(t);
                for (int g = 0; g < QK_K / 16; g++)
                    EXPECT_EQ(want[b].scales[g][r], rows[b].scales[g][r]) << type_name(t);
                for (int m = 0; m < QK_K / 4; m++)
                    EXPECT_EQ(0, std::memcmp(want[b].qs[m][r], rows[b].qs[m][r], 4))
                        << type_name(t) << " row " << r << " word " << m;
            }
        }
        for (const Kernels* k : test::simd_tables()) {
            const auto to_grid = k->packed_of(t).to_grid;
            if (!k->packed_of(t).gemm) continue;
            ASSERT_NE(to_grid, nullptr) << isa_name(k->isa) << ' ' << type_name(t);
            EXPECT_NE(to_grid, kernels_scalar().packed_of(t).to_grid) << isa_name(k->isa);
            std::vector<block_gridx16> got(kBlocks);
            std::memset(got.data(), 0xa5, got.size() * sizeof(block_gridx16));
            to_grid(n, p.data(), got.data());
            EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(block_gridx16)))
                << isa_name(k->isa) << ' ' << type_name(t);
        }
    }
}

// Q8_K's values are -127..127 (its scale maps the largest magnitude to -127), in every table:
// the stripe kernels negate activations and rely on it.
TEST(GridTypes, Q8KHoldsNoMinus128) {
    constexpr int64_t n = 4 * QK_K;
    std::vector<float> x = test::random_floats(n, 55, -3.0f, 3.0f);
    x[3] = 7.0f;                           // the largest magnitude positive,
    x[QK_K + 9] = -7.0f;                   // negative,
    x[2 * QK_K] = x[2 * QK_K + 1] = 5.0f;  // tied, of both signs
    x[2 * QK_K + 2] = -5.0f;
    for (int64_t i = 3 * QK_K; i < n; i++) x[i] = i % 2 ? -1.0f : 1.0f;
    for (const Kernels* k : test::all_tables()) {
        // The table's Q8_K quantizer and the one its grid kernels' activations go through.
        for (const auto quantize :
             {k->of(Type::Q8_K).from_float, k->packed_of(Type::IQ2_XXS).quantize}) {
            if (!quantize) continue;
            std::vector<block_q8_K> q(n / QK_K);
            quantize(x.data(), q.data(), n);
            for (const block_q8_K& b : q) {
                EXPECT_EQ(*std::min_element(std::begin(b.qs), std::end(b.qs)), -127)
                    << isa_name(k->isa);
            }
        }
    }
}

// A row in stripes gives its vec_dot's bits in every table (decode then matches the unpacked
// rows' prefill), the activations taking every value Q8_K holds; and matmul of the packed
// matrix gives the same bits one token at a time as a batch, which runs through the rows
// unpacked and decoded (ops.cpp: run_grid).
TEST(GridTypes, StripesKeepTheRowsBits) {
    constexpr int64_t kRows = 37, kBlocks = 2, n = kBlocks * QK_K, kTokens = 9;
    const std::vector<block_q8_K> x = random_q8_K(kTokens * kBlocks, 31, -127);
    for (Type t : kGridTypes) {
        const std::vector<uint8_t> w = test::random_grid_blocks(t, kRows * kBlocks, 37);
        const size_t row = row_size(t, n), group = packed_group_size(t, n);
        std::vector<uint8_t> p(3 * group);
        pack_groups(t, w.data(), kRows, n, p.data(), 0, 3);
        for (const Kernels* k : test::all_tables()) {
            const PackedKernels& pk = k->packed_of(t);
            if (!pk.gemm) continue;
            for (int64_t g = 0; g < 3; g++) {
                const int nr =
                    static_cast<int>(std::min<int64_t>(kPackRows, kRows - g * kPackRows));
                std::vector<float> got(kTokens * kPackRows);
                pk.gemm(n, p.data() + g * group, x.data(), kBlocks * sizeof(block_q8_K), got.data(),
                        kPackRows, nr, static_cast<int>(kTokens));
                for (int64_t tok = 0; tok < kTokens; tok++) {
                    for (int r = 0; r < nr; r++) {
                        const float want = kernels_scalar().of(t).vec_dot(
                            n, w.data() + (g * kPackRows + r) * row, x.data() + tok * kBlocks);
                        ASSERT_EQ(got[tok * kPackRows + r], want)
                            << isa_name(k->isa) << ' ' << type_name(t) << " row "
                            << g * kPackRows + r << " token " << tok;
                    }
                }
            }
        }
        const std::vector<float> xf = test::random_floats(kTokens * n, 38);
        const Matrix plain{t, kRows, n, w.data()};
        Matrix packed = plain;
        packed.packed = p.data();
        for (const Kernels* k : test::all_tables()) {
            if (!k->packed_of(t).gemm) continue;
            Context ctx;
            ctx.k = k;
            std::vector<float> batch(kTokens * kRows), one(kTokens * kRows);
            matmul(ctx, packed, xf.data(), kTokens, batch.data());
            for (int64_t tok = 0; tok < kTokens; tok++)
                matmul(ctx, packed, xf.data() + tok * n, 1, one.data() + tok * kRows);
            EXPECT_EQ(one, batch) << isa_name(k->isa) << ' ' << type_name(t);
        }
    }
}

}  // namespace
}  // namespace ggml_lite
