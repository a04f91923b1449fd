// One table of kernels per instruction set. The scalar table is the reference every other
// table is tested against; ops.h calls whichever table active_isa() selects.
#pragma once

#include <cstdint>

#include "cpu.h"
#include "fp16.h"
#include "type.h"

namespace ggml_lite {

// Dense index of a Type into per-type arrays.
enum TypeIndex : int { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ4_K, kQ6_K, kQ8_K, kTypeCount };
int type_index(Type t);

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
};

struct Kernels {
    Isa isa;
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
};

const Kernels& kernels_scalar();
// Each returns nullptr when this binary was built without that path.
const Kernels* kernels_avx2();
const Kernels* kernels_avx512();
const Kernels* kernels_neon();
const Kernels* kernels_neon_dotprod();

// The table for an ISA if compiled in and the CPU supports it, else nullptr.
const Kernels* kernels_for(Isa isa);
// The table of active_isa().
const Kernels& kernels();

}  // namespace ggml_lite
