#include "src/runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "src/base/error.h"

namespace lila {

using ggml_lite::matmul;

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      n_batch_(std::max<int64_t>(1, params.n_batch)),
      n_threads_(params.n_threads),
      n_threads_batch_(params.n_threads_batch > 0 ? params.n_threads_batch : params.n_threads),
      cache_(model.hp, params.n_ctx > 0 ? params.n_ctx : model.hp.n_ctx_train, params.kv_type,
             params.n_seq),
      n_past_(params.n_seq),
      seq_count_(params.n_seq) {
    if (params.n_threads < 1) throw Error("thread count must be at least 1");
    const HParams& hp = model.hp;
    const int64_t nb = n_batch_;
    pos.resize(nb);
    x.resize(nb * hp.n_embd);
    xb.resize(nb * hp.n_embd);
    q.resize(nb * hp.q_dim());
    k.resize(nb * hp.kv_dim());
    v.resize(nb * hp.kv_dim());
    xq.resize(nb * hp.q_dim());
    hb.resize(nb * hp.n_ff);
    hb2.resize(nb * hp.n_ff);
    const int64_t padded =
        (n_ctx() + ggml_lite::kKvBlock - 1) / ggml_lite::kKvBlock * ggml_lite::kKvBlock;
    att_stride_ = hp.n_head / hp.n_head_kv * padded;
    att.resize(static_cast<size_t>(std::max(n_threads_, n_threads_batch_) * att_stride_));
    rope_cos.resize(nb * hp.rope_dim / 2);
    rope_sin.resize(nb * hp.rope_dim / 2);
    logits.resize(hp.n_vocab);
}

void Session::truncate(int64_t n, int seq) {
    if (seq < 0 || seq >= n_seq()) throw Error("no sequence " + std::to_string(seq));
    if (n < 0 || n > n_past_[seq]) {
        throw Error("cannot truncate sequence " + std::to_string(seq) + " to " + std::to_string(n) +
                    " positions");
    }
    n_past_[seq] = n;
}

const float* Session::eval(std::span<const int32_t> tokens, bool all_logits) {
    if (tokens.empty()) throw Error("nothing to evaluate");
    return eval_from(tokens, all_logits ? 0 : static_cast<int64_t>(tokens.size()) - 1);
}

const float* Session::eval_from(std::span<const int32_t> tokens, int64_t first) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0) throw Error("nothing to evaluate");
    if (first < 0 || first >= n) {
        throw Error("logits from token " + std::to_string(first) + " of " + std::to_string(n));
    }
    single_.resize(n);
    for (int64_t t = 0; t < n; t++) single_[t] = {tokens[t], 0, t >= first};
    return eval_batch(single_);
}

const float* Session::eval_batch(std::span<const BatchToken> batch) {
    const int64_t n = static_cast<int64_t>(batch.size());
    const int64_t n_vocab = model_.hp.n_vocab;
    if (n == 0) throw Error("nothing to evaluate");
    // Check everything first, so a bad batch leaves every sequence as it was.
    std::fill(seq_count_.begin(), seq_count_.end(), 0);
    int64_t n_out = 0;
    for (const BatchToken& b : batch) {
        if (b.id < 0 || b.id >= n_vocab)
            throw Error("token id " + std::to_string(b.id) + " out of range");
        if (b.seq < 0 || b.seq >= n_seq()) {
            throw Error("sequence " + std::to_string(b.seq) + " out of range (the session has " +
                        std::to_string(n_seq()) + ")");
        }
        seq_count_[b.seq]++;
        n_out += b.logits;
    }
    for (int s = 0; s < n_seq(); s++) {
        if (n_past_[s] + seq_count_[s] > n_ctx()) {
            throw Error("context full: " + std::to_string(n_past_[s]) + " + " +
                        std::to_string(seq_count_[s]) + " tokens exceed the context of " +
                        std::to_string(n_ctx()) +
                        (n_seq() > 1 ? " (sequence " + std::to_string(s) + ")" : ""));
        }
    }
    if (logits.size() < static_cast<size_t>(n_out * n_vocab)) logits.resize(n_out * n_vocab);

    float* out = logits.data();
    for (int64_t start = 0; start < n; start += n_batch_) {
        const int64_t nb = std::min(n_batch_, n - start);
        for (int64_t t = 0; t < nb; t++) pos[t] = n_past_[batch[start + t].seq]++;
        forward(batch.data() + start, nb, out);
        for (int64_t t = 0; t < nb; t++) out += batch[start + t].logits ? n_vocab : 0;
    }
    return logits.data();
}

