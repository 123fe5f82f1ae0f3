/* conv3d as an implicit GEMM with AVX2 + FMA, for CPUs without AVX-512 (this file's
 * functions are compiled for avx2,fma only; the backend checks the CPU first).
 *
 * The same scheme as conv3d_avx512.c with 16 ymm registers: a tile is MR = 4 consecutive
 * output voxels x up to 24 output channels (3 vectors of 8, the last one masked), 12
 * accumulators; per tap and input channel ci: acc[v][j] += in_row_v[ci] * w[tap][ci][8j ..].
 * Work items are (slab of 16 tiles, block of 24 output channels). */
#include "kernels/cpu/conv/conv3d_internal.h"

#include <immintrin.h>

#include "kernels/cpu/isa.h"

#define MR 4
#define CONV_AVX2_SLAB (16 * MR)

#define ACC_DECL(i) __m256 acc##i##0 = z8, acc##i##1 = z8, acc##i##2 = z8;
#define ACC_STEP(i)                                                       \
    {                                                                     \
        const __m256 a = _mm256_broadcast_ss(r##i + ci);                  \
        acc##i##0 = _mm256_fmadd_ps(a, w0, acc##i##0);                    \
        if (NV > 1) acc##i##1 = _mm256_fmadd_ps(a, w1, acc##i##1);        \
        if (NV > 2) acc##i##2 = _mm256_fmadd_ps(a, w2, acc##i##2);        \
    }
#define ACC_STORE(i)                                                      \
    if (i < m) {                                                          \
        float *o = swin_vol_f32(t->out) + (v0 + i) * t->out.pitch + co0;           \
        store_row(o, bias, acc##i##0, acc##i##1, acc##i##2, NV, FULL, last);    \
    }

SWIN_AVX2_INLINE void store_row(float *o, const float *bias, __m256 y0, __m256 y1, __m256 y2, const int NV, const bool FULL,
                             __m256i last)
{
    const __m256 ys[3] = {y0, y1, y2};
    for (int j = 0; j < NV; j++) {
        __m256 y = ys[j];
        if (j < NV - 1 || FULL) {
            if (bias) y = _mm256_add_ps(y, _mm256_loadu_ps(bias + 8 * j));
            _mm256_storeu_ps(o + 8 * j, y);
            continue;
        }
        if (bias) y = _mm256_add_ps(y, _mm256_maskload_ps(bias + 8 * j, last));
        _mm256_maskstore_ps(o + 8 * j, last, y);
    }
}

/* One tile: voxels [v0, v0 + m), output channels [co0, co0 + nco), NV = ceil(nco / 8); FULL:
 * nco = 8 NV, plain loads and stores throughout (AMD CPUs run masked ones far slower). */
SWIN_AVX2_INLINE void tile_nv(const struct conv_task *t, long v0, int m, int co0, int nco, const float *zero, const int NV,
                           const bool FULL)
{
    const int cin = t->in.c, cout = t->out.c, k = t->k;
    const __m256i last = swin_cpu_lanes(nco - 8 * (NV - 1));
    const __m256 z8 = _mm256_setzero_ps();
    const float *bias = t->bias ? t->bias + co0 : NULL;
    ACC_DECL(0) ACC_DECL(1) ACC_DECL(2) ACC_DECL(3)
    const float *rows[MR];
    struct conv_tile_origin org;
    conv_tile_origin(t, v0, m, &org);
    for (int kz = 0; kz < k; kz++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                conv_tap_rows(t, &org, m, MR, kz, ky, kx, zero, rows);
                const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
                const float *wt = t->w + (size_t)((kz * k + ky) * k + kx) * cin * cout + co0;
                for (int ci = 0; ci < cin; ci++, wt += cout) {
                    const __m256 w0 = NV == 1 && !FULL ? _mm256_maskload_ps(wt, last) : _mm256_loadu_ps(wt);
                    const __m256 w1 = NV == 2 && !FULL ? _mm256_maskload_ps(wt + 8, last)
                                                       : (NV >= 2 ? _mm256_loadu_ps(wt + 8) : z8);
                    const __m256 w2 = NV < 3 ? z8 : FULL ? _mm256_loadu_ps(wt + 16) : _mm256_maskload_ps(wt + 16, last);
                    ACC_STEP(0) ACC_STEP(1) ACC_STEP(2) ACC_STEP(3)
                }
            }
    ACC_STORE(0) ACC_STORE(1) ACC_STORE(2) ACC_STORE(3)
}

SWIN_AVX2
static void tile(const struct conv_task *t, long v0, int m, int co0, int nco, const float *zero)
{
    if (nco == 24) tile_nv(t, v0, m, co0, nco, zero, 3, true);
    else if (nco > 16) tile_nv(t, v0, m, co0, nco, zero, 3, false);
    else if (nco == 16) tile_nv(t, v0, m, co0, nco, zero, 2, true);
    else if (nco > 8) tile_nv(t, v0, m, co0, nco, zero, 2, false);
    else if (nco == 8) tile_nv(t, v0, m, co0, nco, zero, 1, true);
    else tile_nv(t, v0, m, co0, nco, zero, 1, false);
}

void swin_cpu_conv3d_avx2_run(const struct conv_task *t, atomic_long *next, const float *zero)
{
    const long nout = (long)swin_vol_voxels(t->out);
    const long nslab = (nout + CONV_AVX2_SLAB - 1) / CONV_AVX2_SLAB;
    const long ncob = (t->out.c + 23) / 24;
    long b, e;
    while (swin_cpu_claim(next, nslab * ncob, 1, &b, &e)) {
        const long v0 = b / ncob * CONV_AVX2_SLAB, v1 = v0 + CONV_AVX2_SLAB < nout ? v0 + CONV_AVX2_SLAB : nout;
        const int co0 = (int)(b % ncob) * 24, nco = t->out.c - co0 < 24 ? t->out.c - co0 : 24;
        for (long v = v0; v < v1; v += MR) tile(t, v, v1 - v < MR ? (int)(v1 - v) : MR, co0, nco, zero);
    }
}
