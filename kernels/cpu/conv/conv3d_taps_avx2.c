/* conv3d on small output grids as one accumulating GEMM per tap, with AVX2 + FMA (compiled
 * for avx2,fma only; the backend checks the CPU first).
 *
 * For tap (kz, ky, kx) the output voxels whose input voxel lies inside the input form a box;
 * their input rows times the tap's weights w[kz][ky][kx] (cin x cout) are added to their
 * output rows:
 *   out[v][co] = bias[co] + sum over taps (in order) of sum_ci in[v + tap][ci] w[tap][ci][co].
 * Work items are chunks of TAPS_CHUNK output channels. Per chunk: its output columns set to
 * the bias, then per tap
 *   1. the tap's weights for the chunk repacked into the thread's buffer as panels of 24
 *      columns, each (cin x 24) contiguous (W read as row segments of TAPS_CHUNK floats,
 *      prefetched PACK_AHEAD rows ahead: the rows are cout floats apart);
 *   2. the box's voxels 4 at a time, for every panel while their input rows are in L1: 12 ymm
 *      accumulators over ci, added to the output rows at once.
 * Each weight is read from memory once per call, where the implicit GEMM (conv3d_avx2.c)
 * reads all of W once per tile of 4 voxels, and no product is spent on padding, where at
 * 3^3 46 % of im2col's are (at 6^3 30 %). The sums do not depend on the thread count
 * (threads split the columns only). */
#include "kernels/cpu/conv/conv3d_internal.h"

#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/isa.h"

#define MR 4
#define PACK_AHEAD 16

/* rows [0, m) of C (row pointers c[], columns [0, cols) of a tile of 8 NV) += A (row pointers
 * a[], rows past m repeat row 0) . W (cin x 8 NV, stride ldw); FULL: cols = 8 NV. */
#define TAPS_TILE(NV)                                                                                            \
    SWIN_AVX2_INLINE void tile_##NV(const float *const a[MR], int m, const float *w, int ldw, int cin,               \
                               float *const c[MR], int cols, bool full)                                        \
    {                                                                                                            \
        __m256 acc[MR][NV];                                                                                      \
        for (int r = 0; r < MR; r++)                                                                             \
            for (int j = 0; j < NV; j++) acc[r][j] = _mm256_setzero_ps();                                        \
        const __m256i last = swin_cpu_lanes(cols - 8 * (NV - 1));                                                \
        for (int ci = 0; ci < cin; ci++, w += ldw) {                                                             \
            __m256 wv[NV];                                                                                       \
            for (int j = 0; j < NV - 1; j++) wv[j] = _mm256_loadu_ps(w + 8 * j);                                \
            wv[NV - 1] = full ? _mm256_loadu_ps(w + 8 * (NV - 1)) : _mm256_maskload_ps(w + 8 * (NV - 1), last); \
            for (int r = 0; r < MR; r++) {                                                                       \
                const __m256 x = _mm256_broadcast_ss(a[r] + ci);                                                 \
                for (int j = 0; j < NV; j++) acc[r][j] = _mm256_fmadd_ps(x, wv[j], acc[r][j]);                   \
            }                                                                                                    \
        }                                                                                                        \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                                  \
            if (r >= m) continue;                                                                                \
            float *row = c[r];                                                                                   \
            for (int j = 0; j < NV; j++) {                                                                       \
                if (j < NV - 1 || full)                                                                          \
                    _mm256_storeu_ps(row + 8 * j, _mm256_add_ps(acc[r][j], _mm256_loadu_ps(row + 8 * j)));       \
                else                                                                                             \
                    _mm256_maskstore_ps(row + 8 * j, last,                                                       \
                                        _mm256_add_ps(acc[r][j], _mm256_maskload_ps(row + 8 * j, last)));        \
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
SWIN_AVX2 static void column_chunk(const struct conv_task *t, int co0, int nco, float *pack)
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
                /* the tap's columns as panels of 24 (the last one narrower), each (cin x width)
                 * row-major: W read a row segment of nco floats at a time */
                const float *w = t->w + (size_t)((kz * k + ky) * k + kx) * cin * cout + co0;
                for (int ci = 0; ci < cin; ci++) {
                    /* rows PACK_AHEAD ahead: a row segment a few lines long, rows cout floats apart */
                    if (ci + PACK_AHEAD < cin)
                        for (int j = 0; j < nco; j += 16)
                            _mm_prefetch((const char *)(w + (size_t)(ci + PACK_AHEAD) * cout + j), _MM_HINT_T0);
                    for (int j = 0; j < nco; j += 24) {
                        const int wd = nco - j < 24 ? nco - j : 24;
                        memcpy(pack + (size_t)j * cin + (size_t)ci * wd, w + (size_t)ci * cout + j, (size_t)wd * sizeof(float));
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
                    for (int j = 0; j < nco; j += 24) {
                        const int wd = nco - j < 24 ? nco - j : 24, nv = (wd + 7) / 8;
                        const float *wp = pack + (size_t)j * cin;
                        float *cj[MR];
                        for (int r = 0; r < MR; r++) cj[r] = c[r] + j;
                        /* a constant `full` per call: the loads in the ci loop are chosen at compile time */
                        if (wd == 24) tile_3(a, m, wp, wd, cin, cj, wd, true);
                        else if (nv == 3) tile_3(a, m, wp, wd, cin, cj, wd, false);
                        else if (wd == 16) tile_2(a, m, wp, wd, cin, cj, wd, true);
                        else if (nv == 2) tile_2(a, m, wp, wd, cin, cj, wd, false);
                        else if (wd == 8) tile_1(a, m, wp, wd, cin, cj, wd, true);
                        else tile_1(a, m, wp, wd, cin, cj, wd, false);
                    }
                }
            }
}

void swin_cpu_conv3d_taps_avx2_run(const struct conv_task *t, atomic_long *next, float *pack)
{
    const long nchunks = (t->out.c + TAPS_CHUNK - 1) / TAPS_CHUNK;
    long b, e;
    while (swin_cpu_claim(next, nchunks, 1, &b, &e)) {
        const int co0 = (int)b * TAPS_CHUNK;
        column_chunk(t, co0, t->out.c - co0 < TAPS_CHUNK ? t->out.c - co0 : TAPS_CHUNK, pack);
    }
}
