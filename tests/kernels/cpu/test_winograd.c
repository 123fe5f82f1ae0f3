/* conv3d 3x3x3 stride 1 pad 1 as Winograd F(2x2x2, 3x3x3), F(4x4x4, 3x3x3) and F(6x6x6, 3x3x3)
 * (kernels/cpu/winograd.h) against
 * a naive float64 cross-correlation written from the torch.nn.Conv3d formula:
 *   out[z,y,x,o] = bias[o] + sum_{kz,ky,kx,ci} in[z-1+kz, y-1+ky, x-1+kx, ci] w[kz,ky,kx,ci,o]
 * Odd dims (partial 2x2x2 tiles), axes of length 1, channels not multiples of 8, input
 * pitch > cin, output into a channel slice of a concat, more output channels than one
 * channel block, more tiles than one block per thread, more input channels than one claim
 * of the weight transform. Each case runs the Winograd kernel directly (it transforms the
 * weights into its workspace) and through conv3d (which takes Winograd where the shape rule
 * holds and the direct kernel elsewhere), at every SIMD level the CPU has; where a level has
 * no Winograd kernel the test says so and checks that the direct entry refuses. With
 * bfloat16 weights (precision BF16) the reference uses the weights rounded to bfloat16 and
 * the float32 input, and the same reference with the unrounded weights must be rejected; on a
 * grid of 48 conv3d's rule runs them as F(6x6x6). F(4x4x4)
 * also runs with its output stored past the caches (non-temporal stores), forced on a small output. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/winograd/winograd.h"

static void naive(double *ref, struct swin_vol in, const float *w, const float *bias, int cout, bool flip)
{
    for (int z = 0; z < in.d; z++)
        for (int y = 0; y < in.h; y++)
            for (int x = 0; x < in.w; x++)
                for (int o = 0; o < cout; o++) {
                    double acc = bias ? bias[o] : 0.0;
                    for (int t = 0; t < 27; t++) {
                        int kz = t / 9, ky = t / 3 % 3, kx = t % 3;
                        int iz = z - 1 + kz, iy = y - 1 + ky, ix = x - 1 + kx;
                        if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                        int tt = flip ? 26 - t : t;
                        for (int ci = 0; ci < in.c; ci++)
                            acc += (double)*vol_at(in, iz, iy, ix, ci) * w[((size_t)tt * in.c + ci) * cout + o];
                    }
                    ref[(((size_t)z * in.h + y) * in.w + x) * cout + o] = acc;
                }
}

/* Tolerance: inputs in [-1, 1], weights in [-0.5, 0.5]. The float32 error of F(2x2x2, 3x3x3)
 * comes from rounding the transformed values (|B^T d B| <= 8 |d|, |G w G^T| <= 3.375 |w|),
 * the cin-long dot products of those, and the output transform (27 terms of magnitude up to
 * the sum itself): a few ulp of values ~8x larger than the direct conv's terms, growing
 * like sqrt(cin). Measured worst |err| / sqrt(cin) over these cases is printed; 2e-5 *
 * sqrt(cin) (+ 2e-5 |ref|) is ~10x the worst measured (1.9e-6 sqrt(cin) on AVX2;
 * 2.3e-6 sqrt(cin) for the direct kernels on the same cases) and still 1000x below an index error
 * (the flipped kernel below differs by O(0.1)). F(4x4x4, 3x3x3) transforms 6^3 patches with
 * constants up to 8 (A^T) and 5/2 (B^T): worst measured 1.9e-5 sqrt(cin), tolerance 2e-4 sqrt(cin).
 * F(6x6x6, 3x3x3) transforms 8^3 patches with constants up to 32 (A^T) and 21/4 (B^T): worst
 * measured 3.3e-4 sqrt(cin), tolerance 2e-3 sqrt(cin). */
#define TOL4 2e-4
#define TOL6 2e-3
static double tol_abs(int cin, int tile)
{
    return (tile == 6 ? TOL6 : tile == 4 ? TOL4 : 2e-5) * sqrt((double)cin);
}

static double worst_seen[7];

