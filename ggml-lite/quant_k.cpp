// Scalar reference codecs of the k-quants (quant.h: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and their Q8_K
// activations), bit-identical to ggml's quantize_row_*_ref. The searches repeat ggml's float
// operations in ggml's order; like quant.cpp this file is compiled with -ffp-contract=off
// (ggml-lite/CMakeLists.txt) so no compiler fuses a multiply and an add that ggml rounds apart.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "quant.h"
#include "quant_common.h"

namespace ggml_lite {

namespace {

// Levels L[i] in [0, nmax], a scale and a min with x[i] ~ scale * L[i] - min, chosen to minimise
// sum weights[i] * error^2, or sum weights[i] * |error| with use_mad (ggml's make_qkx2_quants:
// Q4_K and Q5_K square the errors, Q2_K takes them absolute). It starts from the full range
// [min(x, 0), max(x)], then tries nstep + 1 level spacings that put nmax + rmin + rdelta * is
// levels across that range; for each rounding it solves the weighted least-squares scale and
// min (least squares even with use_mad, as ggml), and keeps the best. The min is never positive (it
// is subtracted, so the levels need not reach 0); *the_min gets its negation. Laux: n bytes of
// scratch.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
    const auto cost = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; i++) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        best_error += weights[i] * cost(scale * L[i] + min - x[i]);
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float error = 0;
            for (int i = 0; i < n; i++) {
                error += weights[i] * cost(this_scale * Laux[i] + this_min - x[i]);
            }
            if (error < best_error) {
                std::memcpy(L, Laux, static_cast<size_t>(n));
                best_error = error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// Signed levels L[i] - nmax in [-nmax, nmax - 1] and a scale with x[i] ~ scale * (L[i] - nmax),
// minimising sum x[i]^2 * error^2 (ggml's make_qx_quants with rmse_type 1 and no importance
// weights): the value of largest magnitude maps to -nmax, then 18 nearby spacings are tried,
// each with its least-squares scale, keeping the one that explains most of the weighted energy.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
    const float max = signed_absmax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    const auto level = [nmax](float iscale, float v) {
        return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * v)));
    };
    float iscale = -nmax / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = level(iscale, x[i]);
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; i++) {
            const int l = level(iscale, x[i]);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        // sumlx^2 / suml2 is the weighted energy this spacing explains; more is a smaller error.
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++) L[i] = static_cast<int8_t>(level(iscale, x[i]) + nmax);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

}  // namespace

void get_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

namespace {

// The part Q4_K and Q5_K share: levels L in [0, nmax] of one super-block, its 8 sub-block scales
// and mins packed in 6 bits (get_scale_min_k4's layout), and the two fp16 scales of those. The
// sub-block search is make_qkx2_quants with rmin, 0.1 and nstep, as ggml calls it per type.
void quantize_scales_mins(const float* x, int nmax, float rmin, int nstep, uint8_t* packed,
                          fp16_t* d_out, fp16_t* dmin_out, uint8_t* L) {
    uint8_t Laux[32];
    float weights[32];
    float mins[QK_K / 32];
    float scales[QK_K / 32];
    // Each sub-block's scale and min, errors weighted towards the larger values (by their
    // magnitude plus the sub-block's RMS, so small values still count).
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < QK_K / 32; j++) {
        const float* xs = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += xs[l] * xs[l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; l++) weights[l] = av_x + std::fabs(xs[l]);
        scales[j] = make_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f,
                                     nstep, false);
        max_scale = std::max(max_scale, scales[j]);
        max_min = std::max(max_min, mins[j]);
    }

    // Scales and mins in 6 bits against the block's largest of each.
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    std::memset(packed, 0, K_SCALE_SIZE);
    for (int j = 0; j < QK_K / 32; j++) {
        // Through uint8_t as in ggml: a (pathological) negative level wraps, then clamps.
        const auto ls =
            std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
        const auto lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = static_cast<uint8_t>((ls & 0x0f) | ((lm & 0x0f) << 4));
            packed[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
            packed[j] |= static_cast<uint8_t>((lm >> 4) << 6);
        }
    }
    *d_out = fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = fp32_to_fp16(max_min / 63.0f);

    // Levels again against the scales as stored. A sub-block whose scale rounded to zero keeps
    // the levels of its search (they dequantize to -dmin * m all the same).
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        get_scale_min_k4(j, packed, &sc, &m);
        const float d = fp16_to_fp32(*d_out) * sc;
        if (!d) continue;
        const float dm = fp16_to_fp32(*dmin_out) * m;
        for (int l = 0; l < 32; l++) {
            const int q = nearest_int((x[32 * j + l] + dm) / d);
            L[32 * j + l] = static_cast<uint8_t>(std::max(0, std::min(nmax, q)));
        }
    }
}

}  // namespace

