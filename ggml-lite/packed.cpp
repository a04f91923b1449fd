// Rearranging quantized and float rows into the packed layout of packed.h.
#include "packed.h"

#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "iq_grids.h"
#include "quant.h"

namespace ggml_lite {
namespace {

// Words 0..n-1 of a row's bytes `src` into the word-interleaved array `dst` at row r, xor-ed
// with `flip` (0x80808080 turns Q8_0's signed values into w + 128).
void put_words(uint8_t (*dst)[kPackRows][4], const uint8_t* src, int n, int r, uint32_t flip = 0) {
    for (int m = 0; m < n; m++) {
        uint32_t w;
        std::memcpy(&w, src + 4 * m, 4);
        w ^= flip;
        std::memcpy(dst[m][r], &w, 4);
    }
}

// Row r's levels in planes (packed.h: block_q3_Kx16, block_q5_Kx16, block_q6_Kx16): each of the
// Groups groups holds Words words of 4 values, and byte i of its Planes planes gets, by pack, the
// levels of values 4 (Words g + m) + i, m < Words (level: the value's level from the file).
template <int Groups, int Planes, class Level, class Pack>
void put_planes(uint8_t (&q)[Groups][Planes][kPackRows][4], int r, Level level, Pack pack) {
    constexpr int kWords = QK_K / 4 / Groups;
    for (int g = 0; g < Groups; g++) {
        for (int i = 0; i < 4; i++) {
            uint8_t v[kWords], planes[Planes];
            for (int m = 0; m < kWords; m++)
                v[m] = static_cast<uint8_t>(level(4 * (kWords * g + m) + i));
            pack(v, planes);
            for (int k = 0; k < Planes; k++) q[g][k][r][i] = planes[k];
        }
    }
}

// Row r's fifth bits (ggml's qh: element j's at bit j % 8 of byte j / 8) in packed.h's order:
// element 4i + k's at bit i of byte k.
void put_fifth_bits(uint8_t (*dst)[4], int r, const uint8_t* qh) {
    for (int k = 0; k < 4; k++) {
        uint8_t byte = 0;
        for (int i = 0; i < 8; i++) {
            const int j = 4 * i + k;
            byte = static_cast<uint8_t>(byte | ((qh[j / 8] >> (j % 8)) & 1) << i);
        }
        dst[r][k] = byte;
    }
}

// The scale and the 16 bytes of nibbles of a Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL row.
template <class Packed, class Block>
void put_nibble_row(Packed& p, int r, const Block& b) {
    p.d[r] = b.d;
    put_words(p.qs, b.qs, 4, r);
}

// Row r of a block column: one overload per quantized type.
void put_row(block_q4_0x16& p, int r, const block_q4_0& b) {
    put_nibble_row(p, r, b);
}
void put_row(block_iq4_nlx16& p, int r, const block_iq4_nl& b) {
    put_nibble_row(p, r, b);
}
void put_row(block_q5_0x16& p, int r, const block_q5_0& b) {
    put_nibble_row(p, r, b);
    put_fifth_bits(p.qh, r, b.qh);
}
void put_row(block_q4_1x16& p, int r, const block_q4_1& b) {
    put_nibble_row(p, r, b);
    p.m[r] = b.m;
}
void put_row(block_q5_1x16& p, int r, const block_q5_1& b) {
    put_nibble_row(p, r, b);
    p.m[r] = b.m;
    put_fifth_bits(p.qh, r, b.qh);
}
void put_row(block_q8_0x16& p, int r, const block_q8_0& b) {
    p.d[r] = b.d;
    put_words(p.qs, reinterpret_cast<const uint8_t*>(b.qs), 8, r, 0x80808080u);
}
void put_row(block_q4_Kx16& p, int r, const block_q4_K& b) {
    p.d[r] = b.d;
    p.dmin[r] = b.dmin;
    for (int k = 0; k < K_SCALE_SIZE; k++) p.scales[k][r] = b.scales[k];
    put_words(p.qs, b.qs, 32, r);
}
void put_row(block_q5_Kx16& p, int r, const block_q5_K& b) {
    p.d[r] = b.d;
    p.dmin[r] = b.dmin;
    for (int k = 0; k < K_SCALE_SIZE; k++) p.scales[k][r] = b.scales[k];
    // Value e = 32j + l (l < 32): the nibble of qs byte 32 (j / 2) + l (high for odd j) and bit j
    // of qh byte l as 16.
    const auto level = [&](int e) {
        const int j = e / 32, l = e % 32;
        const uint8_t q = b.qs[32 * (j / 2) + l];
        return (j % 2 ? q >> 4 : q & 0x0f) | (b.qh[l] >> j & 1) << 4;
    };
    put_planes(p.q, r, level, q5_K_pack_levels);
}
void put_row(block_q6_Kx16& p, int r, const block_q6_K& b) {
    p.d[r] = b.d;
    for (int g = 0; g < QK_K / 16; g++) p.scales[g][r] = b.scales[g];
    // Value e = 128h + 32k + l (k < 4, l < 32): ql byte 64h + 32(k % 2) + l (the high nibble for
    // k >= 2) and bits 2k, 2k + 1 of qh byte 32h + l as bits 4-5.
    const auto level = [&](int e) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        return (b.ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2)) & 0x0f) |
               (b.qh[32 * h + l] >> (2 * k) & 3) << 4;
    };
    put_planes(p.q, r, level, q6_K_pack_levels);
}
void put_row(block_iq4_xsx16& p, int r, const block_iq4_xs& b) {
    p.d[r] = b.d;
    p.scales_h[0][r] = static_cast<uint8_t>(b.scales_h);
    p.scales_h[1][r] = static_cast<uint8_t>(b.scales_h >> 8);
    for (int k = 0; k < QK_K / 64; k++) p.scales_l[k][r] = b.scales_l[k];
    put_words(p.qs, b.qs, QK_K / 8, r);
}
void put_row(block_q3_Kx16& p, int r, const block_q3_K& b) {
    p.d[r] = b.d;
    for (int k = 0; k < 12; k++) p.scales[k][r] = b.scales[k];
    // Value e = 128h + 32k + l (k < 4, l < 32): bits 2k, 2k + 1 of qs byte 32h + l, and bit e / 32
    // of hmask byte l as 4.
    const auto level = [&](int e) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        return (b.qs[32 * h + l] >> (2 * k) & 3) | (b.hmask[l] >> (e / 32) & 1) << 2;
    };
    put_planes(p.q, r, level, q3_K_pack_levels);
}
void put_row(block_q2_Kx16& p, int r, const block_q2_K& b) {
    p.d[r] = b.d;
    p.dmin[r] = b.dmin;
    for (int g = 0; g < QK_K / 16; g++) p.scales[g][r] = b.scales[g];
    put_words(p.qs, b.qs, 16, r);
}

