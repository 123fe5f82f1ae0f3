/* conv3d as an implicit GEMM with AVX-512 (compiled for avx512f only in this file's
 * functions; the caller checks the CPU first, and every other CPU takes the im2col +
 * OpenBLAS path of conv3d.c).
 *
 * For a tile of MR = 8 consecutive output voxels and up to 48 output channels (3 vectors of
 * 16, the last one masked), 24 zmm accumulators hold out[v][co]; for every tap the 8 input
 * rows are found (the zero row where the tap falls in the padding) and for every input
 * channel ci: acc[v][j] += in_row_v[ci] * w[tap][ci][16j .. 16j+15]. The input is read in
 * place (no im2col), the weights (k^3 cin cout floats) stay in L2 across tiles. Output
 * channels beyond 48 are done in further passes over the same tile. */
#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/isa.h"

#include <immintrin.h>

#define MR 8
/* voxels per work item: 8 tiles */
#define CONV_AVX512_SLAB (8 * MR)

/* One tile: voxels [v0, v0 + m), output channels [co0, co0 + nco), NV = ceil(nco / 16)
 * vectors (a constant after inlining). The 8 x NV accumulators are named variables, not an
 * array, so that they stay in registers. */
#define ACC_DECL(i) __m512 acc##i##0 = zero4, acc##i##1 = zero4, acc##i##2 = zero4;
#define ACC_STEP(i)                                                       \
    {                                                                     \
        const __m512 a = _mm512_set1_ps(r##i[ci]);                        \
        acc##i##0 = _mm512_fmadd_ps(a, w0, acc##i##0);                    \
        if (NV > 1) acc##i##1 = _mm512_fmadd_ps(a, w1, acc##i##1);        \
        if (NV > 2) acc##i##2 = _mm512_fmadd_ps(a, w2, acc##i##2);        \
    }
#define ACC_STORE(i)                                                      \
    if (i < m) {                                                          \
        float *o = swin_vol_f32(t->out) + (v0 + i) * t->out.pitch + co0;           \
        store_row(o, bias, acc##i##0, acc##i##1, acc##i##2, NV, last);    \
    }

SWIN_AVX512_INLINE void store_row(float *o, const float *bias, __m512 y0, __m512 y1, __m512 y2, const int NV,
                             __mmask16 last)
{
    const __m512 ys[3] = {y0, y1, y2};
    for (int j = 0; j < NV; j++) {
        const __mmask16 mk = j == NV - 1 ? last : (__mmask16)0xFFFF;
        __m512 y = ys[j];
        if (bias) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mk, bias + 16 * j));
        swin_store16(o + 16 * j, mk, y);
    }
}

SWIN_AVX512_INLINE void tile_nv(const struct conv_task *t, long v0, int m, int co0, int nco, const float *zero, const int NV)
{
    const int cin = t->in.c, cout = t->out.c, k = t->k;
    const __mmask16 last = (__mmask16)((1u << (nco - 16 * (NV - 1))) - 1u);
    const __m512 zero4 = _mm512_setzero_ps();
    const float *bias = t->bias ? t->bias + co0 : NULL;
    ACC_DECL(0) ACC_DECL(1) ACC_DECL(2) ACC_DECL(3) ACC_DECL(4) ACC_DECL(5) ACC_DECL(6) ACC_DECL(7)
    const float *rows[MR];
    struct conv_tile_origin org;
    conv_tile_origin(t, v0, m, &org);
    for (int kz = 0; kz < k; kz++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                conv_tap_rows(t, &org, m, MR, kz, ky, kx, zero, rows);
                const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4],
                            *r5 = rows[5], *r6 = rows[6], *r7 = rows[7];
                const float *wt = t->w + (size_t)((kz * k + ky) * k + kx) * cin * cout + co0;
                for (int ci = 0; ci < cin; ci++, wt += cout) {
                    const __m512 w0 = NV == 1 ? _mm512_maskz_loadu_ps(last, wt) : _mm512_loadu_ps(wt);
                    const __m512 w1 = NV == 2 ? _mm512_maskz_loadu_ps(last, wt + 16)
                                              : (NV > 2 ? _mm512_loadu_ps(wt + 16) : zero4);
                    const __m512 w2 = NV == 3 ? _mm512_maskz_loadu_ps(last, wt + 32) : zero4;
                    ACC_STEP(0) ACC_STEP(1) ACC_STEP(2) ACC_STEP(3) ACC_STEP(4) ACC_STEP(5) ACC_STEP(6) ACC_STEP(7)
                }
            }
    ACC_STORE(0) ACC_STORE(1) ACC_STORE(2) ACC_STORE(3) ACC_STORE(4) ACC_STORE(5) ACC_STORE(6) ACC_STORE(7)
}

SWIN_AVX512
static void tile(const struct conv_task *t, long v0, int m, int co0, int nco, const float *zero)
{
    if (nco > 32) tile_nv(t, v0, m, co0, nco, zero, 3);
    else if (nco > 16) tile_nv(t, v0, m, co0, nco, zero, 2);
    else tile_nv(t, v0, m, co0, nco, zero, 1);
}

void swin_cpu_conv3d_avx512_run(const struct conv_task *t, atomic_long *next, const float *zero)
{
    /* work items: (slab of CONV_AVX512_SLAB voxels, block of 48 output channels), so that
     * small volumes with many channels (encoder10: 27 voxels x 768) still use every thread */
    const long nout = (long)swin_vol_voxels(t->out);
    const long nslab = (nout + CONV_AVX512_SLAB - 1) / CONV_AVX512_SLAB;
    const long ncob = (t->out.c + 47) / 48;
    long b, e;
    while (swin_cpu_claim(next, nslab * ncob, 1, &b, &e)) {
        const long v0 = b / ncob * CONV_AVX512_SLAB, v1 = v0 + CONV_AVX512_SLAB < nout ? v0 + CONV_AVX512_SLAB : nout;
        const int co0 = (int)(b % ncob) * 48, nco = t->out.c - co0 < 48 ? t->out.c - co0 : 48;
        for (long v = v0; v < v1; v += MR) tile(t, v, v1 - v < MR ? (int)(v1 - v) : MR, co0, nco, zero);
    }
}
