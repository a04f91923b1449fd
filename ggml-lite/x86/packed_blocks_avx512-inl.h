// The AVX-512 side of packed 32-value block columns (packed.h: block_q8_0x16, block_q4_0x16,
// block_q5_0x16, block_q4_1x16, block_q5_1x16, block_iq4_nlx16): each type's 8 unsigned weight
// operands of 16 rows, its scales, and a token's block term. Shared by the vpdpbusd kernels
// (packed_avx512.cpp) and the AMX ones (packed_amx.cpp), which differ only in how they form the
// integer dots.
//
// Include only from those translation units; everything here has internal linkage (see
// simd_x86-inl.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "ggml-lite/packed.h"
#include "ggml-lite/x86/simd_x86-inl.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

// The 8 unsigned operands of a block column; operand i pairs with activation bytes 4i..4i+3,
// i.e. holds elements 4i..4i+3 of every row. Each type differs only in how it makes them from
// the block column and in its activation block: block_q8_0c, whose correction c undoes the
// offset, or block_q8_1c (Q4_1, Q5_1), whose s meets the rows' minimums.

// The nibbles of Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL: the low ones of words 0-3 (elements 4m..),
// then the high ones (16 + 4m..).
inline void packed_nibbles(const uint8_t (*qs)[kPackRows][4], __m512i* op) {
    const __m512i mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        const __m512i v = _mm512_loadu_si512(qs[m]);
        op[m] = _mm512_and_si512(v, mask);
        op[m + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
    }
}

// Q5_0 and Q5_1: the fifth bits to bit 4 of the nibbles. Element 4i + k's bit is bit i of byte k
// of the row's word (packed.h): the word shifted by 4 - i puts operand i's at bit 4 of each byte,
// and one ternary-logic step ors it in (0xf8: op | (shifted & bit4)).
inline void add_packed_fifth_bits(const uint8_t (*qh)[4], __m512i* op) {
    const __m512i v = _mm512_loadu_si512(qh);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        const __m512i at4 = i < 4 ? _mm512_slli_epi32(v, 4 - i) : _mm512_srli_epi32(v, i - 4);
        op[i] = _mm512_ternarylogic_epi32(op[i], at4, bit4, 0xf8);
    }
}

// Q4_0, Q4_1, Q5_0, Q5_1: the nibbles, with the fifth bits where the block has them.
template <class B, class A, bool FifthBits>
struct PackedNibbles {
    using Block = B;
    using Act = A;
    static void load(const Block& w, __m512i* op) {
        packed_nibbles(w.qs, op);
        if constexpr (FifthBits) add_packed_fifth_bits(w.qh, op);
    }
};
using PackedQ4 = PackedNibbles<block_q4_0x16, block_q8_0c, false>;
using PackedQ5 = PackedNibbles<block_q5_0x16, block_q8_0c, true>;
using PackedQ4_1 = PackedNibbles<block_q4_1x16, block_q8_1c, false>;
using PackedQ5_1 = PackedNibbles<block_q5_1x16, block_q8_1c, true>;

// IQ4_NL: the nibbles looked up in the table of levels plus 128.
struct PackedIQ4NL {
    using Block = block_iq4_nlx16;
    using Act = block_q8_0c;
    static void load(const Block& w, __m512i* op) {
        const __m512i table = iq4nl_table_u8();
        packed_nibbles(w.qs, op);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) op[i] = _mm512_shuffle_epi8(table, op[i]);
    }
};

struct PackedQ8 {  // stored as w + 128 already
    using Block = block_q8_0x16;
    using Act = block_q8_0c;
    static void load(const Block& w, __m512i* op) {
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) op[m] = _mm512_loadu_si512(w.qs[m]);
    }
};

// The rows' scales and (Q4_1, Q5_1) minimums of block column w.
template <class P>
struct BlockScales {
    __m512 d, m;
    explicit BlockScales(const typename P::Block& w) {
        d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.d)));
        if constexpr (std::is_same_v<typename P::Act, block_q8_1c>) {
            m = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.m)));
        }
    }
};

// The weight side of block column w: its 8 operands and its scales.
template <class P>
struct BlockColumn : BlockScales<P> {
    __m512i op[8];
    explicit BlockColumn(const typename P::Block& w) : BlockScales<P>(w) { P::load(w, op); }
};

// The activation block's word i (bytes 4i..4i + 3) in every lane.
template <class Act>
__m512i act_word(const Act& a, int i) {
    int32_t v;
    __builtin_memcpy(&v, a.qs + 4 * i, 4);
    return _mm512_set1_epi32(v);
}

// A token's integer sum starts from the correction; block_q8_1c has none.
template <class Act>
__m512i start_sum(const Act& a) {
    if constexpr (std::is_same_v<Act, block_q8_1c>) {
        return _mm512_setzero_si512();
    } else {
        return _mm512_set1_epi32(a.c);
    }
}

// acc plus the block's term for the token whose integer dot is sum.
template <class P>
__m512 finish_block(const BlockScales<P>& c, const typename P::Act& a, __m512i sum, __m512 acc) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(c.d, _mm512_set1_ps(a.d)), acc);
    if constexpr (std::is_same_v<typename P::Act, block_q8_1c>) {
        acc = _mm512_fmadd_ps(c.m, _mm512_set1_ps(a.s), acc);
    }
    return acc;
}

}  // namespace
}  // namespace ggml_lite