// The nb block columns of a group; rows past rows_left stay zero.
template <class Block, class Packed>
void pack_group(const uint8_t* src, int64_t rows_left, int64_t nb, size_t row_bytes, uint8_t* d) {
    static_assert(sizeof(Packed) == kPackRows * sizeof(Block), "a group keeps its rows' bytes");
    auto* dst = reinterpret_cast<Packed*>(d);
    for (int64_t b = 0; b < nb; b++) {
        Packed& p = dst[b];
        if (rows_left < kPackRows) std::memset(&p, 0, sizeof p);
        for (int r = 0; r < kPackRows && r < rows_left; r++)
            put_row(p, r, reinterpret_cast<const Block*>(src + r * row_bytes)[b]);
    }
}

// Where sub-block ib (32 values) of an IQ2_XXS or IQ3_XXS row keeps its grid indices and its
// word of signs and scale (quant.h), in bytes from the block's start.
struct XxsFields {
    size_t indices, word;
};
XxsFields xxs_fields(const block_iq2_xxs*, int ib) {
    return {offsetof(block_iq2_xxs, qs) + 8 * ib, offsetof(block_iq2_xxs, qs) + 8 * ib + 4};
}
XxsFields xxs_fields(const block_iq3_xxs*, int ib) {
    return {offsetof(block_iq3_xxs, qs) + 8 * ib, offsetof(block_iq3_xxs, qs) + QK_K / 4 + 4 * ib};
}

