/* patch_merge against float64 from docs/forward.md §3.5: gather the 8 sub-grids in the given
 * order, LN(8C) with affine, times red_w (8C, 2C). All three reference orders; the MONAI
 * < 1.5 order must give a different result from the >= 1.5 one (the test can fail). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void naive(float *ref, struct swin_vol in, const int (*order)[3], const float *g, const float *b,
                  const float *red)
{
    const int c = in.c, c8 = 8 * c, od = in.d / 2, oh = in.h / 2, ow = in.w / 2;
    double *cat = malloc((size_t)c8 * sizeof(double));
    for (int i = 0; i < od; i++)
        for (int j = 0; j < oh; j++)
            for (int k = 0; k < ow; k++) {
                for (int m = 0; m < 8; m++)
                    for (int ch = 0; ch < c; ch++)
                        cat[m * c + ch] = *vol_at(in, 2 * i + order[m][0], 2 * j + order[m][1], 2 * k + order[m][2], ch);
                double mean = 0.0, var = 0.0;
                for (int q = 0; q < c8; q++) mean += cat[q];
                mean /= c8;
                for (int q = 0; q < c8; q++) var += (cat[q] - mean) * (cat[q] - mean);
                var /= c8;
                for (int q = 0; q < c8; q++) cat[q] = (cat[q] - mean) / sqrt(var + 1e-5) * g[q] + b[q];
                for (int o = 0; o < 2 * c; o++) {
                    double acc = 0.0;
                    for (int q = 0; q < c8; q++) acc += cat[q] * red[(size_t)q * 2 * c + o];
                    ref[(((size_t)i * oh + j) * ow + k) * 2 * c + o] = (float)acc;
                }
            }
    free(cat);
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int in_pitch, int out_pitch,
                     const int (*order)[3], const char *order_name, const int (*other)[3])
{
    char name[160];
    snprintf(name, sizeof name, "patch_merge %dx%dx%d C %d pitch %d->%d order %s", d, h, w, c, in_pitch, out_pitch,
             order_name);
    test_rng r = {31337ULL + (uint64_t)c};
    tvol in = tvol_new(d, h, w, c, in_pitch);
    tvol_fill(&in, &r, -1.0f, 2.0f);
    tvol out = tvol_new(d / 2, h / 2, w / 2, 2 * c, out_pitch);
    float *g = test_rand(&r, (size_t)8 * c, 0.5f, 1.5f), *b = test_rand(&r, (size_t)8 * c, -0.5f, 0.5f);
    float *red = test_rand(&r, (size_t)16 * c * c, -0.3f, 0.3f);
    size_t wsb = swin_cpu_ops.patch_merge_ws(be, out.v, in.v);
    void *ws = ws_new(wsb);
    bool ok = check_true(name, swin_cpu_ops.patch_merge(be, out.v, in.v, order, g, b, red, ws, wsb) == 0);
    size_t n = swin_vol_voxels(out.v) * 2 * c;
    float *ref = malloc(n * sizeof(float)), *got = tvol_dense(&out);
    naive(ref, in.v, order, g, b, red);
    /* fp32 dot products of 8C <= 96 normalised terms (|x| <= ~4) with |w| <= 0.3: rounding < 1e-5. */
    ok &= check_close(name, got, ref, n, 3e-5, 1e-5);
    ok &= tvol_guard_ok(name, &out, 0, 2 * c);
    if (other) {
        naive(ref, in.v, other, g, b, red);
        bool differs = false;
        for (size_t i = 0; i < n; i++) differs |= !(fabsf(got[i] - ref[i]) <= 3e-5f + 1e-5f * fabsf(ref[i]));
        ok &= check_true("patch_merge: reference with the other merge order is rejected (the test can fail)", differs);
    }
    free(g); free(b); free(red); free(ref); free(got);
    ok &= ws_free(ws);
    tvol_free(&in);
    tvol_free(&out);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    /* every level (the LayerNorm row differs between them) */
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        if (!test_simd_select(be, test_simd_levels[i])) continue;
        ok &= run_case(be, 4, 6, 2, 5, 7, 10, swin_merge_order_v15, "v15", swin_merge_order_pre15);
        ok &= run_case(be, 4, 6, 2, 5, 5, 11, swin_merge_order_pre15, "pre15", swin_merge_order_v15);
        ok &= run_case(be, 2, 4, 6, 3, 4, 6, swin_merge_order_v2, "v2", swin_merge_order_v15);
        ok &= run_case(be, 10, 12, 14, 12, 12, 24, swin_merge_order_v15, "v15 (many chunks)", NULL);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
