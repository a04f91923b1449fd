// x86 helpers shared by the AVX2 and AVX-512 translation units: the half and bfloat16 loaders,
// horizontal sums, Q4_K's and IQ4_XS's scale decoding for rows side by side, IQ4_XS's, Q2_K's and
// Q3_K's scales, IQ4_NL's table for vpdpbusd, the activation sums of Q8_K, and the packed kernels'
// far prefetch distance.
//
// Include only from the x86 ISA translation units (x86/kernels_avx2.cpp, x86/packed_avx2.cpp,
// x86/kernels_avx512.cpp, x86/packed_kquant_avx512.cpp, x86/packed_q23_avx2.cpp). Each is compiled
// with its own -m flags (all with AVX2, FMA and F16C; the AVX-512 loaders exist only where
// __AVX512F__ is defined), and everything here has internal linkage, for the reasons
// simd_float-inl.h gives.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "ggml-lite/cpu.h"
#include "ggml-lite/quant.h"
#include "ggml-lite/quant_tiles-inl.h"

namespace ggml_lite {
namespace {  // NOLINT(google-build-namespaces): internal linkage is the point

using Avx2 = xsimd::fma3<xsimd::avx2>;
using Avx512 = xsimd::avx512bw;

// bfloat16 is the top half of a float: widen and shift (one value, for the loaders' tails).
inline float bf16_value(const uint16_t* p) {
    return _mm_cvtss_f32(
        _mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(static_cast<uint32_t>(*p) << 16))));
}

// Loaders of F16 and BF16 values as Arch's float vectors, the interface simd_float-inl.h's
// kernels and the packed float kernels take: Elem, load(p) (a vector), scalar(p) (one value).
// Halves convert with F16C, not fp16.h's helpers (nothing here may be shared, see above).
template <class Arch>
struct LoadF16;
template <class Arch>
struct LoadBF16;

template <>
struct LoadF16<Avx2> {
    using Elem = uint16_t;
    static xsimd::batch<float, Avx2> load(const uint16_t* p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static float scalar(const uint16_t* p) { return _cvtsh_ss(*p); }
};

template <>
struct LoadBF16<Avx2> {
    using Elem = uint16_t;
    // The 8 values in both 128-bit lanes (a load µop), then each lane's 4 into the high halves
    // of its floats by one in-lane vpshufb: vpmovzxwd crosses lanes, and on a Zen 3 issued once
    // every 1.24 cycles against vpshufb's two a cycle, before a shift.
    static xsimd::batch<float, Avx2> load(const uint16_t* p) {
        const __m256i v =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_shuffle_epi8(
            v, _mm256_setr_epi8(-1, -1, 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7,  //
                                -1, -1, 8, 9, -1, -1, 10, 11, -1, -1, 12, 13, -1, -1, 14, 15)));
    }
    static float scalar(const uint16_t* p) { return bf16_value(p); }
};

#if defined(__AVX512F__)

template <>
struct LoadF16<Avx512> {
    using Elem = uint16_t;
    static xsimd::batch<float, Avx512> load(const uint16_t* p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
    static float scalar(const uint16_t* p) { return _cvtsh_ss(*p); }
};

template <>
struct LoadBF16<Avx512> {
    using Elem = uint16_t;
    static xsimd::batch<float, Avx512> load(const uint16_t* p) {
        const __m512i h =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
    }
    static float scalar(const uint16_t* p) { return bf16_value(p); }
};

#endif

inline float hsum(__m128 s) {
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// Q8_K's eight sums of 32 activations (pairs of bsums, at most 32 * 128 in magnitude): what
// Q4_K's mins multiply.
inline __m128i q8_K_sums32(const block_q8_K& x) {
    return _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums + 8)));
}

// acc plus one token's Q4_K mins part, dmin d_x sum_j m_j (sum of sub-block j's activations),
// the mins m_j as eight int16.
inline __m128 q4_K_mins(__m128i mins, float dmin, const block_q8_K& x, __m128 acc) {
    return _mm_fmadd_ps(_mm_set1_ps(dmin * x.d),
                        _mm_cvtepi32_ps(_mm_madd_epi16(mins, q8_K_sums32(x))), acc);
}

