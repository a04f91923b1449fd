// AVX2 kernels (+FMA, F16C): two quantized 32-value blocks per step, integer dot products with
// vpmaddubsw/vpmaddwd, float kernels from simd_float-inl.h.
//
// Compiled with -mavx2 -mfma -mf16c: everything stays in the anonymous namespace and only
// intrinsics and xsimd templates instantiated for fma3<avx2> are used, so no code compiled
// with these flags can be shared with the portable parts of the program.
#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "ggml-lite/kernels.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"
#include "ggml-lite/simd_float-inl.h"
#include "ggml-lite/x86/kernels_iq_avx2.h"
#include "ggml-lite/x86/packed_avx2.h"
#include "ggml-lite/x86/packed_stripes.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace {

using Arch = Avx2;
using FK = FloatKernels<Arch>;

// ---- Q8_0 activations --------------------------------------------------------------------

// roundf semantics (ties away from zero) as the scalar reference has them; the rounding
// instructions round ties to even. Truncate, then step away from zero when |frac| >= 0.5.
__m256i round_away(__m256 v) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 step = _mm256_or_ps(_mm256_and_ps(v, sign), _mm256_set1_ps(1.0f));
    return _mm256_cvtps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, step)));
}

float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// Q8_0 of 32 values, bit-identical to quantize_row_q8_0_ref (the same max, the same float
// divisions, the same products, the same rounding), the levels kept as int32 lanes (8
// elements a vector) until stored: quantize_q8_0_blocks' Block.
struct Q8Lanes {
    float scale;  // before its rounding to fp16
    __m256i q[4];

    explicit Q8Lanes(const float* x) {
        const __m256 sign = _mm256_set1_ps(-0.0f);
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int k = 0; k < 4; k++) {
            v[k] = _mm256_loadu_ps(x + 8 * k);
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
        }
        scale = hmax(amax) / 127.0f;
        const __m256 id = _mm256_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
        for (int k = 0; k < 4; k++) q[k] = round_away(_mm256_mul_ps(v[k], id));
    }
    fp16_t d16() const { return _cvtss_sh(scale, _MM_FROUND_TO_NEAREST_INT); }
    float d() const { return _cvtsh_ss(d16()); }
    void store(int8_t* qs) const {
        // The packs interleave 128-bit lanes; the permutation puts the dwords back in order.
        const __m256i p =
            _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        const __m256i ordered =
            _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), ordered);
    }
};

void quantize_q8_0(const float* x, void* vy, int64_t n) {
    quantize_q8_0_blocks<Q8Lanes>(x, vy, n);
}

// ---- Quantized dot products: 32-value blocks -----------------------------------------------
//
// A step covers two blocks. Operand half A holds the first 16 elements of each block, one
// block per 128-bit lane, half B the last 16; after the pair sums each 128-bit lane holds
// four partial sums of its block, and the scales are [d0 x4, d1 x4].
//
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into saturating int16, so the
// operands must keep every pair sum within int16. Signed levels (Q8_0, IQ4_NL) use |w| and
// sign(w)·x (pairs at most 2·127·127, widened to int32 before the halves are added). The
// unsigned levels q of Q4_0 (q - 8) and Q5_0 (q - 16) subtract Offset·(pair sums of x), so
// sum (q - Offset) x comes out exactly (at most 4·31·127 + 4·16·127 per int16). Q4_1 and Q5_1
// dot their unsigned levels as they are, and their blocks' m_w s_x go to a float sum of their
// own.

constexpr int kStep = 2;  // blocks per step

// [h0, h1, 0, 0]: the fp16 values at p and p + Stride.
template <size_t Stride>
__m128 halves2(const uint8_t* p) {
    return _mm_cvtph_ps(_mm_unpacklo_epi16(_mm_loadu_si16(p), _mm_loadu_si16(p + Stride)));
}

// [d0 x4, d1 x4] from two blocks Stride bytes apart, each starting with its fp16 scale.
template <size_t Stride>
__m256 scales2(const uint8_t* p) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(halves2<Stride>(p)),
                                    _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// 16 bytes from each of two blocks Stride bytes apart, one block per 128-bit lane.
