/* conv3d against a naive float64 cross-correlation written from the torch.nn.Conv3d formula:
 *   out[z,y,x,o] = bias[o] + sum_{kz,ky,kx,ci} in[z*s-p+kz, y*s-p+ky, x*s-p+kx, ci] w[kz,ky,kx,ci,o]
 * (zero outside the input). Odd channels, odd dims, an axis of length 1, pitch > c on both
 * sides, output into a channel slice of a wider "concat" tensor, bias and no bias. */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/cpu/cpu_internal.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>

/* flip = true computes a true convolution (kernel flipped): a wrong variant the test must reject. */
static void naive(float *ref, struct swin_vol in, const float *w, const float *bias, int k, int s, int p,
                  int od, int oh, int ow, int cout, bool flip)
{
    for (int z = 0; z < od; z++)
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++)
                for (int o = 0; o < cout; o++) {
                    double acc = bias ? bias[o] : 0.0;
                    for (int kz = 0; kz < k; kz++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                int iz = z * s - p + kz, iy = y * s - p + ky, ix = x * s - p + kx;
                                if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                                int tz = flip ? k - 1 - kz : kz, ty = flip ? k - 1 - ky : ky, tx = flip ? k - 1 - kx : kx;
                                for (int ci = 0; ci < in.c; ci++)
                                    acc += (double)*vol_at(in, iz, iy, ix, ci) *
                                           w[(((size_t)(tz * k + ty) * k + tx) * in.c + ci) * cout + o];
                            }
                    ref[(((size_t)z * oh + y) * ow + x) * cout + o] = (float)acc;
                }
}

/* Which conv3d kernels the backend runs now (set by main). */
static enum swin_cpu_simd g_simd;
static enum swin_cpu_conv_choice g_choice;

static const char *kernel_name(void)
{
    if (g_simd == SWIN_CPU_SIMD_BASELINE) return "im2col+blas";
    if (g_choice == SWIN_CPU_CONV_TAPS_ONLY) return "per-tap GEMMs";
    return g_choice == SWIN_CPU_CONV_IMPLICIT_ONLY ? test_simd_name(g_simd) : "by shape";
}

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int cin, int in_pitch, int cout, int k,
                     int s, int p, bool with_bias, int concat_c, int c0, bool can_fail)
{
    char name[160];
    snprintf(name, sizeof name, "conv3d[%s] %dx%dx%d cin %d (pitch %d) -> cout %d k %d s %d p %d bias %d slice %d@%d",
             kernel_name(), d, h, w, cin, in_pitch, cout, k, s, p, with_bias, c0, concat_c);
    test_rng r = {1234567ULL + (uint64_t)(cin * 7 + cout * 13 + k * 17 + s)};
    int od = (d + 2 * p - k) / s + 1, oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
    tvol in = tvol_new(d, h, w, cin, in_pitch);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    tvol out = tvol_new(od, oh, ow, concat_c, concat_c);
    struct swin_vol ov = tvol_slice(&out, c0, cout);
    float *wt = test_rand(&r, (size_t)k * k * k * cin * cout, -0.5f, 0.5f);
    float *bias = with_bias ? test_rand(&r, (size_t)cout, -1.0f, 1.0f) : NULL;
    size_t wsb = swin_cpu_ops.conv3d_ws(be, ov, in.v, wt, k, s, p, false);
    void *ws = ws_new(wsb);
    bool ok = check_true(name, swin_cpu_ops.conv3d(be, ov, NULL, in.v, wt, bias, k, s, p, ws, wsb) == 0);
    size_t n = (size_t)od * oh * ow * cout;
    float *ref = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    naive(ref, in.v, wt, bias, k, s, p, od, oh, ow, cout, false);
    for (size_t v = 0; v < (size_t)od * oh * ow; v++)
        for (int o = 0; o < cout; o++) got[v * cout + o] = swin_vol_f32(ov)[v * ov.pitch + o];
    /* fp32 accumulation over K = k^3 cin <= 27*48 = 1296 products of |a| <= 1, |w| <= 0.5
     * (outputs up to ~10): measured 1.1e-5 (blocked, OpenBLAS) and 3.2e-5 (serial, AVX-512
     * kernel) at K = 1296; 1e-4 + 1e-5 |ref| leaves 3x margin and is far below the ~0.1
     * effect of any index error. */
    ok &= check_close(name, got, ref, n, 1e-4, 1e-5);
    ok &= tvol_guard_ok(name, &out, c0, cout);
    if (can_fail) {
        naive(ref, in.v, wt, bias, k, s, p, od, oh, ow, cout, true);
        bool differs = false;
        for (size_t i = 0; i < n; i++) differs |= !(fabsf(got[i] - ref[i]) <= 1e-4f + 1e-5f * fabsf(ref[i]));
        ok &= check_true("conv3d: flipped-kernel reference is rejected (the test can fail)", differs);
    }
    free(ref); free(got); free(wt); free(bias);
    ok &= ws_free(ws);
    tvol_free(&in);
    tvol_free(&out);
    return ok;
}

/* Every case on every kernel: the AVX-512 and AVX2 implicit GEMMs (where the CPU has them)
 * on every shape, the per-tap GEMMs on every shape, the same levels choosing by shape (the
 * per-tap GEMMs on grids of at most 6^3, im2col + OpenBLAS on 1x1x1) and the portable
 * im2col + OpenBLAS path. */
