// Which kernel table runs: the one for active_isa(), checked against what the CPU supports.
#include "kernels.h"

namespace ggml_lite {

const TypeKernels& Kernels::of(Type t) const {
    return types[type_slot(t)];
}

const PackedKernels& Kernels::packed_of(Type t) const {
    return packed[type_slot(t)];
}

// The SIMD tables live in their own translation units, built only for their architecture.
#if !defined(LILA_X86)
const Kernels* kernels_avx2() {
    return nullptr;
}
const Kernels* kernels_avx512() {
    return nullptr;
}
#endif
#if !defined(LILA_ARM)
const Kernels* kernels_neon() {
    return nullptr;
}
const Kernels* kernels_neon_dotprod() {
    return nullptr;
}
#endif

const Kernels* kernels_for(Isa isa) {
    // Check support before touching the table: its code may not run on this CPU.
    if (!isa_supported(isa)) return nullptr;
    switch (isa) {
        case Isa::Scalar:
            return &kernels_scalar();
        case Isa::Avx2:
            return kernels_avx2();
        case Isa::Avx512:
            return kernels_avx512();
        case Isa::Neon:
            return kernels_neon();
        case Isa::NeonDotprod:
            return kernels_neon_dotprod();
    }
    return nullptr;
}

const Kernels& kernels() {
    static const Kernels* k = kernels_for(active_isa());
    return *k;
}

}  // namespace ggml_lite
