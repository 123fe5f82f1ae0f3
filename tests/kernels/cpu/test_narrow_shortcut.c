/* instnorm_act_narrow_shortcut (x = LReLU(IN(x) * g + b + IN(conv1x1(src, w)) * rg + rb)) against
 * a float64 loop that computes the shortcut's map r = src . w voxel by voxel and normalises it
 * over its own voxels, as the conv and instnorm_act would: the op instead folds the norm into
 * the 1x1 conv through src's mean and covariance. Source widths 1 (encoder1's CT channel),
 * 4 correlated channels (BraTS' modalities) and 8 (the most the op takes); output widths 48,
 * 13 (8 + 5 lanes) and 300 (across the 128-channel block); a +500 offset with a 0.1 spread
 * on the source checks the covariance's shifted sums; wider pitches on both. */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/op_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Channel ch's mean and 1 / sqrt(var + eps) over nv voxels of a dense double map of c channels. */
static void moments64(const double *x, size_t nv, int c, int ch, double *mean, double *rstd)
{
    double m = 0.0, var = 0.0;
    for (size_t v = 0; v < nv; v++) m += x[v * c + ch];
    m /= (double)nv;
    for (size_t v = 0; v < nv; v++) var += (x[v * c + ch] - m) * (x[v * c + ch] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(var / (double)nv + 1e-5);
}

/* ref = LReLU(IN(x) g + b + [IN(src . w) rg + rb]); normalize_res false: the shortcut's map
 * added as it is (a wrong reference the op must not match). */
static void naive(float *ref, const float *x, const float *src, const float *w, size_t nv, int cin, int cout,
                  const float *g, const float *b, const float *rg, const float *rb, bool normalize_res)
{
    double *r = malloc(nv * cout * sizeof(double)), *xd = malloc(nv * cout * sizeof(double));
    for (size_t v = 0; v < nv; v++)
        for (int co = 0; co < cout; co++) {
            double s = 0.0;
            for (int ci = 0; ci < cin; ci++) s += (double)src[v * cin + ci] * w[ci * cout + co];
            r[v * cout + co] = s;
            xd[v * cout + co] = x[v * cout + co];
        }
    for (int co = 0; co < cout; co++) {
        double mean, rstd, rmean = 0.0, rrstd = 1.0;
        moments64(xd, nv, cout, co, &mean, &rstd);
        if (normalize_res) moments64(r, nv, cout, co, &rmean, &rrstd);
        for (size_t v = 0; v < nv; v++) {
            double y = (xd[v * cout + co] - mean) * rstd;
            if (g) y = y * g[co] + b[co];
            double q = (r[v * cout + co] - rmean) * rrstd;
            if (rg) q = q * rg[co] + rb[co];
            y += q;
            ref[v * cout + co] = (float)(y < 0.0 ? 0.01 * y : y);
        }
    }
    free(r);
    free(xd);
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int cin, int src_pitch, int cout, int pitch,
                     bool affine, bool res_affine, float offset)
{
    char name[160];
    snprintf(name, sizeof name, "narrow_shortcut %dx%dx%d %d->%d pitches %d/%d affine %d/%d offset %g", d, h, w, cin,
             cout, src_pitch, pitch, affine, res_affine, offset);
    test_rng r = {7ULL + (uint64_t)cin * 31 + (uint64_t)cout};
    tvol x = tvol_new(d, h, w, cout, pitch), src = tvol_new(d, h, w, cin, src_pitch);
    tvol_fill(&x, &r, -1.0f, 3.0f);
    /* correlated source channels: channel k = base + k / cin of the noise of its own, all
     * around `offset` with a spread of 0.1 when offset != 0 */
    const float spread = offset != 0.0f ? 0.1f : 2.0f;
    const size_t nv = swin_vol_voxels(x.v);
    for (size_t v = 0; v < nv; v++) {
        const float base = test_rng_uniform(&r, -0.5f, 0.5f) * spread;
        float *row = swin_vol_f32(src.v) + v * src_pitch;
        for (int k = 0; k < cin; k++)
            row[k] = offset + base + (float)k / (float)cin * test_rng_uniform(&r, -0.5f, 0.5f) * spread;
    }
    float *wt = test_rand(&r, (size_t)cin * cout, -1.0f, 1.0f);
    float *g = affine ? test_rand(&r, (size_t)cout, 0.5f, 1.5f) : NULL;
    float *b = affine ? test_rand(&r, (size_t)cout, -1.0f, 1.0f) : NULL;
    float *rg = res_affine ? test_rand(&r, (size_t)cout, -1.5f, 1.5f) : NULL;
    float *rb = res_affine ? test_rand(&r, (size_t)cout, -1.0f, 1.0f) : NULL;
    float *xd = tvol_dense(&x), *sd = tvol_dense(&src);
    const size_t n = nv * cout;
    float *ref = malloc(n * sizeof(float));
    naive(ref, xd, sd, wt, nv, cin, cout, g, b, rg, rb, true);
    bool ok = check_true(name, swin_op_instnorm_act_narrow_shortcut(&swin_cpu_ops, be, x.v, NULL, g, b, src.v, wt, rg,
                                                                    rb) == 0);
    float *got = tvol_dense(&x);
    /* statistics and coefficients in double, the apply in float: about cin + 3 float
     * roundings of values of at most a few units; 2e-6 of max(1, |ref|) */
    ok &= check_close_scaled(name, got, ref, n, 2e-6);
    ok &= tvol_guard_ok(name, &x, 0, cout);
    float *src_after = tvol_dense(&src);
    size_t changed = 0;
    for (size_t i = 0; i < nv * cin; i++) changed += src_after[i] != sd[i];
    ok &= check_true("narrow_shortcut leaves src as it was", changed == 0);
    /* the shortcut's map added without its norm must fail the check */
    naive(ref, xd, sd, wt, nv, cin, cout, g, b, rg, rb, false);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += !(fabs(got[i] - ref[i]) <= 2e-6 * fmax(1.0, fabs(ref[i])));
    ok &= check_true("narrow_shortcut: a reference without the shortcut's norm is rejected", bad > n / 2);
    free(wt); free(g); free(b); free(rg); free(rb); free(xd); free(sd); free(ref); free(got); free(src_after);
    tvol_free(&x);
    tvol_free(&src);
    return ok;
}

static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    ok &= run_case(be, 5, 9, 13, 1, 1, 48, 48, true, true, 0.0f);
    ok &= run_case(be, 7, 6, 11, 1, 3, 13, 17, false, true, 500.0f);
    ok &= run_case(be, 4, 5, 7, 4, 4, 48, 52, true, false, 0.0f);
    ok &= run_case(be, 6, 5, 4, 4, 5, 13, 13, true, true, 500.0f);
    ok &= run_case(be, 4, 3, 5, 8, 8, 300, 301, true, true, 0.0f);
    ok &= run_case(be, 3, 4, 5, 8, 11, 29, 29, false, false, 500.0f);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    /* the boundary: a backend without the op, a source wider than the op takes, other dims */
    struct swin_ops none = swin_cpu_ops;
    none.instnorm_act_narrow_shortcut = NULL;
    tvol x = tvol_new(4, 4, 4, 3, 3), wide = tvol_new(4, 4, 4, SWIN_NARROW_SHORTCUT_MAX_CIN + 1, 9),
         other = tvol_new(4, 4, 5, 1, 1);
    float w[3 * (SWIN_NARROW_SHORTCUT_MAX_CIN + 1)] = {0};
    bool ok = check_true("a backend without instnorm_act_narrow_shortcut is refused",
                         swin_op_instnorm_act_narrow_shortcut(&none, be, x.v, NULL, NULL, NULL, x.v, w, NULL, NULL) ==
                             SWIN_ERR_ARG);
    ok &= check_true("a source wider than SWIN_NARROW_SHORTCUT_MAX_CIN is refused",
                     swin_op_instnorm_act_narrow_shortcut(&swin_cpu_ops, be, x.v, NULL, NULL, NULL, wide.v, w, NULL,
                                                          NULL) == SWIN_ERR_SHAPE);
    ok &= check_true("a source of other dims is refused",
                     swin_op_instnorm_act_narrow_shortcut(&swin_cpu_ops, be, x.v, NULL, NULL, NULL, other.v, w, NULL,
                                                          NULL) == SWIN_ERR_SHAPE);
    tvol_free(&x);
    tvol_free(&wide);
    tvol_free(&other);
    swin_cpu_backend_free(be);
    return test_main_every_level(all_cases) || !ok;
}