template <size_t Stride>
__m256i lanes2(const uint8_t* p) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + Stride));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// The nibbles of two blocks' 16 bytes at p (Stride apart): the low ones (elements 0-15) in a,
// the high ones (16-31) in b.
template <size_t Stride>
void nibbles2(const uint8_t* p, __m256i* a, __m256i* b) {
    const __m256i q = lanes2<Stride>(p);
    const __m256i mask = _mm256_set1_epi8(0x0f);
    *a = _mm256_and_si256(q, mask);
    *b = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
}

// Q5_0/Q5_1: the fifth bits of two blocks' qh at p (Stride apart) as 0x10 added to the levels
// of half A (bits 0-15) and half B (bits 16-31). Each byte takes the qh byte holding its bit
// (vpshufb), keeps that bit, and becomes 0x10 where it is set.
template <size_t Stride>
void add_fifth_bits2(const uint8_t* p, __m256i* a, __m256i* b) {
    const __m256i h = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si32(p)),
                                              _mm_loadu_si32(p + Stride), 1);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    const __m256i sixteen = _mm256_set1_epi8(0x10);
    const auto expand = [&](__m256i v, char first) {
        const __m256i sel =
            _mm256_or_si256(_mm256_set1_epi8(first),
                            _mm256_setr_epi64x(0, 0x0101010101010101, 0, 0x0101010101010101));
        const __m256i bits = _mm256_and_si256(_mm256_shuffle_epi8(h, sel), bit);
        return _mm256_or_si256(v, _mm256_and_si256(_mm256_cmpeq_epi8(bits, bit), sixteen));
    };
    *a = expand(*a, 0);
    *b = expand(*b, 2);
}

__m256i sum_pairs(__m256i p16) {
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// One operand of a pair for a step: both halves, what the dot needs besides, the scales.
struct Operand {
    __m256i a, b;
    __m256i aux_a, aux_b;  // signed weights: |a|, |b|; Q8_0 activations facing unsigned levels
                           // q - Offset: Offset * pair sums of a + b
    __m256 d;
    __m128 m;  // Q4_1/Q5_1 weights: [m0, m1, 0, 0]; Q8_1 activations: [s0, s1, 0, 0]
};

// Q8_0 or Q8_1 activations as they are (Q8_1's s in m).
template <class A>
Operand act_values(const uint8_t* p) {
    constexpr size_t kS = sizeof(A), kQ = offsetof(A, qs);
    const __m256i zero = _mm256_setzero_si256();
    __m128 s = _mm_setzero_ps();
    if constexpr (std::is_same_v<A, block_q8_1>) s = halves2<kS>(p + offsetof(block_q8_1, s));
    return {lanes2<kS>(p + kQ), lanes2<kS>(p + kQ + 16), zero, zero, scales2<kS>(p), s};
}

template <class A>
struct PlainAct {
    using Block = A;
    static Operand load(const uint8_t* p) { return act_values<A>(p); }
};

template <int Offset>
struct OffsetAct {
    using Block = block_q8_0;
    static Operand load(const uint8_t* p) {
        Operand o = act_values<block_q8_0>(p);
        const __m256i off = _mm256_set1_epi8(Offset);
        o.aux_a = _mm256_add_epi16(_mm256_maddubs_epi16(off, o.a), _mm256_maddubs_epi16(off, o.b));
        return o;
    }
};

// Signed levels: |w| times sign(w) x.
__m256i signed_dot(const Operand& w, const Operand& x) {
    const __m256i pa = _mm256_maddubs_epi16(w.aux_a, _mm256_sign_epi8(x.a, w.a));
    const __m256i pb = _mm256_maddubs_epi16(w.aux_b, _mm256_sign_epi8(x.b, w.b));
    return _mm256_add_epi32(sum_pairs(pa), sum_pairs(pb));
}

// Unsigned levels q, less the activations' Offset correction (zero for Q8_1 activations).
__m256i unsigned_dot(const Operand& w, const Operand& x) {
    const __m256i p =
        _mm256_add_epi16(_mm256_maddubs_epi16(w.a, x.a), _mm256_maddubs_epi16(w.b, x.b));
    return sum_pairs(_mm256_sub_epi16(p, x.aux_a));
}

// Each weight type: its block, the activations it faces, how a step's two blocks load into an
// operand, and which dot they take.
struct Q8Weights {
    using Block = block_q8_0;
    using Act = PlainAct<block_q8_0>;
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(Block);
        const __m256i a = lanes2<kS>(p + 2), b = lanes2<kS>(p + 18);
        return {
            a, b, _mm256_sign_epi8(a, a), _mm256_sign_epi8(b, b), scales2<kS>(p), _mm_setzero_ps()};
    }
    static __m256i dot(const Operand& w, const Operand& x) { return signed_dot(w, x); }
};