// An IQ4_XS block's eight signed scales (iq4_xs_scale) as int16, for both ISAs' IQ4_XS steps:
// a loop over the 8 scales costs as much as a quarter of the super-block's dot product.
inline __m128i iq4_xs_scales16(const block_iq4_xs& b) {
    int32_t packed;
    __builtin_memcpy(&packed, b.scales_l, sizeof packed);
    const __m128i l = _mm_cvtsi32_si128(packed);
    const __m128i low4 = _mm_set1_epi8(0x0f);
    // Scale 2k's low 4 bits are byte k's low nibble, scale 2k + 1's its high one.
    const __m128i lo = _mm_cvtepu8_epi16(
        _mm_unpacklo_epi8(_mm_and_si128(l, low4), _mm_and_si128(_mm_srli_epi16(l, 4), low4)));
    // Scale i's top 2 bits, bits 2i and 2i + 1 of scales_h: shifted to the top of word i (a
    // multiplication by 2^(14 - 2i)), then down to the bottom.
    const __m128i h = _mm_srli_epi16(
        _mm_mullo_epi16(
            _mm_set1_epi16(static_cast<int16_t>(b.scales_h)),
            _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 6, 1 << 4, 1 << 2, 1)),
        14);
    return _mm_sub_epi16(_mm_or_si128(lo, _mm_slli_epi16(h, 4)), _mm_set1_epi16(32));
}

// A Q2_K block's 16 scales and 16 mins (the nibbles of its scale bytes) as int16, for both ISAs'
// Q2_K steps.
inline void q2_K_scales_mins16(const block_q2_K& b, __m256i* sc, __m256i* m) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m128i low4 = _mm_set1_epi8(0x0f);
    *sc = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    *m = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
}

// A Q3_K block's 16 signed scales (q3_K_scale) as int16, for both ISAs' Q3_K steps.
inline __m256i q3_K_scales16(const block_q3_K& b) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    // Scale k's low 4 bits: byte k's low nibble (k < 8), byte k - 8's high one.
    const __m128i l = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.scales));
    const __m128i lo =
        _mm_unpacklo_epi64(_mm_and_si128(l, low4), _mm_and_si128(_mm_srli_epi16(l, 4), low4));
    // Its top 2 bits: bits 2(k / 4), 2(k / 4) + 1 of byte 8 + k % 4, so word i of the four
    // top bytes shifted right by 2i.
    int32_t top;
    __builtin_memcpy(&top, b.scales + 8, sizeof top);
    const __m128i hi = _mm_and_si128(
        _mm_srlv_epi32(_mm_set1_epi32(top), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3));
    return _mm256_cvtepi8_epi16(
        _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32)));
}