// The stripes' sign byte (grid_sign_code) of each 7-bit sign field of the file, made once.
constexpr std::array<uint8_t, 128> kSignCode = [] {
    std::array<uint8_t, 128> t{};
    for (uint32_t seven = 0; seven < 128; seven++) t[seven] = grid_sign_code(even_signs(seven));
    return t;
}();

// Row i of a stripe's column (packed.h: block_grid_xxsx4 ...) from a row's block (put_row), and
// back (get_row): one pair per grid type.
template <int Indices, class Block>
void put_row(block_grid_xxsx4<Indices>& p, int i, const Block& b) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&b);
    p.d[i] = b.d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const XxsFields f = xxs_fields(&b, ib);
        std::memcpy(p.grid[ib][i], bytes + f.indices, Indices);
        uint32_t word;
        std::memcpy(&word, bytes + f.word, 4);
        for (int l = 0; l < 4; l++) {
            p.signs[ib][i][l] =
                static_cast<uint8_t>(kSignCode[(word >> (7 * l)) & 127] | ((word >> (28 + l)) & 1));
        }
    }
}
template <int Indices, class Block>
void get_row(const block_grid_xxsx4<Indices>& p, int i, Block& b) {
    auto* bytes = reinterpret_cast<uint8_t*>(&b);
    b.d = p.d[i];
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const XxsFields f = xxs_fields(&b, ib);
        std::memcpy(bytes + f.indices, p.grid[ib][i], Indices);
        uint32_t word = 0;
        for (int l = 0; l < 4; l++) {
            const uint8_t code = p.signs[ib][i][l];
            word |= (grid_signs(code) & 0x7fu) << (7 * l) | (code & 1u) << (28 + l);
        }
        std::memcpy(bytes + f.word, &word, 4);
    }
}

void put_row(block_iq2_xsx4& p, int i, const block_iq2_xs& b) {
    p.d[i] = b.d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        p.scales[ib][i] = b.scales[ib];
        for (int l = 0; l < 4; l++) {
            const uint16_t q = b.qs[4 * ib + l];
            p.qs[ib][i][l] = static_cast<uint16_t>((q & 511) | kSignCode[q >> 9] << 8);
        }
    }
}
void get_row(const block_iq2_xsx4& p, int i, block_iq2_xs& b) {
    b.d = p.d[i];
    for (int ib = 0; ib < QK_K / 32; ib++) {
        b.scales[ib] = p.scales[ib][i];
        for (int l = 0; l < 4; l++) {
            const uint16_t q = p.qs[ib][i][l];
            b.qs[4 * ib + l] = static_cast<uint16_t>((q & 511) | (grid_signs(q >> 8) & 0x7f) << 9);
        }
    }
}

void put_row(block_iq2_sx4& p, int i, const block_iq2_s& b) {
    p.d[i] = b.d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(p.grid[ib][i], b.qs + 4 * ib, 4);
        std::memcpy(p.signs[ib][i], b.qs + QK_K / 8 + 4 * ib, 4);
        p.qh[ib][i] = b.qh[ib];
        p.scales[ib][i] = b.scales[ib];
    }
}
void get_row(const block_iq2_sx4& p, int i, block_iq2_s& b) {
    b.d = p.d[i];
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(b.qs + 4 * ib, p.grid[ib][i], 4);
        std::memcpy(b.qs + QK_K / 8 + 4 * ib, p.signs[ib][i], 4);
        b.qh[ib] = p.qh[ib][i];
        b.scales[ib] = p.scales[ib][i];
    }
}

