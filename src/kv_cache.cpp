#include "kv_cache.h"

#include "error.h"

namespace lila {

KVCache::KVCache(const HParams& hp, int64_t n_ctx, ggml_lite::Type type)
    : type_(type), n_ctx_(n_ctx), kv_dim_(hp.kv_dim()) {
    if (type != ggml_lite::Type::F16 && type != ggml_lite::Type::F32) {
        throw Error(std::string("unsupported KV cache type ") + ggml_lite::type_name(type) +
                    " (supported: f16, f32)");
    }
    row_bytes_ = ggml_lite::row_size(type, kv_dim_);
    const size_t total = static_cast<size_t>(hp.n_layer) * n_ctx * row_bytes_;
    k_.resize(total);
    v_.resize(total);
}

void KVCache::store(int64_t layer, int64_t pos, int64_t n, const float* k, const float* v) {
    const auto from_float = ggml_lite::traits(type_).from_float;
    for (int64_t t = 0; t < n; t++) {
        from_float(k + t * kv_dim_, this->k(layer, pos + t), kv_dim_);
        from_float(v + t * kv_dim_, this->v(layer, pos + t), kv_dim_);
    }
}

}  // namespace lila
