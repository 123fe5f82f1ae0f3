/* swin_mlp, in place on the residual stream x (L1, L2, L3, C):
 *   x += fc2(GELU_erf(fc1(LN2(x))))       LN2 affine (norm2), GELU 0.5 v (1 + erf(v / sqrt 2))
 *                                          (vectorised erf: gelu.c, vmath_avx2.c, vmath_avx512.c)
 * fc1_w (C, hidden), fc2_w (hidden, C) as core/model.h. Chunked over R consecutive
 * tokens (mlp_rows) so the hidden activations exist for R tokens only. Per thread workspace:
 *   a (R, C)       LN2 of the chunk
 *   h (R, hidden)  fc1 + bias, then GELU in place
 * fc1 and fc2 add their biases as they store; fc2 accumulates straight into x. Threads claim
 * chunks. */
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <string.h>

/* Rows per chunk: up to 256, fewer where that leaves under 8 chunks (6^3 at 96^3 is 216
 * tokens: one chunk of 256 ran on one thread), in multiples of 8. Not from the thread
 * count: the chunks, and so OpenBLAS's sums, are the same whatever --threads. */
static long mlp_rows(long n)
{
    long r = (n / 8 + 7) / 8 * 8;
    r = r < 8 ? 8 : (r > 256 ? 256 : r);
    return r < n ? r : n;
}

static size_t mlp_slice(long rows, int c, int hidden)
{
    return swin_cpu_round((size_t)rows * c * sizeof(float)) + swin_cpu_round((size_t)rows * hidden * sizeof(float));
}

size_t swin_cpu_swin_mlp_ws(void *bev, struct swin_vol x, int hidden)
{
    struct swin_cpu_backend *be = bev;
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * mlp_slice(mlp_rows((long)swin_vol_voxels(x)), x.c, hidden);
}

struct mlp_task {
    struct swin_vol x;
    const struct swin_block_w *blk;
    int hidden;
    void (*gelu)(float *h, size_t n);
    struct swin_cpu_wgemm fc1, fc2;
    swin_cpu_ln_row_fn *ln;
    long rows;
    char *ws;
    size_t slice;
    atomic_long next;
};

static void mlp_run(void *p, int tid, int nth)
{
    struct mlp_task *t = p;
    const struct swin_vol x = t->x;
    const struct swin_block_w *w = t->blk;
    const int c = x.c, hid = t->hidden;
    const long n = (long)swin_vol_voxels(x);
    float *a = (float *)(t->ws + (size_t)tid * t->slice);
    float *h = (float *)((char *)a + swin_cpu_round((size_t)t->rows * c * sizeof(float)));
    long b, e;
    while (swin_cpu_claim(&t->next, n, t->rows, &b, &e)) {
        const int m = (int)(e - b);
        float *xr = swin_vol_f32(x) + b * x.pitch;
        for (int r = 0; r < m; r++) t->ln(a + (size_t)r * c, xr + (size_t)r * x.pitch, c, w->norm2_w, w->norm2_b);
        swin_cpu_wgemm_run(t->fc1, m, hid, c, a, c, w->fc1_w, hid, w->fc1_b, false, h, hid);
        t->gelu(h, (size_t)m * hid);
        swin_cpu_wgemm_run(t->fc2, m, c, hid, h, hid, w->fc2_w, c, w->fc2_b, true, xr, x.pitch);
    }
}

int swin_cpu_swin_mlp(void *bev, struct swin_vol x, const struct swin_block_w *blk, int hidden,
                      void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    struct mlp_task t = {.x = x, .blk = blk, .hidden = hidden, .fc1 = swin_cpu_wgemm_of(be, blk->fc1_w),
                         .fc2 = swin_cpu_wgemm_of(be, blk->fc2_w), .ln = swin_cpu_ln_row_of(be),
                         .gelu = be->simd >= SWIN_CPU_SIMD_AVX512 ? swin_cpu_gelu_erf_avx512
                                 : be->simd == SWIN_CPU_SIMD_AVX2 ? swin_cpu_gelu_erf_avx2
                                                                  : swin_cpu_gelu_erf};
    t.rows = mlp_rows((long)swin_vol_voxels(x));
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = mlp_slice(t.rows, x.c, hidden);
    atomic_init(&t.next, 0);
    swin_cpu_run(be, mlp_run, &t);
    return 0;
}
