// Matrix multiply, row lookup and RoPE angles on top of the kernel tables, on a team of
// threads (team.h).
#include "ops.h"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <new>
#include <stdexcept>

#include "cpu.h"
#include "packed.h"

namespace ggml_lite {
namespace {

// Multiply-adds below which a second thread costs more (waking it, the barrier) than it saves;
// measured with the reference model's small matrices (docs/PERF.md).
constexpr int64_t kWorkPerThread = int64_t{1} << 17;

// Bytes of converted activations a panel of tokens may take. For quantized weights a panel
// stays in L2 while every row group of the matrix visits it. A group's first pass over a panel
// reads its weights from memory, and a float kernel wants them faster than memory gives them
// (BF16 on vdpbf16ps: 16 bytes a cycle); the more passes a panel holds, the less that first one
// costs, so float weights take panels four times larger, read from L3. pp512 on the Zen 5,
// AVX-512 (docs/PERF.md, "What each optimisation bought"): BF16 +7-30%, F16 +0-11%; level on
// AVX2, whose float kernels do not outrun memory; the quantized types' larger panel was level to
// 15% slower (Q4_K_M).
constexpr size_t kPanelBytes = size_t{1} << 20;
constexpr size_t kFloatPanelBytes = size_t{1} << 22;

// How activations reach a kernel: converted by `convert` into rows of row_bytes in scratch
// (convert nullptr: the float rows are read in place).
struct ActFormat {
    void (*convert)(const float* x, void* y, int64_t n);
    size_t row_bytes;
    uint8_t* converted = nullptr;
    const uint8_t* rows = nullptr;  // what the kernels read
};

// One matrix of a matmul: its kernel, its activation format, its share of the work units
// (groups of kPackRows rows, or for one token where the kernel has a gemv2, pairs of groups:
// unit u is groups u and u + units, the two streams far apart, or group u alone past the last
// group).
struct Product {
    const Matrix* W;
    float* y;
    const PackedKernels* packed;  // nullptr: gemm_tile on W.data
    const TypeKernels* tile;
    int format;
    int64_t groups;
    int64_t units;
    bool pairs = false;
    // A grid type's prefill: Kernels::grid_gemm on each group decoded (run_grid), from the
    // packed group by to_grid where W is packed for this table.
    decltype(Kernels::grid_gemm) grid = nullptr;
    decltype(PackedKernels::to_grid) to_grid = nullptr;
};

constexpr int kMaxFormats = 4;
constexpr int kMaxProducts = 4;

// Group u of p and group v of p against the one token: one gemv2.
void run_pair(const Product& p, const ActFormat& f, int64_t u, int64_t v) {
    const Matrix& W = *p.W;
    const size_t group = packed_group_size(W.type, W.cols);
    const auto* w = static_cast<const uint8_t*>(W.packed);
    const auto rows = [&](int64_t g) {
        return static_cast<int>(std::min<int64_t>(kPackRows, W.rows - g * kPackRows));
    };
    p.packed->gemv2(W.cols, w + u * group, w + v * group, f.rows, p.y + u * kPackRows,
                    p.y + v * kPackRows, rows(u), rows(v));
}

// The tokens from which matmul runs a grid type through its decoded levels (Kernels::grid_gemm):
// below, decoding each group costs more than the tiles on the rows save, or the packed stripes'
// kernel (docs/kernels.md, "The grid types").
constexpr int64_t kGridRowsTokens = 8;
constexpr int64_t kGridStripesTokens = 4;

// Group u of a grid type (p.grid) against tokens [t0, t1): its rows decoded into this thread's
// buffer (which only grows), then the grid kernel. A packed matrix's group is decoded from its
// packed form (p.to_grid): the file's rows are let go once packed (model.cpp).
void run_grid(const Product& p, const ActFormat& f, int64_t u, int64_t t0, int64_t t1) {
    const Matrix& W = *p.W;
    const int64_t r_begin = u * kPackRows;
    const int nr = static_cast<int>(std::min<int64_t>(kPackRows, W.rows - r_begin));
    thread_local std::vector<uint8_t> group;
    group.resize(std::max(group.size(), grid_group_size(W.cols)));
    if (p.to_grid) {
        p.to_grid(W.cols,
                  static_cast<const uint8_t*>(W.packed) + u * packed_group_size(W.type, W.cols),
                  group.data());
    } else {
        pack_grid_group(W.type, p.tile->grid_block,
                        static_cast<const uint8_t*>(W.data) + r_begin * row_size(W.type, W.cols),
                        nr, W.cols, group.data());
    }
    for (int64_t t = t0; t < t1; t += kPackTokens) {
        const int nt = static_cast<int>(std::min<int64_t>(kPackTokens, t1 - t));
        p.grid(W.cols, group.data(), f.rows + t * f.row_bytes, f.row_bytes,
               p.y + t * W.rows + r_begin, W.rows, nr, nt);
    }
}

// Rows [u * kPackRows, ...) of p against tokens [t0, t1).
void run_unit(const Product& p, const ActFormat& f, int64_t u, int64_t t0, int64_t t1) {
    const Matrix& W = *p.W;
    const int64_t r_begin = u * kPackRows, r_end = std::min(W.rows, r_begin + kPackRows);
    if (p.grid) {
        run_grid(p, f, u, t0, t1);
        return;
    }
    if (p.packed) {
        const size_t group = packed_group_size(W.type, W.cols);
        const auto* w = static_cast<const uint8_t*>(W.packed) + u * group;
        const int nr = static_cast<int>(r_end - r_begin);
        for (int64_t t = t0; t < t1; t += kPackTokens) {
            const int nt = static_cast<int>(std::min<int64_t>(kPackTokens, t1 - t));
            p.packed->gemm(W.cols, w, f.rows + t * f.row_bytes, f.row_bytes,
                           p.y + t * W.rows + r_begin, W.rows, nr, nt);
        }
        return;
    }
    const size_t w_row = row_size(W.type, W.cols);
    const auto* w = static_cast<const uint8_t*>(W.data);
    for (int64_t r0 = r_begin; r0 < r_end; r0 += kTileRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kTileRows, r_end - r0));
        for (int64_t t = t0; t < t1; t += kTileTokens) {
            const int nt = static_cast<int>(std::min<int64_t>(kTileTokens, t1 - t));
            p.tile->gemm_tile(W.cols, w + r0 * w_row, w_row, f.rows + t * f.row_bytes, f.row_bytes,
                              p.y + t * W.rows + r0, W.rows, nr, nt);
        }
    }
}

}  // namespace

