// How the kernel tables are built (kernels.h: with_overrides): every ISA's table is the scalar
// one with that ISA's overrides, so a type with only scalar kernels runs on every ISA, and a
// malformed override is an error, not another type's kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-lite/kernels.h"
#include "ggml-lite/ops.h"
#include "ggml-lite/packed.h"
#include "helpers.h"

namespace ggml_lite {
namespace {

const Kernels& ref() {
    return kernels_scalar();
}

// Every table this CPU runs covers every kernel the scalar table has, for every row of the type
// table: nothing is left null that matmul, pack_weights or the activation converters would call.
TEST(Tables, EveryTableCoversTheScalarTable) {
    for (const Kernels* k : test::all_tables()) {
        for (const TypeTraits& row : type_table()) {
            const TypeKernels &s = ref().of(row.type), &o = k->of(row.type);
            const PackedKernels &sp = ref().packed_of(row.type), &op = k->packed_of(row.type);
            const std::string what = std::string(isa_name(k->isa)) + ' ' + row.name;
            EXPECT_TRUE(!s.vec_dot || o.vec_dot) << what;
            EXPECT_TRUE(!s.from_float || o.from_float) << what;
            EXPECT_TRUE(!s.gemm_tile || o.gemm_tile) << what;
            EXPECT_TRUE(!sp.quantize || op.quantize) << what;
            EXPECT_TRUE(!sp.gemm || op.gemm) << what;
            // A table's own tiles beside the scalar packed kernel would make matmul run the slow
            // one on packed weights: an ISA with a type's tiles must pack it too.
            if (k != &ref() && o.gemm_tile != s.gemm_tile && packable(row.type)) {
                EXPECT_NE(op.gemm, sp.gemm) << what << ": own tiles, scalar packed kernel";
            }
        }
    }
}

// The table an ISA would have without its kernels for type x: built with the builder its
// translation unit uses, from every entry of its real table but x's. x's entries are the scalar
// ones, kernel_path says so, and matmul through the table gives the scalar table's bits, on
// packed weights and on the original rows.
TEST(Tables, TypeWithOnlyScalarKernelsRunsOnEveryIsa) {
    for (const Kernels* k : test::simd_tables()) {
        for (Type x : all_types()) {
            std::vector<TypeOverride> types;
            std::vector<PackedOverride> packed;
            for (const TypeTraits& row : type_table()) {
                if (row.type == x) continue;
                types.push_back({row.type, k->of(row.type)});
                if (packable(row.type)) packed.push_back({row.type, k->packed_of(row.type)});
            }
            const Kernels t = with_overrides(ref(), k->isa, types, packed);
            const std::string what = std::string(isa_name(k->isa)) + " without " + type_name(x);
            EXPECT_EQ(t.isa, k->isa);
            EXPECT_EQ(std::memcmp(&t.of(x), &ref().of(x), sizeof(TypeKernels)), 0) << what;
            EXPECT_EQ(std::memcmp(&t.packed_of(x), &ref().packed_of(x), sizeof(PackedKernels)), 0)
                << what;
            for (const TypeTraits& row : type_table()) {
                if (row.type == x) continue;
                EXPECT_EQ(std::memcmp(&t.of(row.type), &k->of(row.type), sizeof(TypeKernels)), 0)
                    << what << ": " << row.name;
            }
            EXPECT_EQ(kernel_path(t, x), std::string("scalar reference (no ") + isa_name(k->isa) +
                                             " kernel for " + type_name(x) + ")");

            const int64_t rows = 21, cols = test::whole_blocks(x, 96), tokens = 5;
            const auto w = test::random_matrix(x, rows, cols, 91);
            const auto xs = test::random_floats(tokens * cols, 92);
            std::vector<uint8_t> p((rows + kPackRows - 1) / kPackRows * packed_group_size(x, cols));
            pack_groups(x, w.data(), rows, cols, p.data(), 0, (rows + kPackRows - 1) / kPackRows);
            Matrix plain{x, rows, cols, w.data()};
            Matrix on_packed = plain;
            on_packed.packed = p.data();
            for (const Matrix* m : {&plain, &on_packed}) {
                Context a, b;
                a.k = &t;
                b.k = &ref();
                std::vector<float> got(rows * tokens), want(rows * tokens);
                matmul(a, *m, xs.data(), tokens, got.data());
                matmul(b, *m, xs.data(), tokens, want.data());
                EXPECT_EQ(got, want) << what << (m->packed ? " packed" : "");
            }
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
    EXPECT_EQ(rejection({{static_cast<Type>(13), q8}}, {}),
              "kernel table avx2: an override for type id 13, which is not in the type table");
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
}

}  // namespace
}  // namespace ggml_lite