struct IQ4NLWeights {
    using Block = block_iq4_nl;
    using Act = PlainAct<block_q8_0>;
    // The nibbles index the 16 levels (vpshufb).
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(Block);
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
        __m256i a, b;
        nibbles2<kS>(p + 2, &a, &b);
        a = _mm256_shuffle_epi8(table, a);
        b = _mm256_shuffle_epi8(table, b);
        return {
            a, b, _mm256_sign_epi8(a, a), _mm256_sign_epi8(b, b), scales2<kS>(p), _mm_setzero_ps()};
    }
    static __m256i dot(const Operand& w, const Operand& x) { return signed_dot(w, x); }
};

// Q4_0, Q4_1, Q5_0, Q5_1: nibbles at byte QsAt of the block, the fifth bits (Q5) at QhAt,
// the min (Q4_1, Q5_1) at byte 2.
template <class B, class A, size_t QsAt, size_t QhAt = 0>
struct UnsignedWeights {
    using Block = B;
    using Act = A;
    static Operand load(const uint8_t* p) {
        constexpr size_t kS = sizeof(Block);
        __m256i a, b;
        nibbles2<kS>(p + QsAt, &a, &b);
        if constexpr (QhAt != 0) add_fifth_bits2<kS>(p + QhAt, &a, &b);
        __m128 m = _mm_setzero_ps();
        if constexpr (std::is_same_v<typename A::Block, block_q8_1>) m = halves2<kS>(p + 2);
        const __m256i zero = _mm256_setzero_si256();
        return {a, b, zero, zero, scales2<kS>(p), m};
    }
    static __m256i dot(const Operand& w, const Operand& x) { return unsigned_dot(w, x); }
};

using Q4Weights = UnsignedWeights<block_q4_0, OffsetAct<8>, offsetof(block_q4_0, qs)>;
using Q5Weights =
    UnsignedWeights<block_q5_0, OffsetAct<16>, offsetof(block_q5_0, qs), offsetof(block_q5_0, qh)>;
using Q4_1Weights = UnsignedWeights<block_q4_1, PlainAct<block_q8_1>, offsetof(block_q4_1, qs)>;
using Q5_1Weights = UnsignedWeights<block_q5_1, PlainAct<block_q8_1>, offsetof(block_q5_1, qs),
                                    offsetof(block_q5_1, qh)>;

