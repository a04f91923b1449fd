// The amx table: the avx512_bf16 one with two kinds of packed kernels on AMX's tile unit.
// - Q8_0 prefill (tdpbsud): a full tile of 16 tokens against a group of 16 rows is one 16 x 16
//   int32 tile per block column, C[t][r] = the block's dot of token t's signed bytes (tile A,
//   read in place x_stride apart) with row r's bytes stored as w + 128 (tile B: the block
//   column as it is in memory, 4 bytes of every row side by side, which is AMX's layout). Row t
//   of C is what the vpdpbusd kernel's token t holds after the block, less the correction, so
//   the float step after it is theirs (finish_block) and the table gives the scalar one's bits.
//   That float step (4 vector operations per token and block) and the tile stores it reads
//   bound the kernel: it measured 1.1-1.15x the vpdpbusd kernel in prefill. The other 32-value
//   block types would have to unpack their operands into a buffer for each tile, which made
//   Q4_0 10% slower than vpdpbusd: they keep the avx512 kernels (docs/kernels.md, "AMX").
//   Fewer than 16 tokens (the end of a batch, decode) take the avx512 kernel.
// - BF16 (tdpbf16ps), every token count: below.
//
// Compiled with -mamx-tile -mamx-int8 -mamx-bf16 on top of the AVX-512 flags: only the table has
// external linkage (see kernels_avx512.cpp).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/x86/packed_avx512.h"
#include "ggml-lite/x86/packed_bf16_avx512.h"
#include "ggml-lite/x86/packed_blocks_avx512-inl.h"

