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
// - BF16 prefill (tdpbf16ps): below.
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
// The BF16 dot path (packed.h) with a full tile of 16 tokens' products summed on the tile unit, in
// the reference's two partial sums (column pair p into p % 2), each accumulated in tiles over the
// whole row, so the vector units only add the partials at the end. Both operands load in place:
// - Weights: a chunk of 64 columns is 16 four-column blocks of 16 rows (packed.h), 128 bytes each,
//   rows 0-7 in the first 64 and rows 8-15 in the second. The first halves of the 16 blocks, 128
//   bytes apart, are a tile B_0 whose row k (block k) holds, at 32-bit lane 2i + j, row i's pair j
//   of the block: tdpbf16ps's layout, with lane n meeting the activations' pair in row k. B_1 is
//   the second halves (rows 8-15).
// - Activations (bf16_chunked_activations_ref): a chunk's even pairs in 64 bytes, then its odd
//   ones. Tile A_p holds the tokens' pairs 2k + p, which meet block k's pair p.
// So C_hp = A_p B_h holds, at lane 2i + p, row 8h + i's partial sum p (the other lanes, pairs
// that do not meet, are not read): four tiles of 16 tokens for 16 rows, 4 tdpbf16ps of 16 x 16 x
// 32 products a chunk, half of them kept.
// Fewer tokens (decode, the end of a batch) take the avx512_bf16 kernel on the same chunked
// activations: tile loads stream the weights 7-10% slower than vector loads, which decode felt
// whole. The two round inside a pair differently, so a token's sums depend on whether its tile
// was full, within the bound both keep (docs/kernels.md, "AMX").

constexpr int64_t kChunk = kBf16Chunk;  // columns per chunk: 16 four-column blocks
constexpr int kChunkPairRows = 16;      // tile rows of a chunk's A_p and B_h

// C_00, C_01, C_10, C_11 in tiles 0-3 (16 tokens x 16 floats), A_0 and A_1 in 4 and 5 (16 tokens
// x 32 bf16), B_0 and B_1 in 6 and 7 (16 pair rows x 16 rows).
const TileConfig& bf16_tiles() {
    static const TileConfig cfg = [] {
        TileConfig c;
        for (int t = 0; t < 8; t++) c.rows[t] = kPackTokens, c.colsb[t] = 64;
        return c;
    }();
    return cfg;
}

// The 32-bit lanes 2i + p of two vectors, i < 16, as a vpermt2d/vpermt2ps index: a chunk's
// pairs of parity p, or lanes 2i + p of C_h0 and C_h1 side by side.
__m512i pair_lanes(int p) {
    return _mm512_add_epi32(
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
        _mm512_set1_epi32(p));
}