int threads_for_work(int64_t work, int n_threads) {
    return static_cast<int>(std::clamp<int64_t>(work / kWorkPerThread, 1, std::max(1, n_threads)));
}

void matmul(Context& ctx, const Matrix& W, const float* x, int64_t n_tokens, float* y) {
    matmul(ctx, x, n_tokens, {MatmulOut{&W, y}});
}

void matmul(Context& ctx, const float* x, int64_t n_tokens, std::initializer_list<MatmulOut> outs) {
    if (outs.size() == 0 || outs.size() > kMaxProducts) {
        throw std::invalid_argument("matmul: 1 to 4 matrices at a time");
    }
    const Kernels& k = ctx.kern();
    const int64_t cols = outs.begin()->W->cols;
    Product products[kMaxProducts];
    ActFormat formats[kMaxFormats];
    int n_products = 0, n_formats = 0;
    int64_t work = 0, total_units = 0;
    bool float_weights = false;
    for (const MatmulOut& o : outs) {
        const Matrix& W = *o.W;
        const TypeTraits& wt = traits(W.type);
        if (W.cols != cols) throw std::invalid_argument("matmul: matrices of different widths");
        if (W.cols % wt.block_size != 0) {
            throw std::invalid_argument("matmul: columns not a multiple of the block size");
        }
        Product& p = products[n_products++];
        const int64_t groups = (W.rows + kPackRows - 1) / kPackRows;
        p = {&W, o.y, nullptr, &k.of(W.type), 0, groups, groups};
        ActFormat f;
        const PackedKernels& pk = k.packed_of(W.type);
        // Grid types run prefill through their decoded levels, packed or not.
        const bool stripes = W.packed && pk.gemm;
        const bool grid =
            wt.grid_block && n_tokens >= (stripes ? kGridStripesTokens : kGridRowsTokens);
        if (stripes && !grid) {
            p.packed = &pk;
            f = {pk.quantize, packed_activation_size(W.type, cols)};
            p.pairs = n_tokens == 1 && pk.gemv2 && groups >= 2;
            if (p.pairs) p.units = (groups + 1) / 2;
        } else if (wt.vec_dot_type == Type::F32) {
            f = {nullptr, cols * sizeof(float)};
        } else {
            // The grid kernel reads the Q8_K rows the grid tiles read.
            if (grid) p.grid = k.grid_gemm;
            if (grid && stripes) p.to_grid = pk.to_grid;
            f = {k.of(wt.vec_dot_type).from_float, row_size(wt.vec_dot_type, cols)};
        }
        int i = 0;
        while (i < n_formats &&
               (formats[i].convert != f.convert || formats[i].row_bytes != f.row_bytes))
            i++;
        if (i == n_formats) formats[n_formats++] = f;
        p.format = i;
        work += W.rows * cols;
        total_units += p.units;
        float_weights = float_weights || !wt.quantized;
    }

    // Converted activations go to scratch, which only ever grows: steady-state decode
    // allocates nothing.
    size_t need = 0, max_row = 0;
    for (int i = 0; i < n_formats; i++) {
        if (formats[i].convert) need += formats[i].row_bytes * static_cast<size_t>(n_tokens);
        max_row = std::max(max_row, formats[i].row_bytes);
    }
    if (ctx.scratch.size() < need) ctx.scratch.resize(need);
    uint8_t* next = ctx.scratch.data();
    for (int i = 0; i < n_formats; i++) {
        if (!formats[i].convert) {
            formats[i].rows = reinterpret_cast<const uint8_t*>(x);
            continue;
        }
        formats[i].rows = formats[i].converted = next;
        next += formats[i].row_bytes * static_cast<size_t>(n_tokens);
    }

    // A grid group is decoded once per panel (run_grid): one panel for all.
    const bool decodes =
        std::any_of(products, products + n_products, [](const Product& p) { return p.grid; });
    const size_t panel_bytes = float_weights ? kFloatPanelBytes : kPanelBytes;
    const int64_t panel =
        decodes ? n_tokens
                : std::max<int64_t>(kPackTokens, static_cast<int64_t>(panel_bytes / max_row) /
                                                     kPackTokens * kPackTokens);
    const int n_threads = threads_for_work(work * n_tokens, ctx.n_threads);
    const int64_t n_rows = n_formats * n_tokens;
    const auto convert = [&](int64_t i) {
        const ActFormat& f = formats[i / n_tokens];
        const int64_t t = i % n_tokens;
        if (f.convert) f.convert(x + t * cols, f.converted + t * f.row_bytes, cols);
    };
    const auto convert_share = [&](int ith, int nth) {
        for (int64_t i = n_rows * ith / nth; i < n_rows * (ith + 1) / nth; i++) convert(i);
    };
    // Each output element belongs to one (unit, panel) and is computed by one thread in a fixed
    // order, so results do not depend on the thread count or the schedule. Guided scheduling
    // hands out shrinking chunks: a thread that runs takes over the share of one that was
    // preempted, and the last chunks are single units, so neither thread waits long at the end
    // (fixed chunks of 1/16 of the units left decode at 2 threads waiting for up to a chunk's
    // weights: guided was 5-9% faster, tg64 and pp512, A/B 3-4 rounds).
    const int64_t n_panels = (n_tokens + panel - 1) / panel;
    Chunks chunks(n_panels * total_units, total_units);
    const auto multiply = [&](int, int nth) {
        for (int64_t begin, end; chunks.next(nth, begin, end);) {
            // A chunk is units [u0, u1) of one panel (Chunks: claims stay within a period).
            const int64_t t0 = begin / total_units * panel, t1 = std::min(n_tokens, t0 + panel);
            const int64_t u0 = begin % total_units, u1 = u0 + (end - begin);
            int i = 0;
            int64_t first = 0;
            for (int64_t u = u0; u < u1; u++) {
                while (u >= first + products[i].units) first += products[i++].units;
                const Product& p = products[i];
                const ActFormat& f = formats[p.format];
                const int64_t g = u - first;
                if (p.pairs && g + p.units < p.groups) {
                    run_pair(p, f, g, g + p.units);
                } else {
                    run_unit(p, f, g, t0, t1);
                }
            }
        }
    };
    on_team(ctx.team, n_threads, [&](Team& team) {
        // Fewer rows to convert than threads: thread 0 converts them before handing out the
        // units, where the others would only wait for it.
        if (n_rows < n_threads) {
            convert_share(0, 1);
        } else {
            team.run(n_threads, convert_share);
        }
        team.run(n_threads, multiply);
    });
}

