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

// Most file types put every matrix in one tensor type; q4_k_m is llama.cpp's Q4_K_M mix: Q4_K,
// with Q6_K for the output matrix and half of the attn_v and ffn_down matrices. A tensor type
// converts implicitly: `opts.type = Type::Q8_0` asks for every matrix in Q8_0.
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

}  // namespace lila
