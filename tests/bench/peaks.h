// The instruction sequences lila's kernels are built from, each timed alone at full
// instruction-level parallelism from registers and L1: the ceiling a kernel made of that
// sequence can reach on this core, whatever its memory does. bench-kernels reports them as
// peak/<isa>/<sequence>/threads:N in multiply-adds a second, the unit of its matmul rows, so a
// kernel's fraction of its ceiling is one division (docs/PERF.md, "Where the time goes").
#pragma once

#include <cstdint>
#include <span>

#include "ggml-lite/cpu.h"

namespace lila_bench {

struct Peak {
    const char* name;       // what the sequence is, e.g. "int8-signed"
    ggml_lite::Isa isa;     // the path whose CPU features it needs
    int64_t macs_per_call;  // multiply-adds one call of run does
    int64_t (*run)();       // returns a value that depends on every product (keep it)
};

// The sequences this architecture has (x86: the FMA, vpmaddubsw, vpdpbusd and vdpbf16ps ones;
// elsewhere none yet).
std::span<const Peak> peaks();

}  // namespace lila_bench