namespace ggml_lite {
namespace {

// LDTILECFG's 64-byte operand (palette 1): each tile's rows and bytes per row.
struct TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// GCC's tileloadd (and ldtilecfg, sttilecfg: 8 bytes) tell the compiler they touch no memory,
// which would let it drop or defer the stores that build a buffer a tile then loads: this
// compiler barrier goes between them.
[[gnu::always_inline]] inline void tile_fence() {
    __asm__ volatile("" ::: "memory");
}

// The tile configuration is per-thread state, and the other kernel (or whatever else ran on the
// thread) may have left its own: reading it back and comparing costs next to nothing, where
// loading it costs about 90 ns (it clears the tiles), a few percent of a group's tile.
void configure_tiles(const TileConfig& want) {
    alignas(64) TileConfig now;
    tile_fence();
    _tile_storeconfig(&now);
    tile_fence();
    if (__builtin_memcmp(&now, &want, sizeof now) != 0) {
        tile_fence();
        _tile_loadconfig(&want);
    }
}

// ---- Q8_0: tdpbsud ---------------------------------------------------------------------------

// Tiles 0-2 (accumulator C, activations A, weights B) take the even blocks, 3-5 the odd ones, so
// that the tile unit multiplies block b + 1 while the vector units finish block b: C 16 tokens x
// 16 int32, A 16 tokens x 32 bytes, B 8 words x 64 bytes (16 rows x 4).
const TileConfig& q8_0_tiles() {
    static const TileConfig cfg = [] {
        TileConfig c;
        for (int t : {0, 3}) c.rows[t] = kPackTokens, c.colsb[t] = kPackRows * 4;
        for (int t : {1, 4}) c.rows[t] = kPackTokens, c.colsb[t] = QK8_0;
        for (int t : {2, 5}) c.rows[t] = 8, c.colsb[t] = kPackRows * 4;
        return c;
    }();
    return cfg;
}

// 16 tokens against one group of nb block columns.
void q8_0_amx_tile(int64_t nb, const block_q8_0x16* w, const uint8_t* x, size_t x_stride, float* y,
                   int64_t y_stride, __mmask16 rows) {
    configure_tiles(q8_0_tiles());
    alignas(64) int32_t dots[kPackTokens][kPackRows];
    __m512 acc[kPackTokens];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    const auto act = [&](int t, int64_t b) -> const block_q8_0c& {
        return reinterpret_cast<const block_q8_0c*>(x + t * x_stride)[b];
    };
    const long x_bytes = static_cast<long>(x_stride);
    // Block b's dot products into its accumulator tile (the literal tile numbers are GCC's:
    // its tile intrinsics paste them into their assembly).
    const auto multiply_even = [&](int64_t b) {
        prefetch_block(w + b, Lead::L1AndL2);
        _tile_loadd(1, act(0, b).qs, x_bytes);
        _tile_loadd(2, w[b].qs, 64);
        _tile_zero(0);
        _tile_dpbsud(0, 1, 2);
    };
    const auto multiply_odd = [&](int64_t b) {
        prefetch_block(w + b, Lead::L1AndL2);
        _tile_loadd(4, act(0, b).qs, x_bytes);
        _tile_loadd(5, w[b].qs, 64);
        _tile_zero(3);
        _tile_dpbsud(3, 4, 5);
    };
    // Block b's float step for every token, from its dot products in dots. Unrolled, so that
    // acc[] lives in registers.
    const auto finish = [&](int64_t b) {
        const BlockScales<PackedQ8> s(w[b]);
#pragma GCC unroll 16
        for (int t = 0; t < kPackTokens; t++) {
            const block_q8_0c& a = act(t, b);
            const __m512i dot = _mm512_load_si512(dots[t]);
            acc[t] = finish_block(s, a, _mm512_add_epi32(dot, start_sum(a)), acc[t]);
        }
    };
    multiply_even(0);
    for (int64_t b = 0; b < nb; b += 2) {
        if (b + 1 < nb) multiply_odd(b + 1);
        _tile_stored(0, dots, kPackRows * 4);
        finish(b);
        if (b + 2 < nb) multiply_even(b + 2);
        if (b + 1 < nb) {
            _tile_stored(3, dots, kPackRows * 4);
            finish(b + 1);
        }
    }
    for (int t = 0; t < kPackTokens; t++) _mm512_mask_storeu_ps(y + t * y_stride, rows, acc[t]);
}

// Full tiles on AMX, the rest on the avx512 kernel (the same bits).
void q8_0_amx_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                   int64_t y_stride, int nr, int nt) {
    if (nt < kPackTokens) {
        avx512::packed_gemm_q8_0(n, w, x, x_stride, y, y_stride, nr, nt);
        return;
    }
    q8_0_amx_tile(n / QK8_0, static_cast<const block_q8_0x16*>(w), static_cast<const uint8_t*>(x),
                  x_stride, y, y_stride, row_mask(nr));
}

// ---- BF16 weights: tdpbf16ps ------------------------------------------------------------------
//
// The BF16 dot path (packed.h) with the products summed on the tile unit, in the reference's two
// partial sums (column pair p into p % 2), each accumulated in tiles over the whole row, so the
// vector units only add the partials at the end. Both operands load in place:
// - Weights: a chunk of 64 columns is 16 four-column blocks of 16 rows (packed.h), 128 bytes each,
//   rows 0-7 in the first 64 and rows 8-15 in the second. The first halves of the 16 blocks, 128
//   bytes apart, are a tile B_0 whose row k (block k) holds, at 32-bit lane 2i + j, row i's pair j
//   of the block: tdpbf16ps's layout, with lane n meeting the activations' pair in row k. B_1 is
//   the second halves (rows 8-15).
// - Activations (bf16_chunked_activations_ref): a chunk's even pairs in 64 bytes, then its odd
//   ones. Tile A_p holds the tokens' pairs 2k + p, which meet block k's pair p.
// So C_hp = A_p B_h holds, at lane 2i + p, row 8h + i's partial sum p (the other lanes, pairs
// that do not meet, are not read): four tiles of nt tokens for 16 rows, 4 tdpbf16ps of 16 x 16 x
// 32 products a chunk, half of them kept. One token (decode) has both its rows A_0 and A_1 in one
// tile of 2 rows, 64 bytes apart, and each group two tiles C_h of 2 rows; a token's sums are the
// same operations either way, so decode and prefill agree to the bit.

constexpr int64_t kChunk = kBf16Chunk;  // columns per chunk: 16 four-column blocks
constexpr int kChunkPairRows = 16;      // tile rows of a chunk's A_p and B_h

// Several tokens: C_00, C_01, C_10, C_11 in tiles 0-3, A_0 and A_1 in 4 and 5, B_0 and B_1 in 6
// and 7. One token (one or two groups g): C_0 and C_1 of group g in tiles 2g and 2g + 1, A in 4,
// B in 5, 6 and 7.
TileConfig bf16_tiles(int nt) {
    TileConfig c;
    const bool one = nt == 1;
    for (int t = 0; t < 4; t++) c.rows[t] = static_cast<uint8_t>(one ? 2 : nt), c.colsb[t] = 64;
    c.rows[4] = static_cast<uint8_t>(one ? 2 : nt), c.colsb[4] = 64;
    c.rows[5] = static_cast<uint8_t>(one ? kChunkPairRows : nt), c.colsb[5] = 64;
    for (int t = 6; t < 8; t++) c.rows[t] = kChunkPairRows, c.colsb[t] = 64;
    return c;
}

// The chunked activations (bf16_chunked_activations_ref): whole chunks as two vectors of 32
// bf16 (pairs 0-15, 16-31) whose even and odd 32-bit lanes are gathered; the rest as the
// avx512_bf16 table writes it.
void bf16_chunked_activations(const float* x, void* y, int64_t n) {
    const int64_t whole = n / kChunk * kChunk;
    auto* out = static_cast<uint16_t*>(y);
    avx512_bf16::bf16_activations(x + whole, out + whole, n - whole);
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int64_t c = 0; c < whole; c += kChunk) {
        const __m512i lo = reinterpret_cast<__m512i>(
            _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + c + 16), _mm512_loadu_ps(x + c)));
        const __m512i hi = reinterpret_cast<__m512i>(
            _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + c + 48), _mm512_loadu_ps(x + c + 32)));
        _mm512_storeu_si512(out + c, _mm512_permutex2var_epi32(lo, even, hi));
        _mm512_storeu_si512(out + c + 32, _mm512_permutex2var_epi32(lo, odd, hi));
    }
}

