/* instnorm_act's statistics and apply passes with AVX2 + FMA (instnorm_avx2.c; call only
 * where the CPU has them). The portable loops and the algorithm: instnorm_act.c. */
#ifndef SWIN_CPU_INSTNORM_AVX2_H
#define SWIN_CPU_INSTNORM_AVX2_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/cpu_internal.h"

/* Channels per block of the op (the reduction buffer holds a block's sums of d and d^2). */
#define SWIN_CPU_IN_BLOCK (SWIN_CPU_RED_CH / 2)

/* The apply pass's per-channel coefficients of one channel block, in float:
 * y = ((x - mean_hi) - mean_lo) * scale + shift. */
struct swin_cpu_in_coef {
    float mean_hi[SWIN_CPU_IN_BLOCK], mean_lo[SWIN_CPU_IN_BLOCK], scale[SWIN_CPU_IN_BLOCK], shift[SWIN_CPU_IN_BLOCK];
};

/* A narrow shortcut's normalised 1x1 conv in the apply pass (instnorm_act_narrow_shortcut):
 * channel c of the block adds sum over k < cin of a[k][c] * (src[v][k] - m[k]), src the
 * input's voxel 0 (row v at src + v * pitch). */
struct swin_cpu_in_proj {
    const float *src;
    int64_t pitch;
    int cin;
    float m[SWIN_NARROW_SHORTCUT_MAX_CIN];
    float a[SWIN_NARROW_SHORTCUT_MAX_CIN][SWIN_CPU_IN_BLOCK];
};

/* s1[c] += sum of (x[v][c] - shift_k[c]), s2[c] += its squares, in double, over voxels
 * [vb, ve) of x (row v at x + v * pitch, channels [0, nc)). */
void swin_cpu_instnorm_stats_avx2(const float *x, int64_t pitch, int64_t vb, int64_t ve, int nc,
                                  const float *shift_k, double *s1, double *s2);
/* x[v][c] = k's affine of x (+ rk's affine of res[v][c] when res, + proj's sum when proj),
 * LeakyReLU(0.01) when lrelu, over voxels [vb, ve) and channels [0, nc). */
void swin_cpu_instnorm_apply_avx2(float *x, int64_t pitch, const float *res, int64_t res_pitch, int64_t vb,
                                  int64_t ve, int nc, const struct swin_cpu_in_coef *k,
                                  const struct swin_cpu_in_coef *rk, const struct swin_cpu_in_proj *proj, bool lrelu);

#endif
