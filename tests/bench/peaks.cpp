// peaks.h's sequences. Each function carries its own target attribute, so this file builds with
// the project's baseline flags and only runs what peaks()'s caller finds supported.
//
// Every chain of a sequence depends on the previous step only through its accumulator; the
// operands that the kernels unpack once per block (weight levels, magnitudes) are registers,
// and the activation words are broadcast from an L1-resident buffer at addresses that all
// differ, so the compiler cannot merge two steps.
#include "peaks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <array>
#include <cstring>
#endif

namespace lila_bench {

#if defined(__x86_64__)
namespace {

using ggml_lite::Isa;

constexpr int64_t kReps = 1 << 12;

// Activation bytes, 16 steps of 256 (4 KiB), and 4 weight operands of 32 bytes.
struct Operands {
    alignas(64) int8_t x[16 * 256];
    alignas(64) int8_t w[4 * 32];
    Operands() {
        for (size_t i = 0; i < sizeof x; i++) x[i] = static_cast<int8_t>((i * 13) % 255 - 127);
        for (size_t i = 0; i < sizeof w; i++) w[i] = static_cast<int8_t>((i * 31) % 255 - 127);
    }
};
const Operands kOps;

int32_t word_at(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// vfmadd231ps ymm, 12 chains (latency 4, two pipes: 8 keep them busy): 8 multiply-adds each.
__attribute__((target("avx2,fma"))) int64_t fma_ymm() {
    __m256 acc[12];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    const __m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(0x1p-20f);
    for (int64_t r = 0; r < kReps; r++) {
#pragma GCC unroll 12
        for (__m256& s : acc) s = _mm256_fmadd_ps(a, b, s);
    }
    float sum = 0;
    for (const __m256& s : acc) sum += _mm256_cvtss_f32(s);
    return static_cast<int64_t>(sum);
}

// The AVX2 unsigned-level step (Q4_0, Q4_1, Q5_x, the k-quants): per word a broadcast activation
// word and vpmaddubsw, the products of 8 words added in int16, then one vpmaddwd and vpaddd.
// 4 chains of 8 words a step, 32 multiply-adds a word.
__attribute__((target("avx2"))) int64_t int8_unsigned_ymm() {
    const __m256i ones = _mm256_set1_epi16(1), nibble = _mm256_set1_epi8(0x0f);
    __m256i op[4], acc[4];
    for (int i = 0; i < 4; i++) {
        op[i] = _mm256_and_si256(
            _mm256_load_si256(reinterpret_cast<const __m256i*>(kOps.w + 32 * i)), nibble);
        acc[i] = _mm256_setzero_si256();
    }
    for (int64_t r = 0; r < kReps; r++) {
        const int8_t* x = kOps.x + (r & 15) * 256;
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            __m256i p = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) {
                const __m256i xw = _mm256_set1_epi32(word_at(x + 32 * k + 4 * i));
                p = _mm256_add_epi16(p, _mm256_maddubs_epi16(op[(k + i) & 3], xw));
            }
            acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
        }
    }
    return _mm256_extract_epi32(
        _mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]), _mm256_add_epi32(acc[2], acc[3])), 0);
}

// The AVX2 signed-level step (Q8_0, IQ4_NL, IQ4_XS): a pair sum of two signed products can
// reach 2 * 128 * 127, so every word takes vpsignb (the weights' signs onto the activations),
// vpmaddubsw against the magnitudes, and its own vpmaddwd and vpaddd. 4 chains of 8 words.
__attribute__((target("avx2"))) int64_t int8_signed_ymm() {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i op[4], mag[4], acc[4];
    for (int i = 0; i < 4; i++) {
        op[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(kOps.w + 32 * i));
        mag[i] = _mm256_abs_epi8(op[i]);
        acc[i] = _mm256_setzero_si256();
    }
    for (int64_t r = 0; r < kReps; r++) {
        const int8_t* x = kOps.x + (r & 15) * 256;
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) {
                const int j = (k + i) & 3;
                const __m256i xw = _mm256_set1_epi32(word_at(x + 32 * k + 4 * i));
                const __m256i p = _mm256_maddubs_epi16(mag[j], _mm256_sign_epi8(xw, op[j]));
                acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
            }
        }
    }
    return _mm256_extract_epi32(
        _mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]), _mm256_add_epi32(acc[2], acc[3])), 0);
}

// vfmadd231ps zmm, 16 chains: 16 multiply-adds each.
__attribute__((target("avx512f"))) int64_t fma_zmm() {
    __m512 acc[16];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    const __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(0x1p-20f);
    for (int64_t r = 0; r < kReps; r++) {
#pragma GCC unroll 16
        for (__m512& s : acc) s = _mm512_fmadd_ps(a, b, s);
    }
    float sum = 0;
    for (const __m512& s : acc) sum += _mm512_cvtss_f32(s);
    return static_cast<int64_t>(sum);
}