void parallel(Context& ctx, int n, JobRef job) {
    on_team(ctx.team, n, [&](Team& team) { team.run(n, job); });
}

std::string kernel_path(Type t) {
    return kernel_path(kernels(), t);
}

std::string kernel_path(const Kernels& k, Type t) {
    const Kernels& ref = kernels_scalar();
    const std::string isa = isa_name(k.isa);
    // What matmul runs: the packed kernel where the table has one (pack_weights packs for it),
    // else gemm_tile, whose vec_dot tells where it comes from.
    const bool packed = packable(t) && k.packed_of(t).gemm;
    const bool borrowed = packed ? k.packed_of(t).gemm == ref.packed_of(t).gemm
                                 : k.of(t).vec_dot && k.of(t).vec_dot == ref.of(t).vec_dot;
    if (k.isa != Isa::Scalar && borrowed) {
        return "scalar reference (no " + isa + " kernel for " + type_name(t) + ")";
    }
    // A grid type's prefill, packed or not.
    const auto grid_prefill = [&] {
        const bool grid_ref = k.grid_gemm == ref.grid_gemm && k.isa != Isa::Scalar;
        return "; prefill of " + std::to_string(packed ? kGridStripesTokens : kGridRowsTokens) +
               " tokens and more decodes each 16-row group to 8-bit levels for the " +
               (grid_ref ? std::string("scalar reference's") : isa) + " packed kernel";
    };
    if (packed && traits(t).grid_block) {
        return isa + ", weights packed at load in 4-row stripes, activations as " +
               type_name(traits(t).vec_dot_type) + grid_prefill();
    }
    if (packed) {
        // Float weights whose kernel converts the activations: the BF16 dot path (packed.h).
        const bool bf16_dot = !traits(t).quantized && k.packed_of(t).quantize;
        const char* op = traits(t).quantized ? "vpdpbusd"
                         : bf16_dot          ? "vdpbf16ps on activations rounded to BF16"
                                             : "vfmadd";
        const bool avx512 = k.isa == Isa::Avx512 || k.isa == Isa::Avx512Bf16 || k.isa == Isa::Amx;
        // The amx table's own kernels (Q8_0's prefill tiles and BF16 on the tile unit).
        const bool amx =
            k.isa == Isa::Amx && k.packed_of(t).gemm != kernels_avx512_bf16()->packed_of(t).gemm;
        const PrefetchPolicy policy = prefetch_policy();
        const char* prefetch = "";
        if (avx512 && !policy.avx512_decode) {
            prefetch = "; decode leaves the prefetching to this CPU (AMD family 19h)";
        } else if (avx512 && (traits(t).block_size == 32 || bf16_dot) && !policy.decode_l1) {
            prefetch = "; decode prefetches into L2 only on this CPU (AMD family 1Ah)";
        } else if ((k.isa == Isa::Avx2 || k.isa == Isa::Avx2Vnni) && traits(t).quantized &&
                   traits(t).block_size == 32 && !policy.avx2_block_l2) {
            prefetch = "; decode prefetches into L1 only on this CPU (AMD family 19h)";
        }
        std::string instruction;
        if (amx) {
            instruction = std::string(" (") + op +
                          ", 16 rows per instruction; full tiles of 16 tokens by " +
                          (bf16_dot ? "tdpbf16ps" : "tdpbsud") + ", 16 rows x 16 tokens)";
        } else if (avx512) {
            instruction = std::string(" (") + op + ", 16 rows per instruction)";
        } else if (k.isa == Isa::Avx2Vnni && traits(t).quantized) {
            instruction = " (vpdpbusd, 8 rows per instruction)";
        }
        return isa + ", weights packed at load in 16-row groups" + instruction + prefetch;
    }
    if (!k.of(t).vec_dot) return "none";
    std::string path = isa + ", activations as " + type_name(traits(t).vec_dot_type);
    if (traits(t).grid_block) path += grid_prefill();
    return path;
}

