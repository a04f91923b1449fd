// The packed-weight path (packed.h, PackedKernels) and the attention kernels of every table,
// against the scalar reference: the same bits where the kernels promise them, the original
// rows' dot products within float tolerance, and matmul's results independent of threads,
// tiling and of how many matrices share one call.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ggml-lite/ops.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

const Kernels& ref() {
    return kernels_scalar();
}

// The types whose packed kernels read block_q8_0c activations, and the k-quants (block_q8_K).
constexpr Type kQuantTypes[] = {Type::Q8_0, Type::Q4_0, Type::Q5_0, Type::IQ4_NL};
constexpr Type kKQuantTypes[] = {Type::Q4_K,   Type::Q5_K, Type::Q6_K,
                                 Type::IQ4_XS, Type::Q3_K, Type::Q2_K};

// Every type with a packed layout.
std::vector<Type> packed_types() {
    std::vector<Type> out;
    for (Type t : all_types()) {
        if (packable(t)) out.push_back(t);
    }
    return out;
}

// Every table with a packed path for `type` that reads the scalar one's activation format, the
// scalar reference first: those owe it their bits. The BF16 dot path (float weights, activations
// converted) is held to its own scalar twin in test_packed_bf16.cpp.
std::vector<const Kernels*> packed_tables(Type type) {
    const bool converts = ref().packed_of(type).quantize != nullptr;
    std::vector<const Kernels*> out;
    for (const Kernels* k : test::all_tables()) {
        const PackedKernels& p = k->packed_of(type);
        if (p.gemm && (p.quantize != nullptr) == converts) out.push_back(k);
    }
    return out;
}

std::vector<uint8_t> pack(Type type, const std::vector<uint8_t>& w, int64_t rows, int64_t cols) {
    const int64_t groups = (rows + kPackRows - 1) / kPackRows;
    std::vector<uint8_t> out(groups * packed_group_size(type, cols));
    pack_groups(type, w.data(), rows, cols, out.data(), 0, groups);
    return out;
}

// What the packed kernel of `type` reads: block_q8_0c rows for Q4_0/Q8_0, block_q8_K rows for
// the k-quants, else the floats.
std::vector<uint8_t> activations(const Kernels& k, Type type, const std::vector<float>& x,
                                 int64_t tokens, int64_t cols) {
    const auto quantize = k.packed_of(type).quantize;
    if (!quantize) {
        const auto* b = reinterpret_cast<const uint8_t*>(x.data());
        return std::vector<uint8_t>(b, b + x.size() * sizeof(float));
    }
    const size_t row = packed_activation_size(type, cols);
    std::vector<uint8_t> out(tokens * row);
    for (int64_t t = 0; t < tokens; t++) quantize(x.data() + t * cols, out.data() + t * row, cols);
    return out;
}

// The activation row a vec_dot of the original rows takes.
std::vector<uint8_t> vec_dot_row(Type type, const float* x, int64_t cols) {
    const Type act = traits(type).vec_dot_type;
    std::vector<uint8_t> out(row_size(act, cols));
    traits(act).from_float(x, out.data(), cols);
    return out;
}

TEST(Packed, TablesPresent) {
    for (Type t : packed_types()) {
        EXPECT_NE(ref().packed_of(t).gemm, nullptr);
#if defined(__x86_64__)
        for (Isa isa : {Isa::Avx2, Isa::Avx2Vnni, Isa::Avx512, Isa::Avx512Bf16, Isa::Amx}) {
            if (isa_supported(isa)) {
                EXPECT_NE(kernels_for(isa)->packed_of(t).gemm, nullptr);
            }
        }
#endif
    }
}

// A type without a packed layout (Q8_K, activations only) is an error, not another type's layout.
TEST(Packed, UnpackableTypeIsAnError) {
    EXPECT_FALSE(packable(Type::Q8_K));
    EXPECT_THROW(packed_group_size(Type::Q8_K, 256), std::invalid_argument);
    EXPECT_THROW(packed_activation_size(Type::Q8_K, 256), std::invalid_argument);
    std::vector<uint8_t> src(row_size(Type::Q8_K, 256)), dst(kPackRows * src.size());
    EXPECT_THROW(pack_groups(Type::Q8_K, src.data(), 1, 256, dst.data(), 0, 1),
                 std::invalid_argument);
    EXPECT_THROW(packable(static_cast<Type>(34)), std::invalid_argument);
}

// The layout: every value of every row lands where packed.h says (4-column blocks of 16 rows
// of 4 values, the last n % 4 columns 16 rows of n % 4), padding rows are zero.
TEST(Packed, FloatLayoutIsFourColumnBlocksPerGroup) {
    const int64_t rows = 21;
    for (const int64_t cols : {36, 37, 38, 39}) {
        const auto w = test::random_matrix(Type::F32, rows, cols, 2);
        const auto p = pack(Type::F32, w, rows, cols);
        const auto* src = reinterpret_cast<const float*>(w.data());
        const auto* got = reinterpret_cast<const float*>(p.data());
        for (int64_t r = 0; r < 32; r++) {
            for (int64_t c = 0; c < cols; c++) {
                const int64_t c0 = c / 4 * 4, width = c0 + 4 <= cols ? 4 : cols % 4;
                const int64_t at = (r / kPackRows) * kPackRows * cols + kPackRows * c0 +
                                   (r % kPackRows) * width + c % 4;
                EXPECT_EQ(got[at], r < rows ? src[r * cols + c] : 0.0f)
                    << cols << ':' << r << ',' << c;
            }
        }
    }
}

