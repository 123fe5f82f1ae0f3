/* instnorm_act, in place on x (D, H, W, C) channels-last:
 *   x = IN(x)                   when normalize: per channel over all D*H*W voxels, biased
 *                               variance, eps 1e-5
 *       * gamma + beta          when gamma != NULL (torch.nn.InstanceNorm3d(affine=True))
 *       + residual              when residual != NULL (same dims and c, own pitch), or
 *                               + IN(residual) * its gamma + beta when residual->normalize
 *                               (its statistics as x's, in a pass of their own before x's)
 *   x = LeakyReLU_0.01(x)       when lrelu
 * Statistics: from `stats` where the conv that wrote x kept them (norm/in_stats.h: Winograd
 * F(4x4x4)), otherwise one pass of shifted sums in double, d = x - K with K the channel's value at the
 * first voxel: mean = K + sum(d)/N, var = sum(d^2)/N - (sum(d)/N)^2. With K within a few
 * standard deviations of the mean (any real value of the channel is) the subtraction
 * cancels only a few of double's 53 bits, far below float resolution. Channels are
 * processed in blocks of IN_BLOCK; the voxels are cut into SWIN_CPU_RED_SLOTS fixed chunks,
 * which the threads share, each chunk leaving its per-channel partial sums in its own slot
 * of be->red (IN_BLOCK sums of d, then IN_BLOCK of d^2), reduced by the caller in chunk
 * order: the statistics are the same bits whatever the thread count. The apply pass runs
 * in float, 4 channels per vector; with AVX2 both passes run in instnorm_avx2.c (8 channels
 * per vector, the statistics still in double and in the same chunks). */
#include "kernels/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/vmath/cpu_vec.h"
#include "kernels/cpu/norm/in_stats.h"
#include "kernels/cpu/norm/instnorm_avx2.h"

#define IN_BLOCK SWIN_CPU_IN_BLOCK

struct in_task {
    struct swin_vol x;                /* the statistics pass reads x, then the residual's volume */
    const struct swin_vol *res;
    bool lrelu;
    int c0, nc;                       /* channel block [c0, c0 + nc), nc <= IN_BLOCK */
    double *red;                      /* (SWIN_CPU_RED_SLOTS, SWIN_CPU_RED_CH) */
    float shift_k[IN_BLOCK];          /* K: the block's values at voxel 0 */
    /* apply pass, in float: y = ((x - mean_hi) - mean_lo) * scale + shift; mean = mean_hi +
     * mean_lo to ~2^-48 relative, and x - mean_hi is exact where it matters (x near the mean) */
    struct swin_cpu_in_coef k;
    struct swin_cpu_in_coef rk;       /* the residual's: its norm, or mean 0, scale 1, shift 0 (as it is) */
    bool apply;                       /* false: statistics pass, true: apply pass */
    bool avx2;                        /* both passes by instnorm_avx2.c */
};

static void in_run(void *p, int tid, int nth)
{
    struct in_task *t = p;
    const struct swin_vol x = t->x;
    const int64_t n = (int64_t)swin_vol_voxels(x);
    const int64_t b = n * tid / nth, e = n * (tid + 1) / nth;
    const int c0 = t->c0, nc = t->nc;
    if (!t->apply) {
        for (int chunk = tid; chunk < SWIN_CPU_RED_SLOTS; chunk += nth) {
            double s1[IN_BLOCK] = {0}, s2[IN_BLOCK] = {0};
            const int64_t cb = n * chunk / SWIN_CPU_RED_SLOTS, ce = n * (chunk + 1) / SWIN_CPU_RED_SLOTS;
            if (t->avx2) {
                swin_cpu_instnorm_stats_avx2(swin_vol_f32(x) + c0, x.pitch, cb, ce, nc, t->shift_k, s1, s2);
            } else {
                for (int64_t v = cb; v < ce; v++) {
                    const float *row = swin_vol_f32(x) + v * x.pitch + c0;
                    for (int c = 0; c < nc; c++) {
                        const double d = (double)row[c] - t->shift_k[c];
                        s1[c] += d;
                        s2[c] += d * d;
                    }
                }
            }
            double *red = t->red + (size_t)chunk * SWIN_CPU_RED_CH;
            for (int c = 0; c < nc; c++) {
                red[c] = s1[c];
                red[IN_BLOCK + c] = s2[c];
            }
        }
        return;
    }
    if (t->avx2) {
        swin_cpu_instnorm_apply_avx2(swin_vol_f32(x) + c0, x.pitch, t->res ? swin_vol_f32(*t->res) + c0 : NULL,
                                     t->res ? t->res->pitch : 0, b, e, nc, &t->k, &t->rk, t->lrelu);
        return;
    }
    const int nc4 = nc / 4 * 4;
    const v4f zero = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t v = b; v < e; v++) {
        float *row = swin_vol_f32(x) + v * x.pitch + c0;
        const float *r = t->res ? swin_vol_f32(*t->res) + v * t->res->pitch + c0 : NULL;
        for (int c = 0; c < nc4; c += 4) {   /* 4 channels per step, branch-free */
            v4f y = ((load4(row + c) - load4(t->k.mean_hi + c)) - load4(t->k.mean_lo + c)) * load4(t->k.scale + c) +
                    load4(t->k.shift + c);
            if (r)
                y += ((load4(r + c) - load4(t->rk.mean_hi + c)) - load4(t->rk.mean_lo + c)) * load4(t->rk.scale + c) +
                     load4(t->rk.shift + c);
            if (t->lrelu) {
                const v4i neg = y < zero;
                y = (v4f)(((v4i)(y * 0.01f) & neg) | ((v4i)y & ~neg));
            }
            memcpy(row + c, &y, sizeof y);
        }
        for (int c = nc4; c < nc; c++) {
            float y = ((row[c] - t->k.mean_hi[c]) - t->k.mean_lo[c]) * t->k.scale[c] + t->k.shift[c];
            if (r) y += ((r[c] - t->rk.mean_hi[c]) - t->rk.mean_lo[c]) * t->rk.scale[c] + t->rk.shift[c];
            if (t->lrelu && y < 0.0f) y *= 0.01f;
            row[c] = y;
        }
    }
}

