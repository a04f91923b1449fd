#include "src/runtime/arch.h"

namespace lila {

const std::vector<Arch>& archs() {
    // Variants as llama.cpp's graph builders (build_*.cpp) and hyperparameter loader have them.
    static const std::vector<Arch> table = [] {
        Arch llama{"llama"};
        Arch qwen2{"qwen2"};
        qwen2.rope = RopeKind::Neox;
        Arch qwen3 = qwen2;
        qwen3.name = "qwen3";
        qwen3.qk_norm = QKNorm::PerHead;
        Arch gemma2{"gemma2"};
        gemma2.rope = RopeKind::Neox;
        gemma2.act = Activation::GeluTanh;
        gemma2.post_norms = gemma2.embd_scale = gemma2.softcap = gemma2.sliding = true;
        gemma2.global_every = 2;  // layers 0, 2, 4, ... slide
        gemma2.default_window = 4096;
        gemma2.wide_query_layers = 46;
        Arch gemma3{"gemma3"};
        gemma3.rope = RopeKind::Neox;
        gemma3.act = Activation::GeluTanh;
        gemma3.qk_norm = QKNorm::PerHead;
        gemma3.post_norms = gemma3.embd_scale = gemma3.sliding = true;
        gemma3.global_every = 6;  // five sliding layers to one global
        gemma3.local_rope_base = 10000.0f;
        gemma3.wide_query_layers = 62;
        Arch phi3{"phi3"};
        phi3.rope = RopeKind::Neox;
        phi3.fused = phi3.sliding = true;
        Arch smollm3{"smollm3"};
        smollm3.no_rope_every = 4;
        Arch granite{"granite"};
        granite.granite_scales = true;
        Arch olmo2{"olmo2"};
        olmo2.rope = RopeKind::Neox;
        olmo2.qk_norm = QKNorm::Whole;
        olmo2.pre_norms = false;
        olmo2.post_norms = true;
        return std::vector<Arch>{llama, qwen2,   qwen3,   gemma2, gemma3,
                                 phi3,  smollm3, granite, olmo2};
    }();
    return table;
}

const Arch* find_arch(std::string_view name) {
    for (const Arch& a : archs()) {
        if (name == a.name) return &a;
    }
    return nullptr;
}

std::string arch_names() {
    std::string names;
    for (const Arch& a : archs()) names += (names.empty() ? "" : ", ") + std::string(a.name);
    return names;
}

}  // namespace lila