static bool compare(const char *name, struct swin_vol ov, const double *ref, int cin, int cout, int tile)
{
    size_t nv = swin_vol_voxels(ov), n = nv * (size_t)cout;
    float *got = malloc(n * sizeof(float)), *reff = malloc(n * sizeof(float));
    double worst = 0.0;
    for (size_t v = 0; v < nv; v++)
        for (int o = 0; o < cout; o++) {
            got[v * cout + o] = swin_vol_f32(ov)[v * ov.pitch + o];
            reff[v * cout + o] = (float)ref[v * cout + o];
            double e = fabs((double)got[v * cout + o] - ref[v * cout + o]);
            if (e > worst) worst = e;
        }
    if (worst / sqrt((double)cin) > worst_seen[tile]) worst_seen[tile] = worst / sqrt((double)cin);
    bool ok = check_close(name, got, reff, n, tol_abs(cin, tile), 2e-5);
    free(got);
    free(reff);
    return ok;
}

static bool run_case(struct swin_cpu_backend *be, enum swin_cpu_simd simd, int d, int h, int w, int cin, int in_pitch,
                     int cout, bool with_bias, int concat_c, int c0, bool can_fail)
{
    char name[200];
    snprintf(name, sizeof name, "winograd[%s] %dx%dx%d cin %d (pitch %d) -> cout %d bias %d slice %d@%d",
             test_simd_name(simd), d, h, w, cin, in_pitch, cout, with_bias, c0, concat_c);
    test_rng r = {98765ULL + (uint64_t)(cin * 31 + cout * 7 + d)};
    tvol in = tvol_new(d, h, w, cin, in_pitch);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    float *wt = test_rand(&r, (size_t)27 * cin * cout, -0.5f, 0.5f);
    float *bias = with_bias ? test_rand(&r, (size_t)cout, -1.0f, 1.0f) : NULL;
    size_t n = (size_t)d * h * w * cout;
    double *ref = malloc(n * sizeof(double));
    naive(ref, in.v, wt, bias, cout, false);
    bool ok = true;

    /* 1. the Winograd entry point, every tile */
    for (int tile = 2; tile <= 6; tile += 2) {
        char tname[240];
        snprintf(tname, sizeof tname, "%s F(%d)", name, tile);
        tvol out = tvol_new(d, h, w, concat_c, concat_c);
        struct swin_vol ov = tvol_slice(&out, c0, cout);
        size_t wsb = swin_cpu_winograd_ws(be, ov, in.v, tile);
        void *ws = ws_new(wsb);
        int rc = swin_cpu_conv3d_winograd(be, ov, NULL, in.v, wt, bias, ws, wsb, tile, NULL);
        if (swin_cpu_winograd_available(be)) {
            ok &= check_true(tname, rc == 0);
            ok &= check_true("winograd: a workspace one byte short is refused",
                             swin_cpu_conv3d_winograd(be, ov, NULL, in.v, wt, bias, ws, wsb - 1, tile, NULL) == SWIN_ERR_ARG);
            ok &= compare(tname, ov, ref, cin, cout, tile);
            ok &= tvol_guard_ok(tname, &out, c0, cout);
            if (can_fail) {
                double *flipped = malloc(n * sizeof(double));
                naive(flipped, in.v, wt, bias, cout, true);
                bool differs = false;
                for (size_t v = 0; v < swin_vol_voxels(ov); v++)
                    for (int o = 0; o < cout; o++) {
                        double g = swin_vol_f32(ov)[v * ov.pitch + o], f = flipped[v * cout + o];
                        differs |= !(fabs(g - f) <= tol_abs(cin, tile) + 2e-5 * fabs(f));
                    }
                ok &= check_true("winograd: flipped-kernel reference is rejected (the test can fail)", differs);
                free(flipped);
            }
        } else {
            ok &= check_true("winograd: the entry refuses a level without a Winograd kernel", rc == SWIN_ERR_ARG);
        }
        ok &= ws_free(ws);
        tvol_free(&out);
    }
    {
        tvol out = tvol_new(d, h, w, concat_c, concat_c);
        struct swin_vol ov = tvol_slice(&out, c0, cout);
        size_t wsb = swin_cpu_winograd_ws(be, ov, in.v, 3);
        void *ws = ws_new(wsb);
        ok &= check_true("winograd: a tile other than 2, 4 or 6 is refused",
                         swin_cpu_conv3d_winograd(be, ov, NULL, in.v, wt, bias, ws, wsb, 3, NULL) == SWIN_ERR_ARG);
        ok &= ws_free(ws);
        tvol_free(&out);
    }

    /* 2. through conv3d: Winograd or direct by the shape rule */
    tvol out = tvol_new(d, h, w, concat_c, concat_c);
    struct swin_vol ov = tvol_slice(&out, c0, cout);
    size_t wsb = swin_cpu_ops.conv3d_ws(be, ov, in.v, wt, 3, 1, 1, false);
    void *ws = ws_new(wsb);
    ok &= check_true(name, swin_cpu_ops.conv3d(be, ov, NULL, in.v, wt, bias, 3, 1, 1, ws, wsb) == 0);
    ok &= compare(name, ov, ref, cin, cout, swin_cpu_winograd_tile(be, ov, in.v, false));
    ok &= tvol_guard_ok(name, &out, c0, cout);
    ok &= ws_free(ws);
    tvol_free(&out);

    free(ref);
    free(wt);
    free(bias);
    tvol_free(&in);
    return ok;
}