/* Sum over the chunks, in order, of partial i (channel c: i = c for sum(d), IN_BLOCK + c for
 * sum(d^2)). */
static double reduce(const struct in_task *t, int i)
{
    double s = 0.0;
    for (int k = 0; k < SWIN_CPU_RED_SLOTS; k++) s += t->red[(size_t)k * SWIN_CPU_RED_CH + i];
    return s;
}

/* k = the apply coefficients of v's channels [t->c0, t->c0 + t->nc): its statistics when
 * normalize (from what the conv kept, `stats` (in_stats.h), or one pass over v), then gamma
 * and beta. */
static void block_coef(struct swin_cpu_backend *be, struct in_task *t, struct swin_vol v, const void *stats,
                       bool normalize, const float *gamma, const float *beta, struct swin_cpu_in_coef *k)
{
    const double n = (double)swin_vol_voxels(v);
    const int c0 = t->c0;
    double kept_mean[IN_BLOCK], kept_var[IN_BLOCK];
    const bool kept = normalize && swin_cpu_in_stats_moments(stats, (int64_t)swin_vol_voxels(v), c0, t->nc,
                                                             kept_mean, kept_var);
    const struct swin_vol keep = t->x;
    t->x = v;
    for (int c = 0; c < t->nc; c++) t->shift_k[c] = swin_vol_f32(v)[c0 + c];
    t->apply = false;
    if (normalize && !kept) swin_cpu_run(be, in_run, t);
    t->x = keep;
    for (int c = 0; c < t->nc; c++) {
        double mean = 0.0, rstd = 1.0;
        if (kept) {
            mean = kept_mean[c];
            rstd = 1.0 / sqrt(kept_var[c] + 1e-5);
        } else if (normalize) {
            const double m1 = reduce(t, c) / n, m2 = reduce(t, IN_BLOCK + c) / n;
            const double var = m2 - m1 * m1 > 0.0 ? m2 - m1 * m1 : 0.0;
            mean = t->shift_k[c] + m1;
            rstd = 1.0 / sqrt(var + 1e-5);
        }
        const double g = gamma ? gamma[c0 + c] : 1.0, bb = gamma ? beta[c0 + c] : 0.0;
        k->mean_hi[c] = (float)mean;
        k->mean_lo[c] = (float)(mean - k->mean_hi[c]);
        k->scale[c] = (float)(rstd * g);
        k->shift[c] = (float)bb;
    }
}

int swin_cpu_instnorm_act(void *bev, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                          const float *beta, const struct swin_residual *residual, bool lrelu)
{
    struct swin_cpu_backend *be = bev;
    struct in_task t = {.x = x, .res = residual ? &residual->v : NULL, .lrelu = lrelu, .red = be->red,
                        .avx2 = be->simd >= SWIN_CPU_SIMD_AVX2};
    for (int c0 = 0; c0 < x.c; c0 += IN_BLOCK) {
        t.c0 = c0;
        t.nc = x.c - c0 < IN_BLOCK ? x.c - c0 : IN_BLOCK;
        /* without normalize and gamma the residual's coefficients are the identity (((r - 0)
         * - 0) * 1 + 0 = r in float, a zero's sign aside), so one apply path serves both kinds */
        if (residual)
            block_coef(be, &t, residual->v, NULL, residual->normalize, residual->gamma, residual->beta, &t.rk);
        block_coef(be, &t, x, stats, normalize, gamma, beta, &t.k);
        t.apply = true;
        swin_cpu_run(be, in_run, &t);
    }
    return 0;
}

void swin_cpu_instnorm_prologue(struct swin_cpu_backend *be, struct swin_vol x, const void *stats, const float *gamma,
                                const float *beta, float *mean, float *scale, float *shift)
{
    struct in_task t = {.x = x, .red = be->red, .avx2 = be->simd >= SWIN_CPU_SIMD_AVX2};
    for (int c0 = 0; c0 < x.c; c0 += IN_BLOCK) {
        t.c0 = c0;
        t.nc = x.c - c0 < IN_BLOCK ? x.c - c0 : IN_BLOCK;
        block_coef(be, &t, x, stats, true, gamma, beta, &t.k);
        for (int c = 0; c < t.nc; c++) {
            mean[c0 + c] = t.k.mean_hi[c];
            scale[c0 + c] = t.k.scale[c];
            shift[c0 + c] = t.k.shift[c] - t.k.mean_lo[c] * t.k.scale[c];
        }
    }
}
