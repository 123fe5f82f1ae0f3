/* Winograd F(2x2x2, 3x3x3): shape rule, workspace and entry point (kernels/cpu/winograd.h). */
#include "kernels/cpu/winograd/winograd.h"

static int round_up(int n, int to) { return (n + to - 1) / to * to; }

/* Floats of V and M per thread: 640 KiB. */
#define WINO_NT_BUDGET (640 * 256)
/* Bytes of V and M of a block of the wide schedule, shared by all threads. */
#define WINO_WIDE_BUDGET (8L << 20)

bool swin_cpu_winograd_available(const struct swin_cpu_backend *be) { return be->simd == SWIN_CPU_SIMD_AVX2; }

int swin_cpu_winograd_tile(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    if (!swin_cpu_winograd_available(be)) return 0;
    /* F(2x2x2): measured with bench_cpu_ops (--cube 96 and --cube 32, f = 48, 2 threads, AVX2,
     * the per-call weight transform included; bench/results/winograd_cpu.md): Winograd is
     * faster on every 3x3x3 shape whose output grid is at least 6 per axis, 2x-2.5x at 6^3
     * (decoder5 at 96^3: 27 tiles share each transformed weight), and against the implicit
     * GEMM on the 1-channel input conv too. At 4^3 the 8 tiles do
     * not pay for transforming and streaming 64 cin cout weights (192->192: 0.6x); it
     * loses further at 3^3, 2^3 and 1^3. 5^3 (27 tiles for 125 outputs) is unmeasured and
     * left to the direct kernel.
     * F(4x4x4) (bench_cpu_ops --cube 96 --op wino, the same conditions): 2.1x-2.8x faster than
     * F(2x2x2) on the 96^3 and 48^3 grids of f = 48,
     * 0.9x-1.8x at 24^3 over several runs; at 12^3 slower or with 216 cin cout floats of U
     * (64 MiB at 384 -> 192), at 6^3 and 3^3 2-3x slower (U streamed once per block of
     * tiles). Its float32 error, 10-40x F(2x2x2)'s and still within 1e-5 of the output's
     * scale, is measured per model shape in bench/results/winograd_cpu.md.
     * conv3d (conv3d.c) asks this rule only for grids above 6^3 voxels: the per-tap GEMMs
     * (conv3d_taps_avx2.c) take the smaller ones, 1.4x-1.9x faster than F(2x2x2) at 6^3. */
    /* one input channel: the direct kernel of conv3d_c1_avx2.c, 1.5x faster than F(4x4x4)
     * at 64^3 (Winograd transforms 8 lanes of which 7 are padding; bench/results/cpu_speed) */
    if (in.c == 1) return 0;
    int lmin = out.d < out.h ? out.d : out.h;
    lmin = lmin < out.w ? lmin : out.w;
    if (lmin >= 24) return 4;
    return lmin >= 6 ? 2 : 0;
}

bool swin_cpu_winograd_wins(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in)
{
    return swin_cpu_winograd_tile(be, out, in) != 0;
}

/* Tile geometry and blocking for the shapes. F(2x2x2): nt tiles per block so that a thread's
 * V and M (64 nt (cinp + cob) floats) stay near 640 KiB; at least 8 tiles so that each U row
 * is reused 8 times per load. On Zen 3 (512 KiB L2 per core) halving or thirding that budget
 * changed the f=48 96^3 convs by less than the run-to-run noise (10 %): at 48 and 96
 * channels one point's V[p], U[p] and M[p] fit L1 whatever the budget. F(4x4x4): the
 * budget over 216 points gives fewer than 8 tiles, so 8 (blocks of 4, 16 and 32 tiles were
 * no faster on the 96^3 convs), each block streaming all of U (216 cin coutp floats) once;
 * its V is tile-major, so that the input transform writes each tile's 216 cinp values in
 * one run (point-major, a tile's stores land on 216 lines nt cinp floats apart).
 *
 * Both stream U once per block of nt tiles: np cin coutp floats per nt tiles, against the
 * np (cinp + coutp) floats of V and M per tile, so the ratio is cin coutp / (nt (cinp +
 * coutp)), independent of the tile size. Where it is 8 or more (at nt = 8: 192 -> 96 and
 * wider; in f = 48 the 24^3 192->96 conv and every conv at 12^3 and 6^3), the wide schedule
 * runs instead: blocks of as many tiles as 8 MiB of V and M hold, all threads transforming
 * the block's tiles in, then multiplying point by point (each U[p] read once per block),
 * then transforming out. Measured (bench_cpu_ops --cube 96 --op wino, 2 threads, two runs):
 * 12^3 384->192 65-69 -> 30-32 ms, 6^3 768->384 45-51 -> 24-34 ms, 6^3 384->384
 * 21-22 -> 12-14 ms, 12^3 192->192 18-26 -> 16-19 ms, 24^3 192->96 50-53 -> 35-39 ms; at a
 * ratio of 6 (24^3 96->96) even, at 3-4 (the 96^3 and 48^3 convs) 1.3-1.7x slower, V and M
 * then passing through L3 where the blocks keep them in L2. */