// The 32-value block types' packed columns: the scales, Q4_1's and Q5_1's minimums, Q5_0's and
// Q5_1's qh words, then the quant words, each row's bytes side by side; where those bytes are
// in an original block.
struct Block32Layout {
    Type type;
    int words;     // 4-byte words of quants per block
    size_t m_at;   // Q4_1, Q5_1: the fp16 minimum; 0 for none
    size_t qh_at;  // Q5_0, Q5_1: the fifth bits' 4 bytes; 0 for none
    size_t qs_at;  // the quants
    uint8_t flip;  // Q8_0: stored as w + 128
};
constexpr Block32Layout kBlock32Layouts[] = {
    {Type::Q8_0, 8, 0, 0, offsetof(block_q8_0, qs), 0x80},
    {Type::Q4_0, 4, 0, 0, offsetof(block_q4_0, qs), 0},
    {Type::Q5_0, 4, 0, offsetof(block_q5_0, qh), offsetof(block_q5_0, qs), 0},
    {Type::IQ4_NL, 4, 0, 0, offsetof(block_iq4_nl, qs), 0},
    {Type::Q4_1, 4, offsetof(block_q4_1, m), 0, offsetof(block_q4_1, qs), 0},
    {Type::Q5_1, 4, offsetof(block_q5_1, m), offsetof(block_q5_1, qh), offsetof(block_q5_1, qs), 0},
};

TEST(Packed, QuantLayoutHoldsTheOriginalBytes) {
    const int64_t rows = 21, cols = 96;
    for (const Block32Layout& l : kBlock32Layouts) {
        const Type type = l.type;
        const auto w = test::random_matrix(type, rows, cols, 3);
        const auto p = pack(type, w, rows, cols);
        const size_t row_bytes = row_size(type, cols), block = traits(type).type_size;
        const size_t m_bytes = l.m_at ? 2 * kPackRows : 0, qh_bytes = l.qh_at ? 4 * kPackRows : 0;
        const size_t qh_at = 2 * kPackRows + m_bytes, qs_at = qh_at + qh_bytes;
        const size_t column = qs_at + 4 * kPackRows * l.words;
        ASSERT_EQ(column, kPackRows * block) << type_name(type);
        for (int64_t r = 0; r < 32; r++) {
            for (int64_t b = 0; b < cols / 32; b++) {
                const uint8_t* col =
                    p.data() + (r / kPackRows) * packed_group_size(type, cols) + b * column;
                const int i = static_cast<int>(r % kPackRows);
                fp16_t d;
                std::memcpy(&d, col + 2 * i, 2);
                const uint8_t* src = w.data() + r * row_bytes + b * block;
                EXPECT_EQ(d, r < rows ? *reinterpret_cast<const fp16_t*>(src) : 0);
                for (size_t j = 0; j < m_bytes / kPackRows; j++) {
                    EXPECT_EQ(col[2 * kPackRows + 2 * i + j], r < rows ? src[l.m_at + j] : 0)
                        << type_name(type) << " row " << r << " block " << b;
                }
                // The fifth bits: element 4i + k's at bit i of byte k (ggml: bit j of the word).
                for (int e = 0; l.qh_at && e < 32; e++) {
                    const int got = (col[qh_at + 4 * i + e % 4] >> (e / 4)) & 1;
                    const int want = r < rows ? (src[l.qh_at + e / 8] >> (e % 8)) & 1 : 0;
                    EXPECT_EQ(got, want) << type_name(type) << " row " << r << " element " << e;
                }
                for (int m = 0; m < l.words; m++) {
                    for (int j = 0; j < 4; j++) {
                        const uint8_t got = col[qs_at + (m * kPackRows + i) * 4 + j];
                        EXPECT_EQ(got, r < rows ? uint8_t(src[l.qs_at + 4 * m + j] ^ l.flip) : 0)
                            << type_name(type) << " row " << r << " block " << b;
                    }
                }
            }
        }
    }
}

// The k-quants: the scales, mins and scale bytes side by side per row, the quants as 4-byte
// words of the original rows, so every byte of the original is in the group once; padding rows
// are zero blocks.
template <class Block, class Packed, class Check>
void check_k_layout(Type type, Check check) {
    const int64_t rows = 21, cols = 512;
    const auto w = test::random_matrix(type, rows, cols, 4);
    const auto p = pack(type, w, rows, cols);
    const Block zero{};
    for (int64_t r = 0; r < 32; r++) {
        for (int64_t b = 0; b < cols / QK_K; b++) {
            const uint8_t* group = p.data() + (r / kPackRows) * packed_group_size(type, cols);
            const Block& orig =
                r < rows ? reinterpret_cast<const Block*>(w.data() + r * row_size(type, cols))[b]
                         : zero;
            check(reinterpret_cast<const Packed*>(group)[b], static_cast<int>(r % kPackRows), orig);
        }
    }
}

uint8_t word_byte(const uint8_t (*words)[kPackRows][4], int i, int r) {
    return words[i / 4][r][i % 4];
}

