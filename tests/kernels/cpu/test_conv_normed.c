/* conv3d_normed_input (out = conv3d(LReLU(IN(in) * gamma + beta)) + bias, 3x3x3, the norm
 * folded into Winograd F(4x4x4)'s or F(6x6x6)'s input transform) at every SIMD level: against
 * float64 (the norm and the conv in double) on two shapes, one of them with bfloat16 weights
 * on a grid of 48 (F(6x6x6)), and on the others against instnorm_act then
 * conv3d (each tested against float64 in its own file), with and without the statistics the
 * conv before kept, with and without the affine, the wide schedule, a +200 offset, and shapes
 * where the conv runs another kernel (the op normalises in place, then convolves). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/op_check.h"

/* out = conv3x3x3(LReLU(IN(x) * g + b)) + bias in double; x dense (d, h, w, cin). */
static void naive(float *out, const float *x, int d, int h, int w, int cin, int cout, const float *g, const float *b,
                  const float *wt, const float *bias)
{
    const size_t nv = (size_t)d * h * w;
    double *a = malloc(nv * cin * sizeof *a);
    test_in_lrelu_f64(a, x, nv, cin, g, b);
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++)
                for (int o = 0; o < cout; o++) {
                    double s = bias[o];
                    for (int kz = 0; kz < 3; kz++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                const int iz = z + kz - 1, iy = y + ky - 1, ix = xx + kx - 1;
                                if (iz < 0 || iz >= d || iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                const double *av = a + (((size_t)iz * h + iy) * w + ix) * cin;
                                const float *wv = wt + (size_t)((kz * 3 + ky) * 3 + kx) * cin * cout + o;
                                for (int c = 0; c < cin; c++) s += av[c] * wv[(size_t)c * cout];
                            }
                    out[(((size_t)z * h + y) * w + xx) * cout + o] = (float)s;
                }
    free(a);
}

/* The op's result (dense, malloc'ed; NULL on failure) on a copy of x0. with_stats: the input is
 * written by a conv that keeps its statistics (the identity 3x3x3 conv of x0, which runs
 * Winograd F(4x4x4) where the op does), and the op gets them; else it gets none. */
static float *run_op(struct swin_cpu_backend *be, const tvol *x0, const float *g, const float *b, const float *wt,
                     const float *bias, int cout, bool with_stats)
{
    tvol x = tvol_new(x0->v.d, x0->v.h, x0->v.w, x0->v.c, x0->v.pitch);
    memcpy(x.mem, x0->mem, x0->total * sizeof(float));
    tvol out = tvol_new(x.v.d, x.v.h, x.v.w, cout, cout + 3);
    const size_t wsb = swin_cpu_ops.conv3d_ws(be, out.v, x.v, wt, 3, 1, 1, false);
    const size_t sb = with_stats ? swin_cpu_ops.conv3d_stats_bytes(be, x.v) : 0;
    void *ws = ws_new(wsb), *stats = NULL;
    bool ok = true;
    if (sb) {
        stats = ws_new(sb);
        tvol src = tvol_new(x.v.d, x.v.h, x.v.w, x.v.c, x.v.c);
        for (int z = 0; z < x.v.d; z++)
            for (int y = 0; y < x.v.h; y++)
                for (int xx = 0; xx < x.v.w; xx++)
                    memcpy(vol_at(src.v, z, y, xx, 0), vol_at(x0->v, z, y, xx, 0), (size_t)x.v.c * sizeof(float));
        float *id = calloc((size_t)27 * x.v.c * x.v.c, sizeof *id);
        for (int c = 0; c < x.v.c; c++) id[(size_t)13 * x.v.c * x.v.c + (size_t)c * x.v.c + c] = 1.0f;
        const size_t wsi = swin_cpu_ops.conv3d_ws(be, x.v, src.v, id, 3, 1, 1, true);
        void *wsx = ws_new(wsi);
        ok &= swin_op_conv3d(&swin_cpu_ops, be, x.v, stats, src.v, id, NULL, 3, 1, 1, wsx, wsi) == 0;
        ok &= ws_free(wsx);
        free(id);
        tvol_free(&src);
    }
    ok &= swin_op_conv3d_normed_input(&swin_cpu_ops, be, out.v, NULL, x.v, stats, g, b, wt, bias, ws, wsb) == 0;
    float *got = ok ? tvol_dense(&out) : NULL;
    ok &= ws_free(ws);
    if (stats) ok &= ws_free(stats);
    ok &= tvol_guard_ok("conv3d_normed_input out", &out, 0, cout);
    tvol_free(&x);
    tvol_free(&out);
    if (!ok) {
        free(got);
        return NULL;
    }
    return got;
}