float hsum(__m256 v) {
    return hsum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

int32_t hsum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

// Tokens per tile. Q8_0's and Q4_0's operands load in a few instructions, and one token at a
// time keeps 4 rows' accumulators and two operands in the 16 registers; the other types'
// unpacking costs more than a second token's spills (matmul x64, 1 thread: Q5_0 9.8 -> 16.6
// GMAC/s, Q5_1 9.0 -> 13.6, IQ4_NL 12.1 -> 19.1; Q4_1 18 either way).
template <class W>
constexpr int kStepTokens =
    std::is_same_v<typename W::Block, block_q8_0> || std::is_same_v<typename W::Block, block_q4_0>
        ? 1
        : 2;

// 32-value block weights W: kStep blocks a step; each token's operand is loaded once for all
// rows.
template <class W>
struct QStep : TileStep<typename W::Block, typename W::Act::Block, kStep, kStepTokens<W>, false> {
    static constexpr bool kMin = std::is_same_v<typename W::Act::Block, block_q8_1>;
    using Act = Operand;
    static Operand act(const typename W::Act::Block* x) {
        return W::Act::load(reinterpret_cast<const uint8_t*>(x));
    }
    struct Acc {
        __m256 v = _mm256_setzero_ps();
        __m128 m = _mm_setzero_ps();  // the mins' part (Q4_1, Q5_1)
        float total() const {
            if constexpr (kMin) return hsum(v) + hsum(m);
            return hsum(v);
        }
    };
    template <int NT>
    static void step(const typename W::Block& w, const Operand* x, Acc* acc) {
        const Operand wo = W::load(reinterpret_cast<const uint8_t*>(&w));
        for (int t = 0; t < NT; t++) {
            const __m256 sum = _mm256_cvtepi32_ps(W::dot(wo, x[t]));
            acc[t].v = _mm256_fmadd_ps(sum, _mm256_mul_ps(wo.d, x[t].d), acc[t].v);
            if constexpr (kMin) acc[t].m = _mm_fmadd_ps(wo.m, x[t].m, acc[t].m);
        }
    }
};

// ---- Super-blocks: Q8_K activations; Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS weights -----------

// Bit-identical to quantize_row_q8_K_ref for finite input: the same max (the first value of
// largest magnitude), the same division and products, and vcvtps2dq rounds ties to even as
// ggml's nearest_int does. The packs saturate at 127 where the reference clamps.
void quantize_q8_K(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<block_q8_K*>(vy);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        __m256 vmax = _mm256_setzero_ps();
        for (int j = 0; j < QK_K; j += 8) {
            vmax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), vmax);
        }
        const float amax = hmax(vmax);
        block_q8_K& out = y[b];
        if (amax == 0.0f) {
            __builtin_memset(&out, 0, sizeof out);
            continue;
        }
        int first = 0;
        for (int j = 0;; j += 8) {
            const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j));
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                first = j + __builtin_ctz(static_cast<unsigned>(hit));
                break;
            }
        }
        const float iscale = -127.0f / x[first];
        const __m256 vs = _mm256_set1_ps(iscale);
        for (int j = 0; j < QK_K; j += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; k++) {
                q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + j + 8 * k)));
            }
            out.bsums[j / 16] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[0], q[1])));
            out.bsums[j / 16 + 1] = static_cast<int16_t>(hsum(_mm256_add_epi32(q[2], q[3])));
            // The packs interleave 128-bit lanes; the permutation puts the dwords back in order.
            const __m256i p =
                _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(out.qs + j),
                _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
        }
        out.d = 1 / iscale;
    }
}

// A super-block is one step. vpmaddubsw multiplies the unsigned levels (4 bits for Q4_K, 6 for
// Q6_K) by the signed activations into int16 pair sums (at most 2 * 63 * 128 < 2^15: exact);
// vpmaddwd multiplies those by their sub-block's scale into int32. The levels' offsets (Q4_K's
// mins, Q6_K's 32) meet the activations only through their sums, Q8_K's bsums, once per
// super-block. So each super-block is an exact integer sum before its float scales, as in the
// scalar reference.

// Each step is one weight super-block against NT tokens' activation blocks: the weights are
// unpacked once for all of them (prefill), and each token's sums run exactly as they would
// alone, so results do not depend on NT.
// Q4_K and Q5_K: Q5_K's fifth bit of value 32j + l is bit j of qh byte l.
template <class Block>
struct KMin : SuperBlockStep<Block> {
    // One row's sums so far for one token: scales part (8 lanes) and mins part (4 lanes).
    struct Acc {
        __m256 s = _mm256_setzero_ps();
        __m128 m = _mm_setzero_ps();
        float total() const { return hsum(s) - hsum(m); }
    };
    template <int NT>
    static void step(const Block& w, const block_q8_K* const* x, Acc* acc) {
        alignas(16) uint8_t sm[16];
        q4_K_scales_mins(w.scales, sm);
        const __m128i mins =
            _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm + 8)));
        const float d = _cvtsh_ss(w.d), dmin = _cvtsh_ss(w.dmin);
        for (int t = 0; t < NT; t++) acc[t].m = q4_K_mins(mins, dmin, *x[t], acc[t].m);
        const __m256i mask = _mm256_set1_epi8(0x0f);
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = _mm256_setzero_si256();
        for (int g = 0; g < QK_K / 64; g++) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * g));
            __m256i lo = _mm256_and_si256(q, mask);                        // sub-block 2g
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);  // 2g + 1
            if constexpr (std::is_same_v<Block, block_q5_K>) {
                // Levels up to 31: pair sums at most 2 * 31 * 128, still exact.
                const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh));
                const __m256i one = _mm256_set1_epi8(1);
                lo = _mm256_or_si256(
                    lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * g), one), 4));
                hi = _mm256_or_si256(
                    hi,
                    _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * g + 1), one), 4));
            }
            const __m256i sl = _mm256_set1_epi16(sm[2 * g]), sh = _mm256_set1_epi16(sm[2 * g + 1]);
            for (int t = 0; t < NT; t++) {
                const int8_t* xq = x[t]->qs + 64 * g;
                const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
                const __m256i xh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32));
                const __m256i pl = _mm256_madd_epi16(sl, _mm256_maddubs_epi16(lo, xl));
                const __m256i ph = _mm256_madd_epi16(sh, _mm256_maddubs_epi16(hi, xh));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(pl, ph));
            }
        }
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