TEST(Packed, KQuantLayoutHoldsTheOriginalBytes) {
    check_k_layout<block_q4_K, block_q4_Kx16>(
        Type::Q4_K, [](const block_q4_Kx16& got, int i, const block_q4_K& orig) {
            EXPECT_EQ(got.d[i], orig.d);
            EXPECT_EQ(got.dmin[i], orig.dmin);
            for (int k = 0; k < K_SCALE_SIZE; k++) EXPECT_EQ(got.scales[k][i], orig.scales[k]);
            for (int k = 0; k < QK_K / 2; k++) ASSERT_EQ(word_byte(got.qs, k, i), orig.qs[k]);
        });
    check_k_layout<block_q5_K, block_q5_Kx16>(
        Type::Q5_K, [](const block_q5_Kx16& got, int i, const block_q5_K& orig) {
            EXPECT_EQ(got.d[i], orig.d);
            EXPECT_EQ(got.dmin[i], orig.dmin);
            for (int k = 0; k < K_SCALE_SIZE; k++) EXPECT_EQ(got.scales[k][i], orig.scales[k]);
            // Value e = 32j + 4m + b's level, its qs nibble and qh bit (quant.h), is whole in byte
            // b of sub-block j's planes: words 0-4 in bits 0-4 of planes 0-4, words 5-7 spread
            // over their top bits in order (plane 0's first).
            for (int e = 0; e < QK_K; e++) {
                const int j = e / 32, m = e % 32 / 4, b = e % 4, l = e % 32;
                const uint8_t q = orig.qs[32 * (j / 2) + l];
                const int level = (j % 2 ? q >> 4 : q & 15) | (orig.qh[l] >> j & 1) << 4;
                int got_level = 0;
                if (m < 5) {
                    got_level = got.q[j][m][i][b] & 31;
                } else {
                    int top = 0;  // the 15 top bits, plane 0's bit 5 first
                    for (int k = 4; k >= 0; k--) top = top << 3 | got.q[j][k][i][b] >> 5;
                    got_level = top >> (5 * (m - 5)) & 31;
                }
                ASSERT_EQ(got_level, level) << "value " << e;
            }
        });
    check_k_layout<block_q6_K, block_q6_Kx16>(
        Type::Q6_K, [](const block_q6_Kx16& got, int i, const block_q6_K& orig) {
            EXPECT_EQ(got.d[i], orig.d);
            for (int g = 0; g < QK_K / 16; g++) EXPECT_EQ(got.scales[g][i], orig.scales[g]);
            // Value e = 16g + 4m + j's level, its ql nibble and qh bits (quant.h), is whole in
            // byte j of sub-block g's planes: words 0-2 in bits 0-5, word 3 in their bits 6-7.
            for (int e = 0; e < QK_K; e++) {
                const int g = e / 16, m = e % 16 / 4, j = e % 4, h = e / 128, k = e % 128 / 32;
                const int level = (orig.ql[64 * h + 32 * (k % 2) + e % 32] >> (4 * (k / 2)) & 15) |
                                  (orig.qh[32 * h + e % 32] >> (2 * k) & 3) << 4;
                int got_level = 0;
                for (int p = 0; p < 3; p++) {
                    const uint8_t b = got.q[g][p][i][j];
                    got_level |= m < 3 ? (p == m ? b & 63 : 0) : (b >> 6) << (2 * p);
                }
                ASSERT_EQ(got_level, level) << "value " << e;
            }
        });
    check_k_layout<block_iq4_xs, block_iq4_xsx16>(
        Type::IQ4_XS, [](const block_iq4_xsx16& got, int i, const block_iq4_xs& orig) {
            EXPECT_EQ(got.d[i], orig.d);
            EXPECT_EQ(got.scales_h[0][i] | got.scales_h[1][i] << 8, orig.scales_h);
            for (int k = 0; k < QK_K / 64; k++) EXPECT_EQ(got.scales_l[k][i], orig.scales_l[k]);
            for (int k = 0; k < QK_K / 2; k++) ASSERT_EQ(word_byte(got.qs, k, i), orig.qs[k]);
        });
    check_k_layout<block_q3_K, block_q3_Kx16>(Type::Q3_K, [](const block_q3_Kx16& got, int i,
                                                             const block_q3_K& orig) {
        EXPECT_EQ(got.d[i], orig.d);
        for (int k = 0; k < 12; k++) EXPECT_EQ(got.scales[k][i], orig.scales[k]);
        // Value e = 32u + 4m + j's level, its qs bits and hmask bit (quant.h), is whole in
        // byte j of unit u's planes (packed.h).
        for (int e = 0; e < QK_K; e++) {
            const int u = e / 32, m = e % 32 / 4, j = e % 4;
            const int level = (orig.qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3) |
                              (orig.hmask[e % 32] >> (e / 32) & 1) << 2;
            const uint8_t p0 = got.q[u][0][i][j], p1 = got.q[u][1][i][j], p2 = got.q[u][2][i][j];
            const int low = m < 3 ? p0 >> 3 * m : m < 6 ? p1 >> 3 * (m - 3) : p2 >> 3 * (m - 6);
            const int high = m == 2 ? p2 >> 6 & 1 : m == 5 ? p2 >> 7 : low >> 2 & 1;
            ASSERT_EQ((low & 3) | high << 2, level) << "value " << e;
        }
    });
    check_k_layout<block_q2_K, block_q2_Kx16>(
        Type::Q2_K, [](const block_q2_Kx16& got, int i, const block_q2_K& orig) {
            EXPECT_EQ(got.d[i], orig.d);
            EXPECT_EQ(got.dmin[i], orig.dmin);
            for (int g = 0; g < QK_K / 16; g++) EXPECT_EQ(got.scales[g][i], orig.scales[g]);
            for (int k = 0; k < QK_K / 4; k++) ASSERT_EQ(word_byte(got.qs, k, i), orig.qs[k]);
        });
}

