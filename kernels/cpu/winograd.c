/* Winograd F(2x2x2, 3x3x3): shape rule, workspace and entry point (kernels/cpu/winograd.h). */
#include "kernels/cpu/winograd.h"

static int round8(int n) { return (n + 7) / 8 * 8; }

bool swin_cpu_winograd_available(const struct swin_cpu_backend *be) { return be->simd == SWIN_CPU_SIMD_AVX2; }

bool swin_cpu_winograd_wins(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    if (!swin_cpu_winograd_available(be)) return false;
    /* Measured with bench_cpu_ops (--cube 96 and --cube 32, f = 48, 2 threads, AVX2, the
     * per-call weight transform included; bench/results/winograd_cpu.md): Winograd is
     * faster on every 3x3x3 shape whose output grid is at least 6 per axis, 2x-2.5x at 6^3
     * (decoder5 at 96^3: 27 tiles share each transformed weight), the 1-channel input conv
     * included (the direct kernel does as badly with one channel). At 4^3 the 8 tiles do
     * not pay for transforming and streaming 64 cin cout weights (192->192: 0.6x); it
     * loses further at 3^3, 2^3 and 1^3. 5^3 (27 tiles for 125 outputs) is unmeasured and
     * left to the direct kernel. */
    int lmin = out.d < out.h ? out.d : out.h;
    lmin = lmin < out.w ? lmin : out.w;
    return lmin >= 6;
}

/* Tile geometry and blocking for the shapes: nt tiles per block so that a thread's V and M
 * (64 nt (cinp + cob) floats) stay near 640 KiB, within a 1 MiB L2; at least 8 tiles so
 * that each U row is reused 8 times per load. On Zen 3 (512 KiB L2 per core) halving or
 * thirding that budget changed the f=48 96^3 convs by less than the run-to-run noise
 * (10 %): at 48 and 96 channels one point's V[p], U[p] and M[p] fit L1 whatever the budget. */
static void plan_task(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, struct wino_task *t)
{
    t->cinp = round8(in.c);
    t->coutp = round8(out.c);
    t->cob = t->coutp < 96 ? t->coutp : 96;
    int nt = 2560 / (t->cinp + t->cob) / 4 * 4;
    t->nt = nt < 8 ? 8 : (nt > 32 ? 32 : nt);
    t->tz = (out.d + 1) / 2;
    t->ty = (out.h + 1) / 2;
    t->tx = (out.w + 1) / 2;
    t->ntiles = (long)t->tz * t->ty * t->tx;
    /* enough blocks to keep every thread busy: shrink the block down to 4 tiles */
    while (t->nt > 4 && (t->ntiles + t->nt - 1) / t->nt < 2L * be->nthreads) t->nt -= 4;
    t->v_bytes = swin_cpu_round((size_t)64 * t->nt * t->cinp * sizeof(float));
    t->slice = t->v_bytes + swin_cpu_round((size_t)64 * t->nt * t->cob * sizeof(float));
}

/* Bytes of U for these shapes: 64 cin coutp floats, rounded to the alignment. */
static size_t u_bytes(const struct wino_task *t)
{
    return swin_cpu_round((size_t)64 * t->in.c * t->coutp * sizeof(float));
}

size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    struct wino_task t = {.out = out, .in = in};
    plan_task(be, out, in, &t);
    return SWIN_CPU_ALIGN + u_bytes(&t) + (size_t)be->nthreads * t.slice;
}

static void wino_weights(void *p, int tid, int nth)
{
    (void)tid, (void)nth;
    swin_cpu_winograd_avx2_weights(p);
}

static void wino_run(void *p, int tid, int nth)
{
    (void)nth;
    swin_cpu_winograd_avx2_run(p, tid);
}

int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *w,
                             const float *bias, void *ws, size_t ws_bytes)
{
    if (!w) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): w is NULL");
    if (!swin_cpu_winograd_available(be))
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): no kernel at this SIMD level (needs AVX2 + FMA)");
    if (out.d != in.d || out.h != in.h || out.w != in.w)
        return swin_cpu_fail(be, SWIN_ERR_SHAPE, "conv3d (Winograd): out %dx%dx%d differs from in %dx%dx%d",
                             out.d, out.h, out.w, in.d, in.h, in.w);
    size_t need = swin_cpu_winograd_ws(be, out, in);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): workspace %zu bytes, need %zu",
                             ws ? ws_bytes : 0, need);
    struct wino_task t = {.out = out, .in = in, .w = w, .w_bf16 = swin_cpu_wgemm_of(be, w).bf16, .bias = bias};
    plan_task(be, out, in, &t);
    /* workspace: U, then the threads' slices (both aligned) */
    t.u = (float *)swin_cpu_align_ptr(ws);
    t.ws = (char *)t.u + u_bytes(&t);
    atomic_init(&t.next, 0);
    swin_cpu_run(be, wino_weights, &t);   /* returns when every thread is done: U complete */
    atomic_store(&t.next, 0);
    swin_cpu_run(be, wino_run, &t);
    return 0;
}
