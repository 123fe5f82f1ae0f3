/* The Winograd schedules every tile size and ISA level shares (winograd.h): the weight
 * transform's loop over input channels, the per-thread blocks of tiles, the wide schedule's
 * phases, and the phase timing. Portable C: the level's kernels are called through t->k. */
#include "kernels/cpu/winograd/winograd.h"

#include <time.h>

static void phase_start(const struct wino_task *t, struct timespec *since)
{
    if (t->timed) clock_gettime(CLOCK_MONOTONIC, since);
}

/* Adds the time since *since to t->phase_ns[ph] and moves *since to now. */
static void phase_tick(struct wino_task *t, int ph, struct timespec *since)
{
    if (!t->timed) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    atomic_fetch_add(&t->phase_ns[ph], (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec));
    *since = now;
}

void swin_cpu_winograd_weights(struct wino_task *t)
{
    const int cin = t->in.c, cout = t->out.c, lanes = t->k->lanes;
    struct timespec since;
    phase_start(t, &since);
    long b, e;
    while (swin_cpu_claim(&t->next, cin, t->k->weights_claim, &b, &e))
        for (long ci = b; ci < e; ci++)
            for (int co0 = 0; co0 < t->coutp; co0 += lanes) t->k->weights(t, (int)ci, co0, cout - co0);
    phase_tick(t, 0, &since);
}

/* This thread's share of the tile blocks: each block of nt tiles transformed in, multiplied
 * by U point by point, and transformed out, output channels cob at a time. */
static void blocks(struct wino_task *t, int tid)
{
    const struct wino_kernels *k = t->k;
    float *v = (float *)(t->ws + (size_t)tid * t->slice);
    float *m = (float *)(t->ws + (size_t)tid * t->slice + t->v_bytes);
    const long nblocks = (t->ntiles + t->nt - 1) / t->nt;
    const int cout = t->out.c;
    struct timespec since;
    phase_start(t, &since);
    long b, e;
    while (swin_cpu_claim(&t->next, nblocks, 1, &b, &e)) {
        const long tile0 = b * t->nt;
        /* tile by tile, all channels of a voxel while its lines are in L1 (channel groups
         * outermost re-read the block's patches from L2 or L3 once per 8 channels) */
        for (int slot = 0; slot < t->nt; slot++) k->input(t, tile0 + slot, slot, v);
        phase_tick(t, 1, &since);
        for (int co0 = 0; co0 < cout; co0 += t->cob) {
            const int nco = cout - co0 < t->cob ? cout - co0 : t->cob;
            const int ncop = (nco + k->lanes - 1) / k->lanes * k->lanes;
            for (int p = 0; p < t->np; p++) k->gemm(t, v, m, p, co0, 0, ncop);
            phase_tick(t, 2, &since);
            k->output(t, tile0, t->nt, m, co0, nco);
            phase_tick(t, 3, &since);
        }
    }
}

/* One phase of the wide schedule on the block at t->block0: V (point-major, np nt cinp)
 * and M (tile-major, nt np coutp) are shared by all threads at the start of the workspace. */
static void wide(struct wino_task *t)
{
    const struct wino_kernels *k = t->k;
    float *v = (float *)t->ws, *m = (float *)(t->ws + t->v_bytes);
    const int cout = t->out.c, nj = (t->coutp + t->panel - 1) / t->panel;
    struct timespec since;
    phase_start(t, &since);
    long b, e;
    switch (t->phase) {
    case WINO_WIDE_INPUT:
        while (swin_cpu_claim(&t->next, t->nt, 1, &b, &e)) k->input(t, t->block0 + b, (int)b, v);
        phase_tick(t, 1, &since);
        break;
    case WINO_WIDE_GEMM: /* items: (point, one panel of U's output channels) */
        while (swin_cpu_claim(&t->next, (long)t->np * nj, 1, &b, &e)) {
            const int j0 = (int)(b % nj) * t->panel, j1 = j0 + t->panel < t->coutp ? j0 + t->panel : t->coutp;
            k->gemm(t, v, m, (int)(b / nj), 0, j0, j1);
        }
        phase_tick(t, 2, &since);
        break;
    case WINO_WIDE_OUTPUT:
        while (swin_cpu_claim(&t->next, t->nt, 4, &b, &e))
            k->output(t, t->block0 + b, (int)(e - b), m + (size_t)b * t->np * t->cob, 0, cout);
        phase_tick(t, 3, &since);
        break;
    }
}

void swin_cpu_winograd_tiles(struct wino_task *t, int tid)
{
    if (t->wide) wide(t);
    else blocks(t, tid);
}
