// Architectures as descriptions (DESIGN.md, "Architectures are descriptions"): what a GGUF
// file's general.architecture says about which tensors it has and which variant of each
// block it runs. Model::load binds tensors by these fields, the forward pass (session.cpp)
// branches on them, and the converters write them; adding an architecture is a row in
// archs() plus tests against an independent runtime, not a copy of the forward pass.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lila {

// How RoPE pairs the dimensions of a head: NORM rotates (2i, 2i + 1) (GGUF "llama" files, whose
// converter permutes Hugging Face's q/k rows); NEOX rotates (i, i + n_rot/2), the layout of
// Hugging Face checkpoints, which files of NEOX architectures keep.
enum class RopeKind { Norm, Neox };

// The gated FFN's activation: out = down · (act(gate·x) ⊙ up·x).
enum class Activation { SiLU, GeluTanh };

// RMSNorm of queries and keys before RoPE (attn_q_norm, attn_k_norm): none, per head
// (head_dim wide), or over the whole projection (n_head · head_dim wide).
enum class QKNorm { None, PerHead, Whole };

struct Arch {
    const char* name;  // general.architecture, also the prefix of its hyperparameter keys
    RopeKind rope = RopeKind::Norm;
    Activation act = Activation::SiLU;
    QKNorm qk_norm = QKNorm::None;
    bool pre_norms = true;    // attn_norm / ffn_norm before each sublayer
    bool post_norms = false;  // post_attention_norm / post_ffw_norm on each sublayer's output
    bool fused = false;       // attn_qkv holds Q, K, V and ffn_up holds gate then up (Phi-3)
    bool embd_scale = false;  // embeddings × sqrt(n_embd) (Gemma)
    // Attention and final logit soft-capping, c·tanh(s/c), c from
    // {arch}.attn_logit_softcapping (default 50) and .final_logit_softcapping (30).
    bool softcap = false;
    // Granite's multipliers from {arch}.embedding_scale, .residual_scale, .attention.scale
    // and .logit_scale.
    bool granite_scales = false;
    // Sliding-window attention, the window from {arch}.attention.sliding_window (default
    // below; none when 0): on every layer, or with global_every > 0 on all but layers
    // global_every - 1, 2·global_every - 1, ...
    bool sliding = false;
    int64_t global_every = 0;
    int64_t default_window = 0;
    float local_rope_base = 0;  // RoPE base of the sliding layers; 0: the file's, as global ones
    int64_t no_rope_every = 0;  // layers no_rope_every - 1, 2·no_rope_every - 1, ... skip RoPE
    // Gemma's query_pre_attn_scalar, which its GGUF does not store: 1/sqrt(n_embd / n_head)
    // for the 27B model (llama.cpp knows it by this layer count), 1/sqrt(head_dim) otherwise.
    int64_t wide_query_layers = 0;

    bool layer_slides(int64_t layer) const {
        return sliding && (global_every == 0 || (layer + 1) % global_every != 0);
    }
    bool layer_has_rope(int64_t layer) const {
        return no_rope_every == 0 || (layer + 1) % no_rope_every != 0;
    }
};

// Every architecture lila runs, "llama" first.
const std::vector<Arch>& archs();
// The architecture named `name`, or nullptr.
const Arch* find_arch(std::string_view name);
// "llama, qwen2, ...": for error messages.
std::string arch_names();

}  // namespace lila