// The last chunk when n is not a multiple of 64, zeros past n, in the tiles' layout: its
// weights as 16 blocks of 128 bytes (b), and nt tokens' activations as A_0's rows then A_1's
// (a[p][t]).
struct Bf16Tail {
    alignas(64) uint16_t b[kChunkPairRows][kPackRows][4];
    alignas(64) uint32_t a[2][kPackTokens][kChunkPairRows];
    Bf16Tail(int64_t n, const uint16_t* w, const uint8_t* x, size_t x_stride, int nt) {
        const int64_t c0 = n / kChunk * kChunk;
        for (int k = 0; k < kChunkPairRows; k++) {
            for (int r = 0; r < kPackRows; r++) {
                for (int j = 0; j < 4; j++) {
                    const int64_t c = c0 + 4 * k + j;
                    b[k][r][j] = c < n ? w[packed_float_index(n, c, r)] : 0;
                }
            }
        }
        for (int t = 0; t < nt; t++) {
            // Past the last chunk the activations are in column order, an odd row's last pair
            // completed by a zero.
            const auto* xt = reinterpret_cast<const uint8_t*>(x + t * x_stride) + c0 * 2;
            for (int pair = 0; pair < kChunk / 2; pair++) {
                uint32_t v = 0;
                if (c0 + 2 * pair < n) __builtin_memcpy(&v, xt + 4 * pair, 4);
                a[pair % 2][t][pair / 2] = v;
            }
        }
    }
};

