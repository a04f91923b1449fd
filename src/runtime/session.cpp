#include "src/runtime/session.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "src/base/error.h"

namespace lila {

using ggml_lite::matmul;

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      n_threads_(params.n_threads),
      n_threads_batch_(params.n_threads_batch > 0 ? params.n_threads_batch : params.n_threads),
      cache_(model.hp, params.n_ctx > 0 ? params.n_ctx : model.hp.n_ctx_train, params.kv_type,
             params.n_seq),
      n_past_(params.n_seq),
      seq_count_(params.n_seq) {
    if (params.n_threads < 1) throw Error("thread count must be at least 1");
    // No pass can hold more tokens than the cache has cells, so a larger batch would only size
    // (and zero: touch) activation buffers that are never used.
    n_batch_ = std::clamp<int64_t>(params.n_batch, 1, n_ctx() * n_seq());
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
    if (model.rope_theta_local > 0) {
        rope_cos_local.resize(nb * hp.rope_dim / 2);
        rope_sin_local.resize(nb * hp.rope_dim / 2);
    }
    if (model.arch->post_norms) xb2.resize(nb * hp.n_embd);
    rope_factors_ = &model.rope_factors(n_ctx());
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
        ctx_.n_threads = nb == 1 ? n_threads_ : n_threads_batch_;
        ggml_lite::with_team(ctx_, [&] { forward(batch.data() + start, nb, out); });
        for (int64_t t = 0; t < nb; t++) out += batch[start + t].logits ? n_vocab : 0;
    }
    return logits.data();
}