/* instnorm_act (LReLU when lrelu) on a copy of x, then conv3d: the unfused reference. */
static float *composed(struct swin_cpu_backend *be, const tvol *x0, const float *g, const float *b, const float *wt,
                       const float *bias, int cout, bool lrelu)
{
    tvol x = tvol_new(x0->v.d, x0->v.h, x0->v.w, x0->v.c, x0->v.pitch);
    memcpy(x.mem, x0->mem, x0->total * sizeof(float));
    tvol out = tvol_new(x.v.d, x.v.h, x.v.w, cout, cout);
    const size_t wsb = swin_cpu_ops.conv3d_ws(be, out.v, x.v, wt, 3, 1, 1, false);
    void *ws = ws_new(wsb);
    bool ok = swin_op_instnorm_act(&swin_cpu_ops, be, x.v, NULL, true, g, b, NULL, lrelu) == 0;
    ok &= swin_op_conv3d(&swin_cpu_ops, be, out.v, NULL, x.v, wt, bias, 3, 1, 1, ws, wsb) == 0;
    float *got = ok ? tvol_dense(&out) : NULL;
    ws_free(ws);
    tvol_free(&x);
    tvol_free(&out);
    return got;
}

/* bf16: the weights stored as bfloat16 (the backend's bfloat16 range, cleared after), the
 * references on the rounded weights. */
static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int cin, int cout, bool affine, float offset,
                     bool with_stats, bool vs_double, bool bf16)
{
    test_rng r = {11ULL + (uint64_t)cin * 7 + (uint64_t)cout};
    tvol x = tvol_new(d, h, w, cin, cin + 1);
    tvol_fill(&x, &r, offset - 2.0f, offset + 1.0f);
    float *g = affine ? test_rand(&r, (size_t)cin, 0.5f, 1.5f) : NULL, *b = affine ? test_rand(&r, (size_t)cin, -1.0f, 1.0f) : NULL;
    const size_t nw = (size_t)27 * cin * cout;
    float *wt = test_rand(&r, nw, -0.2f, 0.2f), *bias = test_rand(&r, (size_t)cout, -1.0f, 1.0f);
    swin_bf16 *wb = bf16 ? test_bf16_copy(wt, nw, wt) : NULL;
    if (wb) swin_cpu_backend_set_bf16(be, wb, nw * sizeof *wb);
    const float *w_op = wb ? (const float *)(const void *)wb : wt;
    const char *kernel = swin_cpu_conv3d_kernel(be, (struct swin_vol){.d = d, .h = h, .w = w, .c = cout},
                                                (struct swin_vol){.d = d, .h = h, .w = w, .c = cin}, w_op, 3, 1, 1);
    char name[192];
    snprintf(name, sizeof name, "conv3d_normed_input %dx%dx%d %d->%d affine %d offset %g stats %d, %s (%s)", d, h, w,
             cin, cout, affine, offset, with_stats, test_simd_name(be->simd), kernel);
    const size_t n = (size_t)d * h * w * cout;
    float *got = run_op(be, &x, g, b, w_op, bias, cout, with_stats);
    bool ok = check_true(name, got != NULL);
    if (bf16) ok &= check_true("conv3d_normed_input: bfloat16 weights on 48^3 run F(6x6x6)", !strncmp(kernel, "Winograd F(6", 12));
    float *ref = malloc(n * sizeof *ref);
    if (vs_double) {
        float *xd = tvol_dense(&x);
        naive(ref, xd, d, h, w, cin, cout, g, b, wt, bias);
        free(xd);
    } else {
        float *c = composed(be, &x, g, b, w_op, bias, cout, true);
        memcpy(ref, c, n * sizeof *ref);
        free(c);
    }
    /* Winograd F(4x4x4) in float32: test_winograd.c measures up to 1.9e-5 sqrt(cin) of error per
     * conv (bound 2e-4 sqrt(cin)); 1e-4 of max(1, |ref|) is 0.7e-3 to 3e-3 here, 4x or more the
     * worst difference seen (1.6e-4, the +200 case, whose input passed through one more conv);
     * F(6x6x6) (bfloat16 weights) errs about 10x F(4x4x4) in test_winograd.c: 1e-3 */
    if (got) ok &= check_close_scaled(name, got, ref, n, bf16 ? 1e-3 : 1e-4);
    if (got && !vs_double) {
        /* the same conv of the norm without LeakyReLU must be told apart */
        float *nolrelu = composed(be, &x, g, b, w_op, bias, cout, false);
        size_t bad = 0;
        for (size_t i = 0; nolrelu && i < n; i++) bad += fabsf(got[i] - nolrelu[i]) > 1e-3f * fmaxf(1.0f, fabsf(nolrelu[i]));
        ok &= check_true("conv3d_normed_input: a reference without the LeakyReLU is rejected", bad > n / 4);
        free(nolrelu);
    }
    if (wb) swin_cpu_backend_set_bf16(be, NULL, 0);
    free(got); free(ref); free(g); free(b); free(wt); free(bias); free(wb);
    tvol_free(&x);
    return ok;
}