PackedBuffer::PackedBuffer(size_t bytes) : size_(bytes) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t align = bytes >= kHuge ? kHuge : 64;
    void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!p) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    if (align == kHuge) madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure only costs speed
#endif
    data_.reset(static_cast<uint8_t*>(p));
}

void PackedBuffer::Free::operator()(uint8_t* p) const {
    std::free(p);
}

PackedBuffer pack_weights(std::span<Matrix* const> ws, int n_threads, const PackedFn& packed) {
    const Kernels& k = kernels();
    const auto wanted = [&](const Matrix* W) {
        return packable(W->type) && k.packed_of(W->type).gemm;
    };
    // Each matrix starts on a cache line.
    std::vector<size_t> offset(ws.size());
    size_t total = 0;
    for (size_t i = 0; i < ws.size(); i++) {
        if (!wanted(ws[i])) continue;
        offset[i] = total;
        const int64_t groups = (ws[i]->rows + kPackRows - 1) / kPackRows;
        total += (groups * packed_group_size(ws[i]->type, ws[i]->cols) + 63) / 64 * 64;
    }
    if (total == 0) return {};
    PackedBuffer buf(total);
    // One parallel loop over the groups of all matrices: the copy runs at memory speed, and
    // each thread touches (and so places) the pages it writes.
    struct Job {
        // A constructor, not aggregate init: clang 14 lacks C++20's parenthesised aggregates.
        Job(Matrix* w, uint8_t* d, int64_t f, int64_t groups)
            : W(w), dst(d), first(f), left(groups) {}
        Matrix* W;
        uint8_t* dst;
        int64_t first;              // its first group in the numbering of all groups
        std::atomic<int64_t> left;  // groups not packed yet
    };
    std::deque<Job> jobs;  // not moved once made: they hold atomics
    int64_t n_groups = 0;
    for (size_t i = 0; i < ws.size(); i++) {
        if (!wanted(ws[i])) continue;
        const int64_t groups = (ws[i]->rows + kPackRows - 1) / kPackRows;
        jobs.emplace_back(ws[i], buf.data() + offset[i], n_groups, groups);
        n_groups += groups;
    }
#pragma omp parallel for num_threads(n_threads > 0 ? n_threads : omp_get_max_threads()) \
    schedule(dynamic, 64)
    for (int64_t g = 0; g < n_groups; g++) {
        Job& j = *(std::upper_bound(jobs.begin(), jobs.end(), g,
                                    [](int64_t v, const Job& e) { return v < e.first; }) -
                   1);
        const Matrix& W = *j.W;
        pack_groups(W.type, W.data, W.rows, W.cols, j.dst, g - j.first, g - j.first + 1);
        if (j.left.fetch_sub(1) == 1 && packed) packed(W);
    }
    for (const Job& j : jobs) j.W->packed = j.dst;
    return buf;
}

