// The kernel tables: which this run can test, and how they are built (kernels.h:
// with_overrides): every ISA's table is the scalar one with that ISA's overrides, so a type with
// only scalar kernels runs on every ISA, and a malformed override is an error, not another
// type's kernel.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-lite/kernels.h"
#include "ggml-lite/ops.h"
#include "ggml-lite/packed.h"
#include "helpers.h"

namespace ggml_lite {

// How GoogleTest prints a test's ISA, in its name and in ctest's.
void PrintTo(Isa isa, std::ostream* os) {
    *os << isa_name(isa);
}

namespace {

const Kernels& ref() {
    return kernels_scalar();
}

// Which ISA tables this run tests and which it cannot, said once at the start: the kernel
// tests loop over the tables this CPU runs (helpers.h), and one it cannot run would otherwise
// go untested without a word.
class IsaReport : public testing::Environment {
public:
    void SetUp() override {
        std::string tested, untested;
        for (Isa isa : test::built_isas()) {
            if (isa_supported(isa)) {
                tested += std::string(" ") + isa_name(isa);
            } else {
                untested +=
                    std::string(" ") + isa_name(isa) + " (" + isa_unsupported_reason(isa) + ")";
            }
        }
        std::printf("ISA tables tested:%s; not testable on this CPU:%s\n", tested.c_str(),
                    untested.empty() ? " none" : untested.c_str());
    }
};
testing::Environment* const kIsaReport = testing::AddGlobalTestEnvironment(new IsaReport);

// A test of one ISA's table, for every ISA this binary has one for: skipped, with the reason,
// where this CPU cannot run it.
class IsaTable : public testing::TestWithParam<Isa> {
protected:
    void SetUp() override {
        if (!isa_supported(GetParam())) {
            GTEST_SKIP() << "the " << isa_name(GetParam()) << " table is not testable on this CPU: "
                         << isa_unsupported_reason(GetParam());
        }
        k_ = kernels_for(GetParam());
        ASSERT_NE(k_, nullptr);
        ASSERT_EQ(k_->isa, GetParam());
    }
    const Kernels* k_ = nullptr;
};
using SimdTable = IsaTable;

std::string param_name(const testing::TestParamInfo<Isa>& info) {
    return isa_name(info.param);
}

std::vector<Isa> built_simd_isas() {
    std::vector<Isa> out = test::built_isas();
    std::erase(out, Isa::Scalar);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Built, IsaTable, testing::ValuesIn(test::built_isas()), param_name);
INSTANTIATE_TEST_SUITE_P(Built, SimdTable, testing::ValuesIn(built_simd_isas()), param_name);

// The table covers every kernel the scalar one has, for every row of the type table: nothing is
// left null that matmul, pack_weights or the activation converters would call.
TEST_P(IsaTable, CoversTheScalarTable) {
    for (const TypeTraits& row : type_table()) {
        const TypeKernels &s = ref().of(row.type), &o = k_->of(row.type);
        const PackedKernels &sp = ref().packed_of(row.type), &op = k_->packed_of(row.type);
        EXPECT_TRUE(!s.vec_dot || o.vec_dot) << row.name;
        EXPECT_TRUE(!s.from_float || o.from_float) << row.name;
        EXPECT_TRUE(!s.gemm_tile || o.gemm_tile) << row.name;
        // A table may keep a type on its rows (no packed kernels, tiles of its own), as NEON
        // keeps the grid types: pack_weights then leaves those matrices unpacked.
        const bool on_rows = !op.quantize && !op.gemm && o.gemm_tile != s.gemm_tile;
        EXPECT_TRUE(!sp.quantize || op.quantize || on_rows) << row.name;
        EXPECT_TRUE(!sp.gemm || op.gemm || on_rows) << row.name;
        // Its own tiles beside the scalar packed kernel would make matmul run the slow one on
        // packed weights: an ISA with a type's tiles must have its packed kernel too.
        if (k_ != &ref() && o.gemm_tile != s.gemm_tile && sp.gemm) {
            EXPECT_NE(op.gemm, sp.gemm) << row.name << ": own tiles, scalar packed kernel";
        }
        // Nor may its own packed kernel wait on the scalar activation quantizer, nor its own
        // dot products on the rows (F32 activations are the floats as they are).
        if (k_ != &ref() && op.gemm && op.gemm != sp.gemm && sp.quantize) {
            EXPECT_NE(op.quantize, sp.quantize) << row.name << ": scalar activation quantizer";
        }
        const Type act = row.vec_dot_type;
        if (k_ != &ref() && o.vec_dot != s.vec_dot && act != row.type && act != Type::F32) {
            EXPECT_NE(k_->of(act).from_float, ref().of(act).from_float)
                << row.name << ": scalar " << type_name(act) << " quantizer";
        }
    }
}

// The table the ISA would have without its kernels for type x: built with the builder its
// translation unit uses, from every entry of its real table but x's. x's entries are the scalar
// ones, kernel_path says so, and matmul through the table gives the scalar table's bits, on
// packed weights and on the original rows.
TEST_P(SimdTable, TypeWithOnlyScalarKernelsRuns) {
    for (Type x : all_types()) {
        std::vector<TypeOverride> types;
        std::vector<PackedOverride> packed;
        for (const TypeTraits& row : type_table()) {
            if (row.type == x) continue;
            types.push_back({row.type, k_->of(row.type)});
            if (packable(row.type)) packed.push_back({row.type, k_->packed_of(row.type)});
        }
        const Kernels t = with_overrides(ref(), k_->isa, types, packed);
        const std::string what = std::string("without ") + type_name(x);
        EXPECT_EQ(t.isa, k_->isa);
        EXPECT_EQ(std::memcmp(&t.of(x), &ref().of(x), sizeof(TypeKernels)), 0) << what;
        EXPECT_EQ(std::memcmp(&t.packed_of(x), &ref().packed_of(x), sizeof(PackedKernels)), 0)
            << what;
        for (const TypeTraits& row : type_table()) {
            if (row.type == x) continue;
            EXPECT_EQ(std::memcmp(&t.of(row.type), &k_->of(row.type), sizeof(TypeKernels)), 0)
                << what << ": " << row.name;
        }
        EXPECT_EQ(kernel_path(t, x), std::string("scalar reference (no ") + isa_name(k_->isa) +
                                         " kernel for " + type_name(x) + ")");

        const int64_t rows = 21, cols = test::whole_blocks(x, 96), tokens = 5;
        const int64_t groups = (rows + kPackRows - 1) / kPackRows;
        const auto w = test::random_matrix(x, rows, cols, 91);
        const auto xs = test::random_floats(tokens * cols, 92);
        Matrix plain{x, rows, cols, w.data()};
        std::vector<const Matrix*> matrices = {&plain};
        // Types without a packed layout run unpacked in prefill too.
        std::vector<uint8_t> p;
        Matrix on_packed = plain;
        if (packable(x)) {
            p.resize(groups * packed_group_size(x, cols));
            pack_groups(x, w.data(), rows, cols, p.data(), 0, groups);
            on_packed.packed = p.data();
            matrices.push_back(&on_packed);
        }
        for (const Matrix* m : matrices) {
            Context a, b;
            a.k = &t;
            b.k = &ref();
            std::vector<float> got(rows * tokens), want(rows * tokens);
            matmul(a, *m, xs.data(), tokens, got.data());
            matmul(b, *m, xs.data(), tokens, want.data());
            EXPECT_EQ(got, want) << what << (m->packed ? ", packed" : "");
        }
    }
}

std::string rejection(const std::vector<TypeOverride>& types,
                      const std::vector<PackedOverride>& packed) {
    try {
        with_overrides(ref(), Isa::Avx2, types, packed);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

// An override's members replace the base table's one by one; what it leaves null is kept.
TEST(Tables, OverridesReplaceTheMembersTheySet) {
    const TypeKernels& q8 = ref().of(Type::Q8_0);
    const TypeKernels& q4 = ref().of(Type::Q4_0);
    const PackedKernels& p4 = ref().packed_of(Type::Q4_0);
    const TypeOverride types[] = {{Type::Q4_0, {q8.vec_dot, nullptr, q8.gemm_tile}}};
    const PackedOverride packed[] = {{Type::Q4_0, {q8.from_float, nullptr}}};
    const Kernels t = with_overrides(ref(), Isa::Neon, types, packed);
    EXPECT_EQ(t.isa, Isa::Neon);
    EXPECT_EQ(t.of(Type::Q4_0).vec_dot, q8.vec_dot);
    EXPECT_EQ(t.of(Type::Q4_0).gemm_tile, q8.gemm_tile);
    EXPECT_EQ(t.of(Type::Q4_0).from_float, q4.from_float);
    EXPECT_EQ(t.packed_of(Type::Q4_0).quantize, q8.from_float);
    EXPECT_EQ(t.packed_of(Type::Q4_0).gemm, p4.gemm);
    EXPECT_EQ(t.of(Type::Q6_K).vec_dot, ref().of(Type::Q6_K).vec_dot);
    EXPECT_EQ(t.rmsnorm, ref().rmsnorm);
}

// An override for a value that is not a type, two for one type, tiles apart from their vec_dot,
// packed kernels for a type without a packed layout: each is an error that names the table.
TEST(Tables, BuilderRejectsBadOverrides) {
    const TypeKernels q8 = ref().of(Type::Q8_0);
    const PackedKernels p8 = ref().packed_of(Type::Q8_0);
    EXPECT_EQ(rejection({{Type::Q8_0, q8}}, {{Type::Q8_0, p8}}), "accepted");
    EXPECT_EQ(rejection({{static_cast<Type>(34), q8}}, {}),
              "kernel table avx2: an override for type id 34, which is not in the type table");
    EXPECT_EQ(rejection({}, {{static_cast<Type>(99), p8}}),
              "kernel table avx2: an override for type id 99, which is not in the type table");
    EXPECT_EQ(rejection({{Type::Q8_0, q8}, {Type::Q4_0, q8}, {Type::Q8_0, q8}}, {}),
              "kernel table avx2: two overrides for q8_0");
    EXPECT_EQ(rejection({}, {{Type::Q8_0, p8}, {Type::Q8_0, p8}}),
              "kernel table avx2: two overrides for q8_0");
    EXPECT_EQ(rejection({{Type::Q8_0, {q8.vec_dot, nullptr, nullptr}}}, {}),
              "kernel table avx2: q8_0: vec_dot and gemm_tile go together (a tile gives its "
              "vec_dot's bits)");
    EXPECT_EQ(rejection({{Type::Q8_0, {nullptr, nullptr, q8.gemm_tile}}}, {}),
              "kernel table avx2: q8_0: vec_dot and gemm_tile go together (a tile gives its "
              "vec_dot's bits)");
    EXPECT_EQ(rejection({}, {{Type::Q8_K, p8}}),
              "kernel table avx2: q8_k: packed kernels for a type with no packed layout "
              "(packed.cpp)");
    const auto gemv2 = [](int64_t, const void*, const void*, const void*, float*, float*, int,
                          int) {};
    EXPECT_EQ(rejection({}, {{Type::Q8_0, {p8.quantize, nullptr, gemv2}}}),
              "kernel table avx2: q8_0: a gemv2 without its gemm (it gives gemm's bits)");
}

// A gemm override brings its own gemv2 or none: the base's gemv2 gives the base gemm's bits.
TEST(Tables, GemmOverrideReplacesTheGemv2) {
    const auto gemv2 = [](int64_t, const void*, const void*, const void*, float*, float*, int,
                          int) {};
    const PackedKernels p8 = ref().packed_of(Type::Q8_0);
    const PackedOverride with[] = {{Type::Q8_0, {nullptr, p8.gemm, gemv2}}};
    const Kernels base = with_overrides(ref(), Isa::Avx2, {}, with);
    EXPECT_EQ(base.packed_of(Type::Q8_0).gemv2, +gemv2);
    const PackedOverride quantize_only[] = {{Type::Q8_0, {p8.quantize, nullptr}}};
    EXPECT_EQ(with_overrides(base, Isa::Avx2, {}, quantize_only).packed_of(Type::Q8_0).gemv2,
              +gemv2);
    const PackedOverride gemm_only[] = {{Type::Q8_0, {nullptr, p8.gemm}}};
    EXPECT_EQ(with_overrides(base, Isa::Avx2, {}, gemm_only).packed_of(Type::Q8_0).gemv2, nullptr);
}

}  // namespace
}  // namespace ggml_lite
