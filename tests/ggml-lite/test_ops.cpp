// matmul (against a double-precision reference, thread-count independence, tiling), get_row
// and rope_angles.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "ggml-lite/ops.h"
#include "ggml-lite/quant.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

std::vector<float> dequantize(Type type, const std::vector<uint8_t>& data, int64_t n) {
    std::vector<float> f(static_cast<size_t>(n));
    traits(type).to_float(data.data(), f.data(), n);
    return f;
}

// What the kernels actually multiply: the activations after conversion to vec_dot_type.
std::vector<float> as_activations(Type wtype, const std::vector<float>& x) {
    const Type act = traits(wtype).vec_dot_type;
    std::vector<uint8_t> buf(row_size(act, static_cast<int64_t>(x.size())));
    traits(act).from_float(x.data(), buf.data(), static_cast<int64_t>(x.size()));
    return dequantize(act, buf, static_cast<int64_t>(x.size()));
}

struct Shape {
    int64_t rows, cols, tokens;
};

// Shapes are in 32-blocks; the k-quants round columns up to whole 256-value super-blocks.
TEST(Matmul, MatchesDoubleReference) {
    const Shape shapes[] = {{7, 64, 1}, {13, 96, 3}, {32, 256, 9}, {5, 32, 70}, {11, 736, 3}};
    for (const Kernels* k : test::all_tables()) {
        for (Type type : all_types()) {
            for (Shape s : shapes) {
                s.cols = test::whole_blocks(type, s.cols);
                const auto w = test::random_matrix(type, s.rows, s.cols, 11);
                const auto wf = dequantize(type, w, s.rows * s.cols);
                const auto x = test::random_floats(s.tokens * s.cols, 12);
                Context ctx;
                ctx.k = k;
                ctx.n_threads = 2;
                std::vector<float> y(static_cast<size_t>(s.rows * s.tokens));
                matmul(ctx, {type, s.rows, s.cols, w.data()}, x.data(), s.tokens, y.data());
                for (int64_t t = 0; t < s.tokens; t++) {
                    const std::vector<float> xt(x.begin() + t * s.cols,
                                                x.begin() + (t + 1) * s.cols);
                    const std::vector<float> xa = as_activations(type, xt);
                    for (int64_t r = 0; r < s.rows; r++) {
                        double ref = 0.0, mag = 0.0, qerr = 0.0;
                        for (int64_t i = 0; i < s.cols; i++) {
                            const double wi = wf[r * s.cols + i];
                            ref += wi * xa[i];
                            mag += std::fabs(wi * xa[i]);
                            qerr += std::fabs(wi) * std::fabs(xa[i] - xt[i]);
                        }
                        // Float accumulation: at least 4 lanes of at most cols/4 sequential
                        // additions each, plus a final reduction and the scale products
                        // (< 64 roundings), every rounding at most FLT_EPSILON relative.
                        double tol = (s.cols / 4.0 + 64) * FLT_EPSILON * mag + 1e-30;
                        // Q8_1's s = d sum(q) is stored in fp16 (2^-11 relative) and the
                        // weights' min multiplies it; each block's min is one of its values
                        // (the smallest decodes to level 0), so at most its largest |w|.
                        if (traits(type).vec_dot_type == Type::Q8_1) {
                            for (int64_t b = 0; b < s.cols; b += 32) {
                                double wmax = 0.0, xsum = 0.0;
                                for (int64_t i = b; i < b + 32; i++) {
                                    wmax = std::max(wmax, std::fabs(double(wf[r * s.cols + i])));
                                    xsum += std::fabs(xa[i]);
                                }
                                tol += 0x1p-11 * wmax * xsum;
                            }
                        }
                        const float got = y[t * s.rows + r];
                        ASSERT_NEAR(got, ref, tol) << isa_name(k->isa) << ' ' << type_name(type)
                                                   << " r=" << r << " t=" << t;
                        // Against the unconverted activations the only extra error is the
                        // activation quantization, bounded by sum |w_i| |x~_i - x_i|.
                        double exact = 0.0;
                        for (int64_t i = 0; i < s.cols; i++) exact += wf[r * s.cols + i] * xt[i];
                        ASSERT_NEAR(got, exact, tol + qerr);
                    }
                }
            }
        }
    }
}