/* Weights stored as bfloat16 (in a backend's bfloat16 range), through the Winograd entry
 * and through conv3d, on a fresh backend at this level. */
static bool bf16_case(enum swin_cpu_simd simd, int d, int h, int w, int cin, int cout, int want_tile)
{
    char name[160];
    snprintf(name, sizeof name, "winograd[%s] bf16 weights %dx%dx%d cin %d -> cout %d", test_simd_name(simd), d, h,
             w, cin, cout);
    struct swin_cpu_backend *be = test_backend(2);
    if (!be || !test_simd_select(be, simd)) {
        if (be) swin_cpu_backend_free(be);
        return check_true(name, be != NULL);
    }
    test_rng r = {4242ULL + (uint64_t)(cin * 13 + cout)};
    tvol in = tvol_new(d, h, w, cin, cin);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    const size_t nw = (size_t)27 * cin * cout;
    float *wt = test_rand(&r, nw, -0.5f, 0.5f), *wr = malloc(nw * sizeof(float));
    float *bias = test_rand(&r, (size_t)cout, -1.0f, 1.0f);
    swin_bf16 *wb = test_bf16_copy(wt, nw, wr);
    swin_cpu_backend_set_bf16(be, wb, nw * sizeof(swin_bf16));
    const float *wbf = (const float *)(const void *)wb;
    size_t n = (size_t)d * h * w * cout;
    double *ref = malloc(n * sizeof(double)), *unrounded = malloc(n * sizeof(double));
    naive(ref, in.v, wr, bias, cout, false);
    naive(unrounded, in.v, wt, bias, cout, false);
    bool ok = true;
    /* via: 2, 4 or 6 the Winograd entry with that tile, 0 conv3d (the rule's tile) */
    for (int via = 0; via <= 6; via += 2) {
        tvol out = tvol_new(d, h, w, cout, cout);
        const int tile = via ? via : swin_cpu_winograd_tile(be, out.v, in.v, true);
        if (!via && want_tile && !check_true("winograd bf16: conv3d's rule picks the expected tile", tile == want_tile))
            ok = false;
        size_t wsb = via ? swin_cpu_winograd_ws(be, out.v, in.v, via) : swin_cpu_ops.conv3d_ws(be, out.v, in.v, wbf, 3, 1, 1, false);
        void *ws = ws_new(wsb);
        int rc = via ? swin_cpu_conv3d_winograd(be, out.v, NULL, in.v, wbf, bias, ws, wsb, via, NULL)
                     : swin_cpu_ops.conv3d(be, out.v, NULL, in.v, wbf, bias, 3, 1, 1, ws, wsb);
        ok &= check_true(name, rc == 0);
        ok &= compare(name, out.v, ref, cin, cout, tile);
        bool differs = false;
        for (size_t i = 0; i < n; i++) {
            double g = swin_vol_f32(out.v)[i], f = unrounded[i];
            differs |= !(fabs(g - f) <= tol_abs(cin, tile) + 2e-5 * fabs(f));
        }
        ok &= check_true("winograd bf16: the unrounded-weight reference is rejected (the weights are read as "
                         "bfloat16)", differs);
        ok &= ws_free(ws);
        tvol_free(&out);
    }
    free(ref);
    free(unrounded);
    free(wb);
    free(wr);
    free(wt);
    free(bias);
    tvol_free(&in);
    swin_cpu_backend_free(be);
    return ok;
}

/* The F(4x4x4) output stored past the caches (swin_cpu_winograd_streams), forced on a small
 * output by a stream threshold of one byte: into a 64-byte aligned map of pitch 48 with
 * cout 40 (full vectors streamed, the last partial one masked at the AVX-512 level, the guard
 * channels 40..47 untouched); the rule refuses an output 16 bytes off alignment and, at the
 * default threshold, this small one. */