// The chunked activations (bf16_chunked_activations_ref): whole chunks as two vectors of 32
// bf16 (pairs 0-15, 16-31) whose even and odd 32-bit lanes are gathered; the rest as the
// avx512_bf16 table writes it.
void bf16_chunked_activations(const float* x, void* y, int64_t n) {
    const int64_t whole = n / kChunk * kChunk;
    auto* out = static_cast<uint16_t*>(y);
    avx512_bf16::bf16_activations(x + whole, out + whole, n - whole);
    const __m512i even = pair_lanes(0), odd = pair_lanes(1);
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
// weights as 16 blocks of 128 bytes (b), and the 16 tokens' activations as A_0's rows then A_1's
// (a[p][t]).
struct Bf16Tail {
    alignas(64) uint16_t b[kChunkPairRows][kPackRows][4];
    alignas(64) uint32_t a[2][kPackTokens][kChunkPairRows];
    Bf16Tail(int64_t n, const uint16_t* w, const uint8_t* x, size_t x_stride) {
        const int64_t c0 = n / kChunk * kChunk;
        for (int k = 0; k < kChunkPairRows; k++) {
            for (int r = 0; r < kPackRows; r++) {
                for (int j = 0; j < 4; j++) {
                    const int64_t c = c0 + 4 * k + j;
                    b[k][r][j] = c < n ? w[packed_float_index(n, c, r)] : 0;
                }
            }
        }
        for (int t = 0; t < kPackTokens; t++) {
            // Past the last chunk the activations are in column order, an odd row's last pair
            // completed by a zero.
            const auto* xt = x + t * x_stride + c0 * 2;
            for (int pair = 0; pair < kChunk / 2; pair++) {
                uint32_t v = 0;
                if (c0 + 2 * pair < n) __builtin_memcpy(&v, xt + 4 * pair, 4);
                a[pair % 2][t][pair / 2] = v;
            }
        }
    }
};

// 16 tokens against one group: y[t][8h + i] = partial 0 (lane 2i of C_h0) + partial 1 (lane
// 2i + 1 of C_h1).
void bf16_amx_tile(int64_t n, const uint16_t* w, const uint8_t* x, size_t x_stride, float* y,
                   int64_t y_stride, __mmask16 rows) {
    configure_tiles(bf16_tiles());
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
        for (int k = 0; k < kChunkPairRows; k++) {
            prefetch_float_block(wb + k * 4 * kPackRows, Lead::L1AndL2);
        }
        const uint8_t* xa = x + i * kChunk * 2;
        chunk(xa, xa + 64, static_cast<long>(x_stride), wb);
    }
    if (whole * kChunk < n) {
        const Bf16Tail tail(n, w, x, x_stride);
        tile_fence();
        chunk(tail.a[0], tail.a[1], 64, tail.b);
    }
    alignas(64) float p[2][2][kPackTokens][kPackRows];
    _tile_stored(0, p[0][0], 64);
    _tile_stored(1, p[0][1], 64);
    _tile_stored(2, p[1][0], 64);
    _tile_stored(3, p[1][1], 64);
    const __m512i even = pair_lanes(0), odd = pair_lanes(1);
    for (int t = 0; t < kPackTokens; t++) {
        const __m512 v0 =
            _mm512_mask_blend_ps(0xaaaa, _mm512_load_ps(p[0][0][t]), _mm512_load_ps(p[0][1][t]));
        const __m512 v1 =
            _mm512_mask_blend_ps(0xaaaa, _mm512_load_ps(p[1][0][t]), _mm512_load_ps(p[1][1][t]));
        const __m512 sum = _mm512_add_ps(_mm512_permutex2var_ps(v0, even, v1),
                                         _mm512_permutex2var_ps(v0, odd, v1));
        _mm512_mask_storeu_ps(y + t * y_stride, rows, sum);
    }
}

// Full tiles on AMX, the rest on the avx512_bf16 kernel.
void bf16_amx_gemm(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                   int64_t y_stride, int nr, int nt) {
    if (nt < kPackTokens) {
        avx512_bf16::packed_gemm_bf16_chunked(n, w, x, x_stride, y, y_stride, nr, nt);
        return;
    }
    bf16_amx_tile(n, static_cast<const uint16_t*>(w), static_cast<const uint8_t*>(x), x_stride, y,
                  y_stride, row_mask(nr));
}

constexpr PackedOverride kPacked[] = {
    {Type::Q8_0, {nullptr, q8_0_amx_gemm, avx512::packed_gemv2_q8_0}},
    {Type::BF16, {bf16_chunked_activations, bf16_amx_gemm, avx512_bf16::packed_gemv2_bf16_chunked}},
};

}  // namespace

// Built on first use, which kernels_for() allows only where the CPU has AMX-INT8 and the
// avx512_bf16 table's instructions, and Linux has granted the tile state (cpu.cpp).
const Kernels* kernels_amx() {
    static const Kernels table = with_overrides(*kernels_avx512_bf16(), Isa::Amx, {}, kPacked);
    return &table;
}

}  // namespace ggml_lite
