/* conv3d by im2col + weight GEMM, or by the implicit-GEMM kernels (conv3d_avx512.c,
 * conv3d_avx2.c, conv3d_c1_avx2.c for one input channel), which read the input in place:
 *   in  (D, H, W, cin)  channels-last, pitch in.pitch
 *   w   (k, k, k, cin, cout) = a (k^3 cin) x cout row-major matrix
 *   out (OD, OH, OW, cout), pitch out.pitch (may be a channel slice of a concat)
 * im2col: per slab of R consecutive output voxels into the thread's workspace (R x k^3 cin,
 * column = tap * cin + ci, taps in (kz, ky, kx) order, zeros outside the input), then one
 * weight GEMM (R x K) . (K x cout) written straight into out with ldc = pitch (gemm_bf16.h:
 * the level's own float32 kernel, OpenBLAS at the baseline level, or the bfloat16 GEMM).
 * k = 1, stride 1, pad 0 skips im2col: the input rows are the A matrix (lda = in.pitch).
 * Threads claim (slab, column block) items dynamically; the columns are split only when
 * there are fewer than 2 slabs per thread. float32 accumulation. */
#include "kernels/cpu/conv/conv3d_internal.h"

#include <string.h>

/* Slab rows: big enough for an efficient GEMM, small enough that the im2col slab
 * (R x K floats) stays around 4 MB per thread. */
static long conv_rows(long nout, long kdim)
{
    long r = (1L << 20) / kdim;
    if (r > 512) r = 512;
    if (r < 16) r = 16;
    return r < nout ? r : nout;
}

size_t swin_cpu_conv3d_direct_ws(void *bev, struct swin_vol out, struct swin_vol in, int k)
{
    struct swin_cpu_backend *be = bev;
    long kdim = (long)k * k * k * in.c;
    long rows = conv_rows((long)swin_vol_voxels(out), kdim);
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * swin_cpu_round((size_t)rows * kdim * sizeof(float));
}

/* Row r of the im2col matrix for output voxel (oz, oy, ox). */
static void im2col_row(const struct conv_task *t, float *row, int oz, int oy, int ox)
{
    const struct swin_vol in = t->in;
    const int k = t->k, cin = in.c;
    for (int kz = 0; kz < k; kz++) {
        int iz = oz * t->stride - t->pad + kz;
        for (int ky = 0; ky < k; ky++) {
            int iy = oy * t->stride - t->pad + ky;
            for (int kx = 0; kx < k; kx++, row += cin) {
                int ix = ox * t->stride - t->pad + kx;
                if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) {
                    memset(row, 0, (size_t)cin * sizeof(float));
                    continue;
                }
                const float *src = swin_vol_f32(in) + (((int64_t)iz * in.h + iy) * in.w + ix) * in.pitch;
                memcpy(row, src, (size_t)cin * sizeof(float));
            }
        }
    }
}

/* Columns [c0, ...) of the weight matrix, float32 or bfloat16 (gemm_bf16.h reads a
 * bfloat16 matrix through the same pointer type). */
static const float *weight_cols(const struct conv_task *t, int c0)
{
    return t->gemm.bf16 ? (const float *)(const void *)((const swin_bf16 *)(const void *)t->w + c0) : t->w + c0;
}

static void conv_run(void *p, int tid, int nth)
{
    struct conv_task *t = p;
    const struct swin_vol out = t->out, in = t->in;
    const long nout = (long)swin_vol_voxels(out);
    const int cout = out.c;
    float *a = (float *)(t->ws + (size_t)tid * t->slice);
    if (t->implicit) {
        /* the slice's first cin floats are the zero row of the padding */
        memset(a, 0, (size_t)in.c * sizeof(float));
        if (in.c == 1 && t->simd >= SWIN_CPU_SIMD_AVX512) swin_cpu_conv3d_c1_avx512_run(t, &t->next);
        else if (in.c == 1) swin_cpu_conv3d_c1_avx2_run(t, &t->next);
        else if (t->simd >= SWIN_CPU_SIMD_AVX512) swin_cpu_conv3d_avx512_run(t, &t->next, a);
        else swin_cpu_conv3d_avx2_run(t, &t->next, a);
        return;
    }
    const long nslab = (nout + t->rows - 1) / t->rows;
    const int ncb = (cout + t->col_block - 1) / t->col_block;
    long built = -1, item, end;
    while (swin_cpu_claim(&t->next, nslab * ncb, 1, &item, &end)) {
        const long slab = item / ncb, b = slab * t->rows, e = b + t->rows < nout ? b + t->rows : nout, m = e - b;
        const int c0 = (int)(item % ncb) * t->col_block, nc = cout - c0 < t->col_block ? cout - c0 : t->col_block;
        float *c = swin_vol_f32(out) + b * out.pitch + c0;
        const float *bias = t->bias ? t->bias + c0 : NULL;
        if (t->rows_are_a) {
            swin_cpu_wgemm_run(t->gemm, (int)m, nc, in.c, swin_vol_f32(in) + b * in.pitch, in.pitch, weight_cols(t, c0),
                               cout, bias, false, c, out.pitch);
            continue;
        }
        if (slab != built) {
            for (long v = b; v < e; v++) {
                int ox = (int)(v % out.w), oy = (int)(v / out.w % out.h), oz = (int)(v / ((long)out.w * out.h));
                im2col_row(t, a + (v - b) * t->kdim, oz, oy, ox);
            }
            built = slab;
        }
        swin_cpu_wgemm_run(t->gemm, (int)m, nc, (int)t->kdim, a, (int)t->kdim, weight_cols(t, c0), cout, bias, false,
                           c, out.pitch);
    }
}

int swin_cpu_conv3d_direct(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *w,
                           const float *bias, int k, int stride, int pad, bool implicit, void *ws)
{
    struct conv_task t = {.out = out,
                          .in = in,
                          .w = w,
                          .bias = bias,
                          .k = k,
                          .stride = stride,
                          .pad = pad,
                          .simd = be->simd,
                          .gemm = swin_cpu_wgemm_of(be, w),
                          .implicit = implicit};
    const long nout = (long)swin_vol_voxels(out);
    t.kdim = (long)k * k * k * in.c;
    t.rows = conv_rows(nout, t.kdim);
    t.rows_are_a = k == 1 && stride == 1 && pad == 0;
    /* fewer than 2 slabs per thread: split the columns into blocks of a multiple of 16 */
    const long nslab = (nout + t.rows - 1) / t.rows, want = 2L * be->nthreads;
    const long ncb = nslab >= want ? 1 : (want + nslab - 1) / nslab;
    const int cb = (int)((out.c + ncb - 1) / ncb + 15) / 16 * 16;
    t.col_block = cb < out.c ? cb : out.c;
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = swin_cpu_round((size_t)t.rows * t.kdim * sizeof(float));
    atomic_init(&t.next, 0);
    swin_cpu_run(be, conv_run, &t);
    return 0;
}
