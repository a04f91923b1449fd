// CPU feature detection and the choice of kernel path.
#include "cpu.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ggml_lite {
namespace {

struct Features {
    bool avx2 = false, fma = false, f16c = false, avxvnni = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
    bool avx512vnni = false, avx512bf16 = false;
    bool amx_tile = false, amx_int8 = false;
    bool asimd = false, asimddp = false;
    char vendor[13] = {};  // CPUID's vendor string, e.g. "AuthenticAMD"
    unsigned family = 0;   // base family plus extended family, as the vendors count
};

#if defined(__x86_64__) || defined(__i386__)

// XCR0: which register state the OS saves on a context switch. A CPU may have AVX-512 while
// the OS (or a hypervisor) does not enable it; then its instructions fault.
uint64_t xgetbv0() {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Whether this process may use the AMX tile registers. Linux keeps their 8 KiB of state off
// until a process asks for it (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, feature 18); the
// permission then holds for every thread of the process, and without it the first tile
// instruction is a fatal signal.
bool amx_permitted() {
#if defined(__linux__)
    constexpr int kArchReqXcompPerm = 0x1023;
    constexpr int kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
}

Features detect() {
    Features f;
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        __builtin_memcpy(f.vendor, &b, 4);
        __builtin_memcpy(f.vendor + 4, &d, 4);
        __builtin_memcpy(f.vendor + 8, &c, 4);
    }
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const unsigned base_family = (a >> 8) & 0xf;
    f.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
    const bool osxsave = c & (1u << 27);
    const bool avx = c & (1u << 28);
    const bool fma = c & (1u << 12);
    const bool f16c = c & (1u << 29);
    if (!osxsave || !avx) return f;

    const uint64_t xcr0 = xgetbv0();
    const bool os_avx = (xcr0 & 0x6) == 0x6;          // XMM and YMM state
    const bool os_avx512 = (xcr0 & 0xe6) == 0xe6;     // plus opmask, ZMM_Hi256, Hi16_ZMM
    const bool os_amx = (xcr0 & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA
    if (!os_avx) return f;

    f.fma = fma;
    f.f16c = f16c;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = b & (1u << 5);
        if (os_avx512) {
            f.avx512f = b & (1u << 16);
            f.avx512dq = b & (1u << 17);
            f.avx512bw = b & (1u << 30);
            f.avx512vl = b & (1u << 31);
            f.avx512vnni = c & (1u << 11);
        }
        if (os_amx && (d & (1u << 24)) && amx_permitted()) {
            f.amx_tile = true;
            f.amx_int8 = d & (1u << 25);
        }
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
        f.avxvnni = a & (1u << 4);  // VEX-encoded: needs only the YMM state
        f.avx512bf16 = os_avx512 && (a & (1u << 5));
    }
    return f;
}

#elif defined(__aarch64__)

Features detect() {
    Features f;
    f.asimd = true;  // Advanced SIMD is mandatory on AArch64
#if defined(__linux__)
    f.asimddp = getauxval(AT_HWCAP) & HWCAP_ASIMDDP;
#endif
    return f;
}

#else

Features detect() {
    return {};
}

#endif

const Features& features() {
    static const Features f = detect();
    return f;
}

// Best first.
constexpr Isa kPreference[] = {Isa::Amx,      Isa::Avx512Bf16, Isa::Avx512, Isa::NeonDotprod,
                               Isa::Avx2Vnni, Isa::Avx2,       Isa::Neon,   Isa::Scalar};
constexpr Isa kAllIsas[] = {Isa::Scalar,      Isa::Avx2,       Isa::Avx512,   Isa::Neon,
                            Isa::NeonDotprod, Isa::Avx512Bf16, Isa::Avx2Vnni, Isa::Amx};

using Flag = bool Features::*;

// The features' names, as cpu_features() lists them.
constexpr std::pair<Flag, const char*> kFlagNames[] = {
    {&Features::avx2, "avx2"},
    {&Features::fma, "fma"},
    {&Features::f16c, "f16c"},
    {&Features::avxvnni, "avxvnni"},
    {&Features::avx512f, "avx512f"},
    {&Features::avx512bw, "avx512bw"},
    {&Features::avx512vl, "avx512vl"},
    {&Features::avx512dq, "avx512dq"},
    {&Features::avx512vnni, "avx512vnni"},
    {&Features::avx512bf16, "avx512bf16"},
    {&Features::amx_tile, "amx_tile"},
    {&Features::amx_int8, "amx_int8"},
    {&Features::asimd, "asimd"},
    {&Features::asimddp, "asimddp"},
};

const char* flag_name(Flag flag) {
    for (const auto& [f, name] : kFlagNames) {
        if (f == flag) return name;
    }
    return "?";
}

// What each ISA's translation units are compiled for (ggml-lite/CMakeLists.txt).
constexpr Flag kAvx2Needs[] = {&Features::avx2, &Features::fma, &Features::f16c};
constexpr Flag kAvx2VnniNeeds[] = {&Features::avx2, &Features::fma, &Features::f16c,
                                   &Features::avxvnni};
constexpr Flag kAvx512Needs[] = {&Features::avx2,     &Features::fma,       &Features::f16c,
                                 &Features::avx512f,  &Features::avx512bw,  &Features::avx512vl,
                                 &Features::avx512dq, &Features::avx512vnni};
constexpr Flag kAvx512Bf16Needs[] = {
    &Features::avx2,     &Features::fma,        &Features::f16c,
    &Features::avx512f,  &Features::avx512bw,   &Features::avx512vl,
    &Features::avx512dq, &Features::avx512vnni, &Features::avx512bf16};
constexpr Flag kAmxNeeds[] = {&Features::avx2,     &Features::fma,        &Features::f16c,
                              &Features::avx512f,  &Features::avx512bw,   &Features::avx512vl,
                              &Features::avx512dq, &Features::avx512vnni, &Features::avx512bf16,
                              &Features::amx_tile, &Features::amx_int8};
constexpr Flag kNeonNeeds[] = {&Features::asimd};
constexpr Flag kNeonDotprodNeeds[] = {&Features::asimd, &Features::asimddp};

std::span<const Flag> needs(Isa isa) {
    switch (isa) {
        case Isa::Scalar:
            return {};
        case Isa::Avx2:
            return kAvx2Needs;
        case Isa::Avx2Vnni:
            return kAvx2VnniNeeds;
        case Isa::Avx512:
            return kAvx512Needs;
        case Isa::Avx512Bf16:
            return kAvx512Bf16Needs;
        case Isa::Amx:
            return kAmxNeeds;
        case Isa::Neon:
            return kNeonNeeds;
        case Isa::NeonDotprod:
            return kNeonDotprodNeeds;
    }
    throw std::invalid_argument("ggml-lite: unknown ISA " + std::to_string(static_cast<int>(isa)));
}

}  // namespace

