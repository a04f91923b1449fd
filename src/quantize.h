// Float weights -> the types a model file stores, as a converter writes them: which type each
// tensor gets (one place for every converter) and the conversion itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggml-lite/type.h"

namespace lila {

// What a conversion is asked for (`lila convert --type`), as llama.cpp's file types. Most put
// every matrix in one tensor type; q4_k_m is llama.cpp's Q4_K_M mix: Q4_K, with Q6_K for the
// output matrix and half of the attn_v and ffn_down matrices. A tensor type converts
// implicitly: `opts.type = Type::Q8_0` asks for every matrix in Q8_0.
struct FileType {
    ggml_lite::Type base = ggml_lite::Type::F32;  // the type of (most) matrices
    bool q4_k_m = false;                          // with base Q4_K: the Q4_K_M rules on top

    FileType() = default;
    FileType(ggml_lite::Type t) : base(t) {}  // NOLINT(google-explicit-constructor): see above
    static FileType Q4_K_M() {
        FileType ft(ggml_lite::Type::Q4_K);
        ft.q4_k_m = true;
        return ft;
    }
};

// "q4_k_m" -> FileType::Q4_K_M(), "q8_0" -> Type::Q8_0, ... (case-insensitive); nullopt for a
// name --type does not accept.
std::optional<FileType> file_type_from_name(std::string_view name);
std::string file_type_name(FileType ft);
// Every name --type accepts, comma-separated, for help and error messages.
std::string file_type_names();

// llama.cpp's general.file_type (LLAMA_FTYPE_MOSTLY_*) for a file of this type.
uint32_t gguf_file_type(FileType ft);

// What the type rules need to know of the model besides a tensor's own name and shape.
struct ModelLayout {
    int64_t n_layer = 0;
    bool tied_output = false;  // no output.weight: token_embd.weight is the output matrix too
};

// The type tensor `name` (GGUF name, e.g. "blk.3.ffn_down.weight", its layer read from the
// "blk.N." prefix) of GGUF shape `shape` (shape[0] the row length) is stored as, for a file
// of type `ft`: llama.cpp's llama_tensor_get_type for the types lila has.
// - 1-D tensors (norms, biases, RoPE factors) stay F32.
// - q4_k_m: the output matrix (token_embd when tied) Q6_K; attn_v and ffn_down Q6_K in the
//   layers use_more_bits() picks, Q4_K elsewhere.
// - A matrix whose rows do not split into whole blocks falls back: Q4_K and Q6_K to Q8_0
//   (llama.cpp takes Q6_K to Q8_0 and Q4_K to Q5_0, which lila lacks; of Q4_0 and Q8_0, only
//   Q8_0 is at least as accurate as the Q4_K asked for), anything still not fitting to F16.
ggml_lite::Type tensor_type(FileType ft, const std::string& name, const std::vector<int64_t>& shape,
                            const ModelLayout& model);

// N of a "blk.N." tensor name; -1 for tensors outside the layers.
int64_t tensor_layer(const std::string& name);

// llama.cpp's choice of the layers that get more bits in its _M mixes: the first and last
// eighth of the layers and every third one between.
bool use_more_bits(int64_t layer, int64_t n_layer);

// Converts `rows` rows of `cols` floats to `type` into `out` (resized), threaded over rows.
void quantize_rows(const float* src, ggml_lite::Type type, int64_t rows, int64_t cols,
                   int n_threads, std::vector<uint8_t>& out);

}  // namespace lila
