// The KV cache's layout, as the attention kernel reads it (ggml-lite/kernels.h: AttendFn):
// per (layer, KV head) one run of keys in blocks of kKvBlock positions, dimension-major within
// a block, and one run of values, position-major; F16 entries rounded as fp32_to_fp16 does.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ggml-lite/fp16.h"
#include "ggml-lite/kernels.h"
#include "src/base/error.h"
#include "src/runtime/kv_cache.h"

namespace lila {
namespace {

using ggml_lite::kKvBlock;
using ggml_lite::Type;

HParams shape(int64_t n_layer, int64_t n_head_kv, int64_t head_dim) {
    HParams hp;
    hp.n_layer = n_layer;
    hp.n_head_kv = n_head_kv;
    hp.n_head = 2 * n_head_kv;
    hp.head_dim = head_dim;
    return hp;
}

// A distinct value for every (layer, position, head, dim, k or v); not all are exact in half
// precision, so the F16 cache's rounding is checked too.
float value(int64_t layer, int64_t pos, int64_t head, int64_t d, bool is_v) {
    return static_cast<float>(layer * 1000 + pos * 10 + head) + static_cast<float>(d) / 64.0f +
           (is_v ? 0.5f : 0.0f) + 1e-4f;
}

// Entry i of a run of the cache, as a float.
float entry(const KVCache& c, const uint8_t* run, int64_t i) {
    if (c.type() == Type::F32) {
        float f;
        std::memcpy(&f, run + i * sizeof f, sizeof f);
        return f;
    }
    ggml_lite::fp16_t h;
    std::memcpy(&h, run + i * sizeof h, sizeof h);
    return ggml_lite::fp16_to_fp32(h);
}

float stored(Type type, float x) {
    return type == Type::F32 ? x : ggml_lite::fp16_to_fp32(ggml_lite::fp32_to_fp16(x));
}

class KVCacheLayout : public testing::TestWithParam<Type> {};

// Positions stored in three calls (one token, a batch across a block boundary, a last one in
// the padded block), in two layers: every entry lands where the kernel reads it, and nothing
// else is written.
TEST_P(KVCacheLayout, EntriesLandWhereAttentionReadsThem) {
    const Type type = GetParam();
    const HParams hp = shape(2, 3, 8);
    const int64_t n_ctx = 2 * kKvBlock + 5;  // not a whole number of blocks
    KVCache cache(hp, n_ctx, type);
    EXPECT_EQ(cache.type(), type);
    EXPECT_EQ(cache.n_ctx(), n_ctx);
    const int64_t padded = 3 * kKvBlock;
    const size_t elem = type == Type::F32 ? 4 : 2;
    EXPECT_EQ(cache.bytes(), 2 * hp.n_layer * hp.n_head_kv * padded * hp.head_dim * elem);

    const int64_t kv_dim = hp.kv_dim();
    auto rows = [&](int64_t layer, int64_t pos, int64_t n, bool is_v) {
        std::vector<float> r(n * kv_dim);
        for (int64_t t = 0; t < n; t++)
            for (int64_t h = 0; h < hp.n_head_kv; h++)
                for (int64_t d = 0; d < hp.head_dim; d++)
                    r[t * kv_dim + h * hp.head_dim + d] = value(layer, pos + t, h, d, is_v);
        return r;
    };
    const struct { int64_t pos, n; } writes[] = {{0, 1}, {1, kKvBlock + 3}, {n_ctx - 1, 1}};
    for (int64_t layer = 0; layer < hp.n_layer; layer++) {
        for (const auto& w : writes) {
            const auto k = rows(layer, w.pos, w.n, false), v = rows(layer, w.pos, w.n, true);
            cache.store(layer, w.pos, w.n, k.data(), v.data());
        }
    }
    auto written = [&](int64_t p) { return p <= kKvBlock + 3 || p == n_ctx - 1; };
    for (int64_t layer = 0; layer < hp.n_layer; layer++) {
        for (int64_t h = 0; h < hp.n_head_kv; h++) {
            for (int64_t p = 0; p < padded; p++) {
                for (int64_t d = 0; d < hp.head_dim; d++) {
                    SCOPED_TRACE("layer " + std::to_string(layer) + " head " + std::to_string(h) +
                                 " pos " + std::to_string(p) + " dim " + std::to_string(d));
                    const int64_t ki =
                        p / kKvBlock * kKvBlock * hp.head_dim + d * kKvBlock + p % kKvBlock;
                    const int64_t vi = p * hp.head_dim + d;
                    const bool w = p < n_ctx && written(p);
                    EXPECT_EQ(entry(cache, cache.k(layer, h), ki),
                              w ? stored(type, value(layer, p, h, d, false)) : 0.0f);
                    EXPECT_EQ(entry(cache, cache.v(layer, h), vi),
                              w ? stored(type, value(layer, p, h, d, true)) : 0.0f);
                }
            }
        }
    }
}

// A position written again (after Session::truncate) replaces the old entry.
TEST_P(KVCacheLayout, RewritingAPositionReplacesIt) {
    const HParams hp = shape(1, 1, 4);
    KVCache cache(hp, kKvBlock, GetParam());
    const std::vector<float> a(4, 1.0f), b(4, -2.0f);
    cache.store(0, 5, 1, a.data(), a.data());
    cache.store(0, 5, 1, b.data(), b.data());
    for (int64_t d = 0; d < 4; d++) {
        EXPECT_EQ(entry(cache, cache.k(0, 0), d * kKvBlock + 5), -2.0f);
        EXPECT_EQ(entry(cache, cache.v(0, 0), 5 * 4 + d), -2.0f);
    }
}

INSTANTIATE_TEST_SUITE_P(Types, KVCacheLayout, testing::Values(Type::F32, Type::F16),
                         [](const auto& info) { return ggml_lite::type_name(info.param); });

TEST(KVCache, OnlyFloatTypes) {
    try {
        KVCache(shape(1, 1, 4), 16, Type::Q8_0);
        ADD_FAILURE() << "a Q8_0 cache was made";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "unsupported KV cache type q8_0 (supported: f16, f32)");
    }
}

}  // namespace
}  // namespace lila