TEST(Matmul, BitIdenticalForAnyThreadCount) {
    const Shape shapes[] = {{1, 32, 1}, {37, 128, 1}, {61, 160, 5}, {9, 64, 67}, {13, 736, 6}};
    for (const Kernels* k : test::all_tables()) {
        for (Type type : all_types()) {
            for (Shape s : shapes) {
                s.cols = test::whole_blocks(type, s.cols);
                const auto w = test::random_matrix(type, s.rows, s.cols, 21);
                const auto x = test::random_floats(s.tokens * s.cols, 22);
                std::vector<float> first;
                for (int threads : {1, 2, 3}) {
                    Context ctx;
                    ctx.k = k;
                    ctx.n_threads = threads;
                    std::vector<float> y(static_cast<size_t>(s.rows * s.tokens));
                    matmul(ctx, {type, s.rows, s.cols, w.data()}, x.data(), s.tokens, y.data());
                    if (first.empty()) {
                        first = y;
                        continue;
                    }
                    ASSERT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(float)), 0)
                        << isa_name(k->isa) << ' ' << type_name(type) << " threads=" << threads;
                }
            }
        }
    }
}

// W against `tokens` rows of x at once, and against each row alone (decode): the results of both.
struct PrefillAndDecode {
    std::vector<float> all, one;
};
PrefillAndDecode prefill_and_decode(const Kernels* k, const Matrix& W, const std::vector<float>& x,
                                    int64_t tokens) {
    Context ctx;
    ctx.k = k;
    ctx.n_threads = 2;
    PrefillAndDecode r{std::vector<float>(W.rows * tokens), std::vector<float>(W.rows * tokens)};
    matmul(ctx, W, x.data(), tokens, r.all.data());
    for (int64_t t = 0; t < tokens; t++) {
        matmul(ctx, W, x.data() + t * W.cols, 1, r.one.data() + t * W.rows);
    }
    return r;
}

// Decode (one token at a time) and prefill (all tokens at once) give the same bits, because
// each tile element equals vec_dot for its pair.
TEST(Matmul, PrefillEqualsTokenByToken) {
    const int64_t rows = 23, tokens = 11;
    for (const Kernels* k : test::all_tables()) {
        for (Type type : all_types()) {
            const int64_t cols = test::whole_blocks(type, 192);
            const auto w = test::random_matrix(type, rows, cols, 31);
            const auto x = test::random_floats(tokens * cols, 32);
            const auto [all, one] = prefill_and_decode(k, {type, rows, cols, w.data()}, x, tokens);
            EXPECT_EQ(all, one) << isa_name(k->isa) << ' ' << type_name(type);
            const TypeKernels& tk = k->of(type);
            std::vector<uint8_t> xa(row_size(traits(type).vec_dot_type, cols));
            const auto& conv = k->of(traits(type).vec_dot_type).from_float;
            conv(x.data() + 4 * cols, xa.data(), cols);
            const float direct = tk.vec_dot(cols, w.data() + 5 * row_size(type, cols), xa.data());
            EXPECT_EQ(direct, all[4 * rows + 5]);
        }
    }
}

// A batch larger than one panel of activations (ops.cpp: 1 MiB of converted rows for quantized
// weights, 4 MiB for float ones) runs panel by panel and still gives decode's bits: Q4_0's
// Q8_0 rows of 4096 columns are 4352 bytes (240 tokens a panel), F32's of 8192 are 32 KiB (128).
TEST(Matmul, BatchesPastOnePanelEqualTokenByToken) {
    struct Case {
        Type type;
        int64_t cols, tokens;
    };
    for (const Case c : {Case{Type::Q4_0, 4096, 260}, Case{Type::F32, 8192, 140}}) {
        const int64_t rows = 16;
        const auto w = test::random_matrix(c.type, rows, c.cols, 33);
        const auto x = test::random_floats(c.tokens * c.cols, 34);
        const auto [all, one] =
            prefill_and_decode(nullptr, {c.type, rows, c.cols, w.data()}, x, c.tokens);
        EXPECT_EQ(all, one) << type_name(c.type);
    }
}