// One batch of n tokens through the whole model, as in llama2.c's forward() but with a row
// per token, so every weight matrix is streamed once per batch. Token t goes to position
// pos[t] of its sequence; only attention looks at sequences, every other step is per row.
// The logits of the tokens that want them go to out, one row each. The architecture's
// variants (arch.h) are branches where they apply.
void Session::forward(const BatchToken* batch, int64_t n, float* out) {
    const Model& m = model_;
    const HParams& hp = m.hp;
    const Arch& arch = *m.arch;
    const ggml_lite::Kernels& kern = ctx_.kern();
    const int64_t dim = hp.n_embd, q_dim = hp.q_dim(), kv_dim = hp.kv_dim(), n_ff = hp.n_ff;
    const int64_t half_rot = hp.rope_dim / 2;
    const float* freq_factors = rope_factors_->empty() ? nullptr : rope_factors_->data();
    const bool local_rope = !rope_cos_local.empty();

    for_tokens(n, dim, [&](int64_t t) {
        ggml_lite::get_row(m.tok_embd, batch[t].id, &x[t * dim]);
        if (m.embd_scale != 1.0f) kern.scale(&x[t * dim], m.embd_scale, dim);
        ggml_lite::rope_angles(&rope_cos[t * half_rot], &rope_sin[t * half_rot], pos[t],
                               hp.rope_dim, hp.rope_theta, freq_factors);
        if (local_rope) {
            ggml_lite::rope_angles(&rope_cos_local[t * half_rot], &rope_sin_local[t * half_rot],
                                   pos[t], hp.rope_dim, m.rope_theta_local, nullptr);
        }
    });
    if (m.rope_attn_factor != 1.0f) {  // LongRoPE scales the rotation (ggml's mscale)
        for (std::vector<float>* cs : {&rope_cos, &rope_sin, &rope_cos_local, &rope_sin_local}) {
            if (!cs->empty()) kern.scale(cs->data(), m.rope_attn_factor, n * half_rot);
        }
    }

    auto add_bias = [](float* row, const std::vector<float>& bias) {
        for (size_t i = 0; i < bias.size(); i++) row[i] += bias[i];
    };
    // A sublayer's input: xb = rmsnorm(x), or x itself where the architecture has no pre-norm.
    auto sublayer_input = [&](const std::vector<float>& norm) -> const float* {
        if (norm.empty()) return x.data();
        for_tokens(n, dim, [&](int64_t t) {
            kern.rmsnorm(&xb[t * dim], &x[t * dim], norm.data(), dim, hp.norm_eps);
        });
        return xb.data();
    };
    // A sublayer's output (in xb) joins the residual stream: x += residual_scale · xb, xb
    // first normed where the architecture has post-norms.
    auto add_to_residual = [&](const std::vector<float>& post_norm) {
        for_tokens(n, dim, [&](int64_t t) {
            float* o = &xb[t * dim];
            if (!post_norm.empty()) {
                kern.rmsnorm(&xb2[t * dim], o, post_norm.data(), dim, hp.norm_eps);
                o = &xb2[t * dim];
            }
            if (m.residual_scale != 1.0f) kern.scale(o, m.residual_scale, dim);
            kern.add(&x[t * dim], o, dim);
        });
    };

    for (int64_t l = 0; l < hp.n_layer; l++) {
        const Layer& L = m.layers[l];

        // Attention: x += wo · attn(rope(wq·xb), rope(wk·xb), wv·xb), xb = rmsnorm(x)
        const float* in = sublayer_input(L.attn_norm);
        matmul(ctx_, in, n, {{&L.wq, q.data()}, {&L.wk, k.data()}, {&L.wv, v.data()}});
        // Per token: the biases, the q/k norms, the rotation, and the new key and value into
        // the cache.
        for_tokens(n, q_dim + 2 * kv_dim, [&](int64_t t) {
            float *qt = &q[t * q_dim], *kt = &k[t * kv_dim], *vt = &v[t * kv_dim];
            add_bias(qt, L.bq);
            add_bias(kt, L.bk);
            add_bias(vt, L.bv);
            if (!L.q_norm.empty()) norm_qk(L, qt, kt);
            if (L.rope) {
                const float* c = &(L.local_rope ? rope_cos_local : rope_cos)[t * half_rot];
                const float* s = &(L.local_rope ? rope_sin_local : rope_sin)[t * half_rot];
                if (arch.rope == RopeKind::Neox) {
                    ggml_lite::rope_neox(qt, hp.n_head, hp.head_dim, hp.rope_dim, c, s);
                    ggml_lite::rope_neox(kt, hp.n_head_kv, hp.head_dim, hp.rope_dim, c, s);
                } else {
                    kern.rope(qt, hp.n_head, hp.head_dim, hp.rope_dim, c, s);
                    kern.rope(kt, hp.n_head_kv, hp.head_dim, hp.rope_dim, c, s);
                }
            }
            cache_.store(l, pos[t], 1, kt, vt, batch[t].seq);
        });
        attention(batch, l, n);
        matmul(ctx_, L.wo, xq.data(), n, xb.data());
        add_to_residual(L.post_attn_norm);

        // Feed-forward (gated): x += w2 · (act(w1·xb) ⊙ w3·xb), xb = rmsnorm(x)
        in = sublayer_input(L.ffn_norm);
        matmul(ctx_, in, n, {{&L.w1, hb.data()}, {&L.w3, hb2.data()}});
        for_tokens(n, n_ff, [&](int64_t t) {
            if (arch.act == Activation::GeluTanh) {
                ggml_lite::gelu_tanh_mul(&hb[t * n_ff], &hb2[t * n_ff], n_ff);
            } else {
                kern.silu_mul(&hb[t * n_ff], &hb2[t * n_ff], n_ff);
            }
        });
        matmul(ctx_, L.w2, hb.data(), n, xb.data());
        add_to_residual(L.post_ffn_norm);
    }

    // Only the rows whose logits are wanted go through the final norm and the LM head,
    // gathered into the first rows of xb.
    int64_t n_out = 0;
    for (int64_t t = 0; t < n; t++) {
        if (!batch[t].logits) continue;
        kern.rmsnorm(&xb[n_out * dim], &x[t * dim], m.output_norm.data(), dim, hp.norm_eps);
        n_out++;
    }
    if (n_out == 0) return;
    matmul(ctx_, m.output, xb.data(), n_out, out);
    const int64_t n_logits = n_out * hp.n_vocab;
    if (m.logit_scale != 1.0f) kern.scale(out, m.logit_scale, n_logits);
    if (m.final_softcap > 0.0f) ggml_lite::softcap(out, n_logits, m.final_softcap);
}

