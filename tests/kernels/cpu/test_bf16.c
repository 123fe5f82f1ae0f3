/* The CPU backend's bfloat16 mode (precision BF16) at every SIMD level this CPU has:
 *   - round to nearest even on known bit patterns (ties, NaN, overflow);
 *   - swin_cpu_gemm_bf16 against a float64 loop over the bfloat16-rounded operands, on
 *     awkward shapes (1-row, tail columns, k across the kernel's panel of 256, lda/ldc
 *     wider than the matrix, accumulate on and off);
 *   - conv3d and conv_transpose2 with bfloat16 weights (inside the backend's bfloat16
 *     range) against the float64 loops on the bfloat16 weights and the input, rounded to
 *     bfloat16 where the kernel that runs rounds it (its conv choice says so); conv3d
 *     with float32 weights outside that range against the float64 loop on the unrounded
 *     operands (the per-weight choice of precision BF16's float32 stem and head).
 * The products of two bfloat16 values are exact in float32, so the only error left is the
 * float32 summation: bounded by ~K eps32 sum|a w|. Each check also shows that the float32
 * (unrounded) reference misses that bound, so a kernel that skipped the rounding fails. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"

static bool check_rounding(void)
{
    const struct { uint32_t in; uint16_t out; } cases[] = {
        {0x3f800000u, 0x3f80}, /* 1.0 */
        {0x3f808000u, 0x3f80}, /* tie, even below */
        {0x3f818000u, 0x3f82}, /* tie, odd below: up */
        {0x3f808001u, 0x3f81}, /* above the tie */
        {0xbf817fffu, 0xbf81}, /* below the tie, negative */
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX overflows to inf */
        {0xff800000u, 0xff80}, /* -inf */
        {0x00000001u, 0x0000}, /* smallest subnormal */
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float f;
        memcpy(&f, &cases[i].in, sizeof f);
        char name[80];
        snprintf(name, sizeof name, "bf16 round 0x%08x -> 0x%04x", cases[i].in, cases[i].out);
        ok &= check_true(name, swin_bf16_from_f32(f) == cases[i].out);
    }
    ok &= check_true("bf16 round: NaN stays NaN", isnan(swin_bf16_round(NAN)));
    return ok;
}

static double rounded(float x) { return (double)swin_bf16_round(x); }

static bool gemm_case(enum swin_cpu_simd simd, int m, int n, int k, int lda, int ldc, bool acc, bool with_bias,
                      test_rng *r)
{
    char name[160];
    snprintf(name, sizeof name, "gemm_bf16[%s] m %d n %d k %d lda %d ldc %d acc %d bias %d", test_simd_name(simd), m,
             n, k, lda, ldc, acc, with_bias);
    float *a = test_rand(r, (size_t)m * lda, -2.0f, 2.0f);
    float *wf = test_rand(r, (size_t)k * n, -1.0f, 1.0f);
    float *c = test_rand(r, (size_t)m * ldc + 8, -1.0f, 1.0f);
    float *c0 = malloc(((size_t)m * ldc + 8) * sizeof(float));
    memcpy(c0, c, ((size_t)m * ldc + 8) * sizeof(float));
    swin_bf16 *w = malloc((size_t)k * n * sizeof *w + 16);
    for (size_t i = 0; i < (size_t)k * n; i++) w[i] = swin_bf16_from_f32(wf[i]);
    float *bias = with_bias ? test_rand(r, (size_t)n, -1.0f, 1.0f) : NULL;
    swin_cpu_gemm_bf16(simd, m, n, k, a, lda, w, n, bias, acc, c, ldc);
    bool ok = true, unrounded_misses = false;
    double worst = 0.0;
    for (int i = 0; i < m && ok; i++)
        for (int j = 0; j < ldc; j++) {
            const float got = c[(size_t)i * ldc + j];
            if (j >= n) {  /* columns past n are not C's: untouched */
                ok &= got == c0[(size_t)i * ldc + j];
                continue;
            }
            double ref = (acc ? c0[(size_t)i * ldc + j] : 0.0) + (bias ? bias[j] : 0.0), ref32 = ref, mag = fabs(ref);
            for (int p = 0; p < k; p++) {
                const double prod = rounded(a[(size_t)i * lda + p]) * swin_bf16_to_f32(w[(size_t)p * n + j]);
                ref += prod;
                ref32 += (double)a[(size_t)i * lda + p] * wf[(size_t)p * n + j];
                mag += fabs(prod);
            }
            const double tol = 1e-6 + 1.2e-7 * (k + 2) * mag;   /* (k + 1) eps32 sum |a w| */
            const double err = fabs(got - ref);
            worst = err / tol > worst ? err / tol : worst;
            ok &= err <= tol;
            unrounded_misses |= !(fabs(got - ref32) <= tol);
        }
    ok &= c[(size_t)m * ldc] == c0[(size_t)m * ldc];  /* nothing past the last row */
    if (!ok) fprintf(stderr, "FAIL %s (worst error / tolerance %.2f)\n", name, worst);
    /* the rounding moves a sum by ~2^-9 sum|a w| / sqrt(k), the bound allows (k + 2) 2^-23 sum|a w|:
     * with k >= 8 and 16 or more outputs, some output leaves the bound */
    if (k >= 8 && m * n >= 16) ok &= check_true("gemm_bf16: the unrounded float32 reference is rejected (the test can fail)",
                                 unrounded_misses);
    free(a), free(wf), free(c), free(c0), free(w), free(bias);
    return ok;
}

