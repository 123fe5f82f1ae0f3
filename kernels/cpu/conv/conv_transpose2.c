/* conv_transpose2: ConvTranspose3d kernel 2, stride 2, no bias (torch.nn.ConvTranspose3d).
 *   in  (D, H, W, cin), w (2, 2, 2, cin, cout), out (2D, 2H, 2W, cout)
 *   out(2i+a, 2j+b, 2k+g, :) = in(i, j, k, :) . w[a][b][g]     (outputs never overlap)
 * Per input line (i, j) and tap (a, b, g): one weight GEMM (W x cin) . (cin x cout)
 * (gemm_bf16.h: the level's own kernel, which reads the weights in place) whose rows land
 * every second output voxel of line (2i+a, 2j+b), i.e. ldc = 2 * out.pitch.
 * Threads claim input lines dynamically. No workspace. */
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"

struct convt_task {
    struct swin_vol out, in;
    const float *w;
    struct swin_cpu_wgemm gemm;
    atomic_long next;
};

static void convt_run(void *p, int tid, int nth)
{
    struct convt_task *t = p;
    const struct swin_vol out = t->out, in = t->in;
    const long lines = (long)in.d * in.h;
    const int cin = in.c, cout = out.c;
    long b, e;
    while (swin_cpu_claim(&t->next, lines, 1, &b, &e)) {
        const int i = (int)(b / in.h), j = (int)(b % in.h);
        const float *a_rows = swin_vol_f32(in) + (int64_t)b * in.w * in.pitch;
        for (int tap = 0; tap < 8; tap++) {
            const int da = tap >> 2, db = (tap >> 1) & 1, dg = tap & 1;
            float *c = swin_vol_f32(out) + ((((int64_t)(2 * i + da) * out.h) + (2 * j + db)) * out.w + dg) * out.pitch;
            /* tap offset in elements: the weights' own type (float32 or bfloat16) */
            const float *wt = t->gemm.bf16 ? (const float *)(const void *)((const swin_bf16 *)(const void *)t->w +
                                                                             (int64_t)tap * cin * cout)
                                           : t->w + (int64_t)tap * cin * cout;
            swin_cpu_wgemm_run(t->gemm, in.w, cout, cin, a_rows, in.pitch, wt, cout, NULL, false, c, 2 * out.pitch);
        }
    }
}

int swin_cpu_conv_transpose2(void *bev, struct swin_vol out, struct swin_vol in, const float *w)
{
    struct swin_cpu_backend *be = bev;
    struct convt_task t = {.out = out, .in = in, .w = w, .gemm = swin_cpu_wgemm_of(be, w)};
    atomic_init(&t.next, 0);
    swin_cpu_run(be, convt_run, &t);
    return 0;
}