void get_row(const Matrix& W, int64_t row, float* out) {
    if (row < 0 || row >= W.rows) throw std::out_of_range("get_row: row out of range");
    const auto* w = static_cast<const uint8_t*>(W.data);
    traits(W.type).to_float(w + row * row_size(W.type, W.cols), out, W.cols);
}

void rope_angles(float* cos, float* sin, int64_t pos, int64_t rot_dim, float theta,
                 const float* freq_factors) {
    // In double: angles grow with the position, and float's 24 bits would lose the fraction
    // of a turn that actually matters at long contexts.
    for (int64_t i = 0; i < rot_dim / 2; i++) {
        double freq = std::pow(static_cast<double>(theta),
                               -2.0 * static_cast<double>(i) / static_cast<double>(rot_dim));
        if (freq_factors) freq /= freq_factors[i];
        const double angle = static_cast<double>(pos) * freq;
        cos[i] = static_cast<float>(std::cos(angle));
        sin[i] = static_cast<float>(std::sin(angle));
    }
}

void rope_neox(float* x, int64_t n_heads, int64_t head_dim, int64_t rot_dim, const float* cos,
               const float* sin) {
    const int64_t half = rot_dim / 2;
    for (int64_t h = 0; h < n_heads; h++) {
        float* v = x + h * head_dim;
        for (int64_t i = 0; i < half; i++) {
            const float x0 = v[i];
            const float x1 = v[i + half];
            v[i] = x0 * cos[i] - x1 * sin[i];
            v[i + half] = x0 * sin[i] + x1 * cos[i];
        }
    }
}

