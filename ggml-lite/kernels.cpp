// Which kernel table runs: the one for active_isa(), checked against what the CPU supports.
#include "kernels.h"

#include <stdexcept>
#include <string>

#include "packed.h"

namespace ggml_lite {
namespace {

[[noreturn]] void bad_override(Isa isa, const std::string& what) {
    throw std::invalid_argument(std::string("kernel table ") + isa_name(isa) + ": " + what);
}
[[noreturn]] void bad_override(Isa isa, Type t, const char* what) {
    bad_override(isa, std::string(type_name(t)) + ": " + what);
}

// The slot of an override's type, seen for the first time in its list.
int override_slot(Isa isa, Type t, bool (&seen)[kTypeCount]) {
    int slot;
    try {
        slot = type_slot(t);
    } catch (const std::invalid_argument&) {
        bad_override(isa, "an override for type id " + std::to_string(static_cast<uint32_t>(t)) +
                              ", which is not in the type table");
    }
    if (seen[slot]) bad_override(isa, std::string("two overrides for ") + type_name(t));
    seen[slot] = true;
    return slot;
}

template <class F>
void replace(F& member, F with) {
    if (with) member = with;
}

}  // namespace

Kernels with_overrides(const Kernels& base, Isa isa, std::span<const TypeOverride> types,
                       std::span<const PackedOverride> packed) {
    Kernels k = base;
    k.isa = isa;
    bool seen[kTypeCount] = {};
    for (const TypeOverride& o : types) {
        TypeKernels& to = k.types[override_slot(isa, o.type, seen)];
        if ((o.kernels.vec_dot == nullptr) != (o.kernels.gemm_tile == nullptr)) {
            bad_override(isa, o.type,
                         "vec_dot and gemm_tile go together (a tile gives its vec_dot's bits)");
        }
        replace(to.vec_dot, o.kernels.vec_dot);
        replace(to.from_float, o.kernels.from_float);
        replace(to.gemm_tile, o.kernels.gemm_tile);
        replace(to.grid_block, o.kernels.grid_block);
    }
    bool seen_packed[kTypeCount] = {};
    for (const PackedOverride& o : packed) {
        PackedKernels& to = k.packed[override_slot(isa, o.type, seen_packed)];
        if (!packable(o.type)) {
            bad_override(isa, o.type,
                         "packed kernels for a type with no packed layout (packed.cpp)");
        }
        if (o.kernels.gemv2 && !o.kernels.gemm) {
            bad_override(isa, o.type, "a gemv2 without its gemm (it gives gemm's bits)");
        }
        replace(to.quantize, o.kernels.quantize);
        replace(to.to_grid, o.kernels.to_grid);
        // A new gemm takes its own gemv2, or none: the base's pairs another kernel's bits.
        if (o.kernels.gemm) {
            to.gemm = o.kernels.gemm;
            to.gemv2 = o.kernels.gemv2;
        }
    }
    return k;
}

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
const Kernels* kernels_avx2_vnni() {
    return nullptr;
}
const Kernels* kernels_avx512() {
    return nullptr;
}
const Kernels* kernels_avx512_bf16() {
    return nullptr;
}
const Kernels* kernels_amx() {
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
        case Isa::Avx2Vnni:
            return kernels_avx2_vnni();
        case Isa::Avx512:
            return kernels_avx512();
        case Isa::Avx512Bf16:
            return kernels_avx512_bf16();
        case Isa::Amx:
            return kernels_amx();
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