void put_row(block_iq3_sx4& p, int i, const block_iq3_s& b) {
    p.d[i] = b.d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(p.grid[ib][i], b.qs + 8 * ib, 8);
        std::memcpy(p.signs[ib][i], b.signs + 4 * ib, 4);
        p.qh[ib][i] = b.qh[ib];
    }
    for (int k = 0; k < QK_K / 64; k++) p.scales[k][i] = b.scales[k];
}
void get_row(const block_iq3_sx4& p, int i, block_iq3_s& b) {
    b.d = p.d[i];
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(b.qs + 8 * ib, p.grid[ib][i], 8);
        std::memcpy(b.signs + 4 * ib, p.signs[ib][i], 4);
        b.qh[ib] = p.qh[ib][i];
    }
    for (int k = 0; k < QK_K / 64; k++) b.scales[k] = p.scales[k][i];
}

void put_row(block_iq1_sx4& p, int i, const block_iq1_s& b) {
    p.d[i] = b.d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(p.qs[ib][i], b.qs + 4 * ib, 4);
        p.qh[ib][i] = b.qh[ib];
    }
}
void get_row(const block_iq1_sx4& p, int i, block_iq1_s& b) {
    b.d = p.d[i];
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(b.qs + 4 * ib, p.qs[ib][i], 4);
        b.qh[ib] = p.qh[ib][i];
    }
}

// IQ1_M's byte pairs are the stripe's words (little-endian, as every target lila builds for).
void put_row(block_iq1_mx4& p, int i, const block_iq1_m& b) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(p.qs[ib][i], b.qs + 4 * ib, 4);
        std::memcpy(&p.qh[ib][i], b.qh + 2 * ib, 2);
    }
    for (int w = 0; w < QK_K / 64; w++) std::memcpy(&p.scales[w][i], b.scales + 2 * w, 2);
}
void get_row(const block_iq1_mx4& p, int i, block_iq1_m& b) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        std::memcpy(b.qs + 4 * ib, p.qs[ib][i], 4);
        std::memcpy(b.qh + 2 * ib, &p.qh[ib][i], 2);
    }
    for (int w = 0; w < QK_K / 64; w++) std::memcpy(b.scales + 2 * w, &p.scales[w][i], 2);
}

// A group of grid rows as 4 stripes of 4 rows (packed.h); rows past rows_left stay zero.
template <class Block, class Quad>
void pack_stripes(const uint8_t* src, int64_t rows_left, int64_t nb, size_t row_bytes, uint8_t* d) {
    static_assert(sizeof(Quad) == 4 * sizeof(Block), "a group keeps its rows' bytes");
    auto* dst = reinterpret_cast<Quad*>(d);
    if (rows_left < kPackRows) std::memset(dst, 0, kPackRows / 4 * nb * sizeof(Quad));
    for (int r = 0; r < kPackRows && r < rows_left; r++) {
        const auto* row = reinterpret_cast<const Block*>(src + r * row_bytes);
        for (int64_t b = 0; b < nb; b++) put_row(dst[r / 4 * nb + b], r % 4, row[b]);
    }
}
template <class Block, class Quad>
void unpack_stripes(const uint8_t* src, int rows, int64_t nb, size_t row_bytes, uint8_t* d) {
    const auto* quads = reinterpret_cast<const Quad*>(src);
    for (int r = 0; r < rows; r++) {
        auto* row = reinterpret_cast<Block*>(d + r * row_bytes);
        for (int64_t b = 0; b < nb; b++) get_row(quads[r / 4 * nb + b], r % 4, row[b]);
    }
}

