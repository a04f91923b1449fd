// ISA names, LILA_ISA parsing, and which table is active.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "ggml-lite/cpu.h"
#include "ggml-lite/kernels.h"

namespace ggml_lite {
namespace {

TEST(Cpu, NamesRoundTrip) {
    for (Isa isa : all_isas()) {
        EXPECT_EQ(isa_from_name(isa_name(isa)), isa);
    }
    EXPECT_FALSE(isa_from_name("AVX2").has_value());  // the env value is matched exactly
    EXPECT_FALSE(isa_from_name("sse").has_value());
    EXPECT_FALSE(isa_from_name("").has_value());
}

TEST(Cpu, SelectIsa) {
    EXPECT_EQ(select_isa("scalar"), Isa::Scalar);
    EXPECT_THROW(select_isa("avx3"), std::runtime_error);
    EXPECT_NO_THROW(select_isa(nullptr));
    EXPECT_EQ(select_isa(nullptr), select_isa(""));
    EXPECT_TRUE(isa_supported(select_isa(nullptr)));
    for (Isa isa : all_isas()) {
        if (isa_supported(isa)) {
            EXPECT_EQ(select_isa(isa_name(isa)), isa);
            EXPECT_NE(kernels_for(isa), nullptr);
            EXPECT_EQ(kernels_for(isa)->isa, isa);
        } else {
            EXPECT_THROW(select_isa(isa_name(isa)), std::runtime_error) << isa_name(isa);
            EXPECT_EQ(kernels_for(isa), nullptr);
        }
    }
}

TEST(Cpu, ArchitectureHasItsPaths) {
    EXPECT_TRUE(isa_built(Isa::Scalar));
    EXPECT_TRUE(isa_supported(Isa::Scalar));
#if defined(__x86_64__)
    EXPECT_TRUE(isa_built(Isa::Avx2));
    EXPECT_TRUE(isa_built(Isa::Avx2Vnni));
    EXPECT_TRUE(isa_built(Isa::Avx512));
    EXPECT_FALSE(isa_built(Isa::Neon));
    EXPECT_FALSE(isa_supported(Isa::Neon));
    EXPECT_EQ(isa_unsupported_reason(Isa::Neon), "not built into this binary");
    // A 64-bit x86 CPU of the last decade has AVX2; the test machines do.
    if (cpu_features().find("avx2") != std::string::npos) {
        EXPECT_TRUE(isa_supported(Isa::Avx2));
    }
    if (cpu_features().find("avx512vnni") == std::string::npos) {
        EXPECT_NE(isa_unsupported_reason(Isa::Avx512).find("avx512vnni"), std::string::npos);
    }
    if (cpu_features().find("avxvnni") == std::string::npos) {
        EXPECT_NE(isa_unsupported_reason(Isa::Avx2Vnni).find("avxvnni"), std::string::npos);
    }
#elif defined(__aarch64__)
    EXPECT_TRUE(isa_built(Isa::Neon));
    EXPECT_TRUE(isa_built(Isa::NeonDotprod));
    EXPECT_TRUE(isa_supported(Isa::Neon));  // Advanced SIMD is part of AArch64
    EXPECT_FALSE(isa_supported(Isa::Avx2));
    EXPECT_EQ(isa_supported(Isa::NeonDotprod), cpu_features().find("asimddp") != std::string::npos);
#endif
    for (Isa isa : all_isas()) {
        EXPECT_EQ(isa_unsupported_reason(isa).empty(), isa_supported(isa)) << isa_name(isa);
        EXPECT_TRUE(isa_built(isa) || !isa_supported(isa)) << isa_name(isa);
    }
}

// Without LILA_ISA the best supported path runs: AMX before AVX-512 BF16 before AVX-512 before AVX2
// with VNNI before AVX2, NEON dotprod before NEON, scalar last; with it, the one it names.
// kernels_for() has a table exactly for the supported ISAs, each for its own ISA. CI also sets
// LILA_EXPECT_ISA (e.g. under qemu with and without dotprod) to prove the tests ran the path it
// meant.
TEST(Cpu, ActiveIsaIsTheExpectedOne) {
    const Isa active = active_isa();
    std::printf("active ISA: %s; CPU features: %s\n", isa_name(active), cpu_features().c_str());
    EXPECT_EQ(kernels().isa, active);
    const char* forced = std::getenv("LILA_ISA");
    if (forced && *forced) {
        EXPECT_EQ(isa_from_name(forced), active) << "LILA_ISA=" << forced;
    } else {
        const Isa best_first[] = {Isa::Amx,      Isa::Avx512Bf16, Isa::Avx512, Isa::NeonDotprod,
                                  Isa::Avx2Vnni, Isa::Avx2,       Isa::Neon,   Isa::Scalar};
        Isa best = Isa::Scalar;
        for (Isa isa : best_first) {
            if (isa_supported(isa)) {
                best = isa;
                break;
            }
        }
        EXPECT_EQ(active, best) << "the best supported ISA is " << isa_name(best);
    }
    for (Isa isa : all_isas()) {
        const Kernels* k = kernels_for(isa);
        EXPECT_EQ(k != nullptr, isa_supported(isa)) << isa_name(isa);
        if (k) {
            EXPECT_EQ(k->isa, isa);
        }
    }
    if (const char* expect = std::getenv("LILA_EXPECT_ISA")) {
        EXPECT_STREQ(isa_name(active), expect);
    }
}

// The measured exceptions to the prefetch defaults: on AMD family 19h (Zen 3, Zen 4) the AVX-512
// decode prefetch and the AVX2 block kernels' L2 lead are off, on AMD family 1Ah (Zen 5) decode's
// L1 lead; Intel, other AMD families and an unknown vendor keep all three.
TEST(Cpu, PrefetchPolicyDiffersOnlyOnAmdFamilies19hAnd1Ah) {
    const auto policy = [](std::string_view vendor, unsigned family) {
        const PrefetchPolicy p = prefetch_policy(vendor, family);
        return std::tuple{p.avx512_decode, p.decode_l1, p.avx2_block_l2};
    };
    EXPECT_EQ(policy("AuthenticAMD", 0x19), std::tuple(false, true, false));
    EXPECT_EQ(policy("AuthenticAMD", 0x1a), std::tuple(true, false, true));
    for (const auto& [vendor, family] :
         {std::pair<std::string_view, unsigned>{"AuthenticAMD", 0x17},
          {"GenuineIntel", 0x6},
          {"GenuineIntel", 0x19},
          {"GenuineIntel", 0x1a},
          {"", 0}}) {
        EXPECT_EQ(policy(vendor, family), std::tuple(true, true, true)) << vendor << " " << family;
    }
}

}  // namespace
}  // namespace ggml_lite