// The grid types run prefill (32 tokens and more) on each group decoded to levels
// (Kernels::grid_gemm) and give decode's bits: the grid kernels' float step is that kernel's.
// 37 rows: a last group of 5.
TEST(Matmul, GridPrefillEqualsTokenByToken) {
    const int64_t rows = 37, tokens = 35, cols = 512;
    for (const Kernels* k : test::all_tables()) {
        for (Type type : all_types()) {
            if (!traits(type).grid_block) continue;
            const auto w = test::random_matrix(type, rows, cols, 61);
            const auto x = test::random_floats(tokens * cols, 62);
            const auto [all, one] = prefill_and_decode(k, {type, rows, cols, w.data()}, x, tokens);
            EXPECT_EQ(all, one) << isa_name(k->isa) << ' ' << type_name(type);
        }
    }
}

TEST(Matmul, ScratchOnlyGrows) {
    const auto w = test::random_matrix(Type::Q4_0, 8, 64, 41);
    const auto x = test::random_floats(4 * 64, 42);
    Context ctx;
    std::vector<float> y(32);
    matmul(ctx, {Type::Q4_0, 8, 64, w.data()}, x.data(), 4, y.data());
    const uint8_t* buf = ctx.scratch.data();
    const size_t size = ctx.scratch.size();
    EXPECT_GE(size, 4 * row_size(Type::Q8_0, 64));
    matmul(ctx, {Type::Q4_0, 8, 64, w.data()}, x.data(), 1, y.data());
    EXPECT_EQ(ctx.scratch.data(), buf);  // no reallocation on the decode path
    EXPECT_EQ(ctx.scratch.size(), size);
}

TEST(Ops, GetRowDequantizes) {
    for (Type type : all_types()) {
        const int64_t cols = test::whole_blocks(type, 64);
        const auto w = test::random_matrix(type, 5, cols, 51);
        std::vector<float> row(cols), expect(cols);
        get_row({type, 5, cols, w.data()}, 3, row.data());
        traits(type).to_float(w.data() + 3 * row_size(type, cols), expect.data(), cols);
        EXPECT_EQ(row, expect) << type_name(type);
    }
    std::vector<float> out(64);
    const auto w = test::random_matrix(Type::F32, 5, 64, 52);
    EXPECT_THROW(get_row({Type::F32, 5, 64, w.data()}, 5, out.data()), std::out_of_range);
}

TEST(Ops, RopeAngles) {
    const int64_t rot_dim = 64;
    std::vector<float> c(rot_dim / 2), s(rot_dim / 2);
    rope_angles(c.data(), s.data(), 0, rot_dim, 10000.0f, nullptr);
    for (int64_t i = 0; i < rot_dim / 2; i++) {
        EXPECT_EQ(c[i], 1.0f);
        EXPECT_EQ(s[i], 0.0f);
    }
    const int64_t pos = 1234;
    std::vector<float> ff(rot_dim / 2);
    for (int64_t i = 0; i < rot_dim / 2; i++) ff[i] = 1.0f + 0.25f * static_cast<float>(i % 3);
    for (const float* factors :
         {static_cast<const float*>(nullptr), static_cast<const float*>(ff.data())}) {
        rope_angles(c.data(), s.data(), pos, rot_dim, 500000.0f, factors);
        for (int64_t i = 0; i < rot_dim / 2; i++) {
            // theta^(-2i/d) written as exp(-(2i/d) ln theta), in long double.
            long double freq = std::exp(-(2.0L * i / rot_dim) * std::log(500000.0L));
            if (factors) freq /= factors[i];
            const long double a = pos * freq;
            // float rounding of a value in [-1, 1]: half an ulp of 1, plus slack for the double
            // angle's own rounding multiplied by pos.
            EXPECT_NEAR(c[i], static_cast<float>(std::cos(a)), 2e-7) << i;
            EXPECT_NEAR(s[i], static_cast<float>(std::sin(a)), 2e-7) << i;
        }
    }
}

// --- block variants -------------------------------------------------------------------------