static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    /* F(4x4x4) from grids of 24 at every level with it; 20 and 13 input channels (partial
     * vectors and chunks), edge tiles on every axis */
    ok &= run_case(be, 24, 25, 26, 20, 12, true, 0.0f, true, true, false);
    ok &= run_case(be, 26, 24, 25, 13, 16, false, 0.0f, false, false, false);
    ok &= run_case(be, 25, 26, 24, 13, 16, true, 200.0f, true, false, false);
    /* the wide schedule (128 x 128 channels) */
    ok &= run_case(be, 24, 24, 24, 128, 128, true, 0.0f, true, false, false);
    /* other kernels (small grids: F(2x2x2), per-tap GEMMs): normalised in place, then the conv */
    ok &= run_case(be, 12, 12, 12, 24, 16, true, 0.0f, false, false, false);
    ok &= run_case(be, 5, 6, 7, 9, 5, true, 0.0f, false, true, false);
    /* bfloat16 weights on a grid of 48: F(6x6x6), with partial tiles on two axes, the input's
     * statistics kept by a float32 F(4x4x4) conv */
    if (be->simd >= SWIN_CPU_SIMD_AVX2) ok &= run_case(be, 48, 50, 49, 13, 7, true, 0.0f, true, true, true);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    /* a backend table without the op: the boundary refuses the call and names the way round */
    struct swin_ops none = swin_cpu_ops;
    none.conv3d_normed_input = NULL;
    tvol v = tvol_new(4, 4, 4, 3, 3);
    float w[27 * 9] = {0}, gm[3] = {1, 1, 1};
    char ws[64];
    bool ok = check_true("a backend without conv3d_normed_input is refused",
                         swin_op_conv3d_normed_input(&none, be, v.v, NULL, v.v, NULL, NULL, NULL, w, NULL, ws, sizeof ws) ==
                             SWIN_ERR_ARG);
    ok &= check_true("conv3d_normed_input gamma without beta is refused",
                     swin_op_conv3d_normed_input(&swin_cpu_ops, be, v.v, NULL, v.v, NULL, gm, NULL, w, NULL, ws,
                                                 sizeof ws) == SWIN_ERR_ARG);
    tvol_free(&v);
    swin_cpu_backend_free(be);
    return test_main_every_level(all_cases) || !ok;
}