static void plan_task(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile,
                      struct wino_task *t)
{
    t->m = tile;
    t->np = (tile + 2) * (tile + 2) * (tile + 2);
    t->k = tile == 4 ? &swin_cpu_wino4_avx2 : &swin_cpu_wino2_avx2;
    t->panel = t->k->panel;
    t->cinp = round_up(in.c, t->k->lanes);
    t->coutp = round_up(out.c, t->k->lanes);
    t->cob = t->coutp < 96 ? t->coutp : 96;
    int nt = WINO_NT_BUDGET / t->np / (t->cinp + t->cob) / 4 * 4;
    t->nt = nt < 8 ? 8 : (nt > 32 ? 32 : nt);
    t->tz = (out.d + tile - 1) / tile;
    t->ty = (out.h + tile - 1) / tile;
    t->tx = (out.w + tile - 1) / tile;
    t->ntiles = (long)t->tz * t->ty * t->tx;
    /* enough blocks to keep every thread busy: shrink the block down to 4 tiles */
    while (t->nt > 4 && (t->ntiles + t->nt - 1) / t->nt < 2L * be->nthreads) t->nt -= 4;
    /* wide where the blocks would stream U 8 times or more the bytes of V and M per tile */
    t->wide = (long)in.c * t->coutp >= 8L * t->nt * (t->cinp + t->coutp);
    if (t->wide) {
        long per_tile = (long)t->np * (t->cinp + t->coutp) * (long)sizeof(float);
        long wnt = WINO_WIDE_BUDGET / per_tile / 4 * 4;
        long all = (t->ntiles + 3) / 4 * 4;
        t->nt = (int)(wnt < 4 ? 4 : (wnt > all ? all : wnt));
        t->cob = t->coutp;
        t->v_pstride = (long)t->nt * t->cinp;
        t->v_tstride = t->cinp;
        t->v_bytes = swin_cpu_round((size_t)t->np * t->nt * t->cinp * sizeof(float));
        t->slice = t->v_bytes + swin_cpu_round((size_t)t->np * t->nt * t->cob * sizeof(float));
        return;
    }
    t->v_pstride = tile == 4 ? t->cinp : (long)t->nt * t->cinp;
    t->v_tstride = tile == 4 ? (long)t->np * t->cinp : t->cinp;
    t->v_bytes = swin_cpu_round((size_t)t->np * t->nt * t->cinp * sizeof(float));
    t->slice = t->v_bytes + swin_cpu_round((size_t)t->np * t->nt * t->cob * sizeof(float));
}

/* Bytes of U for these shapes: np cin coutp floats, rounded to the alignment. */
static size_t u_bytes(const struct wino_task *t)
{
    return swin_cpu_round((size_t)t->np * t->in.c * t->coutp * sizeof(float));
}

bool swin_cpu_winograd_wide(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile)
{
    struct wino_task t = {.out = out, .in = in};
    plan_task(be, out, in, tile == 4 ? 4 : 2, &t);
    return t.wide;
}

size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile)
{
    struct wino_task t = {.out = out, .in = in};
    plan_task(be, out, in, tile == 4 ? 4 : 2, &t);
    return SWIN_CPU_ALIGN + u_bytes(&t) + (t.wide ? 1 : (size_t)be->nthreads) * t.slice;
}

static void wino_weights(void *p, int tid, int nth)
{
    (void)tid, (void)nth;
    swin_cpu_winograd_weights(p);
}

static void wino_run(void *p, int tid, int nth)
{
    (void)nth;
    swin_cpu_winograd_tiles(p, tid);
}

int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *w,
                             const float *bias, void *ws, size_t ws_bytes, int tile)
{
    if (!w) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): w is NULL");
    if (!swin_cpu_winograd_available(be))
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): no kernel at this SIMD level (needs AVX2 + FMA)");
    if (out.d != in.d || out.h != in.h || out.w != in.w)
        return swin_cpu_fail(be, SWIN_ERR_SHAPE, "conv3d (Winograd): out %dx%dx%d differs from in %dx%dx%d",
                             out.d, out.h, out.w, in.d, in.h, in.w);
    if (tile != 2 && tile != 4) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): tile %d is not 2 or 4", tile);
    size_t need = swin_cpu_winograd_ws(be, out, in, tile);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): workspace %zu bytes, need %zu",
                             ws ? ws_bytes : 0, need);
    struct wino_task t = {.out = out, .in = in, .w = w, .w_bf16 = swin_cpu_wgemm_of(be, w).bf16, .bias = bias};
    plan_task(be, out, in, tile, &t);
    /* workspace: U, then the threads' slices (both aligned) */
    t.u = (float *)swin_cpu_align_ptr(ws);
    t.ws = (char *)t.u + u_bytes(&t);
    atomic_init(&t.next, 0);
    t.timed = be->wino_phases != NULL;
    for (int i = 0; i < 4; i++) atomic_init(&t.phase_ns[i], 0);
    swin_cpu_run(be, wino_weights, &t);   /* returns when every thread is done: U complete */
    if (!t.wide) {
        atomic_store(&t.next, 0);
        swin_cpu_run(be, wino_run, &t);
    }
    for (t.block0 = 0; t.wide && t.block0 < t.ntiles; t.block0 += t.nt)
        for (t.phase = WINO_WIDE_INPUT; t.phase <= WINO_WIDE_OUTPUT; t.phase++) {
            atomic_store(&t.next, 0);
            swin_cpu_run(be, wino_run, &t);
        }
    if (t.timed) {
        struct swin_cpu_wino_phases *p = be->wino_phases;
        p->weights_s += 1e-9 * (double)atomic_load(&t.phase_ns[0]);
        p->input_s += 1e-9 * (double)atomic_load(&t.phase_ns[1]);
        p->gemm_s += 1e-9 * (double)atomic_load(&t.phase_ns[2]);
        p->output_s += 1e-9 * (double)atomic_load(&t.phase_ns[3]);
    }
    return 0;
}