// The four partial tiles' sums of one group, p[h][q][t] = C_hq's row t: y[t][8h + i] = partial
// 0 (lane 2i of C_h0) + partial 1 (lane 2i + 1 of C_h1).
void bf16_store(const float (*p)[2][kPackTokens][kPackRows], int nt, float* y, int64_t y_stride,
                __mmask16 rows) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int t = 0; t < nt; t++) {
        const __m512 v0 =
            _mm512_mask_blend_ps(0xaaaa, _mm512_load_ps(p[0][0][t]), _mm512_load_ps(p[0][1][t]));
        const __m512 v1 =
            _mm512_mask_blend_ps(0xaaaa, _mm512_load_ps(p[1][0][t]), _mm512_load_ps(p[1][1][t]));
        const __m512 sum = _mm512_add_ps(_mm512_permutex2var_ps(v0, even, v1),
                                         _mm512_permutex2var_ps(v0, odd, v1));
        _mm512_mask_storeu_ps(y + t * y_stride, rows, sum);
    }
}

// The chunk's weights 2 KiB ahead into L1 and kFarAhead into L2, as `lead` says.
[[gnu::always_inline]] inline void bf16_prefetch(const uint16_t* chunk, Lead lead) {
    for (int k = 0; k < kChunkPairRows; k++) prefetch_float_block(chunk + k * 4 * kPackRows, lead);
}