static bool gemm_cases(enum swin_cpu_simd simd)
{
    test_rng r = {77ULL};
    bool ok = true;
    const int ms[] = {1, 3, 4, 5, 9}, ns[] = {1, 7, 8, 9, 16, 23, 24, 25, 50}, ks[] = {1, 3, 255, 256, 257, 600};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
            for (size_t q = 0; q < sizeof ks / sizeof *ks; q++)
                ok &= gemm_case(simd, ms[i], ns[j], ks[q], ks[q] + (int)(j % 3), ns[j] + (int)(i % 2) * 5,
                                (i + j + q) % 2 == 0, (i + 2 * j + q) % 3 == 0, &r);
    ok &= check_true("gemm_bf16 shapes", ok);
    return ok;
}

/* conv3d with bfloat16 weights (float64 loop over the rounded operands). */
static bool conv_case(struct swin_cpu_backend *be, enum swin_cpu_simd simd, int d, int h, int w, int cin,
                      int in_pitch, int cout, int k, int s, int p, bool with_bias, int concat_c, int c0)
{
    char name[160];
    snprintf(name, sizeof name, "conv3d bf16[%s] %dx%dx%d cin %d (pitch %d) -> %d k %d s %d p %d bias %d",
             test_simd_name(simd), d, h, w, cin, in_pitch, cout, k, s, p, with_bias);
    test_rng r = {99ULL + (uint64_t)(cin * 7 + cout * 13 + k)};
    const int od = (d + 2 * p - k) / s + 1, oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
    tvol in = tvol_new(d, h, w, cin, in_pitch);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    tvol out = tvol_new(od, oh, ow, concat_c, concat_c);
    struct swin_vol ov = tvol_slice(&out, c0, cout);
    const size_t nw = (size_t)k * k * k * cin * cout;
    float *wf = test_rand(&r, nw, -0.5f, 0.5f);
    swin_bf16 *wb = malloc(nw * sizeof *wb);
    for (size_t i = 0; i < nw; i++) wb[i] = swin_bf16_from_f32(wf[i]);
    float *bias = with_bias ? test_rand(&r, (size_t)cout, -1.0f, 1.0f) : NULL;
    swin_cpu_backend_set_bf16(be, wb, nw * sizeof *wb);
    const size_t wsb16 = swin_cpu_ops.conv3d_ws(be, ov, in.v, (const float *)(const void *)wb, k, s, p, false),
                 wsb32 = swin_cpu_ops.conv3d_ws(be, ov, in.v, wf, k, s, p, false), wsb = wsb16 > wsb32 ? wsb16 : wsb32;
    void *ws = ws_new(wsb);
    /* the GEMM kernels round the input to bfloat16; the per-tap GEMMs and Winograd widen the
     * weights and keep the input float32 */
    const bool rounds = swin_cpu_conv3d_choose(be, ov, in.v, true, k, s, p).rounds_input;
    bool ok = check_true(name, swin_cpu_ops.conv3d(be, ov, NULL, in.v, (const float *)(const void *)wb, bias, k, s, p,
                                                   ws, wsb) == 0);
    /* the same conv with the float32 weights, outside the bfloat16 range: float32, unrounded */
    tvol out32 = tvol_new(od, oh, ow, concat_c, concat_c);
    struct swin_vol ov32 = tvol_slice(&out32, c0, cout);
    ok &= check_true(name, swin_cpu_ops.conv3d(be, ov32, NULL, in.v, wf, bias, k, s, p, ws, wsb) == 0);
    bool worst_ok = true, unrounded_misses = false, f32_ok = true, rounding_seen = false;
    for (int z = 0; z < od; z++)
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++)
                for (int o = 0; o < cout; o++) {
                    double ref = bias ? bias[o] : 0.0, ref32 = ref, mag = fabs(ref), mag32 = mag;
                    double ref_w16 = ref; /* bfloat16 weights, unrounded input */
                    for (int kz = 0; kz < k; kz++)
                        for (int ky = 0; ky < k; ky++)
                            for (int kx = 0; kx < k; kx++) {
                                const int iz = z * s - p + kz, iy = y * s - p + ky, ix = x * s - p + kx;
                                if (iz < 0 || iz >= d || iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                for (int ci = 0; ci < cin; ci++) {
                                    const size_t wi = (((size_t)(kz * k + ky) * k + kx) * cin + ci) * cout + o;
                                    const float av = *vol_at(in.v, iz, iy, ix, ci);
                                    const double prod = (rounds ? rounded(av) : av) * swin_bf16_to_f32(wb[wi]);
                                    ref += prod, mag += fabs(prod);
                                    ref_w16 += (double)av * swin_bf16_to_f32(wb[wi]);
                                    ref32 += (double)av * wf[wi], mag32 += fabs((double)av * wf[wi]);
                                }
                            }
                    const double got = *vol_at(ov, z, y, x, o), tol = 1e-6 + 1.2e-7 * (k * k * k * cin + 2) * mag;
                    worst_ok &= fabs(got - ref) <= tol;
                    unrounded_misses |= !(fabs(got - ref32) <= tol);
                    rounding_seen |= rounds ? !(fabs(got - ref_w16) <= tol) : true;
                    f32_ok &= fabs(*vol_at(ov32, z, y, x, o) - ref32) <= 1e-6 + 1.2e-7 * (k * k * k * cin + 2) * mag32;
                }
    ok &= check_true(name, worst_ok);
    ok &= check_true("conv3d: float32 weights outside the bfloat16 range run float32 on unrounded inputs", f32_ok);
    ok &= tvol_guard_ok(name, &out32, c0, cout);
    tvol_free(&out32);
    ok &= check_true("conv3d bf16: the unrounded float32 reference is rejected", unrounded_misses);
    ok &= check_true("conv3d bf16: a kernel that rounds its input misses the reference that does not", rounding_seen);
    ok &= tvol_guard_ok(name, &out, c0, cout);
    ok &= ws_free(ws);
    free(wf), free(wb), free(bias);
    tvol_free(&in), tvol_free(&out);
    return ok;
}

