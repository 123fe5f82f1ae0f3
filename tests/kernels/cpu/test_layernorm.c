/* layernorm against a float64 LayerNorm over channels (biased variance, eps 1e-5):
 * affine and not, in place and out of place with different pitches, C = 1, 5, 12, 769,
 * and a large common offset (two-pass variance). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void naive(float *ref, const float *x, size_t nv, int c, const float *g, const float *b)
{
    for (size_t v = 0; v < nv; v++) {
        const float *r = x + v * c;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < c; i++) mean += r[i];
        mean /= c;
        for (int i = 0; i < c; i++) var += (r[i] - mean) * (r[i] - mean);
        var /= c;
        for (int i = 0; i < c; i++) {
            double y = (r[i] - mean) / sqrt(var + 1e-5);
            ref[v * c + i] = (float)(g ? y * g[i] + b[i] : y);
        }
    }
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int in_pitch, int out_pitch,
                     bool affine, bool in_place, float offset)
{
    char name[128];
    snprintf(name, sizeof name, "layernorm %dx%dx%d C %d pitch %d->%d affine %d in_place %d offset %g", d, h, w, c,
             in_pitch, out_pitch, affine, in_place, offset);
    test_rng r = {4242ULL + (uint64_t)c};
    tvol in = tvol_new(d, h, w, c, in_pitch);
    tvol_fill(&in, &r, offset - 2.0f, offset + 2.0f);
    float *g = affine ? test_rand(&r, (size_t)c, 0.5f, 1.5f) : NULL;
    float *b = affine ? test_rand(&r, (size_t)c, -1.0f, 1.0f) : NULL;
    float *x = tvol_dense(&in);
    size_t nv = swin_vol_voxels(in.v), n = nv * c;
    float *ref = malloc(n * sizeof(float));
    naive(ref, x, nv, c, g, b);
    tvol out = in_place ? in : tvol_new(d, h, w, c, out_pitch);
    bool ok = check_true(name, swin_cpu_ops.layernorm(be, out.v, in.v, g, b) == 0);
    float *got = tvol_dense(&out);
    /* Output O(1) (|y| <= sqrt(C)*1.5+1), computed in double and rounded once: 1e-6 relative to
     * max(1, |ref|) covers the float input rounding of the offset case (x - mean exact in double). */
    ok &= check_close_scaled(name, got, ref, n, 1e-6);
    ok &= tvol_guard_ok(name, &out, 0, c);
    free(g); free(b); free(x); free(ref); free(got);
    if (!in_place) tvol_free(&out);
    tvol_free(&in);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    /* every level (the AVX2 row from the AVX2 level up); C below 8, a multiple of 8, and
     * whole vectors plus a tail */
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        if (!test_simd_select(be, test_simd_levels[i])) continue;
        ok &= run_case(be, 5, 9, 13, 12, 12, 15, true, false, 0.0f);
        ok &= run_case(be, 5, 9, 13, 12, 14, 14, false, true, 0.0f);
        ok &= run_case(be, 3, 1, 7, 5, 8, 5, true, true, 1000.0f);
        ok &= run_case(be, 3, 2, 7, 48, 48, 56, true, false, -1000.0f);
        ok &= run_case(be, 2, 3, 2, 1, 3, 1, true, false, 0.0f);
        ok &= run_case(be, 2, 2, 2, 769, 769, 770, true, false, 0.0f);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