struct Q6K : SuperBlockStep<block_q6_K> {
    struct Acc {
        __m256 s = _mm256_setzero_ps();
        float total() const { return hsum(s); }
    };
    template <int NT>
    static void step(const block_q6_K& w, const block_q8_K* const* x, Acc* acc) {
        // The levels are q - 32: take 32 sum_k sc_k bsum_k off the sum of sc_k sum(q x).
        const __m256i sc16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) {
            const __m256i offset = q8_K_bsums_dot(sc16, *x[t]);
            sum[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
        }
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        for (int h = 0; h < QK_K / 128; h++) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h));
            const __m256i l1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h + 32));
            const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh + 32 * h));
            // Values 32k..32k+31 of the half: the low 4 bits from ql, bits 2k, 2k+1 of qh on top.
            // (The 16-bit shifts never carry a kept bit across a byte.)
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low4),
                                _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(0x03)), 4)),
                _mm256_or_si256(_mm256_and_si256(l1, low4),
                                _mm256_slli_epi16(_mm256_and_si256(hb, _mm256_set1_epi8(0x0c)), 2)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                _mm256_and_si256(hb, _mm256_set1_epi8(0x30))),
                _mm256_or_si256(
                    _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                    _mm256_srli_epi16(
                        _mm256_and_si256(hb, _mm256_set1_epi8(static_cast<char>(0xc0))), 2)),
            };
            for (int k = 0; k < 4; k++) {
                // 32 values = sub-blocks s and s + 1: their scales in the two 128-bit lanes.
                const int s = 8 * h + 2 * k;
                const __m256i scale =
                    _mm256_setr_m128i(_mm_set1_epi16(w.scales[s]), _mm_set1_epi16(w.scales[s + 1]));
                for (int t = 0; t < NT; t++) {
                    const __m256i xq = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(x[t]->qs + 128 * h + 32 * k));
                    sum[t] = _mm256_add_epi32(
                        sum[t], _mm256_madd_epi16(scale, _mm256_maddubs_epi16(q[k], xq)));
                }
            }
        }
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

// IQ4_XS: the 16 levels (vpshufb) in eight 32-value blocks with signed scales. A block's 16
// bytes, broadcast to both 128-bit lanes and shifted by 0 and 4, give its values in order;
// signed levels take |w| and sign(w) x (pair sums at most 2 * 127 * 127).
struct IQ4XS : SuperBlockStep<block_iq4_xs> {
    struct Acc {
        __m256 s = _mm256_setzero_ps();
        float total() const { return hsum(s); }
    };
    template <int NT>
    static void step(const block_iq4_xs& w, const block_q8_K* const* x, Acc* acc) {
        alignas(16) int16_t sc[QK_K / 32];
        _mm_store_si128(reinterpret_cast<__m128i*>(sc), iq4_xs_scales16(w));
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
        const __m256i shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
        const __m256i mask = _mm256_set1_epi8(0x0f);
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = _mm256_setzero_si256();
        for (int b = 0; b < QK_K / 32; b++) {
            const __m256i q = _mm256_broadcastsi128_si256(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs + 16 * b)));
            const __m256i v =
                _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srlv_epi32(q, shift), mask));
            const __m256i av = _mm256_sign_epi8(v, v);
            const __m256i scale = _mm256_set1_epi16(sc[b]);
            for (int t = 0; t < NT; t++) {
                const __m256i xq =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t]->qs + 32 * b));
                const __m256i p = _mm256_maddubs_epi16(av, _mm256_sign_epi8(xq, v));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(p, scale));
            }
        }
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

// Q2_K and Q3_K: 16 sub-blocks of 16 values, their 2-bit fields packed alike: value
// 128h + 32k + l (k < 4, l < 32) is bits 2k, 2k + 1 of qs byte 32h + l. The 32 bytes at 32h
// shifted by 2k are 32 values in order, sub-blocks 8h + 2k and 8h + 2k + 1 in the two 128-bit
// lanes, so each lane's pair sums take one scale.