// A group of 16 rows of `cols` float, half or bfloat16 values, 4 columns by 4 columns.
template <class Elem>
void pack_float_group(const uint8_t* src, int64_t rows_left, int64_t cols, size_t row_bytes,
                      uint8_t* d) {
    auto* dst = reinterpret_cast<Elem*>(d);
    if (rows_left < kPackRows) std::memset(dst, 0, sizeof(Elem) * kPackRows * cols);
    for (int r = 0; r < kPackRows && r < rows_left; r++) {
        const auto* row = reinterpret_cast<const Elem*>(src + r * row_bytes);
        for (int64_t c = 0; c < cols; c++) dst[packed_float_index(cols, c, r)] = row[c];
    }
}

// A packable type: how its groups are made and what its packed kernels read. A group of
// kPackRows rows takes the bytes of those rows (pack_group checks it).
struct Layout {
    Type type;
    // Packs a group of rows (row_bytes apart, rows_left of them real) of nb blocks each (nb
    // columns for the float types) into dst.
    void (*pack)(const uint8_t* src, int64_t rows_left, int64_t nb, size_t row_bytes, uint8_t* dst);
    // The packed kernels' activation rows: act_bytes per act_values values.
    size_t act_bytes;
    int64_t act_values;
    // The inverse of pack for the first `rows` rows (unpack_group): the grid types', for the
    // scalar to_grid.
    void (*unpack)(const uint8_t* src, int rows, int64_t nb, size_t row_bytes,
                   uint8_t* dst) = nullptr;
};

constexpr Layout kLayouts[] = {
    {Type::F32, pack_float_group<float>, sizeof(float), 1},
    {Type::F16, pack_float_group<fp16_t>, sizeof(float), 1},
    {Type::BF16, pack_float_group<bf16_t>, sizeof(float), 1},
    {Type::Q8_0, pack_group<block_q8_0, block_q8_0x16>, sizeof(block_q8_0c), QK8_0},
    {Type::Q4_0, pack_group<block_q4_0, block_q4_0x16>, sizeof(block_q8_0c), QK8_0},
    {Type::Q5_0, pack_group<block_q5_0, block_q5_0x16>, sizeof(block_q8_0c), QK8_0},
    {Type::IQ4_NL, pack_group<block_iq4_nl, block_iq4_nlx16>, sizeof(block_q8_0c), QK8_0},
    {Type::Q4_1, pack_group<block_q4_1, block_q4_1x16>, sizeof(block_q8_1c), QK8_1},
    {Type::Q5_1, pack_group<block_q5_1, block_q5_1x16>, sizeof(block_q8_1c), QK8_1},
    {Type::Q4_K, pack_group<block_q4_K, block_q4_Kx16>, sizeof(block_q8_K), QK_K},
    {Type::Q5_K, pack_group<block_q5_K, block_q5_Kx16>, sizeof(block_q8_K), QK_K},
    {Type::Q6_K, pack_group<block_q6_K, block_q6_Kx16>, sizeof(block_q8_K), QK_K},
    {Type::IQ4_XS, pack_group<block_iq4_xs, block_iq4_xsx16>, sizeof(block_q8_K), QK_K},
    {Type::Q3_K, pack_group<block_q3_K, block_q3_Kx16>, sizeof(block_q8_K), QK_K},
    {Type::Q2_K, pack_group<block_q2_K, block_q2_Kx16>, sizeof(block_q8_K), QK_K},
    {Type::IQ2_XXS, pack_stripes<block_iq2_xxs, block_iq2_xxsx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq2_xxs, block_iq2_xxsx4>},
    {Type::IQ2_XS, pack_stripes<block_iq2_xs, block_iq2_xsx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq2_xs, block_iq2_xsx4>},
    {Type::IQ2_S, pack_stripes<block_iq2_s, block_iq2_sx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq2_s, block_iq2_sx4>},
    {Type::IQ3_XXS, pack_stripes<block_iq3_xxs, block_iq3_xxsx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq3_xxs, block_iq3_xxsx4>},
    {Type::IQ3_S, pack_stripes<block_iq3_s, block_iq3_sx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq3_s, block_iq3_sx4>},
    {Type::IQ1_S, pack_stripes<block_iq1_s, block_iq1_sx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq1_s, block_iq1_sx4>},
    {Type::IQ1_M, pack_stripes<block_iq1_m, block_iq1_mx4>, sizeof(block_q8_K), QK_K,
     unpack_stripes<block_iq1_m, block_iq1_mx4>},
};

