/* conv3d with one input channel (the network's first conv, 1 -> f at the full grid) with
 * AVX2 + FMA (compiled for avx2,fma only; the backend checks the CPU first):
 *   out[v][co] = bias[co] + sum over taps of in[tap voxel of v] * w[tap][co]
 * With cin 1 the implicit-GEMM kernel (conv3d_avx2.c) does one input channel per tap, so
 * its per-tap row bookkeeping outweighs its 12 FMAs; Winograd transforms 8 lanes of which 7
 * are padding. Here a work item is one output line (oz, oy); per pair of voxels of the line
 * and block of up to 48 output channels, 2 x 6 ymm accumulators; per tap two scalar input
 * values (0 outside the input) broadcast against 6 weight vectors (w: k^3 x cout floats,
 * read from L1). Any k, stride and pad; float32 weights only. */
#include "kernels/cpu/conv/conv3d_internal.h"

#include <immintrin.h>

#include "kernels/cpu/isa.h"


/* Voxel ix of an input line (row: the line's first voxel), or 0 in the padding along x. */
SWIN_AVX2_INLINE float at(const float *row, int ix, int w, int pitch)
{
    return ix >= 0 && ix < w ? row[(int64_t)ix * pitch] : 0.0f;
}

/* Voxels ox and ox + 1 (ox + 1 computed and not stored when `two` is false) of line (oz, oy),
 * output channels [co0, co0 + 8 NV) (the last vector masked by `last` unless `full`: AMD
 * CPUs run masked loads and above all masked stores much slower than plain ones). INTERIOR: every tap
 * along x of both voxels falls inside the input (no per-tap bounds test, broadcast loads). */
SWIN_AVX2_INLINE void pair(const struct conv_task *t, int oz, int oy, int ox, bool two, int co0, __m256i last, bool full,
                      const int NV, const bool INTERIOR)
{
    const struct swin_vol in = t->in, out = t->out;
    const int k = t->k, s = t->stride, cout = out.c;
    __m256 acc0[6], acc1[6];
    for (int j = 0; j < NV; j++) acc0[j] = acc1[j] = _mm256_setzero_ps();
    const int ix0 = ox * s - t->pad, ix1 = ix0 + s;
    for (int kz = 0; kz < k; kz++) {
        const int iz = oz * s - t->pad + kz;
        if (iz < 0 || iz >= in.d) continue;
        for (int ky = 0; ky < k; ky++) {
            const int iy = oy * s - t->pad + ky;
            if (iy < 0 || iy >= in.h) continue;
            const float *row = swin_vol_f32(in) + ((int64_t)iz * in.h + iy) * in.w * in.pitch;
            const float *wt = t->w + (size_t)(kz * k + ky) * k * cout + co0;
            for (int kx = 0; kx < k; kx++, wt += cout) {
                const __m256 a0 = INTERIOR ? _mm256_broadcast_ss(row + (int64_t)(ix0 + kx) * in.pitch)
                                           : _mm256_set1_ps(at(row, ix0 + kx, in.w, in.pitch));
                const __m256 a1 = INTERIOR ? _mm256_broadcast_ss(row + (int64_t)(ix1 + kx) * in.pitch)
                                           : _mm256_set1_ps(at(row, ix1 + kx, in.w, in.pitch));
                for (int j = 0; j < NV; j++) {
                    const __m256 wv = j < NV - 1 || full ? _mm256_loadu_ps(wt + 8 * j) : _mm256_maskload_ps(wt + 8 * j, last);
                    acc0[j] = _mm256_fmadd_ps(a0, wv, acc0[j]);
                    acc1[j] = _mm256_fmadd_ps(a1, wv, acc1[j]);
                }
            }
        }
    }
    float *o = swin_vol_f32(out) + (((int64_t)oz * out.h + oy) * out.w + ox) * out.pitch + co0;
    for (int j = 0; j < NV; j++) {
        if (j < NV - 1 || full) {
            const __m256 b = t->bias ? _mm256_loadu_ps(t->bias + co0 + 8 * j) : _mm256_setzero_ps();
            _mm256_storeu_ps(o + 8 * j, _mm256_add_ps(acc0[j], b));
            if (two) _mm256_storeu_ps(o + out.pitch + 8 * j, _mm256_add_ps(acc1[j], b));
            continue;
        }
        const __m256 b = t->bias ? _mm256_maskload_ps(t->bias + co0 + 8 * j, last) : _mm256_setzero_ps();
        _mm256_maskstore_ps(o + 8 * j, last, _mm256_add_ps(acc0[j], b));
        if (two) _mm256_maskstore_ps(o + out.pitch + 8 * j, last, _mm256_add_ps(acc1[j], b));
    }
}

/* The pairs of one line for NV vectors of channels: the edge pairs with bounds tests. */
SWIN_AVX2_INLINE void pairs(const struct conv_task *t, int oz, int oy, int co0, __m256i last, bool full, const int NV)
{
    const int ow = t->out.w, s = t->stride, k = t->k, pad = t->pad, w = t->in.w;
    for (int ox = 0; ox < ow; ox += 2) {
        const bool two = ox + 1 < ow;
        /* taps of both voxels: x from ox s - pad to (ox + 1) s - pad + k - 1 */
        if (two && ox * s - pad >= 0 && (ox + 1) * s - pad + k - 1 < w) pair(t, oz, oy, ox, two, co0, last, full, NV, true);
        else pair(t, oz, oy, ox, two, co0, last, full, NV, false);
    }
}

SWIN_AVX2 static void line(const struct conv_task *t, int oz, int oy)
{
    const int cout = t->out.c;
    for (int co0 = 0; co0 < cout; co0 += 48) {
        const int nco = cout - co0 < 48 ? cout - co0 : 48, nv = (nco + 7) / 8;
        const __m256i last = swin_cpu_lanes(nco - 8 * (nv - 1));
        const bool full = nco == 8 * nv;
        switch (nv) {
        case 6: pairs(t, oz, oy, co0, last, full, 6); break;
        case 5: pairs(t, oz, oy, co0, last, full, 5); break;
        case 4: pairs(t, oz, oy, co0, last, full, 4); break;
        case 3: pairs(t, oz, oy, co0, last, full, 3); break;
        case 2: pairs(t, oz, oy, co0, last, full, 2); break;
        default: pairs(t, oz, oy, co0, last, full, 1); break;
        }
    }
}

void swin_cpu_conv3d_c1_avx2_run(const struct conv_task *t, atomic_long *next)
{
    const long lines = (long)t->out.d * t->out.h;
    long b, e;
    while (swin_cpu_claim(next, lines, 4, &b, &e))
        for (long l = b; l < e; l++) line(t, (int)(l / t->out.h), (int)(l % t->out.h));
}
