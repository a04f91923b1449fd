#include "src/io/file_type.h"

#include <cctype>
#include <span>
#include <stdexcept>

namespace lila {

using ggml_lite::Type;

namespace {

// The file types --type accepts, in the order help lists them, with llama.cpp's id for each
// (llama.cpp has no all-Q3_K, all-Q4_K or all-Q5_K file type: q3_k, q4_k and q5_k take the ids
// of Q3_K_S, Q4_K_S and Q5_K_S, the "mostly Q3_K/Q4_K/Q5_K" types).
struct FileTypeRow {
    FileType ft;
    uint32_t gguf_id;
};

std::span<const FileTypeRow> file_type_rows() {
    static const FileTypeRow rows[] = {
        {Type::F32, 0},
        {Type::F16, 1},
        {Type::BF16, 32},
        {Type::Q8_0, 7},
        {{Type::Q4_0, Mix::Mostly}, 2},
        {Type::Q4_K, 14},
        {Type::Q6_K, 18},
        {FileType::Q4_K_M(), 15},
        {{Type::Q4_1, Mix::Mostly}, 3},
        {{Type::Q5_0, Mix::Mostly}, 8},
        {{Type::Q5_1, Mix::Mostly}, 9},
        {Type::Q5_K, 16},
        {{Type::IQ4_NL, Mix::Mostly}, 25},
        {{Type::IQ4_XS, Mix::Mostly}, 30},
        {{Type::Q4_K, Mix::S}, 14},
        {{Type::Q5_K, Mix::S}, 16},
        {{Type::Q5_K, Mix::M}, 17},
        {FileType::Q2_K(), 10},
        {Type::Q3_K, 11},
        {{Type::Q3_K, Mix::S}, 11},
        {{Type::Q3_K, Mix::M}, 12},
        {{Type::Q3_K, Mix::L}, 13},
    };
    return rows;
}

bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

}  // namespace

std::optional<FileType> file_type_from_name(std::string_view name) {
    for (const FileTypeRow& row : file_type_rows()) {
        if (same_name(name, file_type_name(row.ft))) return row.ft;
    }
    return std::nullopt;
}

std::string file_type_name(FileType ft) {
    const char* suffix = ft.mix == Mix::S   ? "_s"
                         : ft.mix == Mix::M ? "_m"
                         : ft.mix == Mix::L ? "_l"
                                            : "";
    return std::string(ggml_lite::type_name(ft.base)) + suffix;
}

std::string file_type_names() {
    std::string names;
    for (const FileTypeRow& row : file_type_rows())
        names += (names.empty() ? "" : ", ") + file_type_name(row.ft);
    return names;
}

uint32_t gguf_file_type(FileType ft) {
    for (const FileTypeRow& row : file_type_rows()) {
        if (row.ft == ft || (ft.mix == Mix::None && row.ft == FileType(ft.base, Mix::Mostly)))
            return row.gguf_id;
    }
    throw std::invalid_argument("gguf_file_type: no GGUF file type for " + file_type_name(ft));
}

std::optional<FileType> file_type_from_gguf(uint32_t id) {
    std::optional<FileType> found;
    for (const FileTypeRow& row : file_type_rows()) {
        if (row.gguf_id == id && (!found || found->mix == Mix::None)) found = row.ft;
    }
    return found;
}

}  // namespace lila
