// Kernel micro-benchmarks (Google Benchmark).
//
//   matvec/<type>/<rows>x<cols>/<isa>/threads:N   one token through a weight matrix (decode),
//       weights streamed from memory: the benchmark cycles through copies of the matrix that
//       together are several times the last-level cache, as a model's layers are. Reported
//       bytes are the weight bytes read, so bytes_per_second is the weight streaming rate.
//   incache/...   the same product on a 512x2048 matrix that stays in L2: kernel throughput.
//   matmul/<type>/<rows>x<cols>x<tokens>/<isa>/threads:N   prefill, as weight bytes/s and
//       multiply-adds/s (counter "MAC/s"); the float weight types (f32, f16, bf16) too.
//   tile/<type>/16x2048x16/<isa>-packed   one call of the packed prefill kernel (one group of
//       rows, kPackTokens tokens), everything in cache: the tile's own rate, nothing of matmul
//       around it. With --benchmark_repetitions, read the "_max" line (docs/DEVELOPING.md).
//       tile/<type>/16x2048x1/...: the same for one token, the decode kernel's own rate.
//   bandwidth/read/threads:N   a read-only sum over 1 GiB: what the memory delivers.
//   peak/<isa>/<sequence>/threads:N   an instruction sequence the kernels are built from, alone
//       at full parallelism (peaks.h), as MAC/s: the compute ceiling of the kernels made of it.
//   <isa>-packed: the same products on weights in the packed layout (packed.h) that lila
//       uses where the ISA has packed kernels.
//
// `make bench-kernels` runs everything; docs/kernels.md has the command behind its figures.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ggml-lite/bandwidth.h"
#include "ggml-lite/kernels.h"
#include "ggml-lite/ops.h"
#include "ggml-lite/packed.h"
#include "ggml-lite/type.h"
#include "peaks.h"

namespace {

using namespace ggml_lite;

constexpr size_t kGiB = size_t{1} << 30;
// Several times any last-level cache this runs on (the test machine's is 260 MiB).
constexpr size_t kStreamBytes = kGiB;

struct Shape {
    int64_t rows, cols;
};
constexpr Shape kShapes[] = {{2048, 2048}, {5632, 2048}};
constexpr Shape kL2Shape = {512, 2048};          // 0.3-0.6 MB: stays in a core's L2
constexpr Shape kTileShape = {kPackRows, 2048};  // one group: the tile benchmarks
constexpr int kThreads[] = {1, 2};

std::vector<float> random_floats(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = dist(rng);
    return v;
}

// `copies` back-to-back copies of one random matrix, quantized with the reference codec.
// Only the most recently requested pool is kept, so memory stays at about kStreamBytes.
struct Pool {
    Type type;
    Shape shape;
    bool packed;
    size_t copies;
    size_t matrix_bytes;
    std::unique_ptr<uint8_t[]> data;

