/* conv3d with one input channel at the AVX-512 level (compiled for it only; the backend checks
 * the CPU first), conv3d_c1_avx2.c's method at 16 lanes:
 *   out[v][co] = bias[co] + sum over taps of in[tap voxel of v] * w[tap][co]
 * A work item is one output line (oz, oy); per group of VOX voxels of the line and block of up
 * to 48 output channels, VOX x 3 zmm accumulators; per tap VOX scalar input values (0 outside
 * the input) broadcast against 3 weight vectors (w: k^3 x cout floats, read from L1). Any k,
 * stride and pad; float32 weights only. */
#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/isa.h"

#define VOX 4

/* Voxel ix of an input line (row: the line's first voxel), or 0 in the padding along x. */
SWIN_AVX512_INLINE float at(const float *row, int ix, int w, int pitch)
{
    return ix >= 0 && ix < w ? row[(int64_t)ix * pitch] : 0.0f;
}

/* Voxels ox .. ox + n - 1 (n <= VOX; the others computed from the padding and not stored) of
 * line (oz, oy), output channels [co0, co0 + 16 NV), the last vector masked by `last`.
 * INTERIOR: every tap along x of the VOX voxels falls inside the input. */
SWIN_AVX512_INLINE void group(const struct conv_task *t, int oz, int oy, int ox, int n, int co0, __mmask16 last,
                              const int NV, const bool INTERIOR)
{
    const struct swin_vol in = t->in, out = t->out;
    const int k = t->k, s = t->stride, cout = out.c;
    __m512 acc[VOX][3];
    for (int v = 0; v < VOX; v++)
        for (int j = 0; j < NV; j++) acc[v][j] = _mm512_setzero_ps();
    const int ix0 = ox * s - t->pad;
    for (int kz = 0; kz < k; kz++) {
        const int iz = oz * s - t->pad + kz;
        if (iz < 0 || iz >= in.d) continue;
        for (int ky = 0; ky < k; ky++) {
            const int iy = oy * s - t->pad + ky;
            if (iy < 0 || iy >= in.h) continue;
            const float *row = swin_vol_f32(in) + ((int64_t)iz * in.h + iy) * in.w * in.pitch;
            const float *wt = t->w + (size_t)(kz * k + ky) * k * cout + co0;
            for (int kx = 0; kx < k; kx++, wt += cout) {
                __m512 wv[3];
                for (int j = 0; j < NV; j++)
                    wv[j] = j < NV - 1 ? _mm512_loadu_ps(wt + 16 * j) : _mm512_maskz_loadu_ps(last, wt + 16 * j);
                for (int v = 0; v < VOX; v++) {
                    const int ix = ix0 + v * s + kx;
                    const __m512 a =
                        _mm512_set1_ps(INTERIOR ? row[(int64_t)ix * in.pitch] : at(row, ix, in.w, in.pitch));
                    for (int j = 0; j < NV; j++) acc[v][j] = _mm512_fmadd_ps(a, wv[j], acc[v][j]);
                }
            }
        }
    }
    float *o = swin_vol_f32(out) + (((int64_t)oz * out.h + oy) * out.w + ox) * out.pitch + co0;
    for (int j = 0; j < NV; j++) {
        const __mmask16 m = j < NV - 1 ? (__mmask16)0xffffu : last;
        const __m512 b = t->bias ? _mm512_maskz_loadu_ps(m, t->bias + co0 + 16 * j) : _mm512_setzero_ps();
        for (int v = 0; v < VOX; v++)
            if (v < n) swin_store16(o + (int64_t)v * out.pitch + 16 * j, m, _mm512_add_ps(acc[v][j], b));
    }
}

/* The groups of one line for NV vectors of channels: the edge groups with bounds tests. */
SWIN_AVX512_INLINE void groups(const struct conv_task *t, int oz, int oy, int co0, __mmask16 last, const int NV)
{
    const int ow = t->out.w, s = t->stride, k = t->k, pad = t->pad, w = t->in.w;
    for (int ox = 0; ox < ow; ox += VOX) {
        const int n = ow - ox < VOX ? ow - ox : VOX;
        /* taps of the group: x from ox s - pad to (ox + VOX - 1) s - pad + k - 1 */
        if (n == VOX && ox * s - pad >= 0 && (ox + VOX - 1) * s - pad + k - 1 < w)
            group(t, oz, oy, ox, n, co0, last, NV, true);
        else group(t, oz, oy, ox, n, co0, last, NV, false);
    }
}

SWIN_AVX512 static void line(const struct conv_task *t, int oz, int oy)
{
    const int cout = t->out.c;
    for (int co0 = 0; co0 < cout; co0 += 48) {
        const int nco = cout - co0 < 48 ? cout - co0 : 48, nv = (nco + 15) / 16, tail = nco - 16 * (nv - 1);
        const __mmask16 last = (__mmask16)(tail >= 16 ? 0xffffu : (1u << tail) - 1u);
        if (nv == 3) groups(t, oz, oy, co0, last, 3);
        else if (nv == 2) groups(t, oz, oy, co0, last, 2);
        else groups(t, oz, oy, co0, last, 1);
    }
}

void swin_cpu_conv3d_c1_avx512_run(const struct conv_task *t, atomic_long *next)
{
    const long lines = (long)t->out.d * t->out.h;
    long b, e;
    while (swin_cpu_claim(next, lines, 4, &b, &e))
        for (long l = b; l < e; l++) line(t, (int)(l / t->out.h), (int)(l % t->out.h));
}
