/* instnorm_act against float64 InstanceNorm3d per channel over all voxels (biased variance,
 * eps 1e-5) or no normalisation, optional affine, residual add (as it is, or instance-
 * normalised with or without its own affine) and LeakyReLU(0.01), in that order.
 * C = 300 crosses the op's 256-channel block; a +500 offset checks the two-pass variance. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Channel ch's mean and 1 / sqrt(var + eps) over nv voxels of x (dense, c channels). */
static void moments(const float *x, size_t nv, int c, int ch, double *mean, double *rstd)
{
    double m = 0.0, var = 0.0;
    for (size_t v = 0; v < nv; v++) m += x[v * c + ch];
    m /= (double)nv;
    for (size_t v = 0; v < nv; v++) var += (x[v * c + ch] - m) * (x[v * c + ch] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(var / (double)nv + 1e-5);
}

/* res_norm: the residual instance-normalised first, then * rg + rb when rg != NULL. */
static void naive(float *ref, const float *x, bool normalize, const float *res, bool res_norm, const float *rg,
                  const float *rb, size_t nv, int c, const float *g, const float *b, bool lrelu)
{
    for (int ch = 0; ch < c; ch++) {
        double mean, rstd, rmean = 0.0, rrstd = 1.0;
        moments(x, nv, c, ch, &mean, &rstd);
        if (res && res_norm) moments(res, nv, c, ch, &rmean, &rrstd);
        for (size_t v = 0; v < nv; v++) {
            double y = normalize ? (x[v * c + ch] - mean) * rstd : x[v * c + ch];
            if (g) y = y * g[ch] + b[ch];
            if (res) {
                double r = res_norm ? (res[v * c + ch] - rmean) * rrstd : res[v * c + ch];
                if (rg) r = r * rg[ch] + rb[ch];
                y += r;
            }
            if (lrelu && y < 0) y *= 0.01;
            ref[v * c + ch] = (float)y;
        }
    }
}

enum { RES_NONE, RES_PLAIN, RES_NORM, RES_NORM_AFFINE };

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int pitch, bool normalize, bool affine,
                     int residual, int res_pitch, bool lrelu, float offset)
{
    char name[160];
    snprintf(name, sizeof name, "instnorm_act %dx%dx%d C %d pitch %d normalize %d affine %d residual %d lrelu %d offset %g", d,
             h, w, c, pitch, normalize, affine, residual, lrelu, offset);
    test_rng r = {99ULL + (uint64_t)c * 3 + residual};
    tvol x = tvol_new(d, h, w, c, pitch);
    tvol_fill(&x, &r, offset - 1.0f, offset + 3.0f);
    tvol res = tvol_new(d, h, w, c, res_pitch);
    const bool res_norm = residual >= RES_NORM;
    /* a normalised residual gets the offset too (its own shifted statistics) */
    tvol_fill(&res, &r, (res_norm ? offset : 0.0f) - 2.0f, (res_norm ? offset : 0.0f) + 2.0f);
    float *g = affine ? test_rand(&r, (size_t)c, 0.5f, 1.5f) : NULL;
    float *b = affine ? test_rand(&r, (size_t)c, -1.0f, 1.0f) : NULL;
    float *rg = residual == RES_NORM_AFFINE ? test_rand(&r, (size_t)c, -1.5f, 1.5f) : NULL;
    float *rb = residual == RES_NORM_AFFINE ? test_rand(&r, (size_t)c, -1.0f, 1.0f) : NULL;
    float *xd = tvol_dense(&x), *rd = tvol_dense(&res);
    size_t nv = swin_vol_voxels(x.v), n = nv * c;
    float *ref = malloc(n * sizeof(float));
    naive(ref, xd, normalize, residual ? rd : NULL, res_norm, rg, rb, nv, c, g, b, lrelu);
    const struct swin_residual rv = {.v = res.v, .normalize = res_norm, .gamma = rg, .beta = rb};
    bool ok = check_true(name, swin_cpu_ops.instnorm_act(be, x.v, NULL, normalize, g, b, residual ? &rv : NULL, lrelu) == 0);
    float *got = tvol_dense(&x);
    /* Statistics in double, normalisation in double, one float rounding at the end (plus the
     * float add of the residual): 1e-6 of max(1, |ref|). */
    ok &= check_close_scaled(name, got, ref, n, 1e-6);
    ok &= tvol_guard_ok(name, &x, 0, c);
    if (res_norm) {
        /* the same output with the residual added as it is must fail the check */
        naive(ref, xd, normalize, rd, false, NULL, NULL, nv, c, g, b, lrelu);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += !(fabs(got[i] - ref[i]) <= 1e-6 * fmax(1.0, fabs(ref[i])));
        ok &= check_true("instnorm_act: a reference with the residual not normalised is rejected", bad > n / 2);
    }
    free(g); free(b); free(rg); free(rb); free(xd); free(rd); free(ref); free(got);
    tvol_free(&x);
    tvol_free(&res);
    return ok;
}

/* Every case at every SIMD level the CPU has (AVX2: instnorm_avx2.c, channels in groups of
 * 16 and 8 and a scalar rest; the portable loops below). */
static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    ok &= run_case(be, 5, 9, 13, 5, 7, true, false, RES_NONE, 5, true, 0.0f);
    ok &= run_case(be, 5, 9, 13, 5, 5, true, true, RES_PLAIN, 9, true, 0.0f);
    ok &= run_case(be, 3, 4, 1, 3, 3, true, false, RES_PLAIN, 3, false, 500.0f);
    ok &= run_case(be, 4, 3, 5, 300, 301, true, true, RES_NONE, 300, false, 0.0f);
    ok &= run_case(be, 1, 1, 2, 12, 12, true, false, RES_PLAIN, 12, true, 0.0f);
    /* 48 = 3 groups of 16 over 585 voxels (runs of 64 and a rest); 29 = 16 + 8 + 5 with a
     * +500 offset; 13 = 8 + 5 into a wider pitch, residual and LeakyReLU */
    ok &= run_case(be, 5, 9, 13, 48, 48, true, true, RES_PLAIN, 48, true, 0.0f);
    ok &= run_case(be, 7, 6, 11, 29, 32, true, false, RES_NONE, 29, false, 500.0f);
    ok &= run_case(be, 4, 5, 7, 13, 17, true, true, RES_PLAIN, 15, true, 0.0f);
    /* the residual instance-normalised in the same op (a shortcut conv's norm): without and
     * with its affine, 48 and 13 channels, C = 300 across the block, a +500 offset on both */
    ok &= run_case(be, 5, 9, 13, 48, 48, true, true, RES_NORM, 52, true, 0.0f);
    ok &= run_case(be, 4, 5, 7, 13, 17, true, false, RES_NORM_AFFINE, 15, true, 0.0f);
    ok &= run_case(be, 4, 3, 5, 300, 301, true, true, RES_NORM_AFFINE, 303, true, 0.0f);
    ok &= run_case(be, 3, 4, 5, 29, 29, true, false, RES_NORM_AFFINE, 29, false, 500.0f);
    /* no normalisation (batch norm folded into the convolution): residual + LeakyReLU, and
     * with an affine; C = 300 crosses the channel block */
    ok &= run_case(be, 5, 9, 13, 5, 7, false, false, RES_PLAIN, 9, true, 0.0f);
    ok &= run_case(be, 4, 3, 5, 300, 301, false, true, RES_NONE, 300, true, 0.0f);
    return ok;
}

int main(void) { return test_main_every_level(all_cases); }
