// Every kernel of every SIMD table this CPU runs, against the scalar reference table, on
// random data including sizes that are not multiples of the vector width or with odd block
// counts. Tolerances are stated where results may differ; random data alone could hide an
// indexing bug inside a tolerance, so the dot products are also checked on data for which
// every rounding is exact and any correct order gives the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-lite/bandwidth.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/quant.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

using test::random_floats;
using test::simd_tables;

const Kernels& ref() {
    return kernels_scalar();
}

constexpr int64_t kFloatSizes[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 4099};
constexpr int64_t kBlockCounts[] = {1, 2, 3, 5, 8, 33, 64, 129};

// Bound for a float sum of products computed in a different order than the reference: every
// path splits the sum over at least 4 lanes of at most n/4 sequential additions, then a
// reduction and a scalar tail (< 64 more roundings); each rounding errs by at most
// FLT_EPSILON of the running magnitude, itself at most mag = sum |products|.
double dot_tolerance(int64_t terms, double mag) {
    return (static_cast<double>(terms) / 4 + 64) * FLT_EPSILON * mag;
}

std::vector<uint8_t> to_type(Type t, const std::vector<float>& x) {
    std::vector<uint8_t> out(row_size(t, static_cast<int64_t>(x.size())));
    traits(t).from_float(x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

std::vector<float> to_float(Type t, const std::vector<uint8_t>& data, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    traits(t).to_float(data.data(), out.data(), n);
    return out;
}

// ---- activation quantizer ----------------------------------------------------------------

// Q8_0's quantizer and Q8_1's (Q8_0's values and d, and the sum's s).
TEST(Kernels, Q8_0QuantizerBitIdentical) {
    std::vector<float> x = random_floats(129 * QK8_0, 101, -4.0f, 4.0f);
    // Block 0: amax 127 gives d = 1, so halves are exact ties: ties go away from zero.
    for (int j = 0; j < QK8_0; j++) x[j] = 0.5f * static_cast<float>(j - 15);
    x[31] = 127.0f;
    for (int j = 0; j < QK8_0; j++) x[QK8_0 + j] = 0.0f;         // block 1: zeros
    for (int j = 0; j < QK8_0; j++) x[2 * QK8_0 + j] *= 1e-30f;  // block 2: tiny
    for (int j = 0; j < QK8_0; j++) x[3 * QK8_0 + j] *= 1e5f;    // block 3: huge
    x[4 * QK8_0 + 7] = -0.0f;
    for (const Kernels* k : simd_tables()) {
        for (Type t : {Type::Q8_0, Type::Q8_1}) {
            for (int64_t nb : kBlockCounts) {
                const size_t bytes = row_size(t, nb * QK8_0);
                std::vector<uint8_t> a(bytes), b(bytes);
                ref().of(t).from_float(x.data(), a.data(), nb * QK8_0);
                k->of(t).from_float(x.data(), b.data(), nb * QK8_0);
                EXPECT_EQ(a, b) << isa_name(k->isa) << ' ' << type_name(t) << " blocks=" << nb;
            }
        }
        std::vector<float> y(1000);
        k->of(Type::F32).from_float(x.data(), y.data(), 1000);
        EXPECT_EQ(std::memcmp(x.data(), y.data(), 1000 * sizeof(float)), 0);
    }
}

TEST(Kernels, Q8_KQuantizerBitIdentical) {
    std::vector<float> x = random_floats(33 * QK_K, 102, -4.0f, 4.0f);
    // Block 0: max -127 gives scale 1, so halves are exact ties: ties go to even.
    for (int j = 0; j < QK_K; j++) x[j] = 0.5f * static_cast<float>(j % 64 - 32);
    x[5] = -127.0f;
    for (int j = 0; j < QK_K; j++) x[QK_K + j] = 0.0f;         // block 1: zeros
    for (int j = 0; j < QK_K; j++) x[2 * QK_K + j] *= 1e-30f;  // block 2: tiny
    for (int j = 0; j < QK_K; j++) x[3 * QK_K + j] *= 1e5f;    // block 3: huge
    x[4 * QK_K + 9] = 7.0f;     // block 4: the largest magnitude twice, positive first,
    x[4 * QK_K + 200] = -7.0f;  // which decides the sign of the scale
    x[5 * QK_K + 255] = -9.0f;  // block 5: the largest magnitude last
    x[6 * QK_K + 3] = -0.0f;
    for (const Kernels* k : simd_tables()) {
        for (int64_t nb : {1, 2, 3, 5, 8, 33}) {
            std::vector<block_q8_K> a(nb), b(nb);
            ref().of(Type::Q8_K).from_float(x.data(), a.data(), nb * QK_K);
            k->of(Type::Q8_K).from_float(x.data(), b.data(), nb * QK_K);
            EXPECT_EQ(std::memcmp(a.data(), b.data(), nb * sizeof(block_q8_K)), 0)
                << isa_name(k->isa) << " blocks=" << nb;
        }
    }
}

// ---- dot products --------------------------------------------------------------------------

struct DotCase {
    Type type;
    std::vector<uint8_t> w, x;  // x already in the vec_dot type
    double mag;                 // sum of |w_i x_i| (or its parts, see weight_magnitudes)
};

// Types with a min (Q4_1, Q5_1: d q + m; Q2_K, Q4_K, Q5_K: d sc q - dmin m): the scale part and the
// min part, summed apart, each at its magnitude.
template <class Block>
void add_min_part(Type type, const std::vector<uint8_t>& w, int64_t n, std::vector<double>& mag) {
    std::vector<uint8_t> scale_part = w, min_part = w;
    for (size_t b = 0; b < w.size(); b += sizeof(Block)) {
        auto* s = reinterpret_cast<Block*>(&scale_part[b]);
        auto* m = reinterpret_cast<Block*>(&min_part[b]);
        if constexpr (requires(Block blk) { blk.dmin; }) {
            s->dmin = 0;
            m->d = 0;
        } else {
            s->m = 0;
            m->d = 0;
        }
    }
    const std::vector<float> sf = to_float(type, scale_part, n), mf = to_float(type, min_part, n);
    for (int64_t i = 0; i < n; i++) mag[i] = std::fabs(sf[i]) + std::fabs(mf[i]);
}

// Types whose SIMD sums take unsigned levels q and their offset apart, 16 values to a scale:
// `bound` |d sc| for each weight, sc(block, k) sub-block k's scale.
template <class Block, class Scale>
void offset_part(const std::vector<uint8_t>& w, double bound, Scale sc, std::vector<double>& mag) {
    for (size_t b = 0; b * sizeof(Block) < w.size(); b++) {
        const auto& blk = *reinterpret_cast<const Block*>(&w[b * sizeof(Block)]);
        const double d = fp16_to_fp32(blk.d);
        for (int i = 0; i < QK_K; i++) mag[b * QK_K + i] = bound * std::fabs(d * sc(blk, i / 16));
    }
}

// For each weight, the largest magnitude a kernel's partial sums hold for it: |w| itself,
// except where the kernels sum parts of w apart. The types with a min sum the scaled levels and
// the min separately, which may cancel only at the end; Q6_K's SIMD sums take unsigned levels q and
// the offset 32 apart, at most 95 |d sc| together, Q3_K's q and 4, at most 11 |d sc|.
std::vector<double> weight_magnitudes(Type type, const std::vector<uint8_t>& w, int64_t n) {
    std::vector<double> mag(static_cast<size_t>(n));
    const std::vector<float> wf = to_float(type, w, n);
    for (int64_t i = 0; i < n; i++) mag[i] = std::fabs(wf[i]);
    if (type == Type::Q2_K) {
        add_min_part<block_q2_K>(type, w, n, mag);
    } else if (type == Type::Q4_K) {
        add_min_part<block_q4_K>(type, w, n, mag);
    } else if (type == Type::Q5_K) {
        add_min_part<block_q5_K>(type, w, n, mag);
    } else if (type == Type::Q4_1) {
        add_min_part<block_q4_1>(type, w, n, mag);
    } else if (type == Type::Q5_1) {
        add_min_part<block_q5_1>(type, w, n, mag);
    } else if (type == Type::Q6_K) {
        offset_part<block_q6_K>(
            w, 95.0, [](const block_q6_K& b, int k) { return b.scales[k]; }, mag);
    } else if (type == Type::Q3_K) {
        offset_part<block_q3_K>(w, 11.0, q3_K_scale, mag);
    }
    return mag;
}

DotCase make_dot_case(Type type, int64_t n, uint32_t seed) {
    DotCase c{type, test::random_matrix(type, 1, n, seed), {}, 0.0};
    const Type act = traits(type).vec_dot_type;
    c.x = to_type(act, random_floats(n, seed + 1, -3.0f, 3.0f));
    const std::vector<double> wm = weight_magnitudes(type, c.w, n);
    const std::vector<float> xf = to_float(act, c.x, n);
    for (int64_t i = 0; i < n; i++) c.mag += wm[i] * std::fabs(xf[i]);
    return c;
}

TEST(Kernels, QuantizedDotsMatchScalar) {
    for (const Kernels* k : simd_tables()) {
        for (Type type : all_types()) {
            if (!traits(type).quantized) continue;
            for (int64_t nb : kBlockCounts) {
                const int64_t n = nb * block_size(type);
                const DotCase c = make_dot_case(type, n, static_cast<uint32_t>(nb));
                const float want = ref().of(type).vec_dot(n, c.w.data(), c.x.data());
                const float got = k->of(type).vec_dot(n, c.w.data(), c.x.data());
                // Block sums are exact integers; only the float sum over blocks (and the scale
                // products) may round differently: nb terms. A k-quant super-block's integer
                // sums become floats in up to 16 lanes and two parts, each with a product, a
                // conversion and an addition: 20 terms per block covers them.
                const int64_t terms = block_size(type) == QK_K ? 20 * nb : nb;
                EXPECT_NEAR(got, want, dot_tolerance(terms, c.mag))
                    << isa_name(k->isa) << ' ' << type_name(type) << " blocks=" << nb;
            }
        }
    }
}

// The kernels compute the dot of what the blocks decode to: exact integer sums, so only the
// float steps round. Q8_1's s = d sum(q) is stored in fp16 (relative error 2^-11), and the mins
// multiply it: |m s| is at most the min part of the magnitude.
TEST(Kernels, QuantizedDotsEqualDequantizedDots) {
    for (Type type : all_types()) {
        if (!traits(type).quantized) continue;
        const Type act = traits(type).vec_dot_type;
        for (int64_t nb : kBlockCounts) {
            const int64_t n = nb * block_size(type);
            const DotCase c = make_dot_case(type, n, static_cast<uint32_t>(nb) + 100);
            const std::vector<float> wf = to_float(type, c.w, n), xf = to_float(act, c.x, n);
            double want = 0.0;
            for (int64_t i = 0; i < n; i++) want += static_cast<double>(wf[i]) * xf[i];
            const float got = ref().of(type).vec_dot(n, c.w.data(), c.x.data());
            const int64_t terms = block_size(type) == QK_K ? 20 * nb : nb;
            const double s_error = act == Type::Q8_1 ? 0x1p-11 * c.mag : 0.0;
            EXPECT_NEAR(got, want, dot_tolerance(terms, c.mag) + s_error)
                << type_name(type) << " blocks=" << nb;
        }
    }
}

TEST(Kernels, FloatDotsMatchScalar) {
    for (const Kernels* k : simd_tables()) {
        for (Type type : all_types()) {
            if (traits(type).quantized) continue;
            for (int64_t n : kFloatSizes) {
                const DotCase c = make_dot_case(type, n, static_cast<uint32_t>(n));
                const float want = ref().of(type).vec_dot(n, c.w.data(), c.x.data());
                const float got = k->of(type).vec_dot(n, c.w.data(), c.x.data());
                EXPECT_NEAR(got, want, dot_tolerance(n, c.mag))
                    << isa_name(k->isa) << ' ' << type_name(type) << " n=" << n;
            }
        }
    }
}

// Small integers (floats) and blocks with scale 1 or 2: every product and partial sum is an
// exactly representable integer, so any summation order must give identical bits. A skipped,
// repeated or misplaced element changes the result.
TEST(Kernels, DotsExactOnExactData) {
    std::mt19937 rng(5);
    for (const Kernels* k : simd_tables()) {
        for (int64_t n : kFloatSizes) {
            std::uniform_int_distribution<int> small(-3, 3);
            std::vector<float> w(n), x(n);
            for (int64_t i = 0; i < n; i++) w[i] = static_cast<float>(small(rng));
            for (int64_t i = 0; i < n; i++) x[i] = static_cast<float>(small(rng));
            for (Type type : all_types()) {
                if (traits(type).quantized) continue;
                const auto wt = to_type(type, w);
                EXPECT_EQ(k->of(type).vec_dot(n, wt.data(), x.data()),
                          ref().of(type).vec_dot(n, wt.data(), x.data()))
                    << isa_name(k->isa) << ' ' << type_name(type) << " n=" << n;
            }
        }
        for (int64_t nb : kBlockCounts) {
            std::uniform_int_distribution<int> q8(-127, 127), q4(0, 15);
            std::vector<block_q8_0> a(nb), xq(nb);
            std::vector<block_q4_0> b(nb);
            for (int64_t i = 0; i < nb; i++) {
                a[i].d = xq[i].d = 0x3c00;                           // 1.0
                b[i].d = (i % 2) ? fp16_t{0x4000} : fp16_t{0x3c00};  // 2.0 or 1.0
                for (auto& q : a[i].qs) q = static_cast<int8_t>(q8(rng));
                for (auto& q : xq[i].qs) q = static_cast<int8_t>(q8(rng));
                for (auto& q : b[i].qs) q = static_cast<uint8_t>(q4(rng) | (q4(rng) << 4));
            }
            const int64_t n = nb * QK8_0;
            EXPECT_EQ(k->of(Type::Q8_0).vec_dot(n, a.data(), xq.data()),
                      ref().of(Type::Q8_0).vec_dot(n, a.data(), xq.data()))
                << isa_name(k->isa) << " q8_0 blocks=" << nb;
            EXPECT_EQ(k->of(Type::Q4_0).vec_dot(n, b.data(), xq.data()),
                      ref().of(Type::Q4_0).vec_dot(n, b.data(), xq.data()))
                << isa_name(k->isa) << " q4_0 blocks=" << nb;
        }
        // k-quants: activations in [-2, 2] with scale 1, weights with scales and mins of at
        // most 7 (Q4_K) or 7 in magnitude (Q6_K) and super-scales 1, 2 or 1/2. Any partial
        // sum, in any lane split, is at most 111,104 per Q4_K block (integers) and 340,480 per
        // Q6_K block (halves; unsigned levels and offset apart), so below 2^24: exact.
        for (int64_t nb : kBlockCounts) {
            std::uniform_int_distribution<int> act(-2, 2), small(0, 7), byte(0, 255);
            std::vector<block_q8_K> xk(nb);
            std::vector<block_q4_K> a(nb);
            std::vector<block_q6_K> b(nb);
            for (int64_t i = 0; i < nb; i++) {
                xk[i].d = 1.0f;
                for (auto& q : xk[i].qs) q = static_cast<int8_t>(act(rng));
                for (int s = 0; s < QK_K / 16; s++) {
                    int sum = 0;
                    for (int l = 0; l < 16; l++) sum += xk[i].qs[16 * s + l];
                    xk[i].bsums[s] = static_cast<int16_t>(sum);
                }
                a[i].d = (i % 2) ? fp16_t{0x4000} : fp16_t{0x3c00};  // 2.0 or 1.0
                a[i].dmin = 0x3c00;
                // Six-bit values <= 7: bytes 0-7 hold them whole (no top bits), bytes 8-11
                // the low nibbles of scales and mins 4-7.
                for (int j = 0; j < 8; j++) a[i].scales[j] = static_cast<uint8_t>(small(rng));
                for (int j = 8; j < 12; j++) {
                    a[i].scales[j] = static_cast<uint8_t>(small(rng) | small(rng) << 4);
                }
                for (auto& q : a[i].qs) q = static_cast<uint8_t>(byte(rng));
                b[i].d = (i % 2) ? fp16_t{0x3800} : fp16_t{0x3c00};  // 0.5 or 1.0
                for (auto& s : b[i].scales) s = static_cast<int8_t>(small(rng) - small(rng));
                for (auto& q : b[i].ql) q = static_cast<uint8_t>(byte(rng));
                for (auto& q : b[i].qh) q = static_cast<uint8_t>(byte(rng));
            }
            const int64_t n = nb * QK_K;
            EXPECT_EQ(k->of(Type::Q4_K).vec_dot(n, a.data(), xk.data()),
                      ref().of(Type::Q4_K).vec_dot(n, a.data(), xk.data()))
                << isa_name(k->isa) << " q4_k blocks=" << nb;
            if (nb > 16) continue;  // Q6_K: 2 * 16 * 340,480 < 2^24 halves
            EXPECT_EQ(k->of(Type::Q6_K).vec_dot(n, b.data(), xk.data()),
                      ref().of(Type::Q6_K).vec_dot(n, b.data(), xk.data()))
                << isa_name(k->isa) << " q6_k blocks=" << nb;
        }
    }
}

// Random level bytes for every block of v; its scales are the caller's.
template <class Block>
void random_levels(std::vector<Block>& v, std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(0, 255);
    auto* p = reinterpret_cast<uint8_t*>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(Block); i++) p[i] = static_cast<uint8_t>(byte(rng));
}

// Q8_1 or Q8_K activations in [-a, a] with scale 1 and their sums (exact in fp16: |s| <= 2048).
void small_activations(std::vector<block_q8_1>& x, int a, std::mt19937& rng) {
    std::uniform_int_distribution<int> act(-a, a);
    for (auto& b : x) {
        int sum = 0;
        for (auto& q : b.qs) sum += q = static_cast<int8_t>(act(rng));
        b.d = 0x3c00;
        b.s = fp32_to_fp16(static_cast<float>(sum));
    }
}
void small_activations(std::vector<block_q8_K>& x, int a, std::mt19937& rng) {
    std::uniform_int_distribution<int> act(-a, a);
    for (auto& b : x) {
        b.d = 1.0f;
        for (auto& q : b.qs) q = static_cast<int8_t>(act(rng));
        for (int s = 0; s < QK_K / 16; s++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += b.qs[16 * s + l];
            b.bsums[s] = static_cast<int16_t>(sum);
        }
    }
}

template <class Block, class Act>
void expect_exact(const Kernels& k, Type type, const std::vector<Block>& w,
                  const std::vector<Act>& x) {
    const int64_t n = static_cast<int64_t>(w.size()) * block_size(type);
    EXPECT_EQ(k.of(type).vec_dot(n, w.data(), x.data()),
              ref().of(type).vec_dot(n, w.data(), x.data()))
        << isa_name(k.isa) << ' ' << type_name(type) << " blocks=" << w.size();
}

// The same for the types whose levels take a fifth bit, a table or a min. Scales 1 or 2, mins
// -8..8 (fp16 integers); activations at most 8 (32-value blocks) or 2 (super-blocks) in
// magnitude. Bounds on the sum of |terms|, below 2^24 so every partial sum is an exact float:
// 32-value blocks 32 * 127 * 8 * 2 + 8 * 256 per block (IQ4_NL's levels), times 129 blocks;
// Q5_K 7 * 256 * 31 * 2 * 2 + 7 * 256 * 2 per super-block, times 64; Q2_K (random 4-bit
// scales and mins) 15 * 256 * 3 * 2 * 2 + 15 * 256 * 2, times 64; IQ4_XS scales of at most 7
// in magnitude, 7 * 256 * 127 * 2 * 2 per super-block, times 16; Q3_K (random 6-bit scales,
// levels and offset apart) 32 * 256 * (7 + 4) * 2 * 2, times 16.
TEST(Kernels, MoreTypesExactOnExactData) {
    std::mt19937 rng(6);
    std::uniform_int_distribution<int> small(0, 7), mins(-8, 8);
    const auto scale = [](int64_t i) { return (i % 2) ? fp16_t{0x4000} : fp16_t{0x3c00}; };
    for (const Kernels* k : simd_tables()) {
        for (int64_t nb : kBlockCounts) {
            std::vector<block_q8_0> x0(nb);
            random_levels(x0, rng);
            for (auto& b : x0) {
                b.d = 0x3c00;
                for (auto& q : b.qs) q = static_cast<int8_t>(q % 9);  // -8..8
            }
            std::vector<block_q8_1> x1(nb);
            small_activations(x1, 8, rng);
            std::vector<block_q4_1> q41(nb);
            std::vector<block_q5_0> q50(nb);
            std::vector<block_q5_1> q51(nb);
            std::vector<block_iq4_nl> nl(nb);
            random_levels(q41, rng);
            random_levels(q50, rng);
            random_levels(q51, rng);
            random_levels(nl, rng);
            for (int64_t i = 0; i < nb; i++) {
                q41[i].d = q50[i].d = q51[i].d = nl[i].d = scale(i);
                q41[i].m = fp32_to_fp16(static_cast<float>(mins(rng)));
                q51[i].m = fp32_to_fp16(static_cast<float>(mins(rng)));
            }
            expect_exact(*k, Type::Q4_1, q41, x1);
            expect_exact(*k, Type::Q5_0, q50, x0);
            expect_exact(*k, Type::Q5_1, q51, x1);
            expect_exact(*k, Type::IQ4_NL, nl, x0);

            if (nb > 64) continue;
            std::vector<block_q8_K> xk(nb);
            small_activations(xk, 2, rng);
            std::vector<block_q5_K> q5k(nb);
            random_levels(q5k, rng);
            for (int64_t i = 0; i < nb; i++) {
                q5k[i].d = scale(i);
                q5k[i].dmin = 0x3c00;
                // Six-bit values <= 7 (see the Q4_K case above).
                for (int j = 0; j < 8; j++) q5k[i].scales[j] = static_cast<uint8_t>(small(rng));
                for (int j = 8; j < 12; j++)
                    q5k[i].scales[j] = static_cast<uint8_t>(small(rng) | small(rng) << 4);
            }
            expect_exact(*k, Type::Q5_K, q5k, xk);
            std::vector<block_q2_K> q2k(nb);
            random_levels(q2k, rng);
            for (int64_t i = 0; i < nb; i++) {
                q2k[i].d = scale(i);
                q2k[i].dmin = 0x3c00;
            }
            expect_exact(*k, Type::Q2_K, q2k, xk);

            if (nb > 16) continue;
            std::vector<block_iq4_xs> xs(nb);
            random_levels(xs, rng);
            for (int64_t i = 0; i < nb; i++) {
                xs[i].d = scale(i);
                xs[i].scales_h = 0;
                for (int j = 0; j < 8; j++) {
                    const int sc = 32 + small(rng) - small(rng);  // stored 6 bits: level + 32
                    xs[i].scales_h = static_cast<uint16_t>(xs[i].scales_h | (sc >> 4) << (2 * j));
                    uint8_t& low = xs[i].scales_l[j / 2];
                    low = static_cast<uint8_t>(j % 2 ? (low & 0x0f) | (sc & 0x0f) << 4 : sc & 0x0f);
                }
            }
            expect_exact(*k, Type::IQ4_XS, xs, xk);
            std::vector<block_q3_K> q3k(nb);
            random_levels(q3k, rng);
            for (int64_t i = 0; i < nb; i++) q3k[i].d = scale(i);
            expect_exact(*k, Type::Q3_K, q3k, xk);
        }
    }
}

// Tiles are how matmul calls the kernels; each element must equal vec_dot exactly.
TEST(Kernels, GemmTileEqualsVecDot) {
    for (const Kernels* k : test::all_tables()) {
        for (Type type : all_types()) {
            const TypeKernels& tk = k->of(type);
            const Type act = traits(type).vec_dot_type;
            for (int64_t blocks : {1, 3, 5}) {
                const int64_t n = blocks * std::max<int64_t>(32, block_size(type));
                const size_t ws = row_size(type, n), xs = row_size(act, n);
                const auto w = test::random_matrix(type, kTileRows, n, 61);
                const auto x = test::random_matrix(act, kTileTokens, n, 62);
                for (int nr = 1; nr <= kTileRows; nr++) {
                    for (int nt = 1; nt <= kTileTokens; nt++) {
                        std::vector<float> y(kTileTokens * 8, -1.0f);
                        tk.gemm_tile(n, w.data(), ws, x.data(), xs, y.data(), 8, nr, nt);
                        for (int t = 0; t < kTileTokens; t++) {
                            for (int r = 0; r < 8; r++) {
                                const float got = y[t * 8 + r];
                                if (t >= nt || r >= nr) {
                                    ASSERT_EQ(got, -1.0f) << "wrote outside the tile";
                                    continue;
                                }
                                ASSERT_EQ(got, tk.vec_dot(n, w.data() + r * ws, x.data() + t * xs))
                                    << isa_name(k->isa) << ' ' << type_name(type) << " n=" << n
                                    << " tile " << nr << 'x' << nt << " at " << r << ',' << t;
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---- float kernels -----------------------------------------------------------------------

// |a - b| <= rel * |b| + abs, element by element.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel,
                  double abs, const char* what, const Kernels* k, int64_t n) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
        ASSERT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs)
            << what << ' ' << isa_name(k->isa) << " n=" << n << " i=" << i;
    }
}

TEST(Kernels, AddAndScaleBitIdentical) {
    // One rounding per element, the same operation: any correct SIMD version agrees exactly.
    for (const Kernels* k : simd_tables()) {
        for (int64_t n : kFloatSizes) {
            const auto x = random_floats(n, 71);
            auto a = random_floats(n, 72), b = a;
            ref().add(a.data(), x.data(), n);
            k->add(b.data(), x.data(), n);
            EXPECT_EQ(a, b) << isa_name(k->isa) << " add n=" << n;
            ref().scale(a.data(), 0.37f, n);
            k->scale(b.data(), 0.37f, n);
            EXPECT_EQ(a, b) << isa_name(k->isa) << " scale n=" << n;
        }
    }
}

TEST(Kernels, RmsnormMatchesScalar) {
    for (const Kernels* k : simd_tables()) {
        for (int64_t n : kFloatSizes) {
            const auto x = random_floats(n, 81, -2.0f, 2.0f), w = random_floats(n, 82);
            std::vector<float> a(n), b(n);
            ref().rmsnorm(a.data(), x.data(), w.data(), n, 1e-5f);
            k->rmsnorm(b.data(), x.data(), w.data(), n, 1e-5f);
            // The sum of squares (positive terms) differs by at most the summation bound
            // relative to itself; the square root halves that; three more roundings per element.
            const double rel = dot_tolerance(n, 1.0) / 2 + 4 * FLT_EPSILON;
            expect_close(b, a, rel, 0.0, "rmsnorm", k, n);
        }
    }
}

// xsimd's exp is accurate to a few ulp, libm's to within one; 8 ulp covers both with room.
constexpr double kExpRel = 8 * FLT_EPSILON;

TEST(Kernels, SoftmaxMatchesScalarAndMasks) {
    for (const Kernels* k : test::all_tables()) {
        for (int64_t n : kFloatSizes) {
            auto x = random_floats(n, 91, -10.0f, 10.0f);
            for (int64_t i = 0; i < n; i += 3) x[i] = -INFINITY;  // masked (causal) entries
            if (n > 1) x[1] = 50.0f;                              // no overflow from big logits
            auto a = x, b = x;
            ref().softmax(a.data(), n);
            k->softmax(b.data(), n);
            double sum = 0.0;
            for (int64_t i = 0; i < n; i++) {
                if (i % 3 == 0) {
                    ASSERT_EQ(b[i], 0.0f) << "masked entry " << i;
                }
                ASSERT_TRUE(std::isfinite(b[i]));
                sum += b[i];
            }
            if (n > 1) {
                EXPECT_NEAR(sum, 1.0, dot_tolerance(n, 1.0) + kExpRel);
            }
            // exp per element, the sum (a positive sum: bound relative to itself), one division.
            expect_close(b, a, kExpRel + dot_tolerance(n, 1.0) + 2 * FLT_EPSILON, 0.0, "softmax", k,
                         n);
        }
        std::vector<float> all_masked(17, -INFINITY);
        k->softmax(all_masked.data(), 17);
        for (float v : all_masked) EXPECT_EQ(v, 0.0f) << isa_name(k->isa) << " all masked";
    }
}

TEST(Kernels, SiluMulMatchesScalar) {
    for (const Kernels* k : simd_tables()) {
        for (int64_t n : kFloatSizes) {
            auto h = random_floats(n, 101, -20.0f, 20.0f);
            const auto g = random_floats(n, 102, -2.0f, 2.0f);
            if (n > 2) h[2] = -200.0f;  // exp(200) overflows to inf: silu must give -0, not NaN
            auto a = h, b = h;
            ref().silu_mul(a.data(), g.data(), n);
            k->silu_mul(b.data(), g.data(), n);
            // exp, then an addition, a division and a product: exp's error plus 3 roundings.
            expect_close(b, a, kExpRel + 3 * FLT_EPSILON, 1e-30, "silu_mul", k, n);
        }
    }
}

TEST(Kernels, AxpyF16MatchesScalar) {
    for (const Kernels* k : simd_tables()) {
        for (int64_t n : kFloatSizes) {
            const auto xf = random_floats(n, 111);
            std::vector<fp16_t> x(n);
            for (int64_t i = 0; i < n; i++) x[i] = fp32_to_fp16(xf[i]);
            auto a = random_floats(n, 112), b = a;
            ref().axpy_f16(a.data(), 0.3f, x.data(), n);
            k->axpy_f16(b.data(), 0.3f, x.data(), n);
            for (int64_t i = 0; i < n; i++) {
                // A fused multiply-add skips the rounding of a * x: at most one ulp of it.
                const double ax = std::fabs(0.3 * fp16_to_fp32(x[i]));
                ASSERT_NEAR(b[i], a[i], FLT_EPSILON * (ax + std::fabs(a[i])))
                    << isa_name(k->isa) << " n=" << n;
            }
        }
    }
}

// RoPE on every table against the formula, in double: pairs (2i, 2i+1) rotated by angle_i,
// dimensions past rot_dim untouched.
TEST(Kernels, RopeMatchesFormula) {
    struct Shape {
        int64_t heads, head_dim, rot_dim;
    };
    const Shape shapes[] = {{1, 2, 2},    {3, 64, 64},  {2, 80, 80},
                            {4, 128, 64}, {2, 100, 38}, {1, 640, 600}};
    for (const Kernels* k : test::all_tables()) {
        for (const Shape& s : shapes) {
            const int64_t half = s.rot_dim / 2;
            const auto angles = random_floats(half, 121, -50.0f, 50.0f);
            std::vector<float> c(half), sn(half);
            for (int64_t i = 0; i < half; i++) {
                c[i] = std::cos(angles[i]);
                sn[i] = std::sin(angles[i]);
            }
            const auto x = random_floats(s.heads * s.head_dim, 122);
            auto y = x;
            k->rope(y.data(), s.heads, s.head_dim, s.rot_dim, c.data(), sn.data());
            for (int64_t h = 0; h < s.heads; h++) {
                const float* in = x.data() + h * s.head_dim;
                const float* out = y.data() + h * s.head_dim;
                for (int64_t i = 0; i < half; i++) {
                    const double x0 = in[2 * i], x1 = in[2 * i + 1];
                    const double e0 = x0 * c[i] - x1 * sn[i], e1 = x0 * sn[i] + x1 * c[i];
                    // Two products and a sum in float (with or without fusing): 2 ulp of the
                    // larger product.
                    const double tol = 2 * FLT_EPSILON * (std::fabs(x0) + std::fabs(x1));
                    ASSERT_NEAR(out[2 * i], e0, tol)
                        << isa_name(k->isa) << " h=" << h << " i=" << i;
                    ASSERT_NEAR(out[2 * i + 1], e1, tol) << isa_name(k->isa);
                }
                for (int64_t i = s.rot_dim; i < s.head_dim; i++) ASSERT_EQ(out[i], in[i]);
            }
        }
    }
}

// The bandwidth probe reads every word of both streams exactly once: its sum (mod 2^64) is the
// plain sum, for lengths with and without whole vector steps and for unaligned starts.
TEST(Kernels, ReadSumIsTheSumOfTheWords) {
    std::mt19937_64 rng(7);
    std::vector<uint64_t> words(2 * 4099 + 1);
    for (uint64_t& w : words) w = rng();
    for (const Kernels* k : test::all_tables()) {
        for (int64_t n : {0, 1, 7, 8, 31, 32, 33, 100, 1000, 4096, 4099}) {
            for (int64_t start : {0, 1}) {
                const uint64_t* p = words.data() + start;
                const uint64_t* q = p + 4099;
                uint64_t expect = 0;
                for (int64_t i = 0; i < n; i++) expect += p[i] + q[i];
                EXPECT_EQ(k->read_sum(p, q, 8 * n), expect)
                    << isa_name(k->isa) << " n=" << n << " start=" << start;
            }
        }
    }
}

// read_pass splits the two halves among threads in 32 KiB pieces, the last one short, and
// an odd word count leaves one word over.
TEST(Bandwidth, ReadPassSumsEveryWordForAnyThreadCount) {
    for (size_t n_words : {size_t{(3 << 16) / 8 + 5}, size_t{(3 << 16) / 8 + 6}}) {
        std::vector<uint64_t> words(n_words);
        uint64_t expect = 0;
        for (size_t i = 0; i < words.size(); i++) expect += words[i] = i * 0x9E3779B97F4A7C15ull;
        for (int threads : {1, 2, 3}) {
            EXPECT_EQ(read_pass(words.data(), 8 * words.size(), threads), expect)
                << n_words << " words, " << threads << " threads";
        }
    }
    EXPECT_GT(measure_read_bandwidth(2, size_t{1} << 22, 2), 0.0);
}

}  // namespace
}  // namespace ggml_lite