static bool stream_case(enum swin_cpu_simd simd)
{
    const int d = 9, h = 10, w = 11, cin = 20, cout = 40, pitch = 48;
    char name[160];
    snprintf(name, sizeof name, "winograd[%s] F(4) streamed stores %dx%dx%d cin %d -> cout %d (pitch %d)",
             test_simd_name(simd), d, h, w, cin, cout, pitch);
    struct swin_cpu_backend *be = test_backend(2);
    if (!be || !test_simd_select(be, simd)) {
        if (be) swin_cpu_backend_free(be);
        return check_true(name, be != NULL);
    }
    test_rng r = {777ULL};
    tvol in = tvol_new(d, h, w, cin, cin);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    float *wt = test_rand(&r, (size_t)27 * cin * cout, -0.5f, 0.5f);
    float *bias = test_rand(&r, (size_t)cout, -1.0f, 1.0f);
    const size_t nv = (size_t)d * h * w, floats = nv * pitch + 16;
    float *mem = aligned_alloc(64, floats * sizeof(float));
    double *ref = malloc(nv * cout * sizeof(double));
    if (!mem || !ref) return check_true(name, false);
    for (size_t i = 0; i < floats; i++) mem[i] = 7.0f;
    naive(ref, in.v, wt, bias, cout, false);
    struct swin_vol ov = {.data = mem, .d = d, .h = h, .w = w, .c = cout, .pitch = pitch, .dtype = SWIN_F32};
    struct swin_vol off = ov;
    off.data = mem + 4;
    bool ok = check_true("winograd: a small output is not streamed at the default threshold",
                         !swin_cpu_winograd_streams(be, ov, in.v, 4));
    be->stream_bytes = 1;
    ok &= check_true("winograd: an aligned output over the threshold is streamed", swin_cpu_winograd_streams(be, ov, in.v, 4));
    ok &= check_true("winograd: an output 16 bytes off alignment is not streamed", !swin_cpu_winograd_streams(be, off, in.v, 4));
    ok &= check_true("winograd: F(2x2x2) outputs are not streamed", !swin_cpu_winograd_streams(be, ov, in.v, 2));
    size_t wsb = swin_cpu_winograd_ws(be, ov, in.v, 4);
    void *ws = ws_new(wsb);
    ok &= check_true(name, swin_cpu_conv3d_winograd(be, ov, NULL, in.v, wt, bias, ws, wsb, 4, NULL) == 0);
    ok &= compare(name, ov, ref, cin, cout, 4);
    size_t bad = 0;
    for (size_t v = 0; v < nv; v++)
        for (int c = cout; c < pitch; c++) bad += mem[v * pitch + c] != 7.0f;
    for (size_t i = nv * pitch; i < floats; i++) bad += mem[i] != 7.0f;
    ok &= check_true("winograd: streamed stores leave the guard channels and the tail untouched", bad == 0);
    ok &= ws_free(ws);
    free(ref);
    free(mem);
    free(wt);
    free(bias);
    tvol_free(&in);
    swin_cpu_backend_free(be);
    return ok;
}

