// Which instruction sets this CPU has, and which kernel path lila uses.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ggml_lite {

// Avx512Bf16: the AVX-512 table plus BF16 weights' dot products with vdpbf16ps; Avx2Vnni: the
// AVX2 table with the packed integer kernels on AVX-VNNI's vpdpbusd; Amx: the avx512_bf16 table
// with Q8_0's and BF16's prefill tiles on AMX's tile unit (kernels.h, x86/packed_amx.cpp).
enum class Isa { Scalar, Avx2, Avx512, Neon, NeonDotprod, Avx512Bf16, Avx2Vnni, Amx };

// Every Isa, in the enum's order (scalar first).
std::span<const Isa> all_isas();

const char* isa_name(Isa isa);
std::optional<Isa> isa_from_name(std::string_view name);

// True when this binary has kernels for `isa` (x86 builds have the AVX2 and AVX-512 ones, aarch64
// builds NEON and NEON dotprod), whatever this CPU runs.
bool isa_built(Isa isa);

// True when this binary has kernels for `isa` and the CPU can run them.
bool isa_supported(Isa isa);

// Why `isa` cannot run here, e.g. "no avx512vnni" or "not built into this binary"; empty when
// isa_supported(isa).
std::string isa_unsupported_reason(Isa isa);

// The best supported path, or the one forced by the environment variable LILA_ISA
// (scalar|avx2|avx2_vnni|avx512|avx512_bf16|amx|neon|neon_dotprod). An unsupported or unknown
// LILA_ISA is a fatal error with a message, not a silent fallback: a benchmark must measure what it
// says.
Isa active_isa();

// The path active_isa() picks for a given LILA_ISA value (nullptr or empty: the best
// supported). Throws std::runtime_error naming the value when it is unknown or unsupported.
Isa select_isa(const char* lila_isa);

// How the packed kernels prefetch their weights in software when one token streams them (decode;
// AVX-512 prefill always leads into L1 and L2), where a CPU family was measured to want other
// than the default (docs/PERF.md, "What each optimisation bought"):
// - avx512_decode: the AVX-512 kernels prefetch at all (float, BF16, the vpdpbusd passes and the
//   k-quants). Off on AMD family 19h (Zen 4, the family's cores with AVX-512), whose own
//   prefetchers stream the weights faster alone: decode at 1 thread, BF16 9.5 -> 12.7 t/s and F16
//   9.6 -> 11.2 without them (on an Intel Xeon they had taken F16 decode from 4.4 to 6.4 t/s);
//   later Q4_0 35-37 -> 41-47, Q8_0 19-21 -> 20-25, Q5_0 29-31 -> 35-43, the k-quant mixes 3-33%.
// - decode_l1: the lead into L2 (16 KiB ahead) of the vpdpbusd and vdpbf16ps passes (the
//   32-value block types, BF16 on avx512_bf16) comes with one into L1 (8 blocks, 2 KiB
//   ahead). Off on AMD family 1Ah (Zen 5), where the L1 lead slowed one core's stream (Q8_0
//   blocks 29.1 -> 23.8 GB/s in a scratch loop) and BF16 decode at 1 thread by 3-21%; on the
//   Intel Xeon L2 alone had been slower than both. The F32/F16 FMA passes keep it (F16 decode
//   lost 4% in the mean without it).
// - avx2_block_l2: the AVX2 32-value block kernels (Q4_0 through IQ4_NL) lead one token's pass
//   kFarAhead into L2 as well as 8 blocks into L1. Off on AMD family 19h: on a Zen 3 it made
//   decode at 1 thread 3-27% slower; on the Intel Xeon (Emerald Rapids) it made decode 5% faster
//   in the geometric mean (Q8_0 3-19%), on a Zen 5 0-12%. Their prefill leads into L1 only.
struct PrefetchPolicy {
    bool avx512_decode = true;
    bool decode_l1 = true;
    bool avx2_block_l2 = true;
};
// The first form asks about this CPU.
PrefetchPolicy prefetch_policy();
PrefetchPolicy prefetch_policy(std::string_view vendor, unsigned family);

// Human-readable CPU feature summary, e.g. "avx2 fma f16c avx512f avx512bw avx512vl avx512vnni".
std::string cpu_features();

}  // namespace ggml_lite
