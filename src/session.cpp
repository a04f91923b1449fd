#include "session.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "error.h"

namespace lila {

using ggml_lite::matmul;

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      n_batch_(std::max<int64_t>(1, params.n_batch)),
      cache_(model.hp, params.n_ctx > 0 ? params.n_ctx : model.hp.n_ctx_train, params.kv_type) {
    if (params.n_threads < 1) throw Error("thread count must be at least 1");
    ctx_.n_threads = params.n_threads;
    const HParams& hp = model.hp;
    const int64_t nb = n_batch_;
    x.resize(nb * hp.n_embd);
    xb.resize(nb * hp.n_embd);
    q.resize(nb * hp.q_dim());
    k.resize(nb * hp.kv_dim());
    v.resize(nb * hp.kv_dim());
    xq.resize(nb * hp.q_dim());
    hb.resize(nb * hp.n_ff);
    hb2.resize(nb * hp.n_ff);
    att.resize(static_cast<size_t>(params.n_threads) * n_ctx());
    rope_cos.resize(nb * hp.rope_dim / 2);
    rope_sin.resize(nb * hp.rope_dim / 2);
    logits.resize(hp.n_vocab);
}

void Session::truncate(int64_t n) {
    if (n < 0 || n > n_past_) throw Error("cannot truncate the context to " + std::to_string(n));
    n_past_ = n;
}

const float* Session::eval(std::span<const int32_t> tokens, bool all_logits) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    const int64_t n_vocab = model_.hp.n_vocab;
    if (n == 0) throw Error("nothing to evaluate");
    if (n_past_ + n > n_ctx()) {
        throw Error("context full: " + std::to_string(n_past_) + " + " + std::to_string(n) +
                    " tokens exceed the context of " + std::to_string(n_ctx()));
    }
    for (int32_t id : tokens) {
        if (id < 0 || id >= n_vocab) throw Error("token id " + std::to_string(id) + " out of range");
    }
    if (all_logits && logits.size() < static_cast<size_t>(n * n_vocab)) logits.resize(n * n_vocab);

    for (int64_t start = 0; start < n; start += n_batch_) {
        const int64_t nb = std::min(n_batch_, n - start);
        const bool last = start + nb == n;
        float* out = all_logits ? logits.data() + start * n_vocab : last ? logits.data() : nullptr;
        forward(tokens.data() + start, nb, out, all_logits);
    }
    return logits.data();
}

