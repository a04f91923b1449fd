// One table of kernels per instruction set. The scalar table is the reference every other
// table is tested against; ops.h calls whichever table active_isa() selects.
#pragma once

#include <cstdint>
#include <span>

#include "cpu.h"
#include "fp16.h"
#include "type.h"

namespace ggml_lite {

// The largest tile TypeKernels::gemm_tile computes in one call: weight rows × tokens.
constexpr int kTileRows = 4;
constexpr int kTileTokens = 4;

struct TypeKernels {
    // Dot product of a weight row of this type with an activation row of its vec_dot_type,
    // n elements (a multiple of the block size). nullptr for Q8_K, which is never weights.
    float (*vec_dot)(int64_t n, const void* w, const void* x);
    // Converts a float row to this type when it serves as an activation type (F32, Q8_0,
    // Q8_K); nullptr otherwise. SIMD versions must produce bit-identical output to the scalar one.
    void (*from_float)(const float* x, void* y, int64_t n);
    // A tile of dot products, so each weight block loaded serves several tokens:
    // y[t * y_stride + r] = vec_dot(n, w + r * w_stride, x + t * x_stride) for r < nr, t < nt,
    // 1 <= nr <= kTileRows, 1 <= nt <= kTileTokens (strides in bytes for w and x, in floats
    // for y). Every element is bit-identical to vec_dot's for the same pair, so results do not
    // depend on tiling: decode and prefill agree exactly. nullptr where vec_dot is.
    void (*gemm_tile)(int64_t n, const void* w, size_t w_stride, const void* x, size_t x_stride,
                      float* y, int64_t y_stride, int nr, int nt);
    // The grid types' decoder (type.h: GridBlockFn), giving TypeTraits::grid_block's output;
    // prefill packs what it gives (packed.h: pack_grid_group). nullptr for the other types.
    GridBlockFn grid_block = nullptr;
};

// ---- Packed weights ------------------------------------------------------------------------
// Weight matrices can be rearranged once at load (ops.h: pack_weights) so that kPackRows rows
// are interleaved column by column (packed.h; the float types 4 columns by 4). A kernel then
// advances several rows' sums with one instruction (an FMA with the activations of 4 columns
// broadcast; for the 32-value block types a vpdpbusd over all 16 rows), and one weight load
// serves up to kPackTokens tokens.
constexpr int kPackRows = 16;
constexpr int kPackTokens = 16;

struct PackedKernels {
    // Quantizes a float activation row for weights of this type: to block_q8_0c (packed.h)
    // for Q4_0/Q5_0/IQ4_NL/Q8_0 and to block_q8_1c for Q4_1/Q5_1, n a multiple of 32; to
    // block_q8_K for Q4_K/Q5_K/Q6_K/IQ4_XS/Q3_K/Q2_K, n a multiple of 256. SIMD versions produce
    // the scalar one's bytes. nullptr for float weights: the kernel reads float activation rows.
    void (*quantize)(const float* x, void* y, int64_t n);
    // One group of kPackRows packed rows of n columns against nt activation rows (x_stride
    // bytes apart): y[t * y_stride + r] for r < nr, t < nt, 1 <= nr <= kPackRows, 1 <= nt <=
    // kPackTokens. Every row's sum runs in a fixed order whatever nr and nt are, with fma:
    // the 32-value block types block by block, sum = fma(integer dot, d_w * d_x, sum), then
    // for Q4_1/Q5_1 sum = fma(m_w, s_x, sum); Q4_K/Q5_K/Q6_K/IQ4_XS/Q3_K/Q2_K super-block by
    // super-block, sum = fma(integer sum of scale * sub-block dot, d_w * d_x, sum) (Q6_K's,
    // Q3_K's and IQ4_XS's scales signed, their levels q - 32, q - 4 and the IQ4_NL table's
    // values), then for Q4_K/Q5_K/Q2_K sum = fma(integer sum of min * sub-block sum of x,
    // -(dmin_w * d_x), sum); float types in four partial sums (column c into partial c % 4, so
    // one token still has four FMA chains), then (p0 + p1) + (p2 + p3). Results do not depend
    // on tiling, and every table gives the scalar one's bits.
    void (*gemm)(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                 int64_t y_stride, int nr, int nt);
    // One token against two groups, gemm(n, w0, x, 0, y0, 0, nr0, 1) and the same for w1, y1,
    // nr1, with the same bits: the two groups' weights streamed side by side, which one core
    // reads faster than one stream (the driver pairs groups far apart for decode). nullptr:
    // the driver runs the groups one by one.
    void (*gemv2)(int64_t n, const void* w0, const void* w1, const void* x, float* y0, float* y1,
                  int nr0, int nr1) = nullptr;
    // The grid types' prefill from a packed group of n columns: its 16 rows decoded to
    // block_gridx16 columns at dst, pack_grid_group's bytes for those rows (packed.h), for
    // Kernels::grid_gemm. nullptr for the other types.
    void (*to_grid)(int64_t n, const void* w, void* dst) = nullptr;
};

// ---- Attention -----------------------------------------------------------------------------
// The KV cache keeps each KV head's keys in blocks of kKvBlock positions, dimension-major
// within a block: key p, dimension d at k[(p / kKvBlock) * kKvBlock * head_dim + d * kKvBlock
// + p % kKvBlock], so the scores of kKvBlock positions are one vector FMA per dimension with
// no horizontal sums. Values are position-major: v[p * head_dim + d].
constexpr int kKvBlock = 16;

// Attention of one token for the n_q query heads that share a KV head (grouped-query
// attention: each K/V row is read once for the whole group). q and out: n_q rows of head_dim
// floats. For query j: s_p = q_j . k_p * scale for p < n_pos, softmax over p, out_j = sum_p
// s_p v_p. scores: scratch of n_q * round_up(n_pos, kKvBlock) floats. Elem is float or fp16_t.
template <class Elem>
using AttendFn = void (*)(const float* q, int64_t n_q, int64_t head_dim, const Elem* k,
                          const Elem* v, int64_t n_pos, float scale, float* scores, float* out);

struct Kernels {
    Isa isa;
    // Kernels by weight type, at type_slot(t): of(t) reads them.
    TypeKernels types[kTypeCount];

