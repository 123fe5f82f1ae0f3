/* instnorm_act_conv1x1's apply pass (ops.h: a residual block's last norm and the 1x1x1 conv
 * after it in one pass; the normalised map is never stored), per ISA level:
 * instnorm_conv1x1_tmpl.h compiled by instnorm_conv1x1_avx2.c and instnorm_conv1x1_avx512.c.
 * The coefficients and the portable loop: instnorm_act.c. */
#ifndef SWIN_CPU_INSTNORM_CONV1X1_H
#define SWIN_CPU_INSTNORM_CONV1X1_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/norm/instnorm_avx2.h"

/* The head's weights padded to 16 output channels for every level's vectors. */
#define SWIN_CPU_NORM_CONV1X1_COUTP(cout) (((cout) + 15) / 16 * 16)

/* One call's operands. Voxel v: y[c] = k's affine of x[v][c] (+ rk's affine of res[v][c] when
 * res), LeakyReLU(0.01) when lrelu, for c < cin; out[v][o] = bias[o] + sum_c y[c] w[c][o] for
 * o < cout. */
struct swin_cpu_norm_conv1x1 {
    const float *x, *res; /* res: NULL, or the residual, with its own pitch */
    int64_t pitch, res_pitch;
    int cin;
    const struct swin_cpu_in_coef *k, *rk;
    bool lrelu;
    float *out;
    int64_t out_pitch;
    int cout;
    const float *w;    /* (cin, SWIN_CPU_NORM_CONV1X1_COUTP(cout)) float32, zero past cout, 64-byte aligned */
    const float *bias; /* SWIN_CPU_NORM_CONV1X1_COUTP(cout) floats, zero past cout (and where no bias) */
};

/* Voxels [vb, ve) of h, at the AVX2 and the AVX-512 level (call only where the CPU has it). */
void swin_cpu_norm_conv1x1_avx2(const struct swin_cpu_norm_conv1x1 *h, int64_t vb, int64_t ve);
void swin_cpu_norm_conv1x1_avx512(const struct swin_cpu_norm_conv1x1 *h, int64_t vb, int64_t ve);

#endif
