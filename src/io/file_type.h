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

// llama.cpp's k-quant mixes on top of a base type: _S, _M and _L (src/convert/quantize.h has
// the rules), named "<base>_s" / "<base>_m" / "<base>_l"; Mostly is llama.cpp's Q2_K, a mix named
// as its base type (llama.cpp has no all-Q2_K file type).
enum class Mix : uint8_t { None, S, M, L, Mostly };

// Most file types put every matrix in one tensor type; the mixes (q2_k, q3_k_s, q3_k_m, q3_k_l,
// q4_k_s, q4_k_m, q5_k_s, q5_k_m) are llama.cpp's: the base type, with more bits for the output
// matrix and some attn_v, ffn_down and attn_output matrices. A tensor type converts implicitly:
// `opts.type = Type::Q8_0` asks for every matrix in Q8_0.
struct FileType {
    ggml_lite::Type base = ggml_lite::Type::F32;  // the type of (most) matrices
    Mix mix = Mix::None;

    FileType() = default;
    FileType(ggml_lite::Type t) : base(t) {}  // NOLINT(google-explicit-constructor): see above
    FileType(ggml_lite::Type t, Mix m) : base(t), mix(m) {}
    static FileType Q4_K_M() { return {ggml_lite::Type::Q4_K, Mix::M}; }
    static FileType Q2_K() { return {ggml_lite::Type::Q2_K, Mix::Mostly}; }
    bool operator==(const FileType&) const = default;
};

// "q4_k_m" -> FileType::Q4_K_M(), "q8_0" -> Type::Q8_0, ... (case-insensitive); nullopt for a
// name --type does not accept.
std::optional<FileType> file_type_from_name(std::string_view name);
std::string file_type_name(FileType ft);
// Every name --type accepts, comma-separated, for help and error messages.
std::string file_type_names();

// llama.cpp's general.file_type (LLAMA_FTYPE_MOSTLY_*) for a file of this type.
uint32_t gguf_file_type(FileType ft);
// The file type of a general.file_type id (the single type where it shares its id with an _S
// mix: 14 is q4_k); nullopt for an id --type has no name for.
std::optional<FileType> file_type_from_gguf(uint32_t id);

}  // namespace lila