// Half h of 16 int16 scales (sub-blocks 8h..8h+7) in both 128-bit lanes.
__m256i half_scales(__m256i sc16, int h) {
    return h == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00)
                  : _mm256_permute2x128_si256(sc16, sc16, 0x11);
}

// [sc_2k x8, sc_2k+1 x8] from a half_scales: word i is bytes 2i, 2i + 1 (vpshufb).
__m256i lane_scales(__m256i half, int k) {
    const auto word = [](int i) {
        return _mm_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * i));
    };
    return _mm256_shuffle_epi8(half, _mm256_setr_m128i(word(2 * k), word(2 * k + 1)));
}

// sum[t] plus token t's sum_k sc_k sum(level x) over the super-block, sc16 the 16 scales as
// int16: the levels of values 128h + 32k.. are level(v, h, k), v their 2-bit fields at qs as
// unsigned bytes.
template <int NT, class Level>
void add_field_dots(const uint8_t* qs, __m256i sc16, Level level, const block_q8_K* const* x,
                    __m256i* sum) {
    const __m256i low2 = _mm256_set1_epi8(3);
    for (int h = 0; h < QK_K / 128; h++) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h));
        const __m256i half = half_scales(sc16, h);
        for (int k = 0; k < 4; k++) {
            const __m256i v = level(_mm256_and_si256(_mm256_srli_epi16(q, 2 * k), low2), h, k);
            const __m256i scale = lane_scales(half, k);
            for (int t = 0; t < NT; t++) {
                const __m256i xq = _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(x[t]->qs + 128 * h + 32 * k));
                sum[t] =
                    _mm256_add_epi32(sum[t], _mm256_madd_epi16(scale, _mm256_maddubs_epi16(v, xq)));
            }
        }
    }
}

// Q2_K: the 2-bit fields are the levels (pair sums at most 2 * 3 * 128), 4-bit scales; the
// mins' part, dmin sum_k m_k bsum_k, goes into the same float sum under its own scale.
struct Q2K : SuperBlockStep<block_q2_K> {
    using Acc = Q6K::Acc;
    template <int NT>
    static void step(const block_q2_K& w, const block_q8_K* const* x, Acc* acc) {
        __m256i sc16, m16;
        q2_K_scales_mins16(w, &sc16, &m16);
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) sum[t] = _mm256_setzero_si256();
        add_field_dots<NT>(
            w.qs, sc16, [](__m256i v, int, int) { return v; }, x, sum);
        const float d = _cvtsh_ss(w.d), dmin = _cvtsh_ss(w.dmin);
        for (int t = 0; t < NT; t++) {
            const __m256i mins = q8_K_bsums_dot(m16, *x[t]);
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
            acc[t].s = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * x[t]->d), _mm256_cvtepi32_ps(mins),
                                        acc[t].s);
        }
    }
};

// Q3_K: levels q - 4, q the 2-bit field with the hmask bit on top. vpmaddubsw takes q unsigned
// (pair sums at most 2 * 7 * 128); the 4 comes off once per super-block through the bsums, as
// Q6_K's 32 does.
struct Q3K : SuperBlockStep<block_q3_K> {
    using Acc = Q6K::Acc;
    template <int NT>
    static void step(const block_q3_K& w, const block_q8_K* const* x, Acc* acc) {
        const __m256i sc16 = q3_K_scales16(w);
        __m256i sum[NT];
        for (int t = 0; t < NT; t++) {
            const __m256i offset = q8_K_bsums_dot(sc16, *x[t]);
            sum[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 2));
        }
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.hmask));
        const __m256i one = _mm256_set1_epi8(1);
        // The third bit of value 128h + 32k + l: bit 4h + k of hmask byte l.
        const auto level = [&](__m256i v, int h, int k) {
            const __m256i third = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + k), one);
            return _mm256_or_si256(v, _mm256_slli_epi16(third, 2));
        };
        add_field_dots<NT>(w.qs, sc16, level, x, sum);
        const float d = _cvtsh_ss(w.d);
        for (int t = 0; t < NT; t++) {
            acc[t].s =
                _mm256_fmadd_ps(_mm256_set1_ps(d * x[t]->d), _mm256_cvtepi32_ps(sum[t]), acc[t].s);
        }
    }
};

using Q4K = KMin<block_q4_K>;
using Q5K = KMin<block_q5_K>;
using Q8 = QuantTiles<QStep<Q8Weights>>;
using Q4 = QuantTiles<QStep<Q4Weights>>;

