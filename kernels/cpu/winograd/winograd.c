/* Winograd F(2x2x2), F(4x4x4) and F(6x6x6), 3x3x3: shape rule, workspace and entry point
 * (kernels/cpu/winograd.h). */
#include "kernels/cpu/winograd/winograd.h"

#include "kernels/cpu/norm/in_stats.h"

static int round_up(int n, int to) { return (n + to - 1) / to * to; }

/* Floats of V and M per thread: 640 KiB. */
#define WINO_NT_BUDGET (640 * 256)
/* Bytes of V and M of a block of the wide schedule, shared by all threads. */
#define WINO_WIDE_BUDGET (8L << 20)

bool swin_cpu_winograd_available(const struct swin_cpu_backend *be) { return be->simd >= SWIN_CPU_SIMD_AVX2; }

/* Smallest grid side, and most input plus output channels per level, on which bfloat16
 * weights run F(6x6x6) instead of F(4x4x4). */
#define WINO6_MIN_SIDE 48
#define WINO6_MAX_CHANNELS_AVX512 144
#define WINO6_MAX_CHANNELS_AVX2 96

int swin_cpu_winograd_tile(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, bool w_bf16)
{
    if (!swin_cpu_winograd_available(be)) return 0;
    /* The rule, each crossover measured per shape and level, weight transform included
     * (bench/results/winograd_cpu.md): one input channel runs the direct kernels of
     * conv3d_c1_*.c (Winograd would transform vectors of which all lanes but one are padding);
     * F(4x4x4) on grids of at least 24 per axis at the AVX2 level and 16 at the AVX-512 level
     * (its 16-lane transforms and GEMM pay for U sooner), F(2x2x2) on smaller grids down to 6;
     * below 6 the transformed weights cost more than the few tiles save. conv3d (conv3d.c)
     * asks only for grids its per-tap GEMMs do not take.
     * With bfloat16 weights, F(6x6x6) on grids of at least WINO6_MIN_SIDE: 2.37 multiplies per
     * output against 3.375, at a float32 error about 5x F(4x4x4)'s and 100x below the weights'
     * own rounding. Only up to a level's most input and output channels together: a block's V
     * and M, 512 (cin + cout) floats a tile, then stay near L2 (bench/results/winograd_cpu.md,
     * "F(6x6x6) for bfloat16 weights"): at the AVX-512 level 144 (a Zen 5, 1 MiB of L2 a core:
     * wins from 24->24 to 96->48, losses from 128->64 and 96->96 on), at the AVX2 level 96 (a
     * Zen 3, 512 KiB: wins to 48->48, losses from 64->64 and 96->48 on). */
    if (in.c == 1) return 0;
    int lmin = out.d < out.h ? out.d : out.h;
    lmin = lmin < out.w ? lmin : out.w;
    const int wino6_max = be->simd >= SWIN_CPU_SIMD_AVX512 ? WINO6_MAX_CHANNELS_AVX512 : WINO6_MAX_CHANNELS_AVX2;
    if (w_bf16 && lmin >= WINO6_MIN_SIDE && in.c + out.c <= wino6_max) return 6;
    if (lmin >= (be->simd >= SWIN_CPU_SIMD_AVX512 ? 16 : 24)) return 4;
    return lmin >= 6 ? 2 : 0;
}

/* Tile geometry and blocking for the shapes (measurements: bench/results/winograd_cpu.md,
 * "Blocking" and "The wide schedule"; the AVX-512 minimum: bench/results/cpu_speed/zen5,
 * "Sixth round"). F(2x2x2): nt tiles per block so that a thread's V and M (64 nt (cinp +
 * cob) floats) stay near 640 KiB; at least nt_min tiles so that each U row is reused that
 * many times per load. F(4x4x4): the budget over 216 points gives fewer than 8 tiles, so
 * nt_min, each block streaming all of U (216 cin coutp floats) once; its V is tile-major, so
 * that the input transform writes each tile's 216 cinp values in one run (point-major, a
 * tile's stores land on 216 lines nt cinp floats apart). At the AVX-512 level the minimum is
 * 12: there the point GEMM waits on U's stream from L3 (each 16-lane vector of U feeds nt
 * FMAs) more than on V and M spilling past a 1 MiB L2 (96->48: 1.5 MiB a thread at 12).
 * F(6x6x6) keeps 8 at both levels: its tiles hold 512 points, so 12 of them put 3.5 MiB of V
 * and M on a thread for 96->48 (sweep: bench/results/cpu_speed/zen5, "Seventh round").
 *
 * Both stream U once per block of nt tiles: np cin coutp floats per nt tiles, against the
 * np (cinp + coutp) floats of V and M per tile, so the ratio is cin coutp / (nt (cinp +
 * coutp)), independent of the tile size. Where it is 8 or more (at nt = 8: 192 -> 96 and
 * wider; at 12: 192 -> 192 and wider; in f = 48 the 24^3 192->96 conv at the AVX2 level and
 * every conv at 12^3 and 6^3), the wide schedule
 * runs instead: blocks of as many tiles as 8 MiB of V and M hold, all threads transforming
 * the block's tiles in, then multiplying point by point (each U[p] read once per block),
 * then transforming out. Below that ratio the blocks keep V and M in L2, where the wide
 * schedule's pass through L3 loses. */