void gelu_tanh_mul(float* h, const float* g, int64_t n) {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    for (int64_t i = 0; i < n; i++) {
        const float x = h[i];
        h[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x))) * g[i];
    }
}

void softcap(float* x, int64_t n, float cap) {
    for (int64_t i = 0; i < n; i++) x[i] = cap * std::tanh(x[i] / cap);
}

namespace {

float elem_to_float(float x) {
    return x;
}
float elem_to_float(fp16_t x) {
    return fp16_to_fp32(x);
}

}  // namespace

template <class Elem>
void attend_window(const float* q, int64_t n_q, int64_t head_dim, const Elem* k, const Elem* v,
                   int64_t first, int64_t n_pos, float scale, float softcap, float* scores,
                   float* out) {
    const int64_t n = n_pos - first;
    for (int64_t j = 0; j < n_q; j++) {
        const float* qj = q + j * head_dim;
        float* s = scores + j * n;
        for (int64_t p = first; p < n_pos; p++) {
            // Keys: blocks of kKvBlock positions, dimension-major within a block (kernels.h).
            const Elem* kp = k + p / kKvBlock * kKvBlock * head_dim + p % kKvBlock;
            float dot = 0.0f;
            for (int64_t d = 0; d < head_dim; d++) dot += qj[d] * elem_to_float(kp[d * kKvBlock]);
            s[p - first] = dot * scale;
        }
        if (softcap > 0.0f) ggml_lite::softcap(s, n, softcap);
        kernels_scalar().softmax(s, n);
        float* o = out + j * head_dim;
        std::fill(o, o + head_dim, 0.0f);
        for (int64_t p = first; p < n_pos; p++) {
            const Elem* vp = v + p * head_dim;
            const float w = s[p - first];
            for (int64_t d = 0; d < head_dim; d++) o[d] += w * elem_to_float(vp[d]);
        }
    }
}

template void attend_window<float>(const float*, int64_t, int64_t, const float*, const float*,
                                   int64_t, int64_t, float, float, float*, float*);
template void attend_window<fp16_t>(const float*, int64_t, int64_t, const fp16_t*, const fp16_t*,
                                    int64_t, int64_t, float, float, float*, float*);

}  // namespace ggml_lite