// One batch of n tokens through the whole model, as in llama2.c's forward() but with a row
// per token, so every weight matrix is streamed once per batch. Token t goes to position
// pos[t] of its sequence; only attention looks at sequences, every other step is per row.
// The logits of the tokens that want them go to out, one row each.
void Session::forward(const BatchToken* batch, int64_t n, float* out) {
    const Model& m = model_;
    const HParams& hp = m.hp;
    const ggml_lite::Kernels& kern = ctx_.kern();
    const int64_t dim = hp.n_embd, q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_ff = hp.n_ff;
    const int64_t half_rot = hp.rope_dim / 2;
    const float* freq_factors = m.rope_freq_factors.empty() ? nullptr : m.rope_freq_factors.data();
    ctx_.n_threads = n == 1 ? n_threads_ : n_threads_batch_;

    for (int64_t t = 0; t < n; t++) {
        ggml_lite::get_row(m.tok_embd, batch[t].id, &x[t * dim]);
        ggml_lite::rope_angles(&rope_cos[t * half_rot], &rope_sin[t * half_rot], pos[t],
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
        matmul(ctx_, xb.data(), n, {{&L.wq, q.data()}, {&L.wk, k.data()}, {&L.wv, v.data()}});
        add_bias(q.data(), L.bq);
        add_bias(k.data(), L.bk);
        add_bias(v.data(), L.bv);
        for (int64_t t = 0; t < n; t++) {
            const float* c = &rope_cos[t * half_rot];
            const float* s = &rope_sin[t * half_rot];
            kern.rope(&q[t * q_dim], hp.n_head, hp.head_dim, hp.rope_dim, c, s);
            kern.rope(&k[t * kv_dim], hp.n_head_kv, hp.head_dim, hp.rope_dim, c, s);
            cache_.store(l, pos[t], 1, &k[t * kv_dim], &v[t * kv_dim], batch[t].seq);
        }
        attention(batch, l, n);
        matmul(ctx_, L.wo, xq.data(), n, xb.data());
        for (int64_t t = 0; t < n; t++) kern.add(&x[t * dim], &xb[t * dim], dim);

        // Feed-forward (SwiGLU): x += w2 · (silu(w1·xb) ⊙ w3·xb), xb = rmsnorm(x)
        for (int64_t t = 0; t < n; t++) {
            kern.rmsnorm(&xb[t * dim], &x[t * dim], L.ffn_norm.data(), dim, hp.norm_eps);
        }
        matmul(ctx_, xb.data(), n, {{&L.w1, hb.data()}, {&L.w3, hb2.data()}});
        for (int64_t t = 0; t < n; t++) kern.silu_mul(&hb[t * n_ff], &hb2[t * n_ff], n_ff);
        matmul(ctx_, L.w2, hb.data(), n, xb.data());
        for (int64_t t = 0; t < n; t++) kern.add(&x[t * dim], &xb[t * dim], dim);
    }

    // Only the rows whose logits are wanted go through the final norm and the LM head,
    // gathered into the first rows of xb.
    int64_t n_out = 0;
    for (int64_t t = 0; t < n; t++) {
        if (!batch[t].logits) continue;
        kern.rmsnorm(&xb[n_out * dim], &x[t * dim], m.output_norm.data(), dim, hp.norm_eps);
        n_out++;
    }
    if (n_out > 0) matmul(ctx_, m.output, xb.data(), n_out, out);
}

// Causal self-attention of the n new tokens, each over its own sequence's cells up to its
// position (grouped-query attention: query heads g*group .. g*group+group-1 share KV head g).
// One task per (token, KV head) computes all the group's heads against each K/V row read
// once; each task runs on one thread, so results do not depend on the thread count or on the
// other tokens of the batch.
void Session::attention(const BatchToken* batch, int64_t layer, int64_t n) {
    const HParams& hp = model_.hp;
    const ggml_lite::Kernels& kern = ctx_.kern();
    const int64_t hd = hp.head_dim, q_dim = hp.q_dim(), group = hp.n_head / hp.n_head_kv;
    const int64_t n_tasks = n * hp.n_head_kv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const bool f16 = cache_.type() == ggml_lite::Type::F16;
    // Multiply-adds: scores and value sums of every head over each token's positions.
    int64_t work = 0;
    for (int64_t t = 0; t < n; t++) work += 2 * hp.n_head * hd * (pos[t] + 1);
    const int threads = ggml_lite::threads_for_work(work, ctx_.n_threads);

#pragma omp parallel for schedule(dynamic) num_threads(threads) if (threads > 1)
    for (int64_t i = 0; i < n_tasks; i++) {
        const int64_t t = i / hp.n_head_kv, g = i % hp.n_head_kv;
        const int64_t off = t * q_dim + g * group * hd, n_pos = pos[t] + 1;
        const int seq = batch[t].seq;
        float* scores = &att[static_cast<size_t>(omp_get_thread_num() * att_stride_)];
        if (f16) {
            const auto* kc = reinterpret_cast<const ggml_lite::fp16_t*>(cache_.k(layer, g, seq));
            const auto* vc = reinterpret_cast<const ggml_lite::fp16_t*>(cache_.v(layer, g, seq));
            kern.attend_f16(&q[off], group, hd, kc, vc, n_pos, scale, scores, &xq[off]);
        } else {
            const auto* kc = reinterpret_cast<const float*>(cache_.k(layer, g, seq));
            const auto* vc = reinterpret_cast<const float*>(cache_.v(layer, g, seq));
            kern.attend_f32(&q[off], group, hd, kc, vc, n_pos, scale, scores, &xq[off]);
        }
    }
}

}  // namespace lila
