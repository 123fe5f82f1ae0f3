/* The instance-norm statistics a CPU conv3d leaves for the instnorm_act that follows it
 * (kernels/ops.h: conv3d's and instnorm_act's `stats`), so that the norm need not read the
 * conv's output a first time for them. Layout (doubles after a header):
 *   header     slots, c (int64): slots = 0 means "not kept" (the conv's kernel keeps none:
 *              instnorm_act reads the output for them as without stats)
 *   per slot   n, then k[c], s1[c], s2[c]: the slot's voxel count, its shift (per channel, the
 *              value of its first voxel), the sums of d = x - k and of d^2 over its voxels
 * A slot holds a group of 4 output tiles of a Winograd F(4x4x4) or F(6x6x6) conv (winograd_tmpl.h), made
 * by whichever thread ran them; the norm combines the slots in slot order (the pairwise update
 * of Chan, Golub and LeVeque: exact in exact arithmetic, and with each slot's shift inside its
 * own values the subtraction in s2 - s1^2/n cancels only a few bits of double), so the
 * statistics are the same bits whatever the thread count. Within a tile the sums run in
 * float over its at most 216 voxels, then in double. */
#ifndef SWIN_CPU_IN_STATS_H
#define SWIN_CPU_IN_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "core/vol.h"

struct swin_cpu_in_stats_hdr {
    int64_t slots, c;
};

/* Slots of an out of these dims: a group of 4 of its Winograd tiles of side `tile` each. */
int64_t swin_cpu_in_stats_slots(struct swin_vol out, int tile);
/* Bytes of the statistics of out (header and every slot) for F(4x4x4)'s slots, which are at
 * least as many as F(6x6x6)'s. */
size_t swin_cpu_in_stats_bytes(struct swin_vol out);

/* Slot s of the statistics at `stats` (c channels): n, then k, s1, s2 at +1, +1+c, +1+2c. */
static inline double *swin_cpu_in_slot(void *stats, int64_t s, int64_t c)
{
    return (double *)((char *)stats + sizeof(struct swin_cpu_in_stats_hdr)) + s * (1 + 3 * c);
}

/* Marks the statistics as kept for `slots` slots of c channels, every slot empty (n = 0). */
void swin_cpu_in_stats_begin(void *stats, int64_t slots, int64_t c);
/* Marks them as not kept. */
void swin_cpu_in_stats_none(void *stats);

/* mean[i], var[i] (biased) of channels [c0, c0 + nc) from kept statistics of n voxels: 1 when
 * filled, 0 when the statistics are not kept (slots 0) or do not count n voxels. */
int swin_cpu_in_stats_moments(const void *stats, int64_t n, int c0, int nc, double *mean, double *var);

#endif