void quantize_row_q4_K_ref(const float* x, block_q4_K* y, int64_t n) {
    uint8_t L[QK_K];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        block_q4_K& out = y[b];
        quantize_scales_mins(x, 15, -1.0f, 20, out.scales, &out.d, &out.dmin, L);
        for (int g = 0; g < QK_K / 64; g++) {
            for (int l = 0; l < 32; l++) {
                out.qs[32 * g + l] =
                    static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
            }
        }
    }
}

void dequantize_row_q4_K(const block_q4_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        const float min = fp16_to_fp32(x[b].dmin);
        for (int j = 0; j < QK_K / 32; j++, y += 32) {
            uint8_t sc, m;
            get_scale_min_k4(j, x[b].scales, &sc, &m);
            const float dl = d * sc;
            const float ml = min * m;
            const uint8_t* q = x[b].qs + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            for (int l = 0; l < 32; l++) y[l] = dl * ((q[l] >> shift) & 0x0f) - ml;
        }
    }
}

namespace {

// A block's ql and qh from its 256 levels L + 32 (0 .. 63).
void put_q6_K_levels(const int8_t* L, block_q6_K* out) {
    for (int h = 0; h < QK_K / 128; h++) {
        const int8_t* Lh = L + 128 * h;
        uint8_t* ql = out->ql + 64 * h;
        uint8_t* qh = out->qh + 32 * h;
        for (int j = 0; j < 64; j++) {
            ql[j] = static_cast<uint8_t>((Lh[j] & 0x0f) | ((Lh[j + 64] & 0x0f) << 4));
        }
        for (int l = 0; l < 32; l++) {
            qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) |
                                         ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
        }
    }
}

}  // namespace

void quantize_row_q6_K_ref(const float* x, block_q6_K* y, int64_t n) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        block_q6_K& out = y[b];
        for (int k = 0; k < QK_K / 16; k++) {
            scales[k] = make_qx_quants(16, 32, x + 16 * k, L + 16 * k);
        }
        const float max_scale = signed_absmax(scales, QK_K / 16);
        if (std::fabs(max_scale) < kGroupMaxEps) {
            std::memset(&out, 0, sizeof out);  // d = +0 in half precision too
            continue;
        }

        // Scales in 8 signed bits: the largest in magnitude maps to -128.
        const float iscale = -128.0f / max_scale;
        out.d = fp32_to_fp16(1 / iscale);
        for (int k = 0; k < QK_K / 16; k++) {
            out.scales[k] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[k])));
        }

        // Levels again against the scales as stored (a zero scale keeps its search's levels).
        for (int k = 0; k < QK_K / 16; k++) {
            const float d = fp16_to_fp32(out.d) * out.scales[k];
            if (!d) continue;
            for (int l = 0; l < 16; l++) {
                const int q = nearest_int(x[16 * k + l] / d);
                L[16 * k + l] = static_cast<int8_t>(std::max(-32, std::min(31, q)) + 32);
            }
        }
        put_q6_K_levels(L, &out);
    }
}

void dequantize_row_q6_K(const block_q6_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        for (int h = 0; h < QK_K / 128; h++, y += 128) {
            const uint8_t* ql = x[b].ql + 64 * h;
            const uint8_t* qh = x[b].qh + 32 * h;
            const int8_t* sc = x[b].scales + 8 * h;
            for (int r = 0; r < 128; r++) {
                const int lo = (ql[r % 64] >> (4 * (r / 64))) & 0x0f;
                const int hi = (qh[r % 32] >> (2 * (r / 32))) & 3;
                y[r] = d * sc[r / 16] * ((lo | (hi << 4)) - 32);
            }
        }
    }
}

