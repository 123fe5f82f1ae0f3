/* instnorm_act_conv1x1 (out = conv1x1(LReLU(IN(x) g + b + res), w) + bias, x not written) against
 * a float64 loop that normalises x and the residual over their own voxels and then multiplies
 * by w, as instnorm_act followed by conv3d k 1 would. Input widths 48 (the default decoder1),
 * 5 and 17 (a partial vector at 8 and 16 lanes) and 128 (the most the op takes); output widths
 * 14 (BTCV's head), 1, 16, 17 and 32 (the most); the residual absent, as it is, and
 * normalised with and without its affine; without normalize (a folded batch norm) and without
 * the activation; wider pitches on x, the residual and out. Every level this CPU has. */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/op_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum res_kind { RES_NONE, RES_PLAIN, RES_NORM, RES_NORM_AFFINE };

struct norm_case {
    int d, h, w, cin, x_pitch, cout, out_pitch;
    enum res_kind res;
    bool normalize, affine, lrelu, bias;
};

/* Channel ch's mean and 1 / sqrt(var + eps) over nv voxels of a dense float map of c channels. */
static void moments64(const float *x, size_t nv, int c, int ch, double *mean, double *rstd)
{
    double m = 0.0, var = 0.0;
    for (size_t v = 0; v < nv; v++) m += x[v * c + ch];
    m /= (double)nv;
    for (size_t v = 0; v < nv; v++) var += (x[v * c + ch] - m) * (x[v * c + ch] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(var / (double)nv + 1e-5);
}

/* ref (nv, cout) and scale[i] = |bias| + sum_c |y_c w_c| (what float32 rounding is relative to);
 * with_res false: the residual left out (a wrong reference the op must not match). */
static void naive(double *ref, double *scale, const struct norm_case *k, const float *x, const float *res,
                  const float *w, const float *bias, const float *g, const float *b, const float *rg, const float *rb,
                  size_t nv, bool with_res)
{
    double *y = malloc((size_t)k->cin * sizeof(double));
    double *mean = malloc((size_t)k->cin * 4 * sizeof(double)), *rstd = mean + k->cin, *rmean = rstd + k->cin,
           *rrstd = rmean + k->cin;
    for (int c = 0; c < k->cin; c++) {
        mean[c] = rmean[c] = 0.0;
        rstd[c] = rrstd[c] = 1.0;
        if (k->normalize) moments64(x, nv, k->cin, c, &mean[c], &rstd[c]);
        if (k->res >= RES_NORM) moments64(res, nv, k->cin, c, &rmean[c], &rrstd[c]);
    }
    for (size_t v = 0; v < nv; v++) {
        for (int c = 0; c < k->cin; c++) {
            double t = (x[v * k->cin + c] - mean[c]) * rstd[c];
            if (g) t = t * g[c] + b[c];
            if (with_res && k->res != RES_NONE) {
                double q = (res[v * k->cin + c] - rmean[c]) * rrstd[c];
                if (rg) q = q * rg[c] + rb[c];
                t += q;
            }
            y[c] = k->lrelu && t < 0.0 ? 0.01 * t : t;
        }
        for (int o = 0; o < k->cout; o++) {
            double s = bias ? bias[o] : 0.0, a = fabs(s);
            for (int c = 0; c < k->cin; c++) {
                s += y[c] * w[(size_t)c * k->cout + o];
                a += fabs(y[c] * w[(size_t)c * k->cout + o]);
            }
            ref[v * k->cout + o] = s;
            scale[v * k->cout + o] = a;
        }
    }
    free(y);
    free(mean);
}

/* Elements of got off ref by more than tol (scale + 1) each. */
static size_t misses(const float *got, const double *ref, const double *scale, size_t n, double tol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += !(fabs(got[i] - ref[i]) <= tol * (scale[i] + 1.0));
    return bad;
}

static bool run_case(struct swin_cpu_backend *be, struct norm_case k)
{
    char name[200];
    snprintf(name, sizeof name,
             "norm_conv1x1 %dx%dx%d %d->%d pitches %d/%d res %d normalize %d affine %d lrelu %d "
             "bias %d",
             k.d, k.h, k.w, k.cin, k.cout, k.x_pitch, k.out_pitch, k.res, k.normalize, k.affine, k.lrelu, k.bias);
    test_rng r = {11ULL + (uint64_t)k.cin * 37 + (uint64_t)k.cout * 5 + (uint64_t)k.res};
    tvol x = tvol_new(k.d, k.h, k.w, k.cin, k.x_pitch), res = tvol_new(k.d, k.h, k.w, k.cin, k.cin + 3),
         out = tvol_new(k.d, k.h, k.w, k.cout, k.out_pitch);
    tvol_fill(&x, &r, -1.0f, 3.0f);
    tvol_fill(&res, &r, -2.0f, 1.0f);
    float *w = test_rand(&r, (size_t)k.cin * k.cout, -1.0f, 1.0f);
    float *bias = k.bias ? test_rand(&r, (size_t)k.cout, -1.0f, 1.0f) : NULL;
    float *g = k.affine ? test_rand(&r, (size_t)k.cin, 0.5f, 1.5f) : NULL;
    float *b = k.affine ? test_rand(&r, (size_t)k.cin, -1.0f, 1.0f) : NULL;
    float *rg = k.res == RES_NORM_AFFINE ? test_rand(&r, (size_t)k.cin, -1.5f, 1.5f) : NULL;
    float *rb = k.res == RES_NORM_AFFINE ? test_rand(&r, (size_t)k.cin, -1.0f, 1.0f) : NULL;
    const struct swin_residual rv = {.v = res.v, .normalize = k.res >= RES_NORM, .gamma = rg, .beta = rb};
    float *xd = tvol_dense(&x), *rd = tvol_dense(&res);
    const size_t nv = swin_vol_voxels(x.v), n = nv * k.cout;
    double *ref = malloc(n * sizeof(double)), *scale = malloc(n * sizeof(double));
    naive(ref, scale, &k, xd, rd, w, bias, g, b, rg, rb, nv, true);
    bool ok = check_true(name, swin_op_instnorm_act_conv1x1(&swin_cpu_ops, be, out.v, x.v, NULL, k.normalize, g, b,
                                                            k.res == RES_NONE ? NULL : &rv, k.lrelu, w, bias) == 0);
    float *got = tvol_dense(&out);
    /* statistics in double, the apply and the cin products in float32: a few roundings of each
     * term, relative to the sum of the terms' magnitudes */
    const double tol = 4e-7 * sqrt((double)k.cin) + 1e-6;
    const size_t bad = misses(got, ref, scale, n, tol);
    char what[260];
    snprintf(what, sizeof what, "%s: %zu of %zu outputs off by more than %.1e of their terms", name, bad, n, tol);
    ok &= check_true(what, bad == 0);
    ok &= tvol_guard_ok(name, &out, 0, k.cout);
    float *x_after = tvol_dense(&x), *r_after = tvol_dense(&res);
    size_t changed = 0;
    for (size_t i = 0; i < nv * k.cin; i++) changed += x_after[i] != xd[i] || r_after[i] != rd[i];
    ok &= check_true("norm_conv1x1 leaves x and the residual as they were", changed == 0);
    ok &= tvol_guard_ok("norm_conv1x1: x", &x, 0, k.cin);
    if (k.res != RES_NONE) {
        naive(ref, scale, &k, xd, rd, w, bias, g, b, rg, rb, nv, false);
        ok &= check_true("norm_conv1x1: a reference without the residual is rejected (the test can fail)",
                         misses(got, ref, scale, n, tol) > n / 2);
    }
    free(w);
    free(bias);
    free(g);
    free(b);
    free(rg);
    free(rb);
    free(xd);
    free(rd);
    free(ref);
    free(scale);
    free(got);
    free(x_after);
    free(r_after);
    tvol_free(&x);
    tvol_free(&res);
    tvol_free(&out);
    return ok;
}

static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    ok &= run_case(be, (struct norm_case){5, 6, 7, 48, 48, 14, 14, RES_NORM_AFFINE, true, true, true, true});
    ok &= run_case(be, (struct norm_case){4, 5, 6, 48, 96, 14, 16, RES_NORM, true, true, true, false});
    ok &= run_case(be, (struct norm_case){3, 5, 7, 5, 7, 1, 1, RES_PLAIN, true, false, true, true});
    ok &= run_case(be, (struct norm_case){4, 4, 5, 17, 17, 17, 19, RES_NONE, true, true, false, true});
    ok &= run_case(be, (struct norm_case){3, 4, 6, 17, 20, 16, 16, RES_PLAIN, false, false, true, true});
    ok &= run_case(be, (struct norm_case){2, 3, 5, 128, 128, 32, 33, RES_NORM_AFFINE, true, true, true, true});
    ok &= run_case(be, (struct norm_case){3, 3, 3, 48, 48, 32, 32, RES_NORM, false, true, true, true});
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    /* the boundary: a backend without the op, channels past the limits, other dims, overlap */
    struct swin_ops none = swin_cpu_ops;
    none.instnorm_act_conv1x1 = NULL;
    tvol x = tvol_new(4, 4, 4, 8, 8), out = tvol_new(4, 4, 4, 3, 3), other = tvol_new(4, 4, 5, 3, 3),
         wide = tvol_new(4, 4, 4, SWIN_NORM_CONV1X1_MAX_CIN + 1, SWIN_NORM_CONV1X1_MAX_CIN + 1),
         many = tvol_new(4, 4, 4, SWIN_NORM_CONV1X1_MAX_COUT + 1, SWIN_NORM_CONV1X1_MAX_COUT + 1);
    float *w = calloc((size_t)(SWIN_NORM_CONV1X1_MAX_CIN + 1) * (SWIN_NORM_CONV1X1_MAX_COUT + 1), sizeof(float));
    bool ok = check_true("a backend without instnorm_act_conv1x1 is refused",
                         swin_op_instnorm_act_conv1x1(&none, be, out.v, x.v, NULL, true, NULL, NULL, NULL, true, w,
                                                      NULL) == SWIN_ERR_ARG);
    ok &= check_true("x wider than SWIN_NORM_CONV1X1_MAX_CIN is refused",
                     swin_op_instnorm_act_conv1x1(&swin_cpu_ops, be, out.v, wide.v, NULL, true, NULL, NULL, NULL, true,
                                                  w, NULL) == SWIN_ERR_SHAPE);
    ok &= check_true("out wider than SWIN_NORM_CONV1X1_MAX_COUT is refused",
                     swin_op_instnorm_act_conv1x1(&swin_cpu_ops, be, many.v, x.v, NULL, true, NULL, NULL, NULL, true, w,
                                                  NULL) == SWIN_ERR_SHAPE);
    ok &= check_true("out of other dims is refused",
                     swin_op_instnorm_act_conv1x1(&swin_cpu_ops, be, other.v, x.v, NULL, true, NULL, NULL, NULL, true,
                                                  w, NULL) == SWIN_ERR_SHAPE);
    struct swin_vol inside = x.v;
    inside.c = 3;
    ok &= check_true("out overlapping x is refused",
                     swin_op_instnorm_act_conv1x1(&swin_cpu_ops, be, inside, x.v, NULL, true, NULL, NULL, NULL, true, w,
                                                  NULL) == SWIN_ERR_ARG);
    free(w);
    tvol_free(&x);
    tvol_free(&out);
    tvol_free(&other);
    tvol_free(&wide);
    tvol_free(&many);
    swin_cpu_backend_free(be);
    return test_main_every_level(all_cases) || !ok;
}