// t's layout; nullptr when t has none. Throws std::invalid_argument, as type_slot() does, for a
// value that is not a type.
const Layout* find_layout(Type t) {
    static const std::array<const Layout*, kTypeCount> by_slot = [] {
        std::array<const Layout*, kTypeCount> slots{};
        for (const Layout& l : kLayouts) slots[type_slot(l.type)] = &l;
        return slots;
    }();
    return by_slot[type_slot(t)];
}

const Layout& layout(Type t, const char* caller) {
    const Layout* l = find_layout(t);
    if (!l) {
        throw std::invalid_argument(std::string(caller) + ": " + type_name(t) +
                                    " has no packed layout");
    }
    return *l;
}

}  // namespace

bool packable(Type t) {
    return find_layout(t) != nullptr;
}

size_t packed_group_size(Type t, int64_t cols) {
    layout(t, "packed_group_size");
    return kPackRows * row_size(t, cols);
}

size_t packed_activation_size(Type t, int64_t cols) {
    const Layout& l = layout(t, "packed_activation_size");
    return static_cast<size_t>(cols / l.act_values) * l.act_bytes;
}

size_t grid_group_size(int64_t cols) {
    return static_cast<size_t>(cols / QK_K) * sizeof(block_gridx16);
}

void pack_grid_group(Type t, GridBlockFn decode, const void* src, int rows, int64_t cols,
                     void* dst) {
    const size_t row_bytes = row_size(t, cols);
    auto* out = static_cast<block_gridx16*>(dst);
    GridLevels v;
    for (int64_t b = 0; b < cols / QK_K; b++) {
        block_gridx16& p = out[b];
        if (rows < kPackRows) std::memset(&p, 0, sizeof p);
        for (int r = 0; r < rows; r++) {
            decode(static_cast<const uint8_t*>(src) + r * row_bytes, b, &v, &p.d[r]);
            for (int g = 0; g < QK_K / 16; g++) p.scales[g][r] = v.ls[g];
            // Four levels q (|q| <= 62) a word, each byte to q + 64 = (q + 128) - 64: q ^ 0x80
            // is q + 128 as an unsigned byte, at least 66, so no byte borrows from the next.
            static_assert(kGridOffset == 0x40);
            for (int w = 0; w < QK_K / 4; w++) {
                uint32_t word;
                std::memcpy(&word, v.q + 4 * w, 4);
                word = (word ^ 0x80808080u) - 0x40404040u;
                std::memcpy(p.qs[w][r], &word, 4);
            }
        }
    }
}

void unpack_group(Type t, const void* src, int rows, int64_t cols, void* dst) {
    const Layout& l = layout(t, "unpack_group");
    if (!l.unpack) {
        throw std::invalid_argument(std::string("unpack_group: ") + type_name(t) +
                                    "'s packed layout is not unpacked");
    }
    l.unpack(static_cast<const uint8_t*>(src), rows, cols / block_size(t), row_size(t, cols),
             static_cast<uint8_t*>(dst));
}

void pack_groups(Type t, const void* src, int64_t rows, int64_t cols, void* dst, int64_t g0,
                 int64_t g1) {
    const Layout& l = layout(t, "pack_groups");
    const size_t row_bytes = row_size(t, cols), group_bytes = packed_group_size(t, cols);
    const int64_t nb = cols / block_size(t);
    for (int64_t g = g0; g < g1; g++) {
        const auto* s = static_cast<const uint8_t*>(src) + g * kPackRows * row_bytes;
        auto* d = static_cast<uint8_t*>(dst) + g * group_bytes;
        l.pack(s, rows - g * kPackRows, nb, row_bytes, d);
    }
}

}  // namespace ggml_lite