// sum_k c_k bsum_k in eight int32 lanes (two k each), c one int16 factor per 16 values: how
// Q2_K's mins and Q3_K's level offset meet the activations.
inline __m256i q8_K_bsums_dot(__m256i c16, const block_q8_K& x) {
    return _mm256_madd_epi16(c16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
}

// The byte-wise steps of the decoders below: the scale decoders' on 16 rows (__m128i, one per
// byte) or on AVX2's half of 8 rows (__m256i, the rows' bytes repeated: packed_avx2-inl.h's
// half_bytes), the packed levels' on AVX2's 8 rows or AVX-512's 16 (__m512i); & and | serve all
// as they are. Every width has every step, so a decoder compiles for any of them. Keyed by
// width: __m128i as a template argument loses its attributes, which GCC warns of.
template <size_t Bytes>
struct ByteOps;
template <>
struct ByteOps<16> {
    static __m128i srli16(__m128i v, int n) { return _mm_srli_epi16(v, n); }
    static __m128i slli16(__m128i v, int n) { return _mm_slli_epi16(v, n); }
    static __m128i sub8(__m128i a, __m128i b) { return _mm_sub_epi8(a, b); }
    static __m128i splat8(char c) { return _mm_set1_epi8(c); }
    static __m128i andnot(__m128i a, __m128i b) { return _mm_andnot_si128(a, b); }
};
template <>
struct ByteOps<32> {
    static __m256i srli16(__m256i v, int n) { return _mm256_srli_epi16(v, n); }
    static __m256i slli16(__m256i v, int n) { return _mm256_slli_epi16(v, n); }
    static __m256i sub8(__m256i a, __m256i b) { return _mm256_sub_epi8(a, b); }
    static __m256i splat8(char c) { return _mm256_set1_epi8(c); }
    static __m256i andnot(__m256i a, __m256i b) { return _mm256_andnot_si256(a, b); }
};
#if defined(__AVX512F__)
template <>
struct ByteOps<64> {
    static __m512i srli16(__m512i v, int n) { return _mm512_srli_epi16(v, n); }
    static __m512i slli16(__m512i v, int n) { return _mm512_slli_epi16(v, n); }
    static __m512i sub8(__m512i a, __m512i b) { return _mm512_sub_epi8(a, b); }
    static __m512i splat8(char c) { return _mm512_set1_epi8(c); }
    static __m512i andnot(__m512i a, __m512i b) { return _mm512_andnot_si512(a, b); }
};
#endif

// The decoders and their helper are always inlined: as templates, GCC 12 called them from
// AVX2's k_tile, an out-of-line call (and a vzeroupper) per half super-block, Q4_K decode 10%
// slower.
//
// Byte-wise: bits 6-7 of each byte moved to bits 4-5 (a Q4_K scale's or min's top bits).
template <class V>
[[gnu::always_inline]] inline V top2_to_bit4(V v) {
    using B = ByteOps<sizeof(V)>;
    return B::slli16(B::srli16(v, 6) & B::splat8(3), 4);
}

// get_scale_min_k4 on many rows at once: b[k] holds byte k of each row's 12 packed scale
// bytes, one row per byte lane; sc[j] and m[j] get sub-block j's 6-bit scale and min.
template <class V>
[[gnu::always_inline]] inline void q4_K_scales_mins_rows(const V* b, V* sc, V* m) {
    using B = ByteOps<sizeof(V)>;
    const V low6 = B::splat8(0x3f), low4 = B::splat8(0x0f);
    for (int j = 0; j < 4; j++) {
        sc[j] = b[j] & low6;
        m[j] = b[j + 4] & low6;
        sc[j + 4] = (b[j + 8] & low4) | top2_to_bit4(b[j]);
        m[j + 4] = (B::srli16(b[j + 8], 4) & low4) | top2_to_bit4(b[j + 4]);
    }
}

// iq4_xs_scale on many rows at once, one row per byte lane: l[k] and h[k] hold byte k of the
// rows' scales_l and scales_h (block_iq4_xsx16); sc[j] gets sub-block j's signed scale.
template <class V>
[[gnu::always_inline]] inline void iq4_xs_scales_rows(const V* l, const V* h, V* sc) {
    using B = ByteOps<sizeof(V)>;
    const V low4 = B::splat8(0x0f), low2 = B::splat8(0x03);
    for (int j = 0; j < 8; j++) {
        const V lo = B::srli16(l[j / 2], 4 * (j % 2)) & low4;
        const V hi = B::srli16(h[j / 4], 2 * (j % 4)) & low2;
        sc[j] = B::sub8(lo | B::slli16(hi, 4), B::splat8(32));
    }
}

// Q3_K's packed levels (packed.h: block_q3_Kx16, q3_K_packed_level) on many rows at once: word m
// of a unit from its planes, plane(j) loading plane j, as bytes 0..7. The 16-bit shifts bring in
// bits of the neighbouring byte; the masks clear them.
template <class V, class Plane>
[[gnu::always_inline]] inline V q3_K_word(Plane plane, int m) {
    using B = ByteOps<sizeof(V)>;
    const V seven = B::splat8(7), three = B::splat8(3), four = B::splat8(4);
    switch (m) {
        case 2:
            return (B::srli16(plane(0), 6) & three) | (B::srli16(plane(2), 4) & four);
        case 5:
            return (B::srli16(plane(1), 6) & three) | (B::srli16(plane(2), 5) & four);
        case 0:
        case 3:
        case 6:
            return plane(m / 3) & seven;
        default:
            return B::srli16(plane(m / 3), 3) & seven;
    }
}

// Q5_K's packed levels (packed.h: block_q5_Kx16, q5_K_packed_level) on many rows at once: word m
// of a sub-block from its planes, plane(k) loading plane k, as bytes 0..31. A plane's top bits,
// cleared of the rest (vpandn) before a 16-bit shift right, move no bits across a byte boundary.
template <class V, class Plane>
[[gnu::always_inline]] inline V q5_K_word(Plane plane, int m) {
    using B = ByteOps<sizeof(V)>;
    const V low5 = B::splat8(31);
    const auto top = [&](int k, int shift) { return B::srli16(B::andnot(low5, plane(k)), shift); };
    switch (m) {
        case 5:
            return top(0, 5) | (B::srli16(plane(1), 2) & B::splat8(0x18));
        case 6:
            return (B::srli16(plane(1), 7) & B::splat8(1)) | top(2, 4) |
                   (B::srli16(plane(3), 1) & B::splat8(0x10));
        case 7:
            return (B::srli16(plane(3), 6) & B::splat8(3)) | top(4, 3);
        default:
            return plane(m) & low5;
    }
}

// Q6_K's packed levels (packed.h: block_q6_Kx16, q6_K_packed_level) on many rows at once: word m
// of a sub-block from its planes, plane(j) loading plane j, as bytes 0..63. Word 3 is the planes'
// top bits, each pair cleared of the rest before the 16-bit shifts (which then move no bits
// across a byte boundary), put together by shifting right 2 after each OR: one mask constant in
// all.
template <class V, class Plane>
[[gnu::always_inline]] inline V q6_K_word(Plane plane, int m) {
    using B = ByteOps<sizeof(V)>;
    const V low6 = B::splat8(63);
    if (m < 3) return plane(m) & low6;
    V top = B::srli16(B::andnot(low6, plane(0)), 2) | B::andnot(low6, plane(1));
    top = B::srli16(top, 2) | B::andnot(low6, plane(2));
    return B::srli16(top, 2);
}

#if defined(__AVX512F__)
// IQ4_NL's 16 levels plus 128 (their sign bits flipped), a vpshufb table of unsigned levels for
// vpdpbusd: IQ4_NL's and IQ4_XS's kernels, packed or not.
inline __m512i iq4nl_table_u8() {
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
    return _mm512_xor_si512(table, _mm512_set1_epi8(static_cast<char>(0x80)));
}

// The lanes of a packed group's first nr rows: the rows a kernel stores.
inline __mmask16 row_mask(int nr) {
    return static_cast<__mmask16>((1u << nr) - 1);
}

#endif

// PackedKernels::gemv2's two groups as the kernels' two-group passes take them: the rows each
// stores as Rows (AVX-512: a lane mask, row_mask; AVX2: the count).
template <class Elem, class Rows>
struct TwoGroups {
    const Elem* w[2];
    float* y[2];
    Rows rows[2];
    TwoGroups(const void* w0, const void* w1, float* y0, float* y1, Rows r0, Rows r1)
        : w{static_cast<const Elem*>(w0), static_cast<const Elem*>(w1)}, y{y0, y1}, rows{r0, r1} {}
};

// How far ahead the packed kernels also prefetch their weights into L2. A core has only
// 16 L1 fill buffers, too few to keep the memory busy at its latency; prefetches into L2 hold
// none, so these keep more lines in flight (Q4_0 decode at 1 thread: 78% of the probe without,
// 89-100% with; docs/PERF.md).
constexpr size_t kFarAhead = 16384;

// Where a pass prefetches its weights: nowhere, closer ahead into L1, kFarAhead bytes ahead into
// L2, or both (cpu.h: PrefetchPolicy).
enum class Lead { None, L1, L2, L1AndL2 };

inline bool leads_l1(Lead lead) {
    return lead == Lead::L1 || lead == Lead::L1AndL2;
}
inline bool leads_l2(Lead lead) {
    return lead == Lead::L2 || lead == Lead::L1AndL2;
}

// The AVX-512 packed passes, by the instruction they stream the weights into.
enum class Pass { Vpdpbusd, Vdpbf16ps, Fma };

// The lead of an AVX-512 pass of nt tokens: prefill both, decode as this CPU's policy says
// (avx512_decode, then the vpdpbusd and vdpbf16ps passes' decode_l1).
inline Lead pass_lead(int nt, Pass pass) {
    const PrefetchPolicy p = prefetch_policy();
    if (nt > 1) return Lead::L1AndL2;
    if (!p.avx512_decode) return Lead::None;
    return p.decode_l1 || pass == Pass::Fma ? Lead::L1AndL2 : Lead::L2;
}

// The 32-value block kernels' block column at wb (packed.h): its lines 8 columns ahead into L1
// and kFarAhead bytes ahead into L2, as `lead` says. A group is one contiguous stream, but the
// lead keeps enough lines in flight when one thread streams alone.
template <class Block>
[[gnu::always_inline]] inline void prefetch_block(const Block* wb, Lead lead) {
    constexpr int64_t kAhead = 8;
    const auto* bytes = reinterpret_cast<const uint8_t*>(wb);
    if (leads_l1(lead)) prefetch_lines<sizeof(Block)>(bytes + kAhead * sizeof(Block));
    if (leads_l2(lead)) prefetch_lines<sizeof(Block), 2>(bytes + kFarAhead);
}

// The packed float kernels' pass that streams a group (packed.h: 4-column blocks of 16 rows):
// the block at wb's lines 2 KiB ahead into L1 and kFarAhead ahead into L2, as `lead` says.
template <class Elem>
[[gnu::always_inline]] inline void prefetch_float_block(const Elem* wb, Lead lead) {
    constexpr size_t kStep = 4 * kPackRows * sizeof(Elem);
    const auto* bytes = reinterpret_cast<const uint8_t*>(wb);
    if (leads_l1(lead)) prefetch_lines<kStep>(bytes + 2048);
    if (leads_l2(lead)) prefetch_lines<kStep, 2>(bytes + kFarAhead);
}

}  // namespace
}  // namespace ggml_lite