static bool all_cases(struct swin_cpu_backend *be, enum swin_cpu_simd simd)
{
    bool ok = true;
    if (!swin_cpu_winograd_available(be))
        fprintf(stderr, "note: no Winograd kernel at %s; checking that the direct conv runs instead\n",
                test_simd_name(simd));
    /* odd dims, cin 5 with pitch 8, cout 7 into channels [3, 10) of a 13-channel concat */
    ok &= run_case(be, simd, 5, 7, 9, 5, 8, 7, false, 13, 3, true);
    /* axes of length 1 (a single row of tiles, each half empty) */
    ok &= run_case(be, simd, 1, 1, 3, 3, 3, 2, true, 2, 0, false);
    ok &= run_case(be, simd, 1, 6, 1, 9, 11, 10, true, 10, 0, false);
    /* channels not multiples of 8, bias, odd dims in every direction */
    ok &= run_case(be, simd, 9, 6, 11, 13, 13, 29, true, 29, 0, false);
    /* 100 output channels: two channel blocks (96 + 4), the rule holds (dims >= 8) */
    ok &= run_case(be, simd, 8, 9, 8, 20, 21, 100, true, 100, 0, false);
    /* many tile blocks over two threads, the concat's second half as the input (pitch 2 cin) */
    ok &= run_case(be, simd, 13, 12, 14, 48, 96, 48, false, 96, 48, true);
    /* the wide schedule (cin cout / (cin + cout) of 64 and more): one block of 8 F(4) tiles
     * and 36 F(2) tiles, then several blocks of both with a last, partial block, into a
     * concat slice with bias; 48 channels keep the blocked schedule */
    if (swin_cpu_winograd_available(be)) {
        struct swin_vol probe_in = {.d = 5, .h = 7, .w = 6, .c = 200, .pitch = 200};
        struct swin_vol probe_out = {.d = 5, .h = 7, .w = 6, .c = 150, .pitch = 150};
        ok &= check_true("winograd: 200 -> 150 runs the wide schedule at every tile",
                         swin_cpu_winograd_wide(be, probe_out, probe_in, 2) &&
                             swin_cpu_winograd_wide(be, probe_out, probe_in, 4) &&
                             swin_cpu_winograd_wide(be, probe_out, probe_in, 6));
        probe_in.c = probe_in.pitch = probe_out.c = probe_out.pitch = 48;
        ok &= check_true("winograd: 48 -> 48 runs the blocked schedule",
                         !swin_cpu_winograd_wide(be, probe_out, probe_in, 2) &&
                             !swin_cpu_winograd_wide(be, probe_out, probe_in, 4) &&
                             !swin_cpu_winograd_wide(be, probe_out, probe_in, 6));
        /* the F(6x6x6) rule: bfloat16 weights, grids from 48, at most 144 channels in and out at
         * the AVX-512 level, 96 at the AVX2 level */
        const struct swin_vol g48_96 = {.d = 48, .h = 49, .w = 50, .c = 96, .pitch = 96};
        const struct swin_vol g48_48 = {.d = 48, .h = 49, .w = 50, .c = 48, .pitch = 48};
        const struct swin_vol g32_48 = {.d = 32, .h = 64, .w = 64, .c = 48, .pitch = 48};
        const bool avx512 = simd >= SWIN_CPU_SIMD_AVX512;
        ok &= check_true(avx512 ? "winograd: bfloat16 96 -> 48 on a grid of 48 runs F(6x6x6) at the AVX-512 level"
                                : "winograd: bfloat16 96 -> 48 on a grid of 48 runs F(4x4x4) at the AVX2 level",
                         swin_cpu_winograd_tile(be, g48_48, g48_96, true) == (avx512 ? 6 : 4));
        ok &= check_true("winograd: bfloat16 48 -> 48 on a grid of 48 runs F(6x6x6)",
                         swin_cpu_winograd_tile(be, g48_48, g48_48, true) == 6);
        ok &= check_true("winograd: float32 96 -> 48 on a grid of 48 runs F(4x4x4)",
                         swin_cpu_winograd_tile(be, g48_48, g48_96, false) == 4);
        ok &= check_true("winograd: bfloat16 96 -> 96 on a grid of 48 runs F(4x4x4)",
                         swin_cpu_winograd_tile(be, g48_96, g48_96, true) == 4);
        ok &= check_true("winograd: bfloat16 48 -> 48 with a side of 32 runs F(4x4x4)",
                         swin_cpu_winograd_tile(be, g32_48, g32_48, true) == 4);
    }
    ok &= run_case(be, simd, 5, 7, 6, 200, 200, 150, true, 150, 0, true);
    ok &= run_case(be, simd, 13, 10, 11, 136, 140, 130, true, 141, 5, false);
    /* bfloat16 weights: cout 29 (a partial 8-channel vector), then two channel blocks */
    if (swin_cpu_winograd_available(be)) {
        ok &= bf16_case(simd, 7, 8, 9, 13, 29, 0);
        ok &= bf16_case(simd, 8, 6, 10, 24, 100, 0);
        /* F(6x6x6) by the rule: partial tiles on two axes, 3 input and 11 output channels */
        ok &= bf16_case(simd, 48, 50, 53, 3, 11, 6);
        ok &= stream_case(simd);
    }
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    for (int i = 0; i < TEST_SIMD_LEVELS; i++)
        if (test_simd_select(be, test_simd_levels[i])) ok &= all_cases(be, test_simd_levels[i]);
    fprintf(stderr,
            "winograd: worst |err| / sqrt(cin): F(2) %.3g (tolerance %.3g), F(4) %.3g (tolerance %.3g), F(6) %.3g "
            "(tolerance %.3g)\n",
            worst_seen[2], tol_abs(1, 2), worst_seen[4], tol_abs(1, 4), worst_seen[6], tol_abs(1, 6));
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