static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    /* 3x3x3 pad 1 stride 1 (the CNN blocks), into channels [3, 10) of a 13-channel concat */
    ok &= run_case(be, 5, 9, 13, 5, 8, 7, 3, 1, 1, false, 13, 3, true);
    /* an axis of length 1, bias, cout 1 */
    ok &= run_case(be, 1, 6, 5, 3, 3, 1, 3, 1, 1, true, 1, 0, false);
    /* stride 2 pad 1 with odd dims */
    ok &= run_case(be, 7, 5, 9, 4, 6, 5, 3, 2, 1, true, 5, 0, false);
    /* 3x3x3 without padding */
    ok &= run_case(be, 4, 5, 6, 3, 3, 2, 3, 1, 0, true, 2, 0, false);
    /* patch embed: k 2 stride 2, bias, Ci 1 and Ci 4 */
    ok &= run_case(be, 6, 8, 10, 1, 1, 12, 2, 2, 0, true, 12, 0, true);
    ok &= run_case(be, 4, 2, 6, 4, 5, 12, 2, 2, 0, true, 12, 0, false);
    /* one input channel (conv3d_c1_avx2.c where the implicit kernels run): cout 50 = 48 + 2
     * (two channel blocks, the second masked), an odd line (the last voxel alone), input
     * pitch 3, into channels [4, 54) of a 57-channel concat; stride 2 pad 1 with cout 7; a
     * grid above 24^3 that the shape rule gives the direct kernel rather than Winograd */
    ok &= run_case(be, 5, 6, 7, 1, 3, 50, 3, 1, 1, true, 57, 4, true);
    ok &= run_case(be, 7, 5, 9, 1, 1, 7, 3, 2, 1, false, 7, 0, true);
    ok &= run_case(be, 26, 26, 25, 1, 1, 48, 3, 1, 1, true, 48, 0, false);
    /* channel blocks 24 + 16 and 24 + 8: the implicit kernel's unmasked last vectors */
    ok &= run_case(be, 4, 5, 6, 3, 3, 40, 3, 1, 1, true, 40, 0, false);
    ok &= run_case(be, 4, 6, 6, 2, 2, 32, 2, 2, 0, false, 32, 0, false);
    /* 1x1x1: the direct path (pitch-strided A), and the out conv with bias into a slice */
    ok &= run_case(be, 3, 5, 7, 10, 12, 14, 1, 1, 0, true, 17, 2, false);
    /* 1x1x1 over two slabs split into column blocks of 32 and 18, 990 rows, no bias */
    ok &= run_case(be, 9, 10, 11, 33, 40, 50, 1, 1, 0, false, 50, 0, false);
    /* 1x1x1 stride 2 goes through im2col */
    ok &= run_case(be, 5, 4, 3, 6, 6, 3, 1, 2, 0, false, 3, 0, false);
    /* few voxels, many output channels: 48 + 48 + 4 channel blocks (encoder10-like); by
     * shape, one slab split into column blocks of 32, 32, 32 and 4 for the 2 threads */
    ok &= run_case(be, 3, 3, 3, 20, 21, 100, 3, 1, 1, true, 100, 0, false);
    /* many slabs: 12^3 voxels x 48 -> 48 */
    ok &= run_case(be, 12, 12, 12, 48, 48, 48, 3, 1, 1, false, 96, 0, false);
    return ok;
}

/* The per-tap GEMMs refuse a workspace one byte short of swin_cpu_conv3d_taps_ws. */
static bool taps_refusals(struct swin_cpu_backend *be)
{
    test_rng r = {42};
    tvol in = tvol_new(3, 3, 3, 20, 20), out = tvol_new(3, 3, 3, 8, 8);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    float *wt = test_rand(&r, (size_t)27 * 20 * 8, -0.5f, 0.5f);
    const size_t need = swin_cpu_conv3d_taps_ws(be, out.v, in.v);
    void *ws = ws_new(need);
    bool ok = check_true("conv3d (per-tap GEMMs): the exact workspace runs",
                         swin_cpu_conv3d_taps(be, out.v, in.v, wt, NULL, 3, 1, 1, ws, need) == 0);
    ok &= check_true("conv3d (per-tap GEMMs): a workspace one byte short is refused",
                     swin_cpu_conv3d_taps(be, out.v, in.v, wt, NULL, 3, 1, 1, ws, need - 1) == SWIN_ERR_ARG);
    ok &= ws_free(ws);
    free(wt);
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
        if (!test_simd_select(be, g_simd = test_simd_levels[i])) continue;
        swin_cpu_backend_set_conv_choice(be, g_choice = SWIN_CPU_CONV_IMPLICIT_ONLY);
        ok &= all_cases(be);
        if (g_simd == SWIN_CPU_SIMD_BASELINE) continue;
        swin_cpu_backend_set_conv_choice(be, g_choice = SWIN_CPU_CONV_TAPS_ONLY);
        ok &= all_cases(be);
        ok &= taps_refusals(be);
        swin_cpu_backend_set_conv_choice(be, g_choice = SWIN_CPU_CONV_BY_SHAPE);
        ok &= all_cases(be);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