constexpr TypeOverride kTypes[] = {
    {Type::F32, FK::kernels<LoadF32<Arch>>()},
    {Type::F16, FK::kernels<LoadF16<Arch>>()},
    {Type::BF16, FK::kernels<LoadBF16<Arch>>()},
    {Type::Q8_0, Q8::kernels(quantize_q8_0)},
    {Type::Q4_0, Q4::kernels()},
    {Type::Q4_1, QuantTiles<QStep<Q4_1Weights>>::kernels()},
    {Type::Q5_0, QuantTiles<QStep<Q5Weights>>::kernels()},
    {Type::Q5_1, QuantTiles<QStep<Q5_1Weights>>::kernels()},
    {Type::IQ4_NL, QuantTiles<QStep<IQ4NLWeights>>::kernels()},
    {Type::Q2_K, QuantTiles<Q2K>::kernels()},
    {Type::Q3_K, QuantTiles<Q3K>::kernels()},
    {Type::Q4_K, QuantTiles<Q4K>::kernels()},
    {Type::Q5_K, QuantTiles<Q5K>::kernels()},
    {Type::Q6_K, QuantTiles<Q6K>::kernels()},
    {Type::IQ4_XS, QuantTiles<IQ4XS>::kernels()},
    {Type::Q8_K, {nullptr, quantize_q8_K, nullptr}},
    {Type::Q8_1, {nullptr, quantize_q8_1<quantize_q8_0>, nullptr}},
};

// The packed kernels' activation quantizers; the kernels themselves are packed_avx2.cpp's
// (packed_kernels(): one copy for each AVX2 table), and for the grid types
// packed_stripes_avx2.cpp's (stripe_kernels(), one copy for each too).
constexpr PackedOverride kQuantizers[] = {
    {Type::Q8_0, {quantize_q8_0c_blocks<128, Q8Lanes>, nullptr, nullptr}},
    {Type::Q4_0, {quantize_q8_0c_blocks<8, Q8Lanes>, nullptr, nullptr}},
    {Type::Q5_0, {quantize_q8_0c_blocks<16, Q8Lanes>, nullptr, nullptr}},
    {Type::IQ4_NL, {quantize_q8_0c_blocks<128, Q8Lanes>, nullptr, nullptr}},
    {Type::Q4_1, {quantize_q8_1c<quantize_q8_0>, nullptr, nullptr}},
    {Type::Q5_1, {quantize_q8_1c<quantize_q8_0>, nullptr, nullptr}},
    {Type::Q4_K, {quantize_q8_K, nullptr, nullptr}},
    {Type::Q5_K, {quantize_q8_K, nullptr, nullptr}},
    {Type::Q6_K, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ4_XS, {quantize_q8_K, nullptr, nullptr}},
    {Type::Q3_K, {quantize_q8_K, nullptr, nullptr}},
    {Type::Q2_K, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ2_XXS, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ2_XS, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ2_S, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ3_XXS, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ3_S, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ1_S, {quantize_q8_K, nullptr, nullptr}},
    {Type::IQ1_M, {quantize_q8_K, nullptr, nullptr}},
};

}  // namespace

// Built on first use, which kernels_for() allows only when the CPU has AVX2.
const Kernels* kernels_avx2() {
    static const Kernels table = [] {
        Kernels k = with_overrides(with_overrides(kernels_scalar(), Isa::Avx2, kTypes, kQuantizers),
                                   Isa::Avx2, avx2::kGridTypes, avx2::packed_kernels());
        k = with_overrides(k, Isa::Avx2, {}, avx2::stripe_kernels());
        set_float_kernels<Arch, LoadF16<Arch>>(k);
        k.grid_gemm = avx2::packed_gemm_grid;
        return k;
    }();
    return &table;
}

// The avx2 table with the packed kernels compiled for AVX-VNNI. Built on first use, which
// kernels_for() allows only when the CPU has AVX-VNNI.
const Kernels* kernels_avx2_vnni() {
    static const Kernels table = [] {
        Kernels k = with_overrides(*kernels_avx2(), Isa::Avx2Vnni, {}, avx2_vnni::packed_kernels());
        k = with_overrides(k, Isa::Avx2Vnni, {}, avx2_vnni::stripe_kernels());
        k.grid_gemm = avx2_vnni::packed_gemm_grid;
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