std::span<const Isa> all_isas() {
    return kAllIsas;
}

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar:
            return "scalar";
        case Isa::Avx2:
            return "avx2";
        case Isa::Avx2Vnni:
            return "avx2_vnni";
        case Isa::Avx512:
            return "avx512";
        case Isa::Avx512Bf16:
            return "avx512_bf16";
        case Isa::Amx:
            return "amx";
        case Isa::Neon:
            return "neon";
        case Isa::NeonDotprod:
            return "neon_dotprod";
    }
    return "unknown";
}

std::optional<Isa> isa_from_name(std::string_view name) {
    for (Isa isa : kPreference) {
        if (name == isa_name(isa)) return isa;
    }
    return std::nullopt;
}

bool isa_built(Isa isa) {
    switch (isa) {
        case Isa::Scalar:
            return true;
        case Isa::Avx2:
        case Isa::Avx2Vnni:
        case Isa::Avx512:
        case Isa::Avx512Bf16:
        case Isa::Amx:
#if defined(LILA_X86)
            return true;
#else
            return false;
#endif
        case Isa::Neon:
        case Isa::NeonDotprod:
#if defined(LILA_ARM)
            return true;
#else
            return false;
#endif
    }
    return false;
}

bool isa_supported(Isa isa) {
    const Features& f = features();
    return isa_built(isa) && std::ranges::all_of(needs(isa), [&f](Flag flag) { return f.*flag; });
}

PrefetchPolicy prefetch_policy(std::string_view vendor, unsigned family) {
    struct Row {
        std::string_view vendor;
        unsigned family;
        PrefetchPolicy policy;
    };
    static constexpr Row kMeasured[] = {
        {"AuthenticAMD", 0x19, {.avx512_decode = false, .decode_l1 = true, .avx2_block_l2 = false}},
        {"AuthenticAMD", 0x1a, {.avx512_decode = true, .decode_l1 = false, .avx2_block_l2 = true}},
    };
    for (const Row& row : kMeasured) {
        if (row.vendor == vendor && row.family == family) return row.policy;
    }
    return {};
}

PrefetchPolicy prefetch_policy() {
    static const PrefetchPolicy policy = prefetch_policy(features().vendor, features().family);
    return policy;
}

std::string isa_unsupported_reason(Isa isa) {
    if (!isa_built(isa)) return "not built into this binary";
    const Features& f = features();
    std::string missing;
    for (Flag flag : needs(isa)) {
        if (!(f.*flag)) missing += std::string(missing.empty() ? "no " : ", ") + flag_name(flag);
    }
    return missing;
}

Isa select_isa(const char* lila_isa) {
    if (lila_isa == nullptr || *lila_isa == '\0') {
        for (Isa isa : kPreference) {
            if (isa_supported(isa)) return isa;
        }
        return Isa::Scalar;
    }
    const std::optional<Isa> forced = isa_from_name(lila_isa);
    if (!forced) {
        throw std::runtime_error(
            std::string("LILA_ISA=") + lila_isa +
            ": unknown (scalar|avx2|avx2_vnni|avx512|avx512_bf16|amx|neon|neon_dotprod)");
    }
    if (!isa_supported(*forced)) {
        throw std::runtime_error(std::string("LILA_ISA=") + lila_isa +
                                 ": not supported by this CPU or not built into this binary "
                                 "(CPU: " +
                                 cpu_features() + ")");
    }
    return *forced;
}

Isa active_isa() {
    static const Isa isa = [] {
        try {
            return select_isa(std::getenv("LILA_ISA"));
        } catch (const std::exception& e) {
            // A forced path that silently fell back would make benchmarks lie.
            std::fprintf(stderr, "lila: %s\n", e.what());
            std::exit(2);
        }
    }();
    return isa;
}

std::string cpu_features() {
    const Features& f = features();
    std::string s;
    for (const auto& [flag, name] : kFlagNames) {
        if (!(f.*flag)) continue;
        if (!s.empty()) s += ' ';
        s += name;
    }
    return s.empty() ? "none" : s;
}

}  // namespace ggml_lite
