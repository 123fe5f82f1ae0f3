/* swin_mlp against float64 from docs/forward.md §3.2 step 4:
 *   x += fc2(GELU_erf(fc1(LN2(x))))   fc1 (C, hidden), fc2 (hidden, C), exact erf GELU.
 * Odd C, more tokens than one chunk, pitch > c. The tanh-GELU variant must be rejected. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void naive(float *ref, const float *x, size_t nv, int c, int hid, const struct swin_block_w *w, bool tanh_gelu)
{
    double *u = malloc((size_t)c * sizeof(double)), *h = malloc((size_t)hid * sizeof(double));
    for (size_t v = 0; v < nv; v++) {
        const float *r = x + v * c;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < c; i++) mean += r[i];
        mean /= c;
        for (int i = 0; i < c; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= c;
        for (int i = 0; i < c; i++) u[i] = (r[i] - mean) / sqrt(var + 1e-5) * w->norm2_w[i] + w->norm2_b[i];
        for (int j = 0; j < hid; j++) {
            double a = w->fc1_b[j];
            for (int i = 0; i < c; i++) a += u[i] * w->fc1_w[(size_t)i * hid + j];
            h[j] = tanh_gelu ? 0.5 * a * (1.0 + tanh(sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)))
                             : 0.5 * a * (1.0 + erf(a / sqrt(2.0)));
        }
        for (int o = 0; o < c; o++) {
            double a = w->fc2_b[o];
            for (int j = 0; j < hid; j++) a += h[j] * w->fc2_w[(size_t)j * c + o];
            ref[v * c + o] = (float)(r[o] + a);
        }
    }
    free(u);
    free(h);
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int pitch, int hid, bool can_fail)
{
    char name[128];
    snprintf(name, sizeof name, "swin_mlp %dx%dx%d C %d pitch %d hidden %d", d, h, w, c, pitch, hid);
    test_rng r = {555ULL + (uint64_t)c};
    tvol x = tvol_new(d, h, w, c, pitch);
    tvol_fill(&x, &r, -2.0f, 2.0f);
    struct swin_block_w blk = {0};
    float *n2w = test_rand(&r, (size_t)c, 0.5f, 1.5f), *n2b = test_rand(&r, (size_t)c, -0.5f, 0.5f);
    float *f1w = test_rand(&r, (size_t)c * hid, -0.5f, 0.5f), *f1b = test_rand(&r, (size_t)hid, -0.5f, 0.5f);
    float *f2w = test_rand(&r, (size_t)hid * c, -0.3f, 0.3f), *f2b = test_rand(&r, (size_t)c, -0.5f, 0.5f);
    blk.norm2_w = n2w; blk.norm2_b = n2b; blk.fc1_w = f1w; blk.fc1_b = f1b; blk.fc2_w = f2w; blk.fc2_b = f2b;
    float *xd = tvol_dense(&x);
    size_t nv = swin_vol_voxels(x.v), n = nv * c;
    float *ref = malloc(n * sizeof(float));
    naive(ref, xd, nv, c, hid, &blk, false);
    size_t wsb = swin_cpu_ops.swin_mlp_ws(be, x.v, hid);
    void *ws = ws_new(wsb);
    bool ok = check_true(name, swin_cpu_ops.swin_mlp(be, x.v, &blk, hid, ws, wsb) == 0);
    float *got = tvol_dense(&x);
    /* Two fp32 GEMMs (K = C then hidden <= 80, |terms| <= ~2) plus float erf: < 2e-5 of
     * max(1, |ref|); a wrong index or a tanh GELU moves outputs by > 1e-4. */
    ok &= check_close_scaled(name, got, ref, n, 2e-5);
    ok &= tvol_guard_ok(name, &x, 0, c);
    if (can_fail) {
        naive(ref, xd, nv, c, hid, &blk, true);
        double m = 1.0, worst = 0.0;
        for (size_t i = 0; i < n; i++) {
            m = fmax(m, fabs(ref[i]));
            worst = fmax(worst, fabs((double)got[i] - ref[i]));
        }
        ok &= check_true("swin_mlp: tanh-GELU reference is rejected (the test can fail)", worst > 2e-5 * m);
    }
    free(n2w); free(n2b); free(f1w); free(f1b); free(f2w); free(f2b); free(xd); free(ref); free(got);
    ok &= ws_free(ws);
    tvol_free(&x);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    /* every level (the GELU differs between them) */
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        if (!test_simd_select(be, test_simd_levels[i])) continue;
        ok &= run_case(be, 5, 9, 13, 12, 14, 48, true);
        ok &= run_case(be, 3, 1, 2, 5, 5, 20, false);
        ok &= run_case(be, 2, 3, 4, 3, 4, 12, false);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