// The activation blocks: Q8_0's reference bytes, the scale as float, the right correction;
// every table writes the scalar one's bytes.
TEST(Packed, ActivationsAreQ8_0WithCorrection) {
    for (Type type : kQuantTypes) {
        for (int64_t cols : {32, 64, 2048}) {
            auto x = test::random_floats(cols, static_cast<uint32_t>(cols), -3.0f, 3.0f);
            x[0] = 0.0f;
            for (int i = 32; i < 64 && i < cols; i++) x[i] = 0.0f;  // an all-zero block
            std::vector<block_q8_0> q(cols / 32);
            quantize_row_q8_0_ref(x.data(), q.data(), cols);
            const auto want = activations(ref(), type, x, 1, cols);
            const auto* blocks = reinterpret_cast<const block_q8_0c*>(want.data());
            for (int64_t b = 0; b < cols / 32; b++) {
                int sum = 0;
                for (int j = 0; j < 32; j++) sum += q[b].qs[j];
                EXPECT_EQ(blocks[b].d, fp16_to_fp32(q[b].d));
                const int offset = type == Type::Q4_0 ? 8 : type == Type::Q5_0 ? 16 : 128;
                EXPECT_EQ(blocks[b].c, -offset * sum);
                EXPECT_EQ(0, std::memcmp(blocks[b].qs, q[b].qs, 32));
            }
            for (const Kernels* k : packed_tables(type)) {
                EXPECT_EQ(activations(*k, type, x, 1, cols), want) << isa_name(k->isa);
            }
        }
    }
}

// NaN and infinite activations (a diverging or corrupt model) get whatever levels each ISA's
// conversion gives them, but c stays -offset times the sum of the stored bytes, with no
// overflow on the way (an int32 lane of a NaN holds INT_MIN; the fuzzer found c summed from
// those lanes).
TEST(Packed, CorrectionIsTheStoredBytesForNonFiniteActivations) {
    auto x = test::random_floats(64, 5, -3.0f, 3.0f);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[40] = std::numeric_limits<float>::infinity();
    x[41] = -std::numeric_limits<float>::infinity();
    for (Type type : kQuantTypes) {
        const int offset = type == Type::Q4_0 ? 8 : type == Type::Q5_0 ? 16 : 128;
        for (const Kernels* k : packed_tables(type)) {
            const auto a = activations(*k, type, x, 1, 64);
            const auto* blocks = reinterpret_cast<const block_q8_0c*>(a.data());
            for (int b = 0; b < 2; b++) {
                int sum = 0;
                for (const int8_t v : blocks[b].qs) sum += v;
                EXPECT_EQ(blocks[b].c, -offset * sum) << isa_name(k->isa) << " block " << b;
            }
        }
    }
}

// Q4_1's and Q5_1's packed kernels read Q8_1's reference bytes, d and s as floats.
TEST(Packed, ActivationsAreQ8_1) {
    for (Type type : {Type::Q4_1, Type::Q5_1}) {
        for (int64_t cols : {32, 64, 2048}) {
            auto x = test::random_floats(cols, static_cast<uint32_t>(cols), -3.0f, 3.0f);
            for (int i = 32; i < 64 && i < cols; i++) x[i] = -0.0f;  // an all-zero block
            std::vector<block_q8_1> q(cols / 32);
            quantize_row_q8_1_ref(x.data(), q.data(), cols);
            const auto want = activations(ref(), type, x, 1, cols);
            ASSERT_EQ(want.size(), cols / 32 * sizeof(block_q8_1c));
            const auto* blocks = reinterpret_cast<const block_q8_1c*>(want.data());
            for (int64_t b = 0; b < cols / 32; b++) {
                EXPECT_EQ(blocks[b].d, fp16_to_fp32(q[b].d));
                EXPECT_EQ(blocks[b].s, fp16_to_fp32(q[b].s));
                EXPECT_EQ(0, std::memcmp(blocks[b].qs, q[b].qs, 32));
            }
            for (const Kernels* k : packed_tables(type)) {
                EXPECT_EQ(activations(*k, type, x, 1, cols), want) << isa_name(k->isa);
            }
        }
    }
}

// The k-quants' packed kernels read Q8_K's reference bytes.
TEST(Packed, KQuantActivationsAreQ8_K) {
    const int64_t cols = 512;
    const auto x = test::random_floats(cols, 12, -3.0f, 3.0f);
    std::vector<block_q8_K> want(cols / QK_K);
    quantize_row_q8_K_ref(x.data(), want.data(), cols);
    const auto* bytes = reinterpret_cast<const uint8_t*>(want.data());
    for (Type type : kKQuantTypes) {
        for (const Kernels* k : packed_tables(type)) {
            EXPECT_EQ(activations(*k, type, x, 1, cols),
                      std::vector<uint8_t>(bytes, bytes + want.size() * sizeof(block_q8_K)))
                << isa_name(k->isa) << ' ' << type_name(type);
        }
    }
}

