/* layernorm: out = LN(in) over the channels of each voxel (torch.nn.LayerNorm, eps 1e-5,
 * biased variance), then * gamma + beta when gamma != NULL (beta may then be NULL).
 *   in, out (D, H, W, C) channels-last; out may be in itself (same data and pitch).
 * Two-pass mean and variance in double (4 accumulators), normalisation in float with the mean
 * split in two floats, per voxel; from the AVX2 level the row of vmath_avx2.c (8 channels per
 * step). Threads take static voxel ranges.
 * swin_cpu_ln_row is shared with the ops that fuse a LayerNorm into a gather. */
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "kernels/cpu/vmath/cpu_vec.h"

#include <math.h>
#include <string.h>

void swin_cpu_ln_row(float *y, const float *x, int c, const float *gamma, const float *beta)
{
    const int c4 = c / 4 * 4;
    /* mean and variance in double with 4 independent scalar accumulators (registers; a
     * 32-byte double vector would live on the stack under SSE2), then the tail */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int i = 0; i < c4; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    double s = (s0 + s1) + (s2 + s3);
    for (int i = c4; i < c; i++) s += x[i];
    const double mean = s / c;
    s0 = s1 = s2 = s3 = 0.0;
    for (int i = 0; i < c4; i += 4) {
        const double d0 = x[i] - mean, d1 = x[i + 1] - mean, d2 = x[i + 2] - mean, d3 = x[i + 3] - mean;
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
    }
    double ss = (s0 + s1) + (s2 + s3);
    for (int i = c4; i < c; i++) ss += (x[i] - mean) * (x[i] - mean);
    /* normalise in float: mean = mean_hi + mean_lo, x - mean_hi is exact near the mean */
    const float rstd = (float)(1.0 / sqrt(ss / c + 1e-5));
    const float mh = (float)mean, ml = (float)(mean - mh);
    for (int i = 0; i < c4; i += 4) {
        v4f v = ((load4(x + i) - mh) - ml) * rstd;
        if (gamma) v = v * load4(gamma + i) + (beta ? load4(beta + i) : (v4f){0.0f, 0.0f, 0.0f, 0.0f});
        memcpy(y + i, &v, sizeof v);
    }
    for (int i = c4; i < c; i++) {
        float v = ((x[i] - mh) - ml) * rstd;
        if (gamma) v = v * gamma[i] + (beta ? beta[i] : 0.0f);
        y[i] = v;
    }
}

struct ln_task {
    struct swin_vol out, in;
    const float *gamma, *beta;
    swin_cpu_ln_row_fn *ln;
};

static void ln_run(void *p, int tid, int nth)
{
    const struct ln_task *t = p;
    const int64_t n = (int64_t)swin_vol_voxels(t->in);
    const int64_t b = n * tid / nth, e = n * (tid + 1) / nth;
    for (int64_t v = b; v < e; v++)
        t->ln(swin_vol_f32(t->out) + v * t->out.pitch, swin_vol_f32(t->in) + v * t->in.pitch, t->in.c, t->gamma,
                        t->beta);
}

int swin_cpu_layernorm(void *bev, struct swin_vol out, struct swin_vol in, const float *gamma,
                       const float *beta)
{
    struct swin_cpu_backend *be = bev;
    struct ln_task t = {out, in, gamma, beta, swin_cpu_ln_row_of(be)};
    swin_cpu_run(be, ln_run, &t);
    return 0;
}
