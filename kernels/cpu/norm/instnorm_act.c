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
 * per vector, the statistics still in double and in the same chunks).
 * instnorm_act_narrow_shortcut (ops.h) runs the same apply pass with its residual the
 * normalised 1x1 conv of a narrow input, its coefficients from that input's moments (below).
 * instnorm_act_conv1x1 takes the same coefficients and hands each voxel's normalised channels
 * to a 1x1 conv instead of storing them (instnorm_conv1x1.h). groupnorm_act is instnorm_act
 * with each channel's statistics those of its group (per-channel moments merged, norm_act). */
#include "kernels/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/vmath/cpu_vec.h"
#include "kernels/cpu/norm/in_stats.h"
#include "kernels/cpu/norm/instnorm_avx2.h"
#include "kernels/cpu/norm/instnorm_conv1x1.h"

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
    const struct swin_cpu_in_proj *proj; /* NULL, or a narrow shortcut's normalised 1x1 conv */
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
                                     t->res ? t->res->pitch : 0, b, e, nc, &t->k, &t->rk, t->proj, t->lrelu);
        return;
    }
    const int nc4 = nc / 4 * 4, cin = t->proj ? t->proj->cin : 0;
    const v4f zero = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t v = b; v < e; v++) {
        float *row = swin_vol_f32(x) + v * x.pitch + c0;
        const float *r = t->res ? swin_vol_f32(*t->res) + v * t->res->pitch + c0 : NULL;
        float d[SWIN_NARROW_SHORTCUT_MAX_CIN];
        for (int i = 0; i < cin; i++) d[i] = t->proj->src[v * t->proj->pitch + i] - t->proj->m[i];
        for (int c = 0; c < nc4; c += 4) {   /* 4 channels per step, branch-free */
            v4f y = ((load4(row + c) - load4(t->k.mean_hi + c)) - load4(t->k.mean_lo + c)) * load4(t->k.scale + c) +
                    load4(t->k.shift + c);
            if (r)
                y += ((load4(r + c) - load4(t->rk.mean_hi + c)) - load4(t->rk.mean_lo + c)) * load4(t->rk.scale + c) +
                     load4(t->rk.shift + c);
            for (int i = 0; i < cin; i++) y += d[i] * load4(t->proj->a[i] + c);
            if (t->lrelu) {
                const v4i neg = y < zero;
                y = (v4f)(((v4i)(y * 0.01f) & neg) | ((v4i)y & ~neg));
            }
            memcpy(row + c, &y, sizeof y);
        }
        for (int c = nc4; c < nc; c++) {
            float y = ((row[c] - t->k.mean_hi[c]) - t->k.mean_lo[c]) * t->k.scale[c] + t->k.shift[c];
            if (r) y += ((r[c] - t->rk.mean_hi[c]) - t->rk.mean_lo[c]) * t->rk.scale[c] + t->rk.shift[c];
            for (int i = 0; i < cin; i++) y += d[i] * t->proj->a[i][c];
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

/* mean[i], var[i] (biased) of v's channels t->c0 + i, i < t->nc: from what the conv kept,
 * `stats` (in_stats.h), or one pass over v. */
static void block_moments(struct swin_cpu_backend *be, struct in_task *t, struct swin_vol v, const void *stats,
                          double *mean, double *var)
{
    const int64_t n = (int64_t)swin_vol_voxels(v);
    if (swin_cpu_in_stats_moments(stats, n, t->c0, t->nc, mean, var)) return;
    const struct swin_vol keep = t->x;
    t->x = v;
    for (int c = 0; c < t->nc; c++) t->shift_k[c] = swin_vol_f32(v)[t->c0 + c];
    t->apply = false;
    swin_cpu_run(be, in_run, t);
    t->x = keep;
    for (int c = 0; c < t->nc; c++) {
        const double m1 = reduce(t, c) / (double)n, m2 = reduce(t, IN_BLOCK + c) / (double)n;
        mean[c] = t->shift_k[c] + m1;
        var[c] = m2 - m1 * m1 > 0.0 ? m2 - m1 * m1 : 0.0;
    }
}

/* k[c] for channel t->c0 + c of mean and 1 / sqrt(var + eps) rstd, then gamma and beta. */
static void fill_coef(const struct in_task *t, double mean, double rstd, int c, const float *gamma, const float *beta,
                      struct swin_cpu_in_coef *k)
{
    const double g = gamma ? gamma[t->c0 + c] : 1.0, bb = gamma ? beta[t->c0 + c] : 0.0;
    k->mean_hi[c] = (float)mean;
    k->mean_lo[c] = (float)(mean - k->mean_hi[c]);
    k->scale[c] = (float)(rstd * g);
    k->shift[c] = (float)bb;
}

/* k = the apply coefficients of v's channels [t->c0, t->c0 + t->nc): its statistics when
 * normalize, then gamma and beta. */
static void block_coef(struct swin_cpu_backend *be, struct in_task *t, struct swin_vol v, const void *stats,
                       bool normalize, const float *gamma, const float *beta, struct swin_cpu_in_coef *k)
{
    double mean[IN_BLOCK], var[IN_BLOCK];
    if (normalize) block_moments(be, t, v, stats, mean, var);
    for (int c = 0; c < t->nc; c++)
        fill_coef(t, normalize ? mean[c] : 0.0, normalize ? 1.0 / sqrt(var[c] + 1e-5) : 1.0, c, gamma, beta, k);
}

/* Group norm's statistics: channels [s0, s0 + span) of v hold whole groups of cpg channels
 * (at most IN_BLOCK groups); group j's mean and rstd go to mean[j], rstd[j]. Each channel's
 * moments come as block_moments gives them and are merged into their group's by the
 * pairwise update (equal voxel counts: exact in exact arithmetic). */
static void group_moments(struct swin_cpu_backend *be, struct in_task *t, struct swin_vol v, const void *stats,
                          int s0, int span, int cpg, double *mean, double *rstd)
{
    double m2[IN_BLOCK], cm[IN_BLOCK], cv[IN_BLOCK];
    for (int c0 = s0; c0 < s0 + span; c0 += IN_BLOCK) {
        t->c0 = c0;
        t->nc = s0 + span - c0 < IN_BLOCK ? s0 + span - c0 : IN_BLOCK;
        block_moments(be, t, v, stats, cm, cv);
        for (int c = 0; c < t->nc; c++) {
            const int j = (c0 + c - s0) / cpg, seen = (c0 + c - s0) % cpg;   /* channels of group j merged so far */
            if (!seen) mean[j] = m2[j] = 0.0;
            const double delta = cm[c] - mean[j];
            mean[j] += delta / (seen + 1);
            m2[j] += cv[c] + delta * delta * seen / (seen + 1);   /* in units of the voxel count */
        }
    }
    for (int j = 0; j < span / cpg; j++) rstd[j] = 1.0 / sqrt(m2[j] / cpg + 1e-5);
}

/* instnorm_act with the statistics of groups of x.c / groups channels (groups 0: of each
 * channel). Group norm runs in spans of whole groups: a group's statistics for every block
 * of its span first, then the apply pass block by block. */
static int norm_act(struct swin_cpu_backend *be, struct swin_vol x, const void *stats, bool normalize, int groups,
                    const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu)
{
    struct in_task t = {.x = x, .res = residual ? &residual->v : NULL, .lrelu = lrelu, .red = be->red,
                        .avx2 = be->simd >= SWIN_CPU_SIMD_AVX2};
    const int cpg = groups ? x.c / groups : 1;
    const int span = cpg == 1 ? IN_BLOCK : cpg <= IN_BLOCK ? IN_BLOCK / cpg * cpg : cpg;
    const bool res_norm = residual && residual->normalize;
    for (int s0 = 0; s0 < x.c; s0 += span) {
        const int ns = x.c - s0 < span ? x.c - s0 : span;
        double xm[IN_BLOCK], xr[IN_BLOCK], rm[IN_BLOCK], rr[IN_BLOCK];
        if (cpg > 1) {
            if (res_norm) group_moments(be, &t, residual->v, NULL, s0, ns, cpg, rm, rr);
            group_moments(be, &t, x, stats, s0, ns, cpg, xm, xr);
        }
        for (int c0 = s0; c0 < s0 + ns; c0 += IN_BLOCK) {
            t.c0 = c0;
            t.nc = s0 + ns - c0 < IN_BLOCK ? s0 + ns - c0 : IN_BLOCK;
            if (cpg == 1) {
                /* without normalize and gamma the residual's coefficients are the identity (((r - 0)
                 * - 0) * 1 + 0 = r in float, a zero's sign aside), so one apply path serves both kinds */
                if (residual)
                    block_coef(be, &t, residual->v, NULL, residual->normalize, residual->gamma, residual->beta, &t.rk);
                block_coef(be, &t, x, stats, normalize, gamma, beta, &t.k);
            } else {
                for (int c = 0; c < t.nc; c++) {
                    const int j = (c0 + c - s0) / cpg;
                    fill_coef(&t, xm[j], xr[j], c, gamma, beta, &t.k);
                    if (res_norm) fill_coef(&t, rm[j], rr[j], c, residual->gamma, residual->beta, &t.rk);
                    else fill_coef(&t, 0.0, 1.0, c, NULL, NULL, &t.rk);
                }
            }
            t.apply = true;
            swin_cpu_run(be, in_run, &t);
        }
    }
    return 0;
}

int swin_cpu_instnorm_act(void *bev, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                          const float *beta, const struct swin_residual *residual, bool lrelu)
{
    return norm_act(bev, x, stats, normalize, 0, gamma, beta, residual, lrelu);
}

int swin_cpu_groupnorm_act(void *bev, struct swin_vol x, const void *stats, int groups, const float *gamma,
                           const float *beta, const struct swin_residual *residual, bool lrelu)
{
    return norm_act(bev, x, stats, true, groups, gamma, beta, residual, lrelu);
}

/* The narrow shortcut's input: its channels' shifted sums over all voxels, in the chunks of
 * be->red as instnorm_act's statistics (the same bits whatever the thread count): slot entries
 * [0, cin) sum(d_k), then sum(d_k d_l) for k <= l, d = src - K, K src's voxel 0. */
struct src_task {
    struct swin_vol src;
    double *red;
    float shift_k[SWIN_NARROW_SHORTCUT_MAX_CIN];
};

static void src_sums_run(void *p, int tid, int nth)
{
    const struct src_task *t = p;
    const struct swin_vol s = t->src;
    const int cin = s.c;
    const int64_t n = (int64_t)swin_vol_voxels(s);
    for (int chunk = tid; chunk < SWIN_CPU_RED_SLOTS; chunk += nth) {
        double acc[SWIN_NARROW_SHORTCUT_MAX_CIN * (SWIN_NARROW_SHORTCUT_MAX_CIN + 3) / 2] = {0};
        const int64_t cb = n * chunk / SWIN_CPU_RED_SLOTS, ce = n * (chunk + 1) / SWIN_CPU_RED_SLOTS;
        for (int64_t v = cb; v < ce; v++) {
            const float *row = swin_vol_f32(s) + v * s.pitch;
            double d[SWIN_NARROW_SHORTCUT_MAX_CIN];
            for (int k = 0; k < cin; k++) {
                d[k] = (double)row[k] - t->shift_k[k];
                acc[k] += d[k];
            }
            for (int k = 0, i = cin; k < cin; k++)
                for (int l = k; l < cin; l++) acc[i++] += d[k] * d[l];
        }
        double *red = t->red + (size_t)chunk * SWIN_CPU_RED_CH;
        for (int i = 0; i < cin * (cin + 3) / 2; i++) red[i] = acc[i];
    }
}

/* The instance norm of r = conv1x1(src, w) (w (cin, cout)) is linear in src: per channel c,
 *   IN(r)_c * g_c + b_c = sum_k A_kc (src_k - mean_k) + b_c,  A_kc = g_c w_kc / sqrt(var_c + eps),
 *   var_c = sum_kl w_kc w_lc cov_kl,
 * with src's means and (biased) covariance. Here the float rounding of mean_k goes to m[k] and
 * what it leaves, - sum_k A_kc (mean_k - m[k]), to each channel's shift. */
struct src_moments {
    double mean[SWIN_NARROW_SHORTCUT_MAX_CIN];
    double cov[SWIN_NARROW_SHORTCUT_MAX_CIN][SWIN_NARROW_SHORTCUT_MAX_CIN];
};

static void src_moments(struct swin_cpu_backend *be, struct swin_vol src, struct src_moments *mo)
{
    struct src_task t = {.src = src, .red = be->red};
    const int cin = src.c;
    for (int k = 0; k < cin; k++) t.shift_k[k] = swin_vol_f32(src)[k];
    swin_cpu_run(be, src_sums_run, &t);
    const double n = (double)swin_vol_voxels(src);
    double s[SWIN_NARROW_SHORTCUT_MAX_CIN * (SWIN_NARROW_SHORTCUT_MAX_CIN + 3) / 2] = {0};
    for (int chunk = 0; chunk < SWIN_CPU_RED_SLOTS; chunk++)
        for (int i = 0; i < cin * (cin + 3) / 2; i++) s[i] += be->red[(size_t)chunk * SWIN_CPU_RED_CH + i];
    for (int k = 0; k < cin; k++) mo->mean[k] = t.shift_k[k] + s[k] / n;
    for (int k = 0, i = cin; k < cin; k++)
        for (int l = k; l < cin; l++, i++) mo->cov[k][l] = mo->cov[l][k] = s[i] / n - (s[k] / n) * (s[l] / n);
}

/* The block's A (into p->a) and the shift it adds (into k->shift), as above. */
static void shortcut_coef(const struct swin_cpu_backend *be, const struct src_moments *mo, int c0, int nc, int cout,
                          const float *w, const float *rg, const float *rb, struct swin_cpu_in_proj *p,
                          struct swin_cpu_in_coef *k)
{
    const bool bf16 = swin_cpu_wgemm_of(be, w).bf16;
    const int cin = p->cin;
    for (int c = 0; c < nc; c++) {
        double wc[SWIN_NARROW_SHORTCUT_MAX_CIN], var = 0.0, shift = rb ? rb[c0 + c] : 0.0;
        for (int i = 0; i < cin; i++) {
            const size_t at = (size_t)i * cout + c0 + c;
            wc[i] = bf16 ? swin_bf16_to_f32(((const swin_bf16 *)(const void *)w)[at]) : w[at];
        }
        for (int i = 0; i < cin; i++)
            for (int j = 0; j < cin; j++) var += wc[i] * wc[j] * mo->cov[i][j];
        const double scale = (rg ? rg[c0 + c] : 1.0) / sqrt((var > 0.0 ? var : 0.0) + 1e-5);
        for (int i = 0; i < cin; i++) {
            const double a = wc[i] * scale;
            p->a[i][c] = (float)a;
            shift -= a * (mo->mean[i] - p->m[i]);
        }
        k->shift[c] += (float)shift;
    }
}

int swin_cpu_instnorm_act_narrow_shortcut(void *bev, struct swin_vol x, const void *stats, const float *gamma,
                                          const float *beta, struct swin_vol src, const float *w,
                                          const float *res_gamma, const float *res_beta)
{
    struct swin_cpu_backend *be = bev;
    struct src_moments mo;
    src_moments(be, src, &mo);
    struct swin_cpu_in_proj proj = {.src = swin_vol_f32(src), .pitch = src.pitch, .cin = src.c};
    for (int i = 0; i < src.c; i++) proj.m[i] = (float)mo.mean[i];
    struct in_task t = {.x = x, .lrelu = true, .red = be->red, .proj = &proj, .avx2 = be->simd >= SWIN_CPU_SIMD_AVX2};
    for (int c0 = 0; c0 < x.c; c0 += IN_BLOCK) {
        t.c0 = c0;
        t.nc = x.c - c0 < IN_BLOCK ? x.c - c0 : IN_BLOCK;
        block_coef(be, &t, x, stats, true, gamma, beta, &t.k);
        shortcut_coef(be, &mo, c0, t.nc, x.c, w, res_gamma, res_beta, &proj, &t.k);
        t.apply = true;
        swin_cpu_run(be, in_run, &t);
    }
    return 0;
}

struct conv1x1_task {
    struct swin_cpu_norm_conv1x1 h;
    int64_t voxels;
    enum swin_cpu_simd simd;
};

/* The portable level's apply pass: instnorm_conv1x1_tmpl.h's arithmetic one channel at a time. */
static void norm_conv1x1_portable(const struct swin_cpu_norm_conv1x1 *h, int64_t vb, int64_t ve)
{
    const struct swin_cpu_in_coef *k = h->k, *rk = h->rk;
    const int ldw = SWIN_CPU_NORM_CONV1X1_COUTP(h->cout);
    float y[SWIN_NORM_CONV1X1_MAX_CIN];
    for (int64_t v = vb; v < ve; v++) {
        const float *x = h->x + v * h->pitch, *r = h->res ? h->res + v * h->res_pitch : NULL;
        for (int c = 0; c < h->cin; c++) {
            y[c] = ((x[c] - k->mean_hi[c]) - k->mean_lo[c]) * k->scale[c] + k->shift[c];
            if (r) y[c] += ((r[c] - rk->mean_hi[c]) - rk->mean_lo[c]) * rk->scale[c] + rk->shift[c];
            if (h->lrelu && y[c] < 0.0f) y[c] *= 0.01f;
        }
        float *o = h->out + v * h->out_pitch;
        for (int j = 0; j < h->cout; j++) {
            float acc = h->bias[j];
            for (int c = 0; c < h->cin; c++) acc += y[c] * h->w[(size_t)c * ldw + j];
            o[j] = acc;
        }
    }
}

static void conv1x1_run(void *p, int tid, int nth)
{
    const struct conv1x1_task *t = p;
    const int64_t b = t->voxels * tid / nth, e = t->voxels * (tid + 1) / nth;
    if (t->simd >= SWIN_CPU_SIMD_AVX512) swin_cpu_norm_conv1x1_avx512(&t->h, b, e);
    else if (t->simd >= SWIN_CPU_SIMD_AVX2) swin_cpu_norm_conv1x1_avx2(&t->h, b, e);
    else norm_conv1x1_portable(&t->h, b, e);
}

int swin_cpu_instnorm_act_conv1x1(void *bev, struct swin_vol out, struct swin_vol x, const void *stats,
                                  bool normalize, const float *gamma, const float *beta,
                                  const struct swin_residual *residual, bool lrelu, const float *w, const float *bias)
{
    struct swin_cpu_backend *be = bev;
    /* x.c <= SWIN_NORM_CONV1X1_MAX_CIN = IN_BLOCK: one channel block */
    struct in_task t = {.x = x, .res = residual ? &residual->v : NULL, .red = be->red, .c0 = 0, .nc = x.c,
                        .avx2 = be->simd >= SWIN_CPU_SIMD_AVX2};
    if (residual) block_coef(be, &t, residual->v, NULL, residual->normalize, residual->gamma, residual->beta, &t.rk);
    block_coef(be, &t, x, stats, normalize, gamma, beta, &t.k);
    /* w (x.c, out.c) as float32, its rows padded with zeros to coutp */
    const int coutp = SWIN_CPU_NORM_CONV1X1_COUTP(out.c);
    const bool bf16 = swin_cpu_wgemm_of(be, w).bf16;
    _Alignas(64) float wp[SWIN_NORM_CONV1X1_MAX_CIN * SWIN_NORM_CONV1X1_MAX_COUT];
    _Alignas(64) float bp[SWIN_NORM_CONV1X1_MAX_COUT];
    for (int c = 0; c < x.c; c++)
        for (int j = 0; j < coutp; j++) {
            const size_t at = (size_t)c * out.c + j;
            wp[c * coutp + j] = j >= out.c ? 0.0f
                                : bf16     ? swin_bf16_to_f32(((const swin_bf16 *)(const void *)w)[at])
                                           : w[at];
        }
    for (int j = 0; j < coutp; j++) bp[j] = bias && j < out.c ? bias[j] : 0.0f;
    struct conv1x1_task h = {
        .h = {.x = swin_vol_f32(x), .res = residual ? swin_vol_f32(residual->v) : NULL, .pitch = x.pitch,
              .res_pitch = residual ? residual->v.pitch : 0, .cin = x.c, .k = &t.k, .rk = &t.rk, .lrelu = lrelu,
              .out = swin_vol_f32(out), .out_pitch = out.pitch, .cout = out.c, .w = wp, .bias = bp},
        .voxels = (int64_t)swin_vol_voxels(x),
        .simd = be->simd};
    swin_cpu_run(be, conv1x1_run, &h);
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
