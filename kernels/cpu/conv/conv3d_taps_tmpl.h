/* conv3d on small output grids as one accumulating GEMM per tap, written once for every level
 * (compiled by conv3d_taps_avx2.c and conv3d_taps_avx512.c after their level's vec_*.h, with
 * TAPS_RUN, the entry's name, defined).
 *
 * For tap (kz, ky, kx) the output voxels whose input voxel lies inside the input form a box;
 * their input rows times the tap's weights w[kz][ky][kx] (cin x cout) are added to their
 * output rows:
 *   out[v][co] = bias[co] + sum over taps (in order) of sum_ci in[v + tap][ci] w[tap][ci][co].
 * Work items are chunks of TAPS_CHUNK output channels. Per chunk: its output columns set to
 * the bias, then per tap
 *   1. the tap's weights for the chunk repacked into the thread's buffer as panels of PW
 *      = 3 VW columns, each (cin x PW) contiguous, bfloat16 weights widened exactly (W read as row segments of TAPS_CHUNK floats,
 *      prefetched PACK_AHEAD rows ahead: the rows are cout floats apart);
 *   2. the box's voxels MR at a time, for every panel while their input rows are in L1: 3 MR
 *      vector accumulators over ci (MR 4 with AVX2's 16 registers, 8 with AVX-512's 32), added
 *      to the output rows at once.
 * Each weight is read from memory once per call, where the implicit GEMM (conv3d_avx2.c)
 * reads all of W once per tile of voxels, and no product is spent on padding, where at
 * 3^3 46 % of im2col's are (at 6^3 30 %). The sums do not depend on the thread count
 * (threads split the columns only). */
#include "kernels/cpu/conv/conv3d_internal.h"

#include <string.h>

#include "kernels/cpu/bf16.h"

/* Rows per register tile, columns per panel */
#define MR (VW == 8 ? 4 : 8)
#define PW (3 * VW)
#define PACK_AHEAD 16

/* rows [0, m) of C (row pointers c[], columns [0, cols) of a tile of VW NV) += A (row pointers
 * a[], rows past m repeat row 0) . W (cin x VW NV, stride ldw); full: cols = VW NV. */
#define TAPS_TILE(NV)                                                                                            \
    V_INLINE void tile_##NV(const float *const a[MR], int m, const float *w, int ldw, int cin,               \
                               float *const c[MR], int cols, bool full)                                        \
    {                                                                                                            \
        vf acc[MR][NV];                                                                                      \
        for (int r = 0; r < MR; r++)                                                                             \
            for (int j = 0; j < NV; j++) acc[r][j] = v_zero();                                        \
        const vmask last = v_mask(cols - VW * (NV - 1));                                                \
        for (int ci = 0; ci < cin; ci++, w += ldw) {                                                             \
            vf wv[NV];                                                                                       \
            for (int j = 0; j < NV - 1; j++) wv[j] = v_loadu(w + VW * j);                                \
            wv[NV - 1] = full ? v_loadu(w + VW * (NV - 1)) : v_maskload(w + VW * (NV - 1), last); \
            for (int r = 0; r < MR; r++) {                                                                       \
                const vf x = v_set1(a[r][ci]);                                                 \
                for (int j = 0; j < NV; j++) acc[r][j] = v_fmadd(x, wv[j], acc[r][j]);                   \
            }                                                                                                    \
        }                                                                                                        \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                                  \
            if (r >= m) continue;                                                                                \
            float *row = c[r];                                                                                   \
            for (int j = 0; j < NV; j++) {                                                                       \
                if (j < NV - 1 || full)                                                                          \
                    v_storeu(row + VW * j, v_add(acc[r][j], v_loadu(row + VW * j)));       \
                else                                                                                             \
                    v_maskstore(row + VW * j, last,                                                       \
                                        v_add(acc[r][j], v_maskload(row + VW * j, last)));        \
            }                                                                                                    \
        }                                                                                                        \
    }

TAPS_TILE(3)
TAPS_TILE(2)
TAPS_TILE(1)

/* The output range [lo, hi) along one axis of n outputs whose input o * stride - pad + kk
 * lies in [0, nin). */
static void valid_range(int n, int nin, int stride, int pad, int kk, int *lo, int *hi)
{
    *lo = 0;
    while (*lo < n && *lo * stride - pad + kk < 0) (*lo)++;
    *hi = n;
    while (*hi > *lo && (*hi - 1) * stride - pad + kk >= nin) (*hi)--;
}

/* Columns [co0, co0 + nco) (nco <= TAPS_CHUNK) of the whole convolution; pack: the thread's
 * cin TAPS_CHUNK floats. */
