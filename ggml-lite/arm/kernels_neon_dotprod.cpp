// NEON with the dot-product extension, the `neon_dotprod` table: the integer kernels of
// kernels_neon-inl.h compiled with +dotprod, so each 4-byte group becomes one sdot
// (vdotq_s32), on top of the neon table.
#include "ggml-lite/arm/kernels_neon-inl.h"
#include "ggml-lite/kernels.h"

namespace ggml_lite {

// The neon table with the sdot integer and grid kernels in place of its own. Built on first use,
// which kernels_for() allows only when the CPU has the extension.
const Kernels* kernels_neon_dotprod() {
    static const Kernels table = [] {
        Kernels k = with_overrides(
            with_overrides(*kernels_neon(), Isa::NeonDotprod, kIntegerTypes, kIntegerPacked),
            Isa::NeonDotprod, kGridTypes, {});
        k.grid_gemm = kGridGemm;
        return k;
    }();
    return &table;
}

}  // namespace ggml_lite
