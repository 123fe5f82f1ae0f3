/* Winograd F(2x2x2, 3x3x3): weight transform, shape rule, workspace, entry point and the
 * backend's table of transformed weights (kernels/cpu/winograd.h). */
#include "kernels/cpu/winograd.h"

#include <stdlib.h>
#include <string.h>

static int round8(int n) { return (n + 7) / 8 * 8; }

size_t swin_cpu_winograd_u_floats(int cin, int cout) { return (size_t)64 * cin * round8(cout); }

void swin_cpu_winograd_transform(float *u, const float *w, int cin, int cout)
{
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const int coutp = round8(cout);
    memset(u, 0, swin_cpu_winograd_u_floats(cin, cout) * sizeof(float));
    for (int ci = 0; ci < cin; ci++)
        for (int co = 0; co < cout; co++) {
            double g[3][3][3], t1[3][3][4], t2[3][4][4];
            for (int i = 0; i < 27; i++) g[i / 9][i / 3 % 3][i % 3] = w[((size_t)i * cin + ci) * cout + co];
            for (int i = 0; i < 3; i++)          /* along x */
                for (int j = 0; j < 3; j++)
                    for (int c = 0; c < 4; c++) t1[i][j][c] = G[c][0] * g[i][j][0] + G[c][1] * g[i][j][1] + G[c][2] * g[i][j][2];
            for (int i = 0; i < 3; i++)          /* along y */
                for (int b = 0; b < 4; b++)
                    for (int c = 0; c < 4; c++) t2[i][b][c] = G[b][0] * t1[i][0][c] + G[b][1] * t1[i][1][c] + G[b][2] * t1[i][2][c];
            for (int a = 0; a < 4; a++)          /* along z */
                for (int b = 0; b < 4; b++)
                    for (int c = 0; c < 4; c++) {
                        const int p = (a * 4 + b) * 4 + c;
                        u[((size_t)p * cin + ci) * coutp + co] =
                            (float)(G[a][0] * t2[0][b][c] + G[a][1] * t2[1][b][c] + G[a][2] * t2[2][b][c]);
                    }
        }
}

bool swin_cpu_winograd_available(const struct swin_cpu_backend *be) { return be->simd == SWIN_CPU_SIMD_AVX2; }

bool swin_cpu_winograd_wins(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    if (!swin_cpu_winograd_available(be)) return false;
    /* Measured with bench_ops (--cube 96 and --cube 32, f = 48, 2 threads, AVX2): Winograd
     * is faster on every 3x3x3 shape whose output grid is at least 4 per axis, 1.2x (4^3,
     * 384->192) to 3x (16^3, 96->48), the 1-channel input conv included (1.25x: the direct
     * kernel does as badly with one channel); it loses at 3^3 (encoder10 at 96^3: 2x2x2
     * tiles for 27 outputs), 2^3 and 1^3 (1.5-3x slower). Its weights take 64/27 of the
     * originals' bytes on top of them, and on grids under 8 per axis (decoder5 at 6^3:
     * 113 MiB for 0.66 s of a 30 s window) they cost the most memory per second saved, so
     * the rule starts at 8 per axis (+62 MiB for f = 48 at 96^3). */
    int lmin = out.d < out.h ? out.d : out.h;
    lmin = lmin < out.w ? lmin : out.w;
    return lmin >= 8;
}

/* Tile geometry and blocking for the shapes: nt tiles per block so that a thread's V and M
 * (64 nt (cinp + cob) floats) stay near 640 KiB, within a 1 MiB L2; at least 8 tiles so
 * that each U row is reused 8 times per load. */
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

size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    struct wino_task t;
    plan_task(be, out, in, &t);
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * t.slice;
}

static void wino_run(void *p, int tid, int nth)
{
    (void)nth;
    swin_cpu_winograd_avx2_run(p, tid);
}

int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *u,
                             const float *bias, void *ws, size_t ws_bytes)
{
    if (!u) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): u is NULL");
    if (!swin_cpu_winograd_available(be))
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): no kernel at this SIMD level (needs AVX2 + FMA)");
    if (out.d != in.d || out.h != in.h || out.w != in.w)
        return swin_cpu_fail(be, SWIN_ERR_SHAPE, "conv3d (Winograd): out %dx%dx%d differs from in %dx%dx%d",
                             out.d, out.h, out.w, in.d, in.h, in.w);
    size_t need = swin_cpu_winograd_ws(be, out, in);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): workspace %zu bytes, need %zu",
                             ws ? ws_bytes : 0, need);
    struct wino_task t = {.out = out, .in = in, .u = u, .bias = bias};
    plan_task(be, out, in, &t);
    t.ws = swin_cpu_align_ptr(ws);
    atomic_init(&t.next, 0);
    swin_cpu_run(be, wino_run, &t);
    return 0;
}

swin_status swin_cpu_winograd_register(struct swin_cpu_backend *be, const float *w, int cin, int cout,
                                       swin_error *err)
{
    if (!be->wino && !(be->wino = calloc(1, sizeof *be->wino)))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the Winograd weight table");
    struct swin_cpu_wino_table *tb = be->wino;
    if (swin_cpu_winograd_lookup(be, w, cin, cout)) return SWIN_OK;
    if (tb->n == tb->cap) {
        int cap = tb->cap ? 2 * tb->cap : 32;
        struct swin_cpu_wino_entry *e = realloc(tb->e, (size_t)cap * sizeof *e);
        if (!e) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the Winograd weight table");
        tb->e = e;
        tb->cap = cap;
    }
    size_t bytes = swin_cpu_round(swin_cpu_winograd_u_floats(cin, cout) * sizeof(float));
    float *u = aligned_alloc(SWIN_CPU_ALIGN, bytes);
    if (!u)
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %.1f MiB of Winograd weights",
                              (double)bytes / (1024.0 * 1024.0));
    swin_cpu_winograd_transform(u, w, cin, cout);
    tb->e[tb->n++] = (struct swin_cpu_wino_entry){.w = w, .cin = cin, .cout = cout, .u = u};
    tb->bytes += bytes;
    return SWIN_OK;
}

const float *swin_cpu_winograd_lookup(const struct swin_cpu_backend *be, const float *w, int cin, int cout)
{
    if (!be->wino) return NULL;
    for (int i = 0; i < be->wino->n; i++) {
        const struct swin_cpu_wino_entry *e = &be->wino->e[i];
        if (e->w == w && e->cin == cin && e->cout == cout) return e->u;
    }
    return NULL;
}

void swin_cpu_winograd_table_free(struct swin_cpu_backend *be)
{
    if (!be->wino) return;
    for (int i = 0; i < be->wino->n; i++) free(be->wino->e[i].u);
    free(be->wino->e);
    free(be->wino);
    be->wino = NULL;
}