    // out = x / rms(x) * weight
    void (*rmsnorm)(float* out, const float* x, const float* weight, int64_t n, float eps);
    // In place, numerically stable (max subtracted); -inf entries become 0 (masking).
    void (*softmax)(float* x, int64_t n);
    // h = silu(h) * g  (SwiGLU)
    void (*silu_mul)(float* h, const float* g, int64_t n);
    // y += x
    void (*add)(float* y, const float* x, int64_t n);
    // x *= s
    void (*scale)(float* x, float s, int64_t n);
    // y += a * x, x in half precision (attention: weighted sum of V rows from the F16 cache)
    void (*axpy_f16)(float* y, float a, const fp16_t* x, int64_t n);
    // Rotates interleaved pairs (x[2i], x[2i+1]) of each of n_heads heads by the angles whose
    // cos/sin are given (rot_dim/2 of each); dims past rot_dim are left alone.
    void (*rope)(float* x, int64_t n_heads, int64_t head_dim, int64_t rot_dim, const float* cos,
                 const float* sin);

    // Packed-weight kernels by weight type; members are nullptr where this table has none
    // (matmul then uses gemm_tile on the original rows): every packable type has them in the
    // scalar table, so in every table built on it.
    PackedKernels packed[kTypeCount];
    // The grid types' prefill kernel (every grid type: their groups decoded per batch into
    // block_gridx16 columns, packed.h) against Q8_K activation rows, as PackedKernels::gemm with
    // the one float step of the scaled k-quants: sum = fma(sum of ls * sub-block dot, (d kScale)
    // * d_x, sum), the grid types' vec_dot's bits.
    void (*grid_gemm)(int64_t n, const void* w, const void* x, size_t x_stride, float* y,
                      int64_t y_stride, int nr, int nt);
    // Attention over an F32 or F16 KV cache.
    AttendFn<float> attend_f32;
    AttendFn<fp16_t> attend_f16;

    // The sum of the n / 8 64-bit words at p and the n / 8 at q (mod 2^64), n a multiple of 8,
    // read side by side as fast as this ISA's loads go: two streams, as one-token decode reads
    // two row groups (ops.cpp). The memory bandwidth probe (bandwidth.h) decode is measured
    // against.
    uint64_t (*read_sum)(const void* p, const void* q, int64_t n);

    // The kernels for type t: types[type_slot(t)], packed[type_slot(t)]. Throw
    // std::invalid_argument for a value that is not a type of the type table.
    const TypeKernels& of(Type t) const;
    const PackedKernels& packed_of(Type t) const;
};

// ---- Building a table --------------------------------------------------------------------
// The scalar table is a complete set of kernels; every other table is built on one (the scalar
// table, or the NEON one for NEON dotprod) by overrides keyed by type: a type no override names
// keeps the kernels of the table below, so a type with only scalar kernels runs on every ISA.

// One table's kernels for one type: the members it sets replace those of the table it is built
// on, the members it leaves nullptr keep them.
struct TypeOverride {
    Type type;
    TypeKernels kernels;
};
struct PackedOverride {
    Type type;
    PackedKernels kernels;
};

// A copy of `base` for `isa` with the overrides applied; the per-function kernels (rmsnorm, ...)
// are base's, for the caller to replace. Throws std::invalid_argument, naming the ISA, for an
// override of a value that is not a type of the type table, for two overrides of one type in a
// list, for a vec_dot without its gemm_tile or the reverse (a tile gives its own vec_dot's
// bits, not another table's), for a gemv2 without its gemm, and for packed kernels of a type
// without a packed layout. An override's gemm replaces the base's gemv2 with its own (or none).
Kernels with_overrides(const Kernels& base, Isa isa, std::span<const TypeOverride> types,
                       std::span<const PackedOverride> packed);

const Kernels& kernels_scalar();
// Each returns nullptr when this binary was built without that path. Each builds its table on
// first use with its ISA's instructions: call them through kernels_for(), which checks the CPU.
const Kernels* kernels_avx2();
const Kernels* kernels_avx2_vnni();
const Kernels* kernels_avx512();
const Kernels* kernels_avx512_bf16();
const Kernels* kernels_amx();
const Kernels* kernels_neon();
const Kernels* kernels_neon_dotprod();

// The table for an ISA if compiled in and the CPU supports it, else nullptr.
const Kernels* kernels_for(Isa isa);
// The table of active_isa().
const Kernels& kernels();

}  // namespace ggml_lite
