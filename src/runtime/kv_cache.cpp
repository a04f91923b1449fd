#include "src/runtime/kv_cache.h"

#include <cstring>
#include <string>

#include "ggml-lite/fp16.h"
#include "ggml-lite/kernels.h"
#include "src/base/error.h"

namespace lila {

using ggml_lite::kKvBlock;

KVCache::KVCache(const HParams& hp, int64_t n_ctx, ggml_lite::Type type, int n_seq)
    : type_(type),
      n_ctx_(n_ctx),
      n_seq_(n_seq),
      n_layer_(hp.n_layer),
      n_head_kv_(hp.n_head_kv),
      head_dim_(hp.head_dim) {
    if (type != ggml_lite::Type::F16 && type != ggml_lite::Type::F32) {
        throw Error(std::string("unsupported KV cache type ") + ggml_lite::type_name(type) +
                    " (supported: f16, f32)");
    }
    if (n_seq < 1) throw Error("KV cache: " + std::to_string(n_seq) + " sequences (at least 1)");
    elem_ = ggml_lite::row_size(type, 1);
    const int64_t padded = (n_ctx + kKvBlock - 1) / kKvBlock * kKvBlock;
    head_bytes_ = static_cast<size_t>(padded * head_dim_) * elem_;
    const size_t total = static_cast<size_t>(n_seq) * n_layer_ * n_head_kv_ * head_bytes_;
    k_.resize(total);
    v_.resize(total);
}

void KVCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v,
                    int seq) {
    const bool f16 = type_ == ggml_lite::Type::F16;
    const auto put = [&](uint8_t* dst, float x) {
        if (f16) {
            const ggml_lite::fp16_t h = ggml_lite::fp32_to_fp16(x);
            std::memcpy(dst, &h, sizeof h);
        } else {
            std::memcpy(dst, &x, sizeof x);
        }
    };
    const int64_t kv_dim = n_head_kv_ * head_dim_;
    for (int64_t t = 0; t < n; t++) {
        const int64_t p = pos + t;
        const int64_t block = p / kKvBlock, lane = p % kKvBlock;
        for (int64_t h = 0; h < n_head_kv_; h++) {
            const float* kh = k + t * kv_dim + h * head_dim_;
            const float* vh = v + t * kv_dim + h * head_dim_;
            uint8_t* kd = k_.data() + offset(layer, h, seq) + block * kKvBlock * head_dim_ * elem_;
            uint8_t* vd = v_.data() + offset(layer, h, seq) + p * head_dim_ * elem_;
            for (int64_t d = 0; d < head_dim_; d++) {
                put(kd + (d * kKvBlock + lane) * elem_, kh[d]);
                put(vd + d * elem_, vh[d]);
            }
        }
    }
}

}  // namespace lila
