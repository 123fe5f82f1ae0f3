/* groupnorm_act against float64 torch.nn.GroupNorm: each group of C / G consecutive channels
 * normalised over all its channels and voxels (biased variance, eps 1e-5), then * gamma +
 * beta per channel, + the residual (as it is, or group-normalised with its own affine) and
 * LeakyReLU(0.01). Groups of 1, 3, 4 and C channels; C = 300 in groups of 150 (wider than the
 * op's 128-channel block), 100 and 5 (spans of whole groups that leave a short last one);
 * a +500 offset checks the merge of the channels' moments. */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/op_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Group j's mean and 1 / sqrt(var + eps) over nv voxels of x's channels [j cpg, (j + 1) cpg). */
static void group_moments(const float *x, size_t nv, int c, int cpg, int j, double *mean, double *rstd)
{
    double m = 0.0, var = 0.0;
    for (size_t v = 0; v < nv; v++)
        for (int ch = j * cpg; ch < (j + 1) * cpg; ch++) m += x[v * c + ch];
    m /= (double)nv * cpg;
    for (size_t v = 0; v < nv; v++)
        for (int ch = j * cpg; ch < (j + 1) * cpg; ch++) var += (x[v * c + ch] - m) * (x[v * c + ch] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(var / ((double)nv * cpg) + 1e-5);
}

static void naive(float *ref, const float *x, const float *res, bool res_norm, const float *rg, const float *rb,
                  size_t nv, int c, int groups, const float *g, const float *b, bool lrelu)
{
    const int cpg = c / groups;
    for (int ch = 0; ch < c; ch++) {
        double mean, rstd, rmean = 0.0, rrstd = 1.0;
        group_moments(x, nv, c, cpg, ch / cpg, &mean, &rstd);
        if (res && res_norm) group_moments(res, nv, c, cpg, ch / cpg, &rmean, &rrstd);
        for (size_t v = 0; v < nv; v++) {
            double y = (x[v * c + ch] - mean) * rstd * g[ch] + b[ch];
            if (res) y += res_norm ? (res[v * c + ch] - rmean) * rrstd * rg[ch] + rb[ch] : res[v * c + ch];
            if (lrelu && y < 0) y *= 0.01;
            ref[v * c + ch] = (float)y;
        }
    }
}

enum { RES_NONE, RES_PLAIN, RES_NORM };

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int pitch, int groups, int residual,
                     bool lrelu, float offset)
{
    char name[160];
    snprintf(name, sizeof name, "groupnorm_act %dx%dx%d C %d pitch %d groups %d residual %d lrelu %d offset %g", d, h,
             w, c, pitch, groups, residual, lrelu, offset);
    test_rng r = {7ULL + (uint64_t)c * 5 + (uint64_t)groups};
    tvol x = tvol_new(d, h, w, c, pitch);
    tvol res = tvol_new(d, h, w, c, c + 3);
    /* channels of a group get different means, so that a per-channel norm differs from the group's */
    tvol_fill(&x, &r, offset - 1.0f, offset + 3.0f);
    tvol_fill(&res, &r, offset - 2.0f, offset + 2.0f);
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++)
                for (int ch = 0; ch < c; ch++) *vol_at(x.v, z, y, xx, ch) += 0.5f * (float)(ch % 7);
    float *xd = tvol_dense(&x), *rd = tvol_dense(&res);
    const size_t nv = swin_vol_voxels(x.v), n = nv * c;
    float *g = test_rand(&r, (size_t)c, 0.5f, 1.5f), *b = test_rand(&r, (size_t)c, -1.0f, 1.0f);
    float *rg = test_rand(&r, (size_t)c, -1.5f, 1.5f), *rb = test_rand(&r, (size_t)c, -1.0f, 1.0f);
    float *ref = malloc(n * sizeof(float));
    naive(ref, xd, residual ? rd : NULL, residual == RES_NORM, rg, rb, nv, c, groups, g, b, lrelu);
    const struct swin_residual rv = {.v = res.v, .normalize = residual == RES_NORM,
                                     .gamma = residual == RES_NORM ? rg : NULL,
                                     .beta = residual == RES_NORM ? rb : NULL};
    bool ok = check_true(name, swin_op_groupnorm_act(&swin_cpu_ops, be, x.v, NULL, groups, g, b,
                                                     residual ? &rv : NULL, lrelu) == 0);
    float *got = tvol_dense(&x);
    ok &= check_close_scaled(name, got, ref, n, 1e-6);
    ok &= tvol_guard_ok(name, &x, 0, c);
    if (groups < c) {
        /* the same output normalised per channel (instance norm) must fail the check */
        naive(ref, xd, residual ? rd : NULL, residual == RES_NORM, rg, rb, nv, c, c, g, b, lrelu);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += !(fabs(got[i] - ref[i]) <= 1e-6 * fmax(1.0, fabs(ref[i])));
        ok &= check_true("groupnorm_act: a per-channel reference is rejected", bad > n / 2);
    }
    free(g); free(b); free(rg); free(rb); free(xd); free(rd); free(ref); free(got);
    tvol_free(&x);
    tvol_free(&res);
    return ok;
}

/* Every case at every SIMD level the CPU has, and the op's refusals. */
static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    ok &= run_case(be, 5, 9, 13, 12, 12, 3, RES_NONE, true, 0.0f);
    ok &= run_case(be, 5, 9, 13, 12, 14, 4, RES_PLAIN, true, 0.0f);
    ok &= run_case(be, 4, 5, 7, 12, 12, 1, RES_NORM, true, 500.0f);
    ok &= run_case(be, 4, 5, 7, 12, 13, 12, RES_NORM, false, 0.0f);
    ok &= run_case(be, 1, 1, 1, 48, 48, 3, RES_PLAIN, true, 0.0f);
    ok &= run_case(be, 4, 3, 5, 300, 301, 2, RES_NORM, true, 0.0f);
    ok &= run_case(be, 4, 3, 5, 300, 300, 3, RES_NONE, false, 500.0f);
    ok &= run_case(be, 3, 4, 5, 300, 303, 60, RES_NORM, true, 0.0f);
    tvol x = tvol_new(2, 2, 2, 12, 12);
    float g[12] = {0}, b[12] = {0};
    ok &= check_true("groupnorm_act: 5 groups of 12 channels refused",
                     swin_op_groupnorm_act(&swin_cpu_ops, be, x.v, NULL, 5, g, b, NULL, true) == SWIN_ERR_ARG);
    ok &= check_true("groupnorm_act: 0 groups refused",
                     swin_op_groupnorm_act(&swin_cpu_ops, be, x.v, NULL, 0, g, b, NULL, true) == SWIN_ERR_ARG);
    tvol_free(&x);
    return ok;
}

int main(void) { return test_main_every_level(all_cases); }
