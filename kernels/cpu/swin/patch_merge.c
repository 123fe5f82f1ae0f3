/* patch_merge: out(i, j, k, :) = LN_8C( concat_m in(2i+o_m0, 2j+o_m1, 2k+o_m2, :) ) . red_w
 *   in (D, H, W, C) with even dims, out (D/2, H/2, W/2, 2C), order[m] = (o_d, o_h, o_w) of
 *   sub-grid m (channels [mC, (m+1)C) of the concat), LN affine (norm_w, norm_b: 8C),
 *   red_w (8C, 2C), no bias (MONAI PatchMerging / PatchMergingV2, forward spec 3.6).
 * Chunked over R consecutive output voxels: per thread workspace a (R, 8C) holds the
 * gathered and normalised rows; one sgemm writes the chunk into out (ldc = out.pitch). */
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <string.h>

static long merge_rows(long n) { return n < 256 ? n : 256; }

size_t swin_cpu_patch_merge_ws(void *bev, struct swin_vol out, struct swin_vol in)
{
    struct swin_cpu_backend *be = bev;
    long rows = merge_rows((long)swin_vol_voxels(out));
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * swin_cpu_round((size_t)rows * 8 * in.c * sizeof(float));
}

struct merge_task {
    struct swin_vol out, in;
    const int (*order)[3];
    const float *norm_w, *norm_b, *red_w;
    struct swin_cpu_wgemm gemm;
    swin_cpu_ln_row_fn *ln;
    long rows;
    char *ws;
    size_t slice;
    atomic_long next;
};

static void merge_run(void *p, int tid, int nth)
{
    struct merge_task *t = p;
    const struct swin_vol out = t->out, in = t->in;
    const int c = in.c, c8 = 8 * in.c;
    const long n = (long)swin_vol_voxels(out);
    float *a = (float *)(t->ws + (size_t)tid * t->slice);
    long b, e;
    while (swin_cpu_claim(&t->next, n, t->rows, &b, &e)) {
        for (long v = b; v < e; v++) {
            const int k = (int)(v % out.w), j = (int)(v / out.w % out.h), i = (int)(v / ((long)out.w * out.h));
            float *row = a + (size_t)(v - b) * c8;
            for (int m = 0; m < 8; m++) {
                const int64_t src = ((int64_t)(2 * i + t->order[m][0]) * in.h + (2 * j + t->order[m][1])) * in.w +
                                    (2 * k + t->order[m][2]);
                memcpy(row + (size_t)m * c, swin_vol_f32(in) + src * in.pitch, (size_t)c * sizeof(float));
            }
            t->ln(row, row, c8, t->norm_w, t->norm_b);
        }
        swin_cpu_wgemm_run(t->gemm, (int)(e - b), out.c, c8, a, c8, t->red_w, out.c, NULL, false,
                           swin_vol_f32(out) + b * out.pitch, out.pitch);
    }
}

int swin_cpu_patch_merge(void *bev, struct swin_vol out, struct swin_vol in,
                         const swin_merge_order order, const float *norm_w, const float *norm_b,
                         const float *red_w, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    struct merge_task t = {.out = out, .in = in, .order = order, .norm_w = norm_w, .norm_b = norm_b, .red_w = red_w,
                           .gemm = swin_cpu_wgemm_of(be, red_w), .ln = swin_cpu_ln_row_of(be)};
    t.rows = merge_rows((long)swin_vol_voxels(out));
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = swin_cpu_round((size_t)t.rows * 8 * in.c * sizeof(float));
    atomic_init(&t.next, 0);
    swin_cpu_run(be, merge_run, &t);
    return 0;
}