    const void* matrix(size_t i) const { return data.get() + (i % copies) * matrix_bytes; }
};

const Pool& pool(Type type, Shape shape, bool stream, bool packed) {
    static std::unique_ptr<Pool> cached;
    const size_t bytes = row_size(type, shape.cols) * static_cast<size_t>(shape.rows);
    const size_t copies = stream ? (kStreamBytes + bytes - 1) / bytes : 1;
    if (cached && cached->type == type && cached->shape.rows == shape.rows &&
        cached->shape.cols == shape.cols && cached->copies == copies && cached->packed == packed) {
        return *cached;
    }
    cached.reset();
    auto p = std::make_unique<Pool>(Pool{type, shape, packed, copies, bytes, nullptr});
    p->data.reset(new uint8_t[bytes * copies]);  // no zero fill: every byte is written below
    if (traits(type).from_float) {
        const std::vector<float> f = random_floats(shape.rows * shape.cols, 1);
        traits(type).from_float(f.data(), p->data.get(), shape.rows * shape.cols);
    } else {  // a grid type, which lila cannot quantize: random blocks, every one valid
        std::mt19937 rng(1);
        for (size_t i = 0; i < bytes; i++) p->data[i] = static_cast<uint8_t>(rng() >> 24);
        const fp16_t d = 0x2000;  // the leading scale of every grid block: 2^-7
        for (size_t b = 0; b < bytes; b += traits(type).type_size)
            std::memcpy(&p->data[b], &d, sizeof d);
    }
    if (packed) {  // the benchmark shapes are whole groups of rows: the same size
        const std::vector<uint8_t> rows(p->data.get(), p->data.get() + bytes);
        pack_groups(type, rows.data(), shape.rows, shape.cols, p->data.get(), 0,
                    shape.rows / kPackRows);
    }
    for (size_t c = 1; c < copies; c++)
        std::memcpy(p->data.get() + c * bytes, p->data.get(), bytes);
    cached = std::move(p);
    return *cached;
}

void run_matmul(benchmark::State& state, Isa isa, Type type, Shape shape, int64_t tokens,
                int threads, bool stream, bool packed) {
    const Kernels* k = kernels_for(isa);
    if (!k) {
        state.SkipWithError("ISA not supported on this machine");
        return;
    }
    const Pool& p = pool(type, shape, stream, packed);
    const std::vector<float> x = random_floats(tokens * shape.cols, 2);
    std::vector<float> y(static_cast<size_t>(tokens * shape.rows));
    Context ctx;
    ctx.n_threads = threads;
    ctx.k = k;
    size_t i = 0;
    for (auto _ : state) {
        const void* w = p.matrix(i++);
        const Matrix W = packed ? Matrix{type, shape.rows, shape.cols, nullptr, w}
                                : Matrix{type, shape.rows, shape.cols, w};
        matmul(ctx, W, x.data(), tokens, y.data());
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    const auto iters = static_cast<int64_t>(state.iterations());
    state.SetBytesProcessed(iters * static_cast<int64_t>(p.matrix_bytes));
    state.counters["MAC/s"] = benchmark::Counter(
        static_cast<double>(iters) * static_cast<double>(shape.rows * shape.cols * tokens),
        benchmark::Counter::kIsRate);
}

// The packed kernel of `isa` on one group of kPackRows rows against `tokens` tokens (1 or
// kPackTokens), called directly with the activations already in its format: the tile's rate,
// in cache.
void run_tile(benchmark::State& state, Isa isa, Type type, int tokens) {
    const Kernels* k = kernels_for(isa);
    if (!k) {
        state.SkipWithError("ISA not supported on this machine");
        return;
    }
    const PackedKernels& pk = k->packed_of(type);
    const void* w = pool(type, kTileShape, false, true).matrix(0);
    const std::vector<float> x = random_floats(tokens * kTileShape.cols, 2);
    const size_t row = pk.quantize ? packed_activation_size(type, kTileShape.cols)
                                   : kTileShape.cols * sizeof(float);
    std::vector<uint8_t> xa(row * tokens);
    for (int t = 0; t < tokens; t++) {
        if (pk.quantize) {
            pk.quantize(x.data() + t * kTileShape.cols, xa.data() + t * row, kTileShape.cols);
        } else {
            std::memcpy(xa.data() + t * row, x.data() + t * kTileShape.cols, row);
        }
    }
    std::vector<float> y(tokens * kPackRows);
    for (auto _ : state) {
        pk.gemm(kTileShape.cols, w, xa.data(), row, y.data(), kPackRows, kPackRows, tokens);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    state.counters["MAC/s"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * kPackRows * kTileShape.cols * tokens,
        benchmark::Counter::kIsRate);
}

// A read-only pass over 1 GiB split among the threads (bandwidth.h: read_pass, what lila
// bench measures its roofline with): the rate a streaming kernel can hope for.
void bandwidth_read(benchmark::State& state, int threads) {
    const size_t n = kGiB / sizeof(uint64_t);
    static std::unique_ptr<uint64_t[]> buf;
    if (!buf) {
        buf.reset(new uint64_t[n]);
        for (size_t i = 0; i < n; i++) buf[i] = i;  // touch every page
    }
    for (auto _ : state) benchmark::DoNotOptimize(read_pass(buf.get(), kGiB, threads));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kGiB));
}

// One call of the sequence per iteration on each thread (Google Benchmark's threads run it at
// once and sum the counter).
void run_peak(benchmark::State& state, const lila_bench::Peak& peak) {
    if (!isa_supported(peak.isa)) {
        state.SkipWithError("ISA not supported on this machine");
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(peak.run());
    state.counters["MAC/s"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * static_cast<double>(peak.macs_per_call),
        benchmark::Counter::kIsRate);
}

// snprintf rather than std::string concatenation: GCC 12 at -O3 raises a false -Wrestrict
// on chains of string operator+.
std::string bench_name(const char* kind, Type type, Shape shape, int64_t tokens, Isa isa,
                       bool packed, int threads) {
    char buf[128];
    const char* layout = packed ? "-packed" : "";
    if (tokens > 1) {
        std::snprintf(buf, sizeof buf, "%s/%s/%lldx%lldx%lld/%s%s/threads:%d", kind,
                      type_name(type), static_cast<long long>(shape.rows),
                      static_cast<long long>(shape.cols), static_cast<long long>(tokens),
                      isa_name(isa), layout, threads);
    } else {
        std::snprintf(buf, sizeof buf, "%s/%s/%lldx%lld/%s%s/threads:%d", kind, type_name(type),
                      static_cast<long long>(shape.rows), static_cast<long long>(shape.cols),
                      isa_name(isa), layout, threads);
    }
    return buf;
}

// With --benchmark_repetitions, the "_max" line's rates are the best repetition's: on a
// machine shared with other work, the rate the hardware delivers when it gets to run. (Its
// times are the slowest; read the rates.)
double max_of(const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
}

void register_all() {
    for (int threads : kThreads) {
        char name[64];
        std::snprintf(name, sizeof name, "bandwidth/read/threads:%d", threads);
        benchmark::RegisterBenchmark(name, bandwidth_read, threads)
            ->UseRealTime()
            ->ComputeStatistics("max", max_of)
            ->Unit(benchmark::kMillisecond);
    }
    for (const lila_bench::Peak& peak : lila_bench::peaks()) {
        char name[64];
        std::snprintf(name, sizeof name, "peak/%s/%s", isa_name(peak.isa), peak.name);
        benchmark::RegisterBenchmark(name, run_peak, peak)
            ->Threads(1)
            ->Threads(2)
            ->UseRealTime()
            ->ComputeStatistics("max", max_of)
            ->Unit(benchmark::kMicrosecond);
    }
    struct Kind {
        const char* name;
        int64_t tokens;
        bool stream;
        std::vector<Shape> shapes;
        bool float_weights;
    };
    const Kind kinds[] = {
        {"matvec", 1, true, {std::begin(kShapes), std::end(kShapes)}, true},
        {"incache", 1, false, {kL2Shape}, false},
        {"matmul", 64, false, {kShapes[0]}, true},
    };
    for (const Kind& kind : kinds) {
        for (Type type : all_types()) {
            // The weight types: the quantized ones everywhere, the float ones in decode and
            // prefill (in L2 they are only a load per FMA, nothing to measure).
            const TypeTraits& t = traits(type);
            if (!t.tensor || (!t.quantized && !kind.float_weights)) continue;
            for (Shape shape : kind.shapes) {
                for (Isa isa : all_isas()) {
                    const Kernels* k = kernels_for(isa);
                    if (!k) continue;  // other architectures' paths
                    for (bool packed : {false, true}) {
                        if (packed && !k->packed_of(type).gemm) continue;
                        for (int threads : kThreads) {
                            const std::string name = bench_name(kind.name, type, shape, kind.tokens,
                                                                isa, packed, threads);
                            benchmark::RegisterBenchmark(name.c_str(), run_matmul, isa, type, shape,
                                                         kind.tokens, threads, kind.stream, packed)
                                ->UseRealTime()
                                ->ComputeStatistics("max", max_of)
                                ->Unit(benchmark::kMicrosecond);
                        }
                    }
                }
            }
        }
    }
    // The tiles: the types whose prefill runs the packed kernel (the grid types' runs their
    // decoded levels, Kernels::grid_gemm).
    for (Type type : all_types()) {
        const TypeTraits& t = traits(type);
        if (!t.tensor || t.grid_block) continue;
        for (Isa isa : all_isas()) {
            const Kernels* k = kernels_for(isa);
            if (!k || !k->packed_of(type).gemm) continue;
            for (int tokens : {kPackTokens, 1}) {
                char name[96];
                std::snprintf(name, sizeof name, "tile/%s/%lldx%lldx%d/%s-packed", type_name(type),
                              static_cast<long long>(kTileShape.rows),
                              static_cast<long long>(kTileShape.cols), tokens, isa_name(isa));
                benchmark::RegisterBenchmark(name, run_tile, isa, type, tokens)
                    ->ComputeStatistics("max", max_of)
                    ->Unit(benchmark::kMicrosecond);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("lila_cpu_features", cpu_features());
    benchmark::AddCustomContext("lila_active_isa", isa_name(active_isa()));
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