// nt >= 2 tokens against one group.
void bf16_amx_tokens(int64_t n, const uint16_t* w, const uint8_t* x, size_t x_stride, float* y,
                     int64_t y_stride, __mmask16 rows, int nt) {
    configure_tiles(bf16_tiles(nt));
    const long x_bytes = static_cast<long>(x_stride);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    // A chunk's products: A_0's rows at a0 and A_1's at a1, `step` bytes apart; B_0 at wb.
    const auto chunk = [&](const void* a0, const void* a1, long step, const void* wb) {
        _tile_loadd(4, a0, step);
        _tile_loadd(5, a1, step);
        _tile_loadd(6, wb, 128);
        _tile_loadd(7, static_cast<const uint8_t*>(wb) + 64, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        _tile_dpbf16ps(2, 4, 7);
        _tile_dpbf16ps(3, 5, 7);
    };
    const int64_t whole = n / kChunk;
    for (int64_t i = 0; i < whole; i++) {
        const uint16_t* wb = w + i * kChunk * kPackRows;
        bf16_prefetch(wb, Lead::L1AndL2);
        const uint8_t* xa = x + i * kChunk * 2;
        chunk(xa, xa + 64, x_bytes, wb);
    }
    if (whole * kChunk < n) {
        const Bf16Tail tail(n, w, x, x_stride, nt);
        tile_fence();
        chunk(tail.a[0], tail.a[1], 64, tail.b);
    }
    alignas(64) float p[2][2][kPackTokens][kPackRows];
    _tile_stored(0, p[0][0], 64);
    _tile_stored(1, p[0][1], 64);
    _tile_stored(2, p[1][0], 64);
    _tile_stored(3, p[1][1], 64);
    bf16_store(p, nt, y, y_stride, rows);
}

// One token against G groups (G = 2: PackedKernels::gemv2, the groups' chunks interleaved).
template <int G>
void bf16_amx_token(int64_t n, const uint16_t* const* w, const uint8_t* x, float* const* y,
                    const __mmask16* rows, Lead lead) {
    configure_tiles(bf16_tiles(1));
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (G == 2) {
        _tile_zero(2);
        _tile_zero(3);
    }
    // Group g's products of a chunk: B_0 and B_1 (tiles 5, 6; group 1: 7, 5) against A (tile 4).
    const auto group0 = [&](const void* wb) {
        _tile_loadd(5, wb, 128);
        _tile_loadd(6, static_cast<const uint8_t*>(wb) + 64, 128);
        _tile_dpbf16ps(0, 4, 5);
        _tile_dpbf16ps(1, 4, 6);
    };
    const auto group1 = [&](const void* wb) {
        _tile_loadd(7, wb, 128);
        _tile_dpbf16ps(2, 4, 7);
        _tile_loadd(5, static_cast<const uint8_t*>(wb) + 64, 128);
        _tile_dpbf16ps(3, 4, 5);
    };
    const int64_t whole = n / kChunk;
    for (int64_t i = 0; i < whole; i++) {
        _tile_loadd(4, x + i * kChunk * 2, 64);
        const uint16_t* wb0 = w[0] + i * kChunk * kPackRows;
        bf16_prefetch(wb0, lead);
        group0(wb0);
        if constexpr (G == 2) {
            const uint16_t* wb1 = w[1] + i * kChunk * kPackRows;
            bf16_prefetch(wb1, lead);
            group1(wb1);
        }
    }
    if (whole * kChunk < n) {
        const Bf16Tail tail0(n, w[0], x, 0, 1);
        // A's two rows: the token's A_0 row and A_1 row.
        alignas(64) uint32_t a[2][kChunkPairRows];
        __builtin_memcpy(a[0], tail0.a[0][0], 64);
        __builtin_memcpy(a[1], tail0.a[1][0], 64);
        tile_fence();
        _tile_loadd(4, a, 64);
        group0(tail0.b);
        if constexpr (G == 2) {
            const Bf16Tail tail1(n, w[1], x, 0, 1);
            tile_fence();
            group1(tail1.b);
        }
    }
    for (int g = 0; g < G; g++) {
        alignas(64) float c[2][2][kPackRows];  // C_h's rows: partial 0, partial 1
        if (g == 0) {
            _tile_stored(0, c[0], 64);
            _tile_stored(1, c[1], 64);
        } else {
            _tile_stored(2, c[0], 64);
            _tile_stored(3, c[1], 64);
        }
        alignas(64) float p[2][2][kPackTokens][kPackRows];
        for (int h = 0; h < 2; h++) {
            for (int q = 0; q < 2; q++) __builtin_memcpy(p[h][q][0], c[h][q], sizeof c[h][q]);
        }
        bf16_store(p, 1, y[g], 0, rows[g]);
    }
}

void bf16_amx_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                   int64_t y_stride, int nr, int nt) {
    const auto* wc = static_cast<const uint16_t*>(w);
    const auto* xb = static_cast<const uint8_t*>(x);
    const __mmask16 rows = row_mask(nr);
    if (nt == 1) {
        bf16_amx_token<1>(n, &wc, xb, &y, &rows, pass_lead(1, Pass::Vdpbf16ps));
    } else {
        bf16_amx_tokens(n, wc, xb, x_stride, y, y_stride, rows, nt);
    }
}

void bf16_amx_gemv2(int64_t n, const void* w0, const void* w1, const void* x, float* y0, float* y1,
                    int nr0, int nr1) {
    const TwoGroups<uint16_t, __mmask16> g(w0, w1, y0, y1, row_mask(nr0), row_mask(nr1));
    bf16_amx_token<2>(n, g.w, static_cast<const uint8_t*>(x), g.y, g.rows,
                      pass_lead(1, Pass::Vdpbf16ps));
}

constexpr PackedOverride kPacked[] = {
    {Type::Q8_0, {nullptr, q8_0_amx_gemm, avx512::packed_gemv2_q8_0}},
    {Type::BF16, {bf16_chunked_activations, bf16_amx_gemm, bf16_amx_gemv2}},
};

}  // namespace

// Built on first use, which kernels_for() allows only where the CPU has AMX-INT8 and the
// avx512_bf16 table's instructions, and Linux has granted the tile state (cpu.cpp).
const Kernels* kernels_amx() {
    static const Kernels table = with_overrides(*kernels_avx512_bf16(), Isa::Amx, {}, kPacked);
    return &table;
}

}  // namespace ggml_lite