void quantize_row_q8_K_ref(const float* x, block_q8_K* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        // The signed value of largest magnitude (the first, on ties) maps to -127.
        const float max = signed_absmax(x, QK_K);
        if (!max) {
            // ggml leaves bsums unset here; zeros keep the bytes deterministic.
            std::memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++) {
            y[b].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
        }
        for (int k = 0; k < QK_K / 16; k++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += y[b].qs[16 * k + l];
            y[b].bsums[k] = static_cast<int16_t>(sum);
        }
        y[b].d = 1 / iscale;
    }
}

void dequantize_row_q8_K(const block_q8_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++, y += QK_K) {
        for (int j = 0; j < QK_K; j++) y[j] = x[b].d * x[b].qs[j];
    }
}

void quantize_row_q5_K_ref(const float* x, block_q5_K* y, int64_t n) {
    uint8_t L[QK_K];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        block_q5_K& out = y[b];
        quantize_scales_mins(x, 31, -0.5f, 15, out.scales, &out.d, &out.dmin, L);
        std::memset(out.qh, 0, sizeof out.qh);
        for (int g = 0; g < QK_K / 64; g++) {
            for (int l = 0; l < 32; l++) {
                const int lo = L[64 * g + l], hi = L[64 * g + 32 + l];
                out.qs[32 * g + l] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
                out.qh[l] |=
                    static_cast<uint8_t>(((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
            }
        }
    }
}

void dequantize_row_q5_K(const block_q5_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        const float min = fp16_to_fp32(x[b].dmin);
        for (int j = 0; j < QK_K / 32; j++, y += 32) {
            uint8_t sc, m;
            get_scale_min_k4(j, x[b].scales, &sc, &m);
            const float dl = d * sc;
            const float ml = min * m;
            const uint8_t* q = x[b].qs + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            for (int l = 0; l < 32; l++) {
                const int level = ((q[l] >> shift) & 0x0f) | (((x[b].qh[l] >> j) & 1) << 4);
                y[l] = dl * level - ml;
            }
        }
    }
}

// ---- Q2_K and Q3_K: 16 sub-blocks of 16 values ----------------------------------------------

namespace {

// Value 128h + 32k + l (h < 2, k < 4, l < 32) of levels L in [0, 3] goes to bits 2k, 2k + 1 of
// byte 32h + l, as ggml packs Q2_K's and Q3_K's low 2 bits.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int h = 0; h < QK_K / 128; h++) {
        for (int l = 0; l < 32; l++) {
            const uint8_t* Lh = L + 128 * h;
            qs[32 * h + l] = static_cast<uint8_t>(Lh[l] | (Lh[l + 32] << 2) | (Lh[l + 64] << 4) |
                                                  (Lh[l + 96] << 6));
        }
    }
}

// Value e's 2 low bits, as pack_2bit stores them.
int low_2bit(const uint8_t* qs, int e) {
    return (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
}

// Signed levels L[i] - nmax in [-nmax, nmax - 1] and a scale with x[i] ~ scale * (L[i] - nmax)
// (ggml's make_q3_quants with do_rmse, the only way quantize_row_q3_K_ref calls it): the value
// of largest magnitude maps to -nmax, then up to 5 passes move single levels to the one that
// x[i] would take under the least-squares scale of the others, keeping each move that explains
// more of the x^2-weighted energy (sumlx^2 / suml2).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    const float max = signed_absmax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    const float iscale = -nmax / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; i++) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                const int new_l =
                    std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = static_cast<int8_t>(L[i] + nmax);
    return sumlx / suml2;
}

}  // namespace

void quantize_row_q2_K_ref(const float* x, block_q2_K* y, int64_t n) {
    constexpr float q4scale = 15.0f;
    uint8_t L[QK_K];
    uint8_t Laux[16];
    float weights[16];
    float mins[QK_K / 16];
    float scales[QK_K / 16];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        block_q2_K& out = y[b];
        // Each sub-block's scale and min, absolute errors weighted by |x|.
        float max_scale = 0;
        float max_min = 0;
        for (int j = 0; j < QK_K / 16; j++) {
            for (int l = 0; l < 16; l++) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux,
                                         -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }

        // Scales and mins in 4 bits against the block's largest of each. Through uint8_t as in
        // ggml, unclamped: the levels are in [0, 15] unless a search returned a negative scale.
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; j++)
                out.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
            out.d = fp32_to_fp16(max_scale / q4scale);
        } else {
            std::memset(out.scales, 0, sizeof out.scales);
            out.d = fp32_to_fp16(0.0f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; j++)
                out.scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
            out.dmin = fp32_to_fp16(max_min / q4scale);
        } else {
            out.dmin = fp32_to_fp16(0.0f);
        }

        // Levels again against the scales as stored (a zero scale keeps its search's levels).
        for (int j = 0; j < QK_K / 16; j++) {
            const float d = fp16_to_fp32(out.d) * (out.scales[j] & 0x0f);
            if (!d) continue;
            const float dm = fp16_to_fp32(out.dmin) * (out.scales[j] >> 4);
            for (int l = 0; l < 16; l++) {
                const int q = nearest_int((x[16 * j + l] + dm) / d);
                L[16 * j + l] = static_cast<uint8_t>(std::max(0, std::min(3, q)));
            }
        }
        pack_2bit(L, out.qs);
    }
}