V_FN static void column_chunk(const struct conv_task *t, int co0, int nco, float *pack)
{
    const struct swin_vol in = t->in, out = t->out;
    const int k = t->k, cin = in.c, cout = out.c;
    const long nvox = (long)swin_vol_voxels(out);
    for (long v = 0; v < nvox; v++) {
        float *row = swin_vol_f32(out) + v * out.pitch + co0;
        for (int j = 0; j < nco; j++) row[j] = t->bias ? t->bias[co0 + j] : 0.0f;
    }
    for (int kz = 0; kz < k; kz++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                int z0, z1, y0, y1, x0, x1;
                valid_range(out.d, in.d, t->stride, t->pad, kz, &z0, &z1);
                valid_range(out.h, in.h, t->stride, t->pad, ky, &y0, &y1);
                valid_range(out.w, in.w, t->stride, t->pad, kx, &x0, &x1);
                const int bh = y1 - y0, bw = x1 - x0;
                const long nbox = (long)(z1 - z0) * bh * bw;
                if (nbox == 0) continue;
                /* the tap's columns as panels of PW (the last one narrower), each (cin x width)
                 * row-major: W read a row segment of nco values at a time */
                const size_t w0 = (size_t)((kz * k + ky) * k + kx) * cin * cout + co0;
                for (int ci = 0; ci < cin; ci++) {
                    /* rows PACK_AHEAD ahead: a row segment a few lines long, rows cout floats apart */
                    const size_t ahead = w0 + (size_t)(ci + PACK_AHEAD) * cout;
                    if (ci + PACK_AHEAD < cin)
                        for (int j = 0; j < nco; j += 16)
                            _mm_prefetch(t->gemm.bf16 ? (const char *)((const swin_bf16 *)(const void *)t->w + ahead + j)
                                                   : (const char *)(t->w + ahead + j),
                                         _MM_HINT_T0);
                    for (int j = 0; j < nco; j += PW) {
                        const int wd = nco - j < PW ? nco - j : PW;
                        float *dst = pack + (size_t)j * cin + (size_t)ci * wd;
                        const size_t at = w0 + (size_t)ci * cout + j;
                        if (!t->gemm.bf16) {
                            memcpy(dst, t->w + at, (size_t)wd * sizeof(float));
                            continue;
                        }
                        const swin_bf16 *src = (const swin_bf16 *)(const void *)t->w + at;
                        for (int q = 0; q < wd; q++) dst[q] = swin_bf16_to_f32(src[q]);
                    }
                }
                for (long i0 = 0; i0 < nbox; i0 += MR) {   /* the box's voxels in order, MR at a time */
                    const int m = nbox - i0 < MR ? (int)(nbox - i0) : MR;
                    const float *a[MR];
                    float *c[MR];
                    for (int r = 0; r < MR; r++) {
                        const long i = i0 + (r < m ? r : 0);
                        const int oz = z0 + (int)(i / ((long)bh * bw)), oy = y0 + (int)(i / bw % bh), ox = x0 + (int)(i % bw);
                        const long iv = ((long)(oz * t->stride - t->pad + kz) * in.h + oy * t->stride - t->pad + ky) * in.w +
                                        ox * t->stride - t->pad + kx;
                        a[r] = swin_vol_f32(in) + iv * in.pitch;
                        c[r] = swin_vol_f32(out) + (((long)oz * out.h + oy) * out.w + ox) * out.pitch + co0;
                    }
                    /* every panel while the tile's input rows are in L1 */
                    for (int j = 0; j < nco; j += PW) {
                        const int wd = nco - j < PW ? nco - j : PW, nv = (wd + VW - 1) / VW;
                        const float *wp = pack + (size_t)j * cin;
                        float *cj[MR];
                        for (int r = 0; r < MR; r++) cj[r] = c[r] + j;
                        /* a constant `full` per call: the loads in the ci loop are chosen at compile time */
                        if (wd == 3 * VW) tile_3(a, m, wp, wd, cin, cj, wd, true);
                        else if (nv == 3) tile_3(a, m, wp, wd, cin, cj, wd, false);
                        else if (wd == 2 * VW) tile_2(a, m, wp, wd, cin, cj, wd, true);
                        else if (nv == 2) tile_2(a, m, wp, wd, cin, cj, wd, false);
                        else if (wd == VW) tile_1(a, m, wp, wd, cin, cj, wd, true);
                        else tile_1(a, m, wp, wd, cin, cj, wd, false);
                    }
                }
            }
}

void TAPS_RUN(const struct conv_task *t, atomic_long *next, float *pack)
{
    const long nchunks = (t->out.c + TAPS_CHUNK - 1) / TAPS_CHUNK;
    long b, e;
    while (swin_cpu_claim(next, nchunks, 1, &b, &e)) {
        const int co0 = (int)b * TAPS_CHUNK;
        column_chunk(t, co0, t->out.c - co0 < TAPS_CHUNK ? t->out.c - co0 : TAPS_CHUNK, pack);
    }
}
