/* The float32 weight GEMMs (kernels/cpu/gemm/gemm_f32.h) of every level this CPU has (AVX2,
 * AVX-512; the test names the ones it skips), against a float64 loop on awkward shapes:
 * 1 to 13 rows (past the 4-, 6- and 8-row tiles), 1 to 50 columns (every tail of the 24-,
 * 16-, 48- and 32-column tiles, 14 of the default output conv) and 100 or 160 (several
 * panels), k from 0 to 97 and past the k blocks (130, 300: 128 for AVX-512, 256 for AVX2),
 * lda and ldc wider than the matrix, accumulate and the bias on and off (at the AVX2 level
 * both loop orders: rows first on long A and narrow W, and one product with a k block of
 * each order); columns past n and
 * the row after m must stay untouched. Tolerance: (k + 2) eps32 sum |a w| (float32 sums in k order with
 * FMA, k blocks added to C). A sum missing one product fails it, so the comparison can fail.
 * The ops that call them (conv3d, conv_transpose2, swin_mlp, swin_attention, patch_merge) are
 * tested against their own float64 loops. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_f32.h"

typedef void gemm_fn(int m, int n, int k, const float *a, int lda, const float *w, int ldw, const float *bias,
                     bool accumulate, float *c, int ldc);

static bool gemm_case(gemm_fn *gemm, const char *kname, int m, int n, int k, int lda, int ldc, bool acc, bool with_bias,
                      test_rng *r)
{
    char name[160];
    snprintf(name, sizeof name, "%s m %d n %d k %d lda %d ldc %d acc %d bias %d", kname, m, n, k, lda, ldc, acc,
             with_bias);
    const size_t csize = (size_t)m * ldc + 8;
    float *a = test_rand(r, (size_t)m * lda + 1, -2.0f, 2.0f);
    float *w = test_rand(r, (size_t)k * n + 1, -1.0f, 1.0f);
    float *c = test_rand(r, csize, -1.0f, 1.0f);
    float *c0 = malloc(csize * sizeof(float));
    float *bias = with_bias ? test_rand(r, (size_t)n, -1.0f, 1.0f) : NULL;
    memcpy(c0, c, csize * sizeof(float));
    gemm(m, n, k, a, lda, w, n, bias, acc, c, ldc);
    bool ok = true;
    double worst = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            const float got = c[(size_t)i * ldc + j];
            if (j >= n) { /* columns past n are not C's: untouched */
                ok &= got == c0[(size_t)i * ldc + j];
                continue;
            }
            double ref = (acc ? c0[(size_t)i * ldc + j] : 0.0) + (bias ? bias[j] : 0.0);
            double mag = fabs(acc ? c0[(size_t)i * ldc + j] : 0.0) + fabs(bias ? bias[j] : 0.0);
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
    free(a), free(w), free(c), free(c0), free(bias);
    return ok;
}

/* The comparison rejects a wrong result: one product left out of a 48-term sum. */
static bool check_can_fail(gemm_fn *gemm, const char *kname, test_rng *r)
{
    const int k = 48, n = 24;
    float *a = test_rand(r, k, -2.0f, 2.0f), *w = test_rand(r, (size_t)k * n, -1.0f, 1.0f);
    float c[24];
    gemm(1, n, k - 1, a, k, w, n, NULL, false, c, n);
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
    char what[96];
    snprintf(what, sizeof what, "%s: a sum missing one product fails the tolerance", kname);
    return check_true(what, rejected);
}

static bool kernel_cases(gemm_fn *gemm, const char *kname, test_rng *r)
{
    bool ok = true;
    const int ms[] = {1, 3, 4, 5, 6, 7, 9, 13},
              ns[] = {1, 7, 8, 9, 14, 15, 16, 17, 23, 24, 25, 33, 40, 47, 48, 50, 100}, ks[] = {0, 1, 3, 48, 97};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
            for (size_t q = 0; q < sizeof ks / sizeof *ks; q++)
                ok &= gemm_case(gemm, kname, ms[i], ns[j], ks[q], ks[q] + (int)(j % 3), ns[j] + (int)(i % 2) * 5,
                                (i + j + q) % 2 == 0, (i + 2 * j + q) % 3 == 0, r);
    /* past the k blocks, several column panels */
    const int kb[] = {127, 128, 129, 130, 255, 256, 257, 300};
    for (size_t q = 0; q < sizeof kb / sizeof *kb; q++) {
        ok &= gemm_case(gemm, kname, 11, 160, kb[q], kb[q] + 3, 161, q % 2 == 0, q % 3 == 0, r);
        ok &= gemm_case(gemm, kname, 2, 30, kb[q], kb[q], 30, q % 2 == 1, q % 3 != 0, r);
    }
    /* AVX2's rows-first order (A's block over 128 KiB, W's at most 24 KiB): 4-row groups and a
     * partial one, 24-column tiles and tails of 8 and 16; then a first k block of 256 x 30
     * (columns first) and one of 44 x 30 (rows first) */
    ok &= gemm_case(gemm, kname, 1023, 56, 40, 43, 57, false, true, r);
    ok &= gemm_case(gemm, kname, 701, 40, 48, 48, 40, true, false, r);
    ok &= gemm_case(gemm, kname, 1500, 30, 300, 301, 33, true, true, r);
    char what[64];
    snprintf(what, sizeof what, "%s shapes", kname);
    ok &= check_true(what, ok);
    return ok & check_can_fail(gemm, kname, r);
}

int main(void)
{
    test_rng r = {31ULL};
    bool ok = true;
    const enum swin_cpu_simd cpu = swin_cpu_simd_of_cpu();
    if (cpu >= SWIN_CPU_SIMD_AVX2) ok &= kernel_cases(swin_cpu_sgemm_avx2, "sgemm_avx2", &r);
    else printf("note: this CPU has no AVX2 + FMA; the AVX2 GEMM is not tested here\n");
    if (cpu >= SWIN_CPU_SIMD_AVX512) ok &= kernel_cases(swin_cpu_sgemm_avx512, "sgemm_avx512", &r);
    else printf("note: this CPU has no AVX-512 level; the AVX-512 GEMM is not tested here\n");
    return test_exit(ok);
}
