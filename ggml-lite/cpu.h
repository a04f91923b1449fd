// Which instruction sets this CPU has, and which kernel path lila uses.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ggml_lite {

// Avx512Bf16: the AVX-512 table plus BF16 weights' dot products with vdpbf16ps (kernels.h).
enum class Isa { Scalar, Avx2, Avx512, Neon, NeonDotprod, Avx512Bf16 };

// Every Isa, in the enum's order (scalar first).
std::span<const Isa> all_isas();

const char* isa_name(Isa isa);
std::optional<Isa> isa_from_name(std::string_view name);

// True when this binary has kernels for `isa` (x86 builds have AVX2 and AVX-512, aarch64 builds
// NEON and NEON dotprod), whatever this CPU runs.
bool isa_built(Isa isa);

// True when this binary has kernels for `isa` and the CPU can run them.
bool isa_supported(Isa isa);

// Why `isa` cannot run here, e.g. "no avx512vnni" or "not built into this binary"; empty when
// isa_supported(isa).
std::string isa_unsupported_reason(Isa isa);

// The best supported path, or the one forced by the environment variable LILA_ISA
// (scalar|avx2|avx512|avx512_bf16|neon|neon_dotprod). An unsupported or unknown LILA_ISA is a fatal
// error with a message, not a silent fallback: a benchmark must measure what it says.
Isa active_isa();

// The path active_isa() picks for a given LILA_ISA value (nullptr or empty: the best
// supported). Throws std::runtime_error naming the value when it is unknown or unsupported.
Isa select_isa(const char* lila_isa);

// How the AVX-512 packed kernels prefetch their weights in software, where a CPU family was
// measured to want other than the default (docs/PERF.md, "What each optimisation bought"):
// - float_decode: the float kernels' one-token pass fetches 2 KiB ahead into L1 and 16 KiB into
//   L2. Off on AMD family 19h (Zen 4, the family's cores with AVX-512), whose own prefetchers
//   stream float weights faster alone (decode at 1 thread, BF16 9.5 -> 12.7 t/s, F16 9.6 -> 11.2
//   without them; on an Intel Xeon they had taken F16 decode from 4.4 to 6.4 t/s).
// - block_l1: the 32-value block kernels (Q4_0, Q8_0, ...) fetch 8 blocks ahead into L1 besides
//   16 KiB into L2. Off on AMD family 1Ah (Zen 5), where the bursts of prefetcht0 cost 8-10% of
//   one core's stream (Q8_0 decode at 1 thread 17-21 -> 20-24 t/s); on the Intel Xeon L2 alone
//   had been slower than both.
struct PrefetchPolicy {
    bool float_decode = true;
    bool block_l1 = true;
};
// The first form asks about this CPU.
PrefetchPolicy prefetch_policy();
PrefetchPolicy prefetch_policy(std::string_view vendor, unsigned family);

// Human-readable CPU feature summary, e.g. "avx2 fma f16c avx512f avx512bw avx512vl avx512vnni".
std::string cpu_features();

}  // namespace ggml_lite