void dequantize_row_q2_K(const block_q2_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        const float min = fp16_to_fp32(x[b].dmin);
        for (int k = 0; k < QK_K / 16; k++, y += 16) {
            const float dl = d * (x[b].scales[k] & 0x0f);
            const float ml = min * (x[b].scales[k] >> 4);
            for (int l = 0; l < 16; l++) y[l] = dl * low_2bit(x[b].qs, 16 * k + l) - ml;
        }
    }
}

int q3_K_scale(const block_q3_K& x, int k) {
    const int lo = (x.scales[k % 8] >> (4 * (k / 8))) & 0x0f;
    const int hi = (x.scales[8 + k % 4] >> (2 * (k / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

void quantize_row_q3_K_ref(const float* x, block_q3_K* y, int64_t n) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        block_q3_K& out = y[b];
        for (int k = 0; k < QK_K / 16; k++) {
            scales[k] = make_q3_quants(16, 4, x + 16 * k, L + 16 * k);
        }
        const float max_scale = signed_absmax(scales, QK_K / 16);

        // Scales in 6 signed bits: the largest in magnitude maps to -32.
        std::memset(out.scales, 0, sizeof out.scales);
        if (max_scale != 0) {
            const float iscale = -32.0f / max_scale;
            for (int k = 0; k < QK_K / 16; k++) {
                const int8_t l = static_cast<int8_t>(nearest_int(iscale * scales[k]));
                const int u = std::max<int>(-32, std::min<int>(31, l)) + 32;
                out.scales[k % 8] |= static_cast<uint8_t>((u & 0x0f) << (4 * (k / 8)));
                out.scales[8 + k % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (k / 4)));
            }
            out.d = fp32_to_fp16(1 / iscale);
        } else {
            out.d = fp32_to_fp16(0.0f);
        }

        // Levels again against the scales as stored (a zero scale keeps its search's levels).
        for (int k = 0; k < QK_K / 16; k++) {
            const float d = fp16_to_fp32(out.d) * q3_K_scale(out, k);
            if (!d) continue;
            for (int l = 0; l < 16; l++) {
                const int q = nearest_int(x[16 * k + l] / d);
                L[16 * k + l] = static_cast<int8_t>(std::max(-4, std::min(3, q)) + 4);
            }
        }

        // The third bit of value 32k + l in hmask byte l, bit k; the low 2 bits as Q2_K's.
        uint8_t low[QK_K];
        std::memset(out.hmask, 0, sizeof out.hmask);
        for (int e = 0; e < QK_K; e++) {
            out.hmask[e % 32] |= static_cast<uint8_t>((L[e] >> 2) << (e / 32));
            low[e] = static_cast<uint8_t>(L[e] & 3);
        }
        pack_2bit(low, out.qs);
    }
}

void dequantize_row_q3_K(const block_q3_K* x, float* y, int64_t n) {
    for (int64_t b = 0; b < n / QK_K; b++) {
        const float d = fp16_to_fp32(x[b].d);
        for (int k = 0; k < QK_K / 16; k++, y += 16) {
            const float dl = d * q3_K_scale(x[b], k);
            for (int l = 0; l < 16; l++) {
                const int e = 16 * k + l;
                const int high = (x[b].hmask[e % 32] >> (e / 32)) & 1;
                y[l] = dl * (low_2bit(x[b].qs, e) + 4 * high - 4);
            }
        }
    }
}

}  // namespace ggml_lite
