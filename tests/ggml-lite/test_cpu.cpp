// ISA names, LILA_ISA parsing, and which table is active.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "ggml-lite/cpu.h"
#include "ggml-lite/kernels.h"

namespace ggml_lite {
namespace {

TEST(Cpu, NamesRoundTrip) {
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::NeonDotprod}) {
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
    for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::NeonDotprod}) {
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
#if defined(__x86_64__)
    EXPECT_FALSE(isa_supported(Isa::Neon));
    // A 64-bit x86 CPU of the last decade has AVX2; the test machines do.
    if (cpu_features().find("avx2") != std::string::npos) {
        EXPECT_TRUE(isa_supported(Isa::Avx2));
    }
#elif defined(__aarch64__)
    EXPECT_TRUE(isa_supported(Isa::Neon));  // Advanced SIMD is part of AArch64
    EXPECT_FALSE(isa_supported(Isa::Avx2));
#endif
}

// CI sets LILA_EXPECT_ISA (e.g. under qemu with and without dotprod) to prove the tests ran the
// path it meant; without it this only prints what was detected.
TEST(Cpu, ActiveIsaIsTheExpectedOne) {
    const Isa active = active_isa();
    std::printf("active ISA: %s; CPU features: %s\n", isa_name(active), cpu_features().c_str());
    EXPECT_EQ(kernels().isa, active);
    if (const char* expect = std::getenv("LILA_EXPECT_ISA")) {
        EXPECT_STREQ(isa_name(active), expect);
    }
}

}  // namespace
}  // namespace ggml_lite
