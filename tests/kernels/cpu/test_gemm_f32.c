/* The unpacked float32 weight GEMM (kernels/cpu/gemm_f32.h) where this CPU has AVX2 + FMA:
 *   - swin_cpu_sgemm_avx2 against a float64 loop on awkward shapes: 1 to 13 rows (past the
 *     4- and 6-row tiles), 8 to 50 columns (every tail of the 24- and 16-column tiles, 14
 *     of the default output conv), k from 1 to 97, lda and ldc wider than the matrix,
 *     accumulate on and off; columns past n and the row after m must stay untouched;
 *   - the shape rule (swin_cpu_sgemm_avx2_fits) on the shapes it was measured on.
 * Tolerance: (k + 2) eps32 sum |a w| (float32 sums in k order with FMA). Each case also
 * checks that a result one float32 step away from a reference near the tolerance fails,
 * so the comparison can fail. The ops that call it (conv3d 1x1, conv_transpose2,
 * swin_mlp, swin_attention, patch_merge) are tested against their own float64 loops. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_f32.h"

static bool gemm_case(int m, int n, int k, int lda, int ldc, bool acc, test_rng *r)
{
    char name[160];
    snprintf(name, sizeof name, "sgemm_avx2 m %d n %d k %d lda %d ldc %d acc %d", m, n, k, lda, ldc, acc);
    const size_t csize = (size_t)m * ldc + 8;
    float *a = test_rand(r, (size_t)m * lda, -2.0f, 2.0f);
    float *w = test_rand(r, (size_t)k * n, -1.0f, 1.0f);
    float *c = test_rand(r, csize, -1.0f, 1.0f);
    float *c0 = malloc(csize * sizeof(float));
    memcpy(c0, c, csize * sizeof(float));
    swin_cpu_sgemm_avx2(m, n, k, a, lda, w, n, acc, c, ldc);
    bool ok = true;
    double worst = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            const float got = c[(size_t)i * ldc + j];
            if (j >= n) { /* columns past n are not C's: untouched */
                ok &= got == c0[(size_t)i * ldc + j];
                continue;
            }
            double ref = acc ? c0[(size_t)i * ldc + j] : 0.0, mag = fabs(ref);
            for (int p = 0; p < k; p++) {
                const double prod = (double)a[(size_t)i * lda + p] * w[(size_t)p * n + j];
                ref += prod;
                mag += fabs(prod);
            }
            const double tol = 1e-6 + 1.2e-7 * (k + 2) * mag;
            const double err = fabs(got - ref);
            worst = err / tol > worst ? err / tol : worst;
            ok &= err <= tol;
        }
    for (size_t i = (size_t)m * ldc; i < csize; i++) ok &= c[i] == c0[i]; /* nothing past the last row */
    if (!ok) fprintf(stderr, "FAIL %s (worst error / tolerance %.2f)\n", name, worst);
    free(a), free(w), free(c), free(c0);
    return ok;
}

/* The comparison rejects a wrong result: one product left out of a 48-term sum. */
static bool check_can_fail(test_rng *r)
{
    const int k = 48, n = 24;
    float *a = test_rand(r, k, -2.0f, 2.0f), *w = test_rand(r, (size_t)k * n, -1.0f, 1.0f);
    float c[24];
    swin_cpu_sgemm_avx2(1, n, k - 1, a, k, w, n, false, c, n);
    bool rejected = false;
    for (int j = 0; j < n; j++) {
        double ref = 0.0, mag = 0.0;
        for (int p = 0; p < k; p++) {
            ref += (double)a[p] * w[(size_t)p * n + j];
            mag += fabs((double)a[p] * w[(size_t)p * n + j]);
        }
        rejected |= fabs(c[j] - ref) > 1e-6 + 1.2e-7 * (k + 2) * mag;
    }
    free(a), free(w);
    return check_true("sgemm_avx2: a sum missing one product fails the tolerance", rejected);
}

int main(void)
{
    if (swin_cpu_simd_of_cpu() < SWIN_CPU_SIMD_AVX2) {
        printf("note: this CPU has no AVX2 + FMA; the float32 AVX2 GEMM is not tested here\n");
        return test_exit(true);
    }
    test_rng r = {31ULL};
    bool ok = true;
    const int ms[] = {1, 3, 4, 5, 6, 7, 13}, ns[] = {8, 9, 14, 15, 16, 17, 23, 24, 25, 40, 47, 48, 50},
              ks[] = {1, 3, 48, 97};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
            for (size_t q = 0; q < sizeof ks / sizeof *ks; q++)
                ok &= gemm_case(ms[i], ns[j], ks[q], ks[q] + (int)(j % 3), ns[j] + (int)(i % 2) * 5,
                                (i + j + q) % 2 == 0, &r);
    ok &= check_true("sgemm_avx2 shapes", ok);
    ok &= check_can_fail(&r);
    ok &= check_true("fits: 48 x 48 (conv_transpose2, proj)", swin_cpu_sgemm_avx2_fits(48, 48));
    ok &= check_true("fits: 96 -> 48 1x1 conv", swin_cpu_sgemm_avx2_fits(48, 96));
    ok &= check_true("fits: 48 -> 14 output conv", swin_cpu_sgemm_avx2_fits(14, 48));
    ok &= check_true("fits not: 96 x 384 (OpenBLAS faster)", !swin_cpu_sgemm_avx2_fits(384, 96));
    ok &= check_true("fits not: fewer than 8 columns", !swin_cpu_sgemm_avx2_fits(5, 48));
    return test_exit(ok);
}