// vpdpbusd zmm, 12 chains: 64 multiply-adds each (the AVX-512 integer kernels' step).
__attribute__((target("avx512f,avx512vnni"))) int64_t vpdpbusd_zmm() {
    __m512i acc[12];
    for (__m512i& a : acc) a = _mm512_setzero_si512();
    const __m512i a = _mm512_set1_epi8(7), b = _mm512_set1_epi8(-3);
    for (int64_t r = 0; r < kReps; r++) {
#pragma GCC unroll 12
        for (__m512i& s : acc) s = _mm512_dpbusd_epi32(s, a, b);
    }
    int64_t sum = 0;
    for (const __m512i& s : acc) {
        alignas(64) int32_t lanes[16];
        _mm512_store_si512(lanes, s);
        sum += lanes[0];
    }
    return sum;
}

// vpdpbusd ymm (AVX-VNNI), 10 chains: 32 multiply-adds each (the avx2_vnni kernels' step). VEX
// has 16 ymm registers: with 12 chains GCC 12 moved accumulators through the stack (3.5 G
// instructions a second on the Zen 5, against 5.4 with 10).
__attribute__((target("avx2,avxvnni"))) int64_t vpdpbusd_ymm() {
    __m256i acc[10];
    for (__m256i& a : acc) a = _mm256_setzero_si256();
    const __m256i a = _mm256_set1_epi8(7), b = _mm256_set1_epi8(-3);
    for (int64_t r = 0; r < kReps; r++) {
#pragma GCC unroll 10
        for (__m256i& s : acc) s = _mm256_dpbusd_avx_epi32(s, a, b);
    }
    int64_t sum = 0;
    for (const __m256i& s : acc) sum += _mm256_extract_epi32(s, 0);
    return sum;
}

// vdpbf16ps zmm, 16 chains: 32 multiply-adds each (the BF16 kernels' step).
__attribute__((target("avx512f,avx512bf16"))) int64_t vdpbf16ps_zmm() {
    __m512 acc[16];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0x1p-20f), _mm512_set1_ps(0x1p-20f));
    for (int64_t r = 0; r < kReps; r++) {
#pragma GCC unroll 16
        for (__m512& s : acc) s = _mm512_dpbf16_ps(s, a, b);
    }
    float sum = 0;
    for (const __m512& s : acc) sum += _mm512_cvtss_f32(s);
    return static_cast<int64_t>(sum);
}

// tdpbsud, 4 accumulator tiles of 16 x 16 int32 from 4 operand tiles of 16 x 64 bytes loaded
// once: 16 x 16 x 64 multiply-adds each, the tile unit's own rate (the amx table's kernels
// multiply 32 bytes deep, one block, and finish each tile on the vector units).
__attribute__((target("amx-tile,amx-int8"))) int64_t tdpbsud_tile() {
    struct alignas(64) {
        uint8_t palette = 1, start_row = 0, reserved[14] = {};
        uint16_t colsb[16] = {};
        uint8_t rows[16] = {};
    } cfg, saved;
    for (int i = 0; i < 8; i++) cfg.colsb[i] = 64, cfg.rows[i] = 16;
    // The thread's configuration back afterwards (the amx kernels check theirs anyway). The
    // compiler barriers keep the configurations' stores: GCC's ldtilecfg and sttilecfg declare
    // 8 bytes of memory, not 64.
    __asm__ volatile("" ::: "memory");
    _tile_storeconfig(&saved);
    _tile_loadconfig(&cfg);
    _tile_loadd(4, kOps.x, 64);
    _tile_loadd(5, kOps.x + 1024, 64);
    _tile_loadd(6, kOps.x + 2048, 64);
    _tile_loadd(7, kOps.x + 3072, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t r = 0; r < kReps; r++) {
        _tile_dpbsud(0, 4, 6);
        _tile_dpbsud(1, 4, 7);
        _tile_dpbsud(2, 5, 6);
        _tile_dpbsud(3, 5, 7);
    }
    alignas(64) int32_t c[16][16];
    _tile_stored(0, c, 64);
    __asm__ volatile("" ::: "memory");
    _tile_loadconfig(&saved);
    return c[0][0];
}

constexpr std::array kPeaks = {
    Peak{"fma", Isa::Avx2, kReps * 12 * 8, fma_ymm},
    Peak{"int8-unsigned", Isa::Avx2, kReps * 4 * 8 * 32, int8_unsigned_ymm},
    Peak{"int8-signed", Isa::Avx2, kReps * 8 * 4 * 32, int8_signed_ymm},
    Peak{"fma", Isa::Avx512, kReps * 16 * 16, fma_zmm},
    Peak{"vpdpbusd", Isa::Avx2Vnni, kReps * 10 * 32, vpdpbusd_ymm},
    Peak{"vpdpbusd", Isa::Avx512, kReps * 12 * 64, vpdpbusd_zmm},
    Peak{"vdpbf16ps", Isa::Avx512Bf16, kReps * 16 * 32, vdpbf16ps_zmm},
    Peak{"tdpbsud", Isa::Amx, kReps * 4 * 16 * 16 * 64, tdpbsud_tile},
};

}  // namespace

std::span<const Peak> peaks() {
    return kPeaks;
}
#else
std::span<const Peak> peaks() {
    return {};
}
#endif

}  // namespace lila_bench