// RMSNorm of one token's queries and keys before RoPE, with weights as wide as one head (per
// head: Qwen 3, Gemma 3) or as the whole projection (OLMo 2).
void Session::norm_qk(const Layer& L, float* qt, float* kt) const {
    const HParams& hp = model_.hp;
    const ggml_lite::Kernels& kern = ctx_.kern();
    auto norm = [&](float* row, int64_t width, const std::vector<float>& w) {
        const int64_t nw = static_cast<int64_t>(w.size());
        for (int64_t i = 0; i < width; i += nw) {
            kern.rmsnorm(&row[i], &row[i], w.data(), nw, hp.norm_eps);
        }
    };
    norm(qt, hp.q_dim(), L.q_norm);
    norm(kt, hp.kv_dim(), L.k_norm);
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
    const Layer& L = model_.layers[layer];
    const float scale = model_.attn_scale, softcap = model_.attn_softcap;
    // Sliding windows and soft-capping take the general (scalar) attention.
    const bool variant = L.sliding || softcap > 0.0f;
    const int64_t window = L.sliding ? model_.n_swa : n_ctx();
    const bool f16 = cache_.type() == ggml_lite::Type::F16;
    // Multiply-adds: scores and value sums of every head over each token's positions.
    int64_t work = 0;
    for (int64_t t = 0; t < n; t++) work += 2 * hp.n_head * hd * (pos[t] + 1);
    const int threads = ggml_lite::threads_for_work(work, ctx_.n_threads);

    // Task i: KV head i % n_head_kv of token i / n_head_kv, scores in the thread's att row.
    const auto attend = [&](int64_t i, float* scores) {
        const int64_t t = i / hp.n_head_kv, g = i % hp.n_head_kv;
        const int64_t off = t * q_dim + g * group * hd, n_pos = pos[t] + 1;
        const int seq = batch[t].seq;
        const int64_t first = std::max<int64_t>(0, n_pos - window);
        if (f16) {
            const auto* kc = reinterpret_cast<const ggml_lite::fp16_t*>(cache_.k(layer, g, seq));
            const auto* vc = reinterpret_cast<const ggml_lite::fp16_t*>(cache_.v(layer, g, seq));
            if (variant) {
                ggml_lite::attend_window(&q[off], group, hd, kc, vc, first, n_pos, scale, softcap,
                                         scores, &xq[off]);
            } else {
                kern.attend_f16(&q[off], group, hd, kc, vc, n_pos, scale, scores, &xq[off]);
            }
        } else {
            const auto* kc = reinterpret_cast<const float*>(cache_.k(layer, g, seq));
            const auto* vc = reinterpret_cast<const float*>(cache_.v(layer, g, seq));
            if (variant) {
                ggml_lite::attend_window(&q[off], group, hd, kc, vc, first, n_pos, scale, softcap,
                                         scores, &xq[off]);
            } else {
                kern.attend_f32(&q[off], group, hd, kc, vc, n_pos, scale, scores, &xq[off]);
            }
        }
    };
    ggml_lite::Chunks tasks(n_tasks, 1);  // one at a time: tasks differ in length
    ggml_lite::parallel(ctx_, threads, [&](int ith, int nth) {
        float* scores = &att[static_cast<size_t>(ith * att_stride_)];
        for (int64_t i, end; tasks.next(nth, i, end);) attend(i, scores);
    });
}

}  // namespace lila