static void plan_task(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile,
                      struct wino_task *t)
{
    t->m = tile;
    t->np = (tile + 2) * (tile + 2) * (tile + 2);
    if (be->simd >= SWIN_CPU_SIMD_AVX512)
        t->k = tile == 6 ? &swin_cpu_wino6_avx512 : tile == 4 ? &swin_cpu_wino4_avx512 : &swin_cpu_wino2_avx512;
    else t->k = tile == 6 ? &swin_cpu_wino6_avx2 : tile == 4 ? &swin_cpu_wino4_avx2 : &swin_cpu_wino2_avx2;
    t->panel = t->k->panel;
    t->cinp = round_up(in.c, t->k->lanes);
    t->coutp = round_up(out.c, t->k->lanes);
    t->cob = t->coutp < 96 ? t->coutp : 96;
    const int nt_min = be->simd >= SWIN_CPU_SIMD_AVX512 && tile != 6 ? 12 : 8;
    int nt = WINO_NT_BUDGET / t->np / (t->cinp + t->cob) / 4 * 4;
    t->nt = nt < nt_min ? nt_min : (nt > 32 ? 32 : nt);
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
    t->v_pstride = tile >= 4 ? t->cinp : (long)t->nt * t->cinp;
    t->v_tstride = tile >= 4 ? (long)t->np * t->cinp : t->cinp;
    t->v_bytes = swin_cpu_round((size_t)t->np * t->nt * t->cinp * sizeof(float));
    t->slice = t->v_bytes + swin_cpu_round((size_t)t->np * t->nt * t->cob * sizeof(float));
}

/* Bytes of U for these shapes: np cin coutp floats, rounded to the alignment. */
static size_t u_bytes(const struct wino_task *t)
{
    return swin_cpu_round((size_t)t->np * t->in.c * t->coutp * sizeof(float));
}

/* Bytes of the input prologue's coefficients (F(4x4x4) and F(6x6x6): mean, scale, shift, cinp
 * floats each). */
static size_t pre_bytes(const struct wino_task *t)
{
    return t->m >= 4 ? swin_cpu_round((size_t)3 * t->cinp * sizeof(float)) : 0;
}

/* The tile plan_task plans for a tile argument: 6, 4, and 2 for any other. */
static int known_tile(int tile) { return tile == 6 || tile == 4 ? tile : 2; }

bool swin_cpu_winograd_wide(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile)
{
    struct wino_task t = {.out = out, .in = in};
    plan_task(be, out, in, known_tile(tile), &t);
    return t.wide;
}

bool swin_cpu_winograd_streams(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile)
{
    return tile >= 4 && !swin_cpu_winograd_wide(be, out, in, tile) && swin_cpu_out_streams(be, out);
}

size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile)
{
    struct wino_task t = {.out = out, .in = in};
    plan_task(be, out, in, known_tile(tile), &t);
    return SWIN_CPU_ALIGN + u_bytes(&t) + (t.wide ? 1 : (size_t)be->nthreads) * t.slice + pre_bytes(&t);
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

int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, void *stats, struct swin_vol in,
                             const float *w, const float *bias, void *ws, size_t ws_bytes, int tile,
                             const struct swin_cpu_wino_pre *pre)
{
    if (!w) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): w is NULL");
    if (!swin_cpu_winograd_available(be))
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): no kernel at this SIMD level (needs AVX2 + FMA)");
    if (out.d != in.d || out.h != in.h || out.w != in.w)
        return swin_cpu_fail(be, SWIN_ERR_SHAPE, "conv3d (Winograd): out %dx%dx%d differs from in %dx%dx%d",
                             out.d, out.h, out.w, in.d, in.h, in.w);
    if (tile != 2 && tile != 4 && tile != 6)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): tile %d is not 2, 4 or 6", tile);
    if (pre && tile == 2) return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): an input prologue needs tile 4 or 6");
    size_t need = swin_cpu_winograd_ws(be, out, in, tile);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (Winograd): workspace %zu bytes, need %zu",
                             ws ? ws_bytes : 0, need);
    struct wino_task t = {.out = out, .in = in, .w = w, .w_bf16 = swin_cpu_wgemm_of(be, w).bf16, .bias = bias};
    plan_task(be, out, in, tile, &t);
    if (stats && tile >= 4) {
        swin_cpu_in_stats_begin(stats, swin_cpu_in_stats_slots(out, tile), out.c);
        t.stats = stats;
    } else if (stats) {
        swin_cpu_in_stats_none(stats);
    }
    /* workspace: U, then the threads' slices (both aligned) */
    t.u = (float *)swin_cpu_align_ptr(ws);
    t.ws = (char *)t.u + u_bytes(&t);
    if (pre) {
        /* after the slices: the coefficients, zero in the padding lanes (which then stay 0) */
        float *c = (float *)(t.ws + (t.wide ? 1 : (size_t)be->nthreads) * t.slice);
        for (int i = 0; i < 3 * t.cinp; i++) c[i] = 0.0f;
        swin_cpu_instnorm_prologue(be, in, pre->stats, pre->gamma, pre->beta, c, c + t.cinp, c + 2 * t.cinp);
        t.pre = c;
    }
    atomic_init(&t.next, 0);
    t.stream = swin_cpu_winograd_streams(be, out, in, tile);
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