/* conv_transpose2 with bfloat16 weights: out(2i+a, 2j+b, 2k+g, o) = sum_c in(i,j,k,c) w[a][b][g][c][o]. */
static bool convt_case(struct swin_cpu_backend *be, enum swin_cpu_simd simd, int d, int h, int w, int cin, int cout,
                       int concat_c, int c0)
{
    char name[128];
    snprintf(name, sizeof name, "conv_transpose2 bf16[%s] %dx%dx%d cin %d -> %d", test_simd_name(simd), d, h, w,
             cin, cout);
    test_rng r = {5ULL + (uint64_t)cin};
    tvol in = tvol_new(d, h, w, cin, cin + 3);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    tvol out = tvol_new(2 * d, 2 * h, 2 * w, concat_c, concat_c);
    struct swin_vol ov = tvol_slice(&out, c0, cout);
    const size_t nw = (size_t)8 * cin * cout;
    float *wf = test_rand(&r, nw, -0.5f, 0.5f);
    swin_bf16 *wb = malloc(nw * sizeof *wb);
    for (size_t i = 0; i < nw; i++) wb[i] = swin_bf16_from_f32(wf[i]);
    swin_cpu_backend_set_bf16(be, wb, nw * sizeof *wb);
    bool ok = check_true(name, swin_cpu_ops.conv_transpose2(be, ov, in.v, (const float *)(const void *)wb) == 0);
    bool all = true;
    for (int z = 0; z < 2 * d; z++)
        for (int y = 0; y < 2 * h; y++)
            for (int x = 0; x < 2 * w; x++)
                for (int o = 0; o < cout; o++) {
                    const int tap = ((z & 1) * 2 + (y & 1)) * 2 + (x & 1);
                    double ref = 0.0, mag = 0.0;
                    for (int ci = 0; ci < cin; ci++) {
                        const double prod = rounded(*vol_at(in.v, z / 2, y / 2, x / 2, ci)) *
                                            swin_bf16_to_f32(wb[((size_t)tap * cin + ci) * cout + o]);
                        ref += prod, mag += fabs(prod);
                    }
                    all &= fabs(*vol_at(ov, z, y, x, o) - ref) <= 1e-6 + 1.2e-7 * (cin + 2) * mag;
                }
    ok &= check_true(name, all);
    ok &= tvol_guard_ok(name, &out, c0, cout);
    free(wf), free(wb);
    tvol_free(&in), tvol_free(&out);
    return ok;
}

int main(void)
{
    bool ok = check_rounding();
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        const enum swin_cpu_simd simd = test_simd_levels[i];
        if (!test_simd_select(be, simd)) continue;
        ok &= gemm_cases(simd);
        ok &= conv_case(be, simd, 5, 9, 13, 5, 8, 7, 3, 1, 1, false, 13, 3);   /* 3^3 pad 1 into a slice */
        ok &= conv_case(be, simd, 7, 5, 9, 4, 6, 5, 3, 2, 1, true, 5, 0);      /* stride 2, odd dims */
        ok &= conv_case(be, simd, 6, 8, 10, 1, 1, 12, 2, 2, 0, true, 12, 0);   /* patch embed, Ci 1 */
        ok &= conv_case(be, simd, 3, 5, 7, 10, 12, 14, 1, 1, 0, true, 17, 2);  /* 1^3 direct, pitch-strided */
        ok &= conv_case(be, simd, 3, 3, 3, 20, 21, 100, 3, 1, 1, true, 100, 0); /* k^3 cin = 540 > 256 */
        ok &= convt_case(be, simd, 3, 2, 5, 9, 7, 11, 4);
        ok &= convt_case(be, simd, 2, 2, 2, 40, 25, 25, 0);
    }
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