// NEOX RoPE is the interleaved kernel on a head whose first rot_dim dimensions are reordered
// (i, i + rot_dim/2) -> (2i, 2i + 1); dimensions past rot_dim are left alone.
TEST(Ops, RopeNeoxIsInterleavedRopeOnReorderedDimensions) {
    const int64_t n_heads = 3, head_dim = 16, rot_dim = 12, half = rot_dim / 2;
    const auto x = test::random_floats(n_heads * head_dim, 61);
    std::vector<float> c(half), s(half);
    rope_angles(c.data(), s.data(), 37, rot_dim, 10000.0f, nullptr);
    std::vector<float> neox = x, interleaved(x.size());
    for (int64_t h = 0; h < n_heads; h++) {
        for (int64_t d = 0; d < head_dim; d++) {
            const int64_t to = d < rot_dim ? (d < half ? 2 * d : 2 * (d - half) + 1) : d;
            interleaved[h * head_dim + to] = x[h * head_dim + d];
        }
    }
    rope_neox(neox.data(), n_heads, head_dim, rot_dim, c.data(), s.data());
    kernels_scalar().rope(interleaved.data(), n_heads, head_dim, rot_dim, c.data(), s.data());
    for (int64_t h = 0; h < n_heads; h++) {
        for (int64_t d = 0; d < head_dim; d++) {
            const int64_t to = d < rot_dim ? (d < half ? 2 * d : 2 * (d - half) + 1) : d;
            EXPECT_EQ(neox[h * head_dim + d], interleaved[h * head_dim + to]) << h << " " << d;
        }
    }
}

// Against the formula in double: float tanh and products differ by a few ulps.
TEST(Ops, GeluTanhAndSoftcap) {
    const auto x = test::random_floats(300, 62, -8.0f, 8.0f);
    const auto g = test::random_floats(300, 63);
    std::vector<float> h = x, capped = x;
    gelu_tanh_mul(h.data(), g.data(), 300);
    softcap(capped.data(), 300, 3.0f);
    for (int i = 0; i < 300; i++) {
        const double v = x[i];
        const double gelu =
            0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        EXPECT_NEAR(h[i], gelu * g[i], 1e-5 * (1 + std::fabs(gelu))) << x[i];
        EXPECT_NEAR(capped[i], 3.0 * std::tanh(v / 3.0), 1e-6) << x[i];
    }
}

// attend_window over the whole cache without soft-capping is the scalar attention kernel;
// a window is attention over its positions alone; soft-capping caps the scores first.
TEST(Ops, AttendWindowAndSoftcap) {
    const int64_t n_q = 2, hd = 8, n_pos = 37, padded = 48;
    const auto q = test::random_floats(n_q * hd, 64, -2.0f, 2.0f);
    const auto kv = test::random_floats(padded * hd, 65);
    const auto v = test::random_floats(n_pos * hd, 66);
    std::vector<float> scores(n_q * padded), want(n_q * hd), got(n_q * hd);
    kernels_scalar().attend_f32(q.data(), n_q, hd, kv.data(), v.data(), n_pos, 0.3f, scores.data(),
                                want.data());
    attend_window(q.data(), n_q, hd, kv.data(), v.data(), 0, n_pos, 0.3f, 0.0f, scores.data(),
                  got.data());
    for (int64_t i = 0; i < n_q * hd; i++) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;

    // The window [first, n_pos) by hand, in double, with and without a soft cap.
    const int64_t first = 21;
    for (const float cap : {0.0f, 0.5f}) {
        attend_window(q.data(), n_q, hd, kv.data(), v.data(), first, n_pos, 0.3f, cap,
                      scores.data(), got.data());
        for (int64_t j = 0; j < n_q; j++) {
            std::vector<double> w;
            double max = -1e300, sum = 0;
            for (int64_t p = first; p < n_pos; p++) {
                double dot = 0;
                for (int64_t d = 0; d < hd; d++) {
                    dot += q[j * hd + d] *
                           kv[p / kKvBlock * kKvBlock * hd + d * kKvBlock + p % kKvBlock];
                }
                dot *= 0.3;
                if (cap > 0) dot = cap * std::tanh(dot / cap);
                w.push_back(dot);
                max = std::max(max, dot);
            }
            for (double& x : w) sum += (x = std::exp(x - max));
            for (int64_t d = 0; d < hd; d++) {
                double o = 0;
                for (int64_t p = first; p < n_pos; p++) o += w[p - first] / sum * v[p * hd + d];
                EXPECT_NEAR(got[j * hd + d], o, 1e-5) << cap << " " << j << " " << d;
            }
        }
    }
}

}  // namespace
}  // namespace ggml_lite