// Every table's gemm gives the scalar one's bits for every tile shape, writes nothing outside
// its tile, and agrees with vec_dot on the original rows within float tolerance.
TEST(Packed, GemmMatchesScalarBitForBit) {
    const int64_t rows = 16, tokens = kPackTokens;
    for (Type type : packed_types()) {
        for (int64_t cols : {32, 96, 256, 2048, 6, 7, 37, 172, 259}) {
            if (cols % block_size(type)) continue;
            const auto w = test::random_matrix(type, rows, cols, 5);
            const auto p = pack(type, w, rows, cols);
            const auto x = test::random_floats(tokens * cols, 6);
            const auto xa = activations(ref(), type, x, tokens, cols);
            const size_t xs = xa.size() / tokens;
            std::vector<float> want(tokens * rows);
            ref().packed_of(type).gemm(cols, p.data(), xa.data(), xs, want.data(), rows, rows,
                                       tokens);
            // Against the original rows' vec_dot (another float order).
            for (int64_t t = 0; t < tokens; t++) {
                const auto xv = vec_dot_row(type, x.data() + t * cols, cols);
                for (int64_t r = 0; r < rows; r++) {
                    const float d = ref().of(type).vec_dot(
                        cols, w.data() + r * row_size(type, cols), xv.data());
                    EXPECT_NEAR(want[t * rows + r], d, 1e-5 * (std::fabs(d) + cols / 32.0 + 1))
                        << type_name(type) << " cols=" << cols;
                }
            }
            for (const Kernels* k : packed_tables(type)) {
                for (int nr : {1, 5, 16}) {
                    for (int nt = 1; nt <= kPackTokens; nt++) {
                        std::vector<float> got(tokens * rows, -1.0f);
                        k->packed_of(type).gemm(cols, p.data(), xa.data(), xs, got.data(), rows, nr,
                                                nt);
                        for (int t = 0; t < tokens; t++) {
                            for (int r = 0; r < rows; r++) {
                                const float g = got[t * rows + r];
                                if (t >= nt || r >= nr) {
                                    ASSERT_EQ(g, -1.0f) << "wrote outside the tile";
                                } else {
                                    ASSERT_EQ(g, want[t * rows + r])
                                        << isa_name(k->isa) << ' ' << type_name(type)
                                        << " cols=" << cols << " tile " << nr << 'x' << nt;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// gemv2 (decode of two groups side by side) gives gemm's bits for each group, writes only their
// rows, and takes a short last group.
TEST(Packed, Gemv2MatchesGemmBitForBit) {
    int checked = 0;
    for (Type type : packed_types()) {
        for (int64_t cols : {32, 256, 2048, 7, 259}) {
            if (cols % block_size(type)) continue;
            const int64_t rows = 2 * kPackRows;
            const auto w = test::random_matrix(type, rows, cols, 7);
            const auto p = pack(type, w, rows, cols);
            const size_t group = packed_group_size(type, cols);
            const auto x = test::random_floats(cols, 8);
            for (const Kernels* k : packed_tables(type)) {
                const PackedKernels& pk = k->packed_of(type);
                if (!pk.gemv2) continue;
                const auto xa = activations(*k, type, x, 1, cols);
                for (const auto& [nr0, nr1] :
                     {std::pair{16, 16}, std::pair{16, 5}, {12, 9}, {1, 1}}) {
                    std::vector<float> want(rows, -1.0f), got(rows, -1.0f);
                    ref().packed_of(type).gemm(cols, p.data(), xa.data(), 0, want.data(), 0, nr0,
                                               1);
                    ref().packed_of(type).gemm(cols, p.data() + group, xa.data(), 0,
                                               want.data() + kPackRows, 0, nr1, 1);
                    // The groups in the other order: w0 need not come first in memory.
                    pk.gemv2(cols, p.data() + group, p.data(), xa.data(), got.data() + kPackRows,
                             got.data(), nr1, nr0);
                    ASSERT_EQ(got, want) << isa_name(k->isa) << ' ' << type_name(type)
                                         << " cols=" << cols << " rows " << nr0 << '+' << nr1;
                    checked++;
                }
            }
        }
    }
#if defined(__x86_64__)
    if (isa_supported(Isa::Avx2)) {
        EXPECT_GT(checked, 0) << "no table has a gemv2";
    }
#endif
}

// kPackRows rows w of `type` (extreme levels) against `tokens` activation rows x (the packed
// kernels' blocks, xs bytes apart; xf: the same values dequantized): the scalar packed kernel
// is the dequantized rows' dot product (plus extra[t * rows + r] where given: what Q8_1's fp16
// s adds), and every table gives its bits.
void expect_extremes_exact(Type type, const std::vector<uint8_t>& w, int64_t cols, const uint8_t* x,
                           size_t xs, const std::vector<float>& xf, int64_t tokens,
                           const std::vector<double>& extra = {}) {
    const int64_t rows = kPackRows;
    const auto p = pack(type, w, rows, cols);
    std::vector<float> want(tokens * rows), wf(cols);
    ref().packed_of(type).gemm(cols, p.data(), x, xs, want.data(), rows, rows, tokens);
    for (int64_t r = 0; r < rows; r++) {
        traits(type).to_float(w.data() + r * row_size(type, cols), wf.data(), cols);
        for (int64_t t = 0; t < tokens; t++) {
            double dot = 0;
            for (int64_t c = 0; c < cols; c++) dot += double(wf[c]) * xf[t * cols + c];
            if (!extra.empty()) dot += extra[t * rows + r];
            EXPECT_NEAR(want[t * rows + r], dot, 1e-6 * std::fabs(dot) + 1e-3)
                << type_name(type) << " row " << r << " token " << t;
        }
    }
    for (const Kernels* k : packed_tables(type)) {
        std::vector<float> got(want.size());
        k->packed_of(type).gemm(cols, p.data(), x, xs, got.data(), rows, rows, tokens);
        EXPECT_EQ(got, want) << isa_name(k->isa) << ' ' << type_name(type);
    }
}

// The k-quants' integer sums at their extremes (every level and scale at its largest, the
// activations at -128 and 127): no SIMD table may saturate or wrap where the scalar one does
// not, and the scalar one is the dequantized rows' dot product.
TEST(Packed, KQuantExtremes) {
    const int64_t cols = 2 * QK_K, tokens = 3;
    std::vector<block_q8_K> x(tokens * cols / QK_K);
    for (int64_t t = 0; t < tokens; t++) {
        for (int64_t b = 0; b < cols / QK_K; b++) {
            block_q8_K& a = x[t * (cols / QK_K) + b];
            a.d = 0.25f;
            for (int i = 0; i < QK_K; i++)
                a.qs[i] = static_cast<int8_t>(t == 0 ? -128 : t == 1 ? 127 : (i % 2 ? 127 : -128));
            for (int g = 0; g < QK_K / 16; g++) {
                int sum = 0;
                for (int i = 0; i < 16; i++) sum += a.qs[16 * g + i];
                a.bsums[g] = static_cast<int16_t>(sum);
            }
        }
    }
    std::vector<float> xf(tokens * cols);
    dequantize_row_q8_K(x.data(), xf.data(), tokens * cols);
    for (Type type : kKQuantTypes) {
        const int64_t rows = kPackRows;
        std::vector<uint8_t> w(rows * row_size(type, cols));
        for (int64_t r = 0; r < rows; r++) {
            uint8_t* row = w.data() + r * row_size(type, cols);
            const uint8_t fill = r % 3 == 2 ? 0x00 : 0xff;  // every level 0 or every level max
            for (int64_t b = 0; b < cols / QK_K; b++) {
                if (type == Type::Q4_K) {
                    auto& blk = reinterpret_cast<block_q4_K*>(row)[b];
                    blk.d = fp32_to_fp16(1.0f);
                    blk.dmin = fp32_to_fp16(r % 2 ? 0.5f : -2.0f);
                    std::memset(blk.scales, 0xff, sizeof blk.scales);  // scales and mins 63
                    std::memset(blk.qs, fill, sizeof blk.qs);
                } else if (type == Type::Q5_K) {
                    auto& blk = reinterpret_cast<block_q5_K*>(row)[b];
                    blk.d = fp32_to_fp16(1.0f);
                    blk.dmin = fp32_to_fp16(r % 2 ? 0.5f : -2.0f);
                    std::memset(blk.scales, 0xff, sizeof blk.scales);
                    std::memset(blk.qh, fill, sizeof blk.qh);  // levels 0 or 31
                    std::memset(blk.qs, fill, sizeof blk.qs);
                } else if (type == Type::IQ4_XS) {
                    // Scales 31 (odd rows) or -32, levels 113 (fill 0xff) or -127 (0x00).
                    auto& blk = reinterpret_cast<block_iq4_xs*>(row)[b];
                    blk.d = fp32_to_fp16(r % 2 ? 1.0f : -0.5f);
                    blk.scales_h = r % 2 ? 0xffff : 0;
                    std::memset(blk.scales_l, r % 2 ? 0xff : 0x00, sizeof blk.scales_l);
                    std::memset(blk.qs, fill, sizeof blk.qs);
                } else if (type == Type::Q6_K) {
                    auto& blk = reinterpret_cast<block_q6_K*>(row)[b];
                    blk.d = fp32_to_fp16(r % 2 ? 1.0f : -0.5f);
                    std::memset(blk.scales, r % 2 ? 0x80 : 0x7f, sizeof blk.scales);  // -128, 127
                    std::memset(blk.ql, fill, sizeof blk.ql);
                    std::memset(blk.qh, fill, sizeof blk.qh);
                } else if (type == Type::Q3_K) {
                    auto& blk = reinterpret_cast<block_q3_K*>(row)[b];
                    blk.d = fp32_to_fp16(r % 2 ? 1.0f : -0.5f);
                    std::memset(blk.scales, r % 2 ? 0x00 : 0xff, sizeof blk.scales);  // -32, 31
                    std::memset(blk.hmask, fill, sizeof blk.hmask);
                    std::memset(blk.qs, fill, sizeof blk.qs);
                } else {
                    auto& blk = reinterpret_cast<block_q2_K*>(row)[b];
                    blk.d = fp32_to_fp16(1.0f);
                    blk.dmin = fp32_to_fp16(r % 2 ? 0.5f : -2.0f);
                    std::memset(blk.scales, 0xff, sizeof blk.scales);  // scales and mins 15
                    std::memset(blk.qs, fill, sizeof blk.qs);
                }
            }
        }
        expect_extremes_exact(type, w, cols, reinterpret_cast<const uint8_t*>(x.data()),
                              packed_activation_size(type, cols), xf, tokens);
    }
}

// The 32-value block types at their extremes: every quant byte 0x00, 0xff, 0x80 or 0x7f (Q5_0
// and Q5_1 with all fifth bits set or clear, IQ4_NL's largest and smallest levels), the activations
// all 127, all -127 or alternating. No SIMD table may saturate an int16 pair sum (vpmaddubsw) where
// the scalar one does not, and the scalar one is the dequantized rows' dot product.
TEST(Packed, Block32Extremes) {
    const int64_t cols = 4 * 32, rows = kPackRows, tokens = 3;
    std::vector<float> x(tokens * cols);
    for (int64_t t = 0; t < tokens; t++) {
        for (int64_t c = 0; c < cols; c++)
            x[t * cols + c] = t == 0 ? 1.0f : t == 1 ? -1.0f : c % 2 ? 1.0f : -1.0f;
    }
    for (const Block32Layout& l : kBlock32Layouts) {
        const Type type = l.type;
        const auto xa = activations(ref(), type, x, tokens, cols);
        const size_t xs = xa.size() / tokens;
        std::vector<float> xf(tokens * cols);
        const auto dequantize = [&]<class Act>() {
            for (int64_t t = 0; t < tokens; t++) {
                const auto* xb = reinterpret_cast<const Act*>(xa.data() + t * xs);
                for (int64_t c = 0; c < cols; c++)
                    xf[t * cols + c] = xb[c / 32].d * xb[c / 32].qs[c % 32];
            }
        };
        if (l.m_at) {
            dequantize.template operator()<block_q8_1c>();
        } else {
            dequantize.template operator()<block_q8_0c>();
        }
        const size_t row_bytes = row_size(type, cols), block = traits(type).type_size;
        std::vector<uint8_t> w(rows * row_bytes);
        const uint8_t fill[] = {0x00, 0xff, 0x80, 0x7f};
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t b = 0; b < cols / 32; b++) {
                uint8_t* blk = w.data() + r * row_bytes + b * block;
                const fp16_t d = fp32_to_fp16(r % 2 ? 1.0f : -0.5f);
                std::memcpy(blk, &d, sizeof d);
                std::memset(blk + 2, fill[(r / 2 + b) % 4], block - 2);
                if (l.m_at) {
                    const fp16_t m = fp32_to_fp16(r % 3 ? 0.25f : -1.0f);
                    std::memcpy(blk + l.m_at, &m, sizeof m);
                }
            }
        }
        // Q4_1, Q5_1: the minimum meets s, d sum(qs) rounded to fp16, where the dequantized
        // product has d sum(qs).
        std::vector<double> extra;
        if (l.m_at) {
            extra.assign(tokens * rows, 0.0);
            for (int64_t t = 0; t < tokens; t++) {
                const auto* xb = reinterpret_cast<const block_q8_1c*>(xa.data() + t * xs);
                for (int64_t r = 0; r < rows; r++) {
                    for (int64_t b = 0; b < cols / 32; b++) {
                        fp16_t m;
                        std::memcpy(&m, w.data() + r * row_bytes + b * block + l.m_at, sizeof m);
                        int sum = 0;
                        for (int8_t q : xb[b].qs) sum += q;
                        extra[t * rows + r] +=
                            double(fp16_to_fp32(m)) * (xb[b].s - double(xb[b].d) * sum);
                    }
                }
            }
        }
        expect_extremes_exact(type, w, cols, xa.data(), xs, xf, tokens, extra);
    }
}

struct Shape {
    int64_t rows, cols, tokens;
};

// matmul over packed weights: the unpacked result within tolerance; the same bits for any
// thread count, on a team of a caller's (with_team) too, for prefill and token-by-token decode,
// alone or sharing a call.
TEST(Packed, MatmulPackedConsistent) {
    // Large enough that matmul really runs on several threads.
    const Shape shapes[] = {
        {37, 128, 1}, {600, 512, 1}, {61, 160, 35}, {130, 256, 40}, {21, 172, 5}};
    for (Type type : packed_types()) {
        for (const Kernels* k : packed_tables(type)) {
            for (Shape s : shapes) {
                if (s.cols % block_size(type)) continue;
                const auto w = test::random_matrix(type, s.rows, s.cols, 7);
                const auto p = pack(type, w, s.rows, s.cols);
                const auto x = test::random_floats(s.tokens * s.cols, 8);
                Matrix plain{type, s.rows, s.cols, w.data()};
                Matrix packed = plain;
                packed.packed = p.data();
                Context ctx;
                ctx.k = k;
                std::vector<float> want(s.rows * s.tokens), got(want.size());
                matmul(ctx, plain, x.data(), s.tokens, want.data());
                for (int threads : {1, 2, 3}) {
                    ctx.n_threads = threads;
                    std::vector<float> y(want.size());
                    matmul(ctx, packed, x.data(), s.tokens, y.data());
                    if (threads == 1) {
                        got = y;
                        for (size_t i = 0; i < y.size(); i++)
                            ASSERT_NEAR(y[i], want[i], 1e-5 * (std::fabs(want[i]) + s.cols / 32.0));
                    } else {
                        ASSERT_EQ(y, got) << isa_name(k->isa) << " threads=" << threads;
                    }
                    with_team(ctx, [&] { matmul(ctx, packed, x.data(), s.tokens, y.data()); });
                    ASSERT_EQ(y, got) << isa_name(k->isa) << " on a team, threads=" << threads;
                }
                std::vector<float> one(want.size());
                for (int64_t t = 0; t < s.tokens; t++)
                    matmul(ctx, packed, x.data() + t * s.cols, 1, one.data() + t * s.rows);
                EXPECT_EQ(one, got) << isa_name(k->isa) << ' ' << type_name(type);
                // Sharing a call with an unpacked matrix and another packed one.
                std::vector<float> a(want.size()), b(want.size()), c(want.size());
                matmul(ctx, x.data(), s.tokens,
                       {{&packed, a.data()}, {&plain, b.data()}, {&packed, c.data()}});
                EXPECT_EQ(a, got);
                EXPECT_EQ(b, want);
                EXPECT_EQ(c, got);
            }
        }
    }
}

// Each matrix whose type the active table has a packed kernel for gets its packed copy (and
// keeps it null otherwise: matmul then uses the original rows).
TEST(Packed, PackWeightsPointsAtPackedRows) {
    struct Case {
        Type type;
        int64_t rows, cols;
        std::vector<uint8_t> w;
        Matrix m;
    };
    Case cases[] = {{Type::Q4_0, 40, 64, {}, {}},     {Type::Q8_0, 17, 64, {}, {}},
                    {Type::Q5_0, 23, 96, {}, {}},     {Type::IQ4_NL, 9, 64, {}, {}},
                    {Type::Q4_1, 20, 64, {}, {}},     {Type::Q5_1, 16, 128, {}, {}},
                    {Type::Q4_K, 17, 256, {}, {}},    {Type::Q5_K, 19, 512, {}, {}},
                    {Type::Q6_K, 33, 512, {}, {}},    {Type::F16, 5, 40, {}, {}},
                    {Type::IQ4_XS, 50, 512, {}, {}},  {Type::Q3_K, 19, 256, {}, {}},
                    {Type::Q2_K, 18, 512, {}, {}},    {Type::IQ2_XXS, 21, 512, {}, {}},
                    {Type::IQ2_XS, 5, 256, {}, {}},   {Type::IQ2_S, 17, 256, {}, {}},
                    {Type::IQ3_XXS, 16, 256, {}, {}}, {Type::IQ3_S, 33, 512, {}, {}},
                    {Type::IQ1_S, 20, 256, {}, {}},   {Type::IQ1_M, 3, 512, {}, {}}};
    std::vector<Matrix*> all;
    for (Case& c : cases) {
        c.w = test::random_matrix(c.type, c.rows, c.cols, 9);
        c.m = Matrix{c.type, c.rows, c.cols, c.w.data()};
        all.push_back(&c.m);
    }
    const PackedBuffer buf = pack_weights(all, 2);
    for (const Case& c : cases) {
        if (!kernels().packed_of(c.type).gemm) {
            EXPECT_EQ(c.m.packed, nullptr) << type_name(c.type);
            continue;
        }
        ASSERT_NE(c.m.packed, nullptr) << type_name(c.type);
        const auto want = pack(c.type, c.w, c.rows, c.cols);
        EXPECT_EQ(0, std::memcmp(c.m.packed, want.data(), want.size())) << type_name(c.type);
    }
}

// The NEON tables have packed kernels for every packable type, the integer ones with and without
// sdot, but for the grid types, which they run on the rows (kernels_neon.cpp).
TEST(Packed, NeonTablesPresent) {
#if defined(__aarch64__)
    ASSERT_NE(kernels_for(Isa::Neon), nullptr);
#endif
    for (Isa isa : {Isa::Neon, Isa::NeonDotprod}) {
        const Kernels* k = kernels_for(isa);
        if (!k) continue;
        for (Type t : packed_types()) {
            const PackedKernels& p = k->packed_of(t);
            if (traits(t).grid_block) {
                EXPECT_EQ(p.gemm, nullptr) << isa_name(isa) << ' ' << type_name(t);
                continue;
            }
            EXPECT_NE(p.gemm, nullptr) << isa_name(isa) << ' ' << type_name(t);
            EXPECT_EQ(p.quantize != nullptr, traits(t).quantized)
                << isa_name(isa) << ' ' << type_name(t);
        }
    }
}

// ---- attention ----------------------------------------------------------------------------

struct AttnCase {
    int64_t n_q, hd, n_pos;
};

// Keys in the cache's block layout and position-major values, with NaN in the slots of the
// last block past n_pos (a cache holds whatever was there): nothing may read them.
template <class Elem>
void attend_case(const Kernels& k, AttendFn<Elem> Kernels::*fn, const AttnCase& c,
                 Elem (*conv)(float)) {
    const int64_t padded = (c.n_pos + kKvBlock - 1) / kKvBlock * kKvBlock;
    const auto q = test::random_floats(c.n_q * c.hd, 1, -2.0f, 2.0f);
    const auto kf = test::random_floats(padded * c.hd, 2);
    const auto vf = test::random_floats(padded * c.hd, 3);
    std::vector<Elem> kc(padded * c.hd), vc(padded * c.hd);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t p = 0; p < padded; p++) {
        for (int64_t d = 0; d < c.hd; d++) {
            const bool live = p < c.n_pos;
            kc[p / kKvBlock * kKvBlock * c.hd + d * kKvBlock + p % kKvBlock] =
                conv(live ? kf[p * c.hd + d] : nan);
            vc[p * c.hd + d] = conv(live ? vf[p * c.hd + d] : nan);
        }
    }
    std::vector<float> s_ref(c.n_q * padded), s(c.n_q * padded);
    std::vector<float> want(c.n_q * c.hd), got(c.n_q * c.hd);
    (ref().*fn)(q.data(), c.n_q, c.hd, kc.data(), vc.data(), c.n_pos, 0.3f, s_ref.data(),
                want.data());
    (k.*fn)(q.data(), c.n_q, c.hd, kc.data(), vc.data(), c.n_pos, 0.3f, s.data(), got.data());
    for (size_t i = 0; i < got.size(); i++) {
        // A weighted mean of values in [-1, 1]; float sums of n_pos terms.
        ASSERT_NEAR(got[i], want[i], 2e-6 * (1 + std::sqrt(double(c.n_pos))))
            << isa_name(k.isa) << " n_q=" << c.n_q << " hd=" << c.hd << " n_pos=" << c.n_pos
            << " i=" << i;
    }
}

float same(float x) {
    return x;
}

TEST(Attention, MatchesScalar) {
    for (const Kernels* k : test::simd_tables()) {
        for (int64_t n_q : {1, 2, 3, 4, 5, 8}) {
            for (int64_t hd : {4, 8, 16, 24, 64, 80, 128, 256}) {
                for (int64_t n_pos : {1, 2, 15, 16, 17, 100, 513}) {
                    const AttnCase c{n_q, hd, n_pos};
                    attend_case<float>(*k, &Kernels::attend_f32, c, same);
                    attend_case<fp16_t>(*k, &Kernels::attend_f16, c, fp32_to_fp16);
                }
            }
        }
    }
}

// One position: the output is that position's value row exactly, whatever the query.
TEST(Attention, SinglePositionCopiesValues) {
    for (const Kernels* k : test::all_tables()) {
        const int64_t hd = 64, n_q = 8;
        const auto q = test::random_floats(n_q * hd, 4);
        const auto v = test::random_floats(kKvBlock * hd, 5);
        const auto kk = test::random_floats(kKvBlock * hd, 6);
        std::vector<float> s(n_q * kKvBlock), out(n_q * hd);
        k->attend_f32(q.data(), n_q, hd, kk.data(), v.data(), 1, 0.125f, s.data(), out.data());
        for (int64_t j = 0; j < n_q; j++) {
            for (int64_t d = 0; d < hd; d++) ASSERT_EQ(out[j * hd + d], v[d]) << isa_name(k->isa);
        }
    }
}

}  // namespace
}  // namespace ggml_lite
