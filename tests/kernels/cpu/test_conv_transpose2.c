/* conv_transpose2 against the ConvTranspose3d(k=2, s=2) formula in float64:
 *   out[2i+a, 2j+b, 2k+g, o] = sum_c in[i,j,k,c] w[a,b,g,c,o]
 * Odd channels, odd dims, pitch > c, output into the first half of a concat (as decoders do). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* swap = true reads the tap as w[g,b,a] (axes reversed): a wrong variant the test must reject. */
static void naive(float *ref, struct swin_vol in, const float *w, int cout, bool swap)
{
    const int OD = 2 * in.d, OH = 2 * in.h, OW = 2 * in.w;
    for (int z = 0; z < OD; z++)
        for (int y = 0; y < OH; y++)
            for (int x = 0; x < OW; x++)
                for (int o = 0; o < cout; o++) {
                    int a = z % 2, b = y % 2, g = x % 2;
                    int tap = swap ? (g * 2 + b) * 2 + a : (a * 2 + b) * 2 + g;
                    double acc = 0.0;
                    for (int c = 0; c < in.c; c++)
                        acc += (double)*vol_at(in, z / 2, y / 2, x / 2, c) * w[((size_t)tap * in.c + c) * cout + o];
                    ref[(((size_t)z * OH + y) * OW + x) * cout + o] = (float)acc;
                }
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int cin, int in_pitch, int cout,
                     int concat_c, int c0, bool can_fail)
{
    char name[128];
    snprintf(name, sizeof name, "conv_transpose2 %dx%dx%d cin %d (pitch %d) -> cout %d slice %d@%d", d, h, w, cin,
             in_pitch, cout, c0, concat_c);
    test_rng r = {777ULL + (uint64_t)(cin * 31 + cout)};
    tvol in = tvol_new(d, h, w, cin, in_pitch);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    tvol out = tvol_new(2 * d, 2 * h, 2 * w, concat_c, concat_c);
    struct swin_vol ov = tvol_slice(&out, c0, cout);
    float *wt = test_rand(&r, (size_t)8 * cin * cout, -0.5f, 0.5f);
    bool ok = check_true(name, swin_cpu_ops.conv_transpose2(be, ov, in.v, wt) == 0);
    size_t nv = swin_vol_voxels(ov), n = nv * cout;
    float *ref = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    naive(ref, in.v, wt, cout, false);
    for (size_t v = 0; v < nv; v++)
        for (int o = 0; o < cout; o++) got[v * cout + o] = swin_vol_f32(ov)[v * ov.pitch + o];
    /* fp32 dot products of cin <= 100 terms |a| <= 1, |w| <= 0.5: rounding < 1e-5. */
    ok &= check_close(name, got, ref, n, 2e-5, 1e-5);
    ok &= tvol_guard_ok(name, &out, c0, cout);
    if (can_fail) {
        naive(ref, in.v, wt, cout, true);
        bool differs = false;
        for (size_t i = 0; i < n; i++) differs |= !(fabsf(got[i] - ref[i]) <= 2e-5f + 1e-5f * fabsf(ref[i]));
        ok &= check_true("conv_transpose2: reference with reversed tap axes is rejected (the test can fail)", differs);
    }
    free(ref); free(got); free(wt);
    tvol_free(&in);
    tvol_free(&out);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        if (!test_simd_select(be, test_simd_levels[i])) continue;
        fprintf(stderr, "level %s\n", test_simd_name(test_simd_levels[i]));
        ok &= run_case(be, 3, 1, 5, 5, 7, 3, 6, 0, true);
        ok &= run_case(be, 2, 3, 4, 12, 12, 5, 5, 0, false);
        ok &= run_case(be, 1, 1, 1, 40, 41, 20, 40, 0, false);
        ok &= run_case(be, 5, 4, 3, 7, 7, 9, 18, 0, false);
        /* lines of 9 voxels, cout 50, written into the first half of a concat */
        ok &= run_case(be, 2, 3, 9, 16, 16, 50, 100, 0, false);
        /* lines of 7 voxels (a last group of 3), cin 44, cout 40 (24 + 16) and 45 (24 + 21: a
         * partial third vector) into a concat's second part */
        ok &= run_case(be, 2, 2, 7, 44, 48, 40, 40, 0, false);
        ok &= run_case(be, 3, 2, 7, 44, 44, 45, 50, 5, true);
        /* cin 1, cout 24 */
        ok &= run_case(be, 1, 2, 6, 1, 1, 24, 24, 0, false);
        /* weights over the unpacked GEMM's 36 KiB (cin 100 x cout 101): lines of 5 voxels (the
         * unpacked kernel at the AVX2 level) and of 13 (OpenBLAS), cout with a partial vector */
        ok &= run_case(be, 2, 2, 5, 100, 104, 101, 110, 3, false);
        ok &= run_case(be, 1, 2, 13, 100, 100, 101, 101, 0, false);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
