// A GGUF file's type (general.file_type, llama.cpp's LLAMA_FTYPE_MOSTLY_*): what `lila convert
// --type` asks for and what `lila info` reports. Which tensor gets which type under a file type
// is the converter's business (src/convert/quantize.h); this is only the names and ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ggml-lite/type.h"

namespace lila {

// How a file type places its base type (src/convert/quantize.h has the rules). None: every
// matrix in the base type (llama-quantize --pure). S, M, L: llama.cpp's k-quant mixes, named
// "<base>_s" / "<base>_m" / "<base>_l". Mostly: llama.cpp's file type named as its base type
// (LLAMA_FTYPE_MOSTLY_Q2_K, _Q4_0, _IQ4_XS, ...), mostly that type with more bits in places.
enum class Mix : uint8_t { None, S, M, L, Mostly };

// A file type is what llama-quantize means by the same name: q4_0, q4_1, q5_0, q5_1, iq4_nl and
// iq4_xs give the output matrix Q6_K (and the IQ4s some attn_v and ffn_down Q5_K); q2_k and the
// _s/_m/_l mixes more bits for the output matrix and some attn_v, ffn_down and attn_output
// matrices; the float types, q8_0, q6_k, and q3_k, q4_k, q5_k (which llama.cpp lacks) put
// every matrix in one type. pure() is the one-type file of any of them. A tensor type converts
// implicitly to its pure file type: `opts.type = Type::Q4_0` asks for every matrix in Q4_0.
struct FileType {
    ggml_lite::Type base = ggml_lite::Type::F32;  // the type of (most) matrices
    Mix mix = Mix::None;

    FileType() = default;
    FileType(ggml_lite::Type t) : base(t) {}  // NOLINT(google-explicit-constructor): see above
    FileType(ggml_lite::Type t, Mix m) : base(t), mix(m) {}
    static FileType Q4_K_M() { return {ggml_lite::Type::Q4_K, Mix::M}; }
    static FileType Q2_K() { return {ggml_lite::Type::Q2_K, Mix::Mostly}; }
    FileType pure() const { return {base, Mix::None}; }
    bool operator==(const FileType&) const = default;
};

// "q4_k_m" -> FileType::Q4_K_M(), "q8_0" -> Type::Q8_0, ... (case-insensitive); nullopt for a
// name --type does not accept.
std::optional<FileType> file_type_from_name(std::string_view name);
std::string file_type_name(FileType ft);
// Every name --type accepts, comma-separated, for help and error messages.
std::string file_type_names();

// llama.cpp's general.file_type (LLAMA_FTYPE_MOSTLY_*) for a file of this type (a pure file's
// is its named type's: llama-quantize --pure writes the same id).
uint32_t gguf_file_type(FileType ft);
// The file type of a general.file_type id, as llama.cpp means it: an id an _S mix shares with
// lila's one-type file gives the mix (14 is q4_k_s; a file of Q4_K matrices only is q4_k, which
// Model::type_summary tells by the tensors); nullopt for an id --type has no name for.
std::optional<FileType> file_type_from_gguf(uint32_t id);

}  // namespace lila