// One batch of n tokens at positions n_past_.. through the whole model, as in llama2.c's
// forward() but with a row per token, so every weight matrix is streamed once per batch.
void Session::forward(const int32_t* tokens, int64_t n, float* out, bool all_logits) {
    const Model& m = model_;
    const HParams& hp = m.hp;
    const ggml_lite::Kernels& kern = ctx_.kern();
    const int64_t dim = hp.n_embd, q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_ff = hp.n_ff;
    const int64_t half_rot = hp.rope_dim / 2;
    const float* freq_factors = m.rope_freq_factors.empty() ? nullptr : m.rope_freq_factors.data();

    for (int64_t t = 0; t < n; t++) {
        ggml_lite::get_row(m.tok_embd, tokens[t], &x[t * dim]);
        ggml_lite::rope_angles(&rope_cos[t * half_rot], &rope_sin[t * half_rot], n_past_ + t,
                               hp.rope_dim, hp.rope_theta, freq_factors);
    }

    auto add_bias = [n](float* rows, const std::vector<float>& bias) {
        const int64_t w = static_cast<int64_t>(bias.size());
        for (int64_t t = 0; t < n && w; t++) {
            for (int64_t i = 0; i < w; i++) rows[t * w + i] += bias[i];
        }
    };

    for (int64_t l = 0; l < hp.n_layer; l++) {
        const Layer& L = m.layers[l];

        // Attention: x += wo · attn(rope(wq·xb), rope(wk·xb), wv·xb), xb = rmsnorm(x)
        for (int64_t t = 0; t < n; t++) {
            kern.rmsnorm(&xb[t * dim], &x[t * dim], L.attn_norm.data(), dim, hp.norm_eps);
        }
        matmul(ctx_, L.wq, xb.data(), n, q.data());
        matmul(ctx_, L.wk, xb.data(), n, k.data());
        matmul(ctx_, L.wv, xb.data(), n, v.data());
        add_bias(q.data(), L.bq);
        add_bias(k.data(), L.bk);
        add_bias(v.data(), L.bv);
        for (int64_t t = 0; t < n; t++) {
            const float* c = &rope_cos[t * half_rot];
            const float* s = &rope_sin[t * half_rot];
            kern.rope(&q[t * q_dim], hp.n_head, hp.head_dim, hp.rope_dim, c, s);
            kern.rope(&k[t * kv_dim], hp.n_head_kv, hp.head_dim, hp.rope_dim, c, s);
        }
        cache_.store(l, n_past_, n, k.data(), v.data());
        attention(l, n);
        matmul(ctx_, L.wo, xq.data(), n, xb.data());
        for (int64_t t = 0; t < n; t++) kern.add(&x[t * dim], &xb[t * dim], dim);

        // Feed-forward (SwiGLU): x += w2 · (silu(w1·xb) ⊙ w3·xb), xb = rmsnorm(x)
        for (int64_t t = 0; t < n; t++) {
            kern.rmsnorm(&xb[t * dim], &x[t * dim], L.ffn_norm.data(), dim, hp.norm_eps);
        }
        matmul(ctx_, L.w1, xb.data(), n, hb.data());
        matmul(ctx_, L.w3, xb.data(), n, hb2.data());
        for (int64_t t = 0; t < n; t++) kern.silu_mul(&hb[t * n_ff], &hb2[t * n_ff], n_ff);
        matmul(ctx_, L.w2, hb.data(), n, xb.data());
        for (int64_t t = 0; t < n; t++) kern.add(&x[t * dim], &xb[t * dim], dim);
    }
    n_past_ += n;

    if (!out) return;
    // Only the rows whose logits are wanted go through the final norm and the LM head.
    const int64_t first = all_logits ? 0 : n - 1;
    for (int64_t t = first; t < n; t++) {
        kern.rmsnorm(&xb[t * dim], &x[t * dim], m.output_norm.data(), dim, hp.norm_eps);
    }
    matmul(ctx_, m.output, &xb[first * dim], n - first, out);
}

// Causal self-attention of the n new tokens over the cache. Query head h reads KV head
// h / (n_head / n_head_kv) (grouped-query attention); K/V are read in place, never copied
// per query head. Each (token, head) pair is computed by one thread, so results do not
// depend on the thread count.
void Session::attention(int64_t layer, int64_t n) {
    const HParams& hp = model_.hp;
    const ggml_lite::Kernels& kern = ctx_.kern();
    const int64_t hd = hp.head_dim, q_dim = hp.q_dim(), group = hp.n_head / hp.n_head_kv;
    const int64_t pos0 = n_past_, n_ctx = this->n_ctx();
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const bool f16 = cache_.type() == ggml_lite::Type::F16;
    const auto dot = kern.types[ggml_lite::type_index(cache_.type())].vec_dot;
    const size_t head_bytes = ggml_lite::row_size(cache_.type(), hd);

#pragma omp parallel for collapse(2) schedule(static) num_threads(ctx_.n_threads)
    for (int64_t t = 0; t < n; t++) {
        for (int64_t h = 0; h < hp.n_head; h++) {
            const int64_t n_pos = pos0 + t + 1;
            const float* qh = &q[t * q_dim + h * hd];
            float* a = &att[static_cast<size_t>(omp_get_thread_num()) * n_ctx];
            const size_t head_off = (h / group) * head_bytes;

            for (int64_t p = 0; p < n_pos; p++) {
                a[p] = dot(hd, cache_.k(layer, p) + head_off, qh) * scale;
            }
            kern.softmax(a, n_pos);

            float* o = &xq[t * q_dim + h * hd];
            std::fill(o, o + hd, 0.0f);
            for (int64_t p = 0; p < n_pos; p++) {
                const uint8_t* vh = cache_.v(layer, p) + head_off;
                if (f16) {
                    kern.axpy_f16(o, a[p], reinterpret_cast<const ggml_lite::fp16_t*>(vh), hd);
                } else {
                    const float* vf = reinterpret_cast<const float*>(vh);
                    for (int64_t i = 0; i < hd; i++) o[i] += a[p] * vf[i];
                }
            }
        }
    }
}

}  // namespace lila
