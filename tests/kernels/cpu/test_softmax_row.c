/* The attention softmax rows (cpu_rowops.h) against double: swin_cpu_softmax_row (portable,
 * normalised), and swin_cpu_softmax_exp_row_avx2 and _avx512 (unnormalised exp(v - max) and
 * 1 / sum), each where the CPU has its level. Rows of 7 (a tail only), 16 (whole vectors), 343 (a 7^3 window: whole
 * vectors, an 8-lane step and a tail) and 1000 keys; logits spread so that v - max runs from
 * 0 down past the clamp at -87; a bias row; a mask on every third key. A reference without
 * the mask must fail the same check. */
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "tests/common/check.h"
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ref[j] = exp(v_j - max v) (unnormalised) for v = r + bias (- 100 where masked); returns the sum. */
static double reference(double *ref, const float *r, const float *bias, const int *label, int label_i, int n)
{
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j < n; j++) {
        ref[j] = (double)r[j] + bias[j] + (label && label[j] != label_i ? -100.0 : 0.0);
        mx = ref[j] > mx ? ref[j] : mx;
    }
    for (int j = 0; j < n; j++) sum += ref[j] = exp(ref[j] - mx);
    return sum;
}

static bool run_row(int n, bool masked)
{
    char name[96];
    test_rng g = {99ULL + (uint64_t)n};
    float *r = calloc((size_t)n, sizeof(float)), *bias = test_rand(&g, (size_t)n, -2.0f, 2.0f);
    float *got = malloc((size_t)n * sizeof(float)), *want = malloc((size_t)n * sizeof(float));
    float *nomask = malloc((size_t)n * sizeof(float));
    double *ref = malloc((size_t)n * sizeof(double));
    int *label = calloc((size_t)n, sizeof(int));
    for (int j = 0; j < n; j++) {
        r[j] = (float)(5.0 - 100.0 * (double)((j * 37) % n) / n);   /* 5 .. -95, shuffled */
        label[j] = j % 3 == 1;
    }
    const int *lab = masked ? label : NULL;
    const double sum = reference(ref, r, bias, lab, 0, n);
    double sum_nomask = reference(ref, r, bias, NULL, 0, n);
    for (int j = 0; j < n; j++) nomask[j] = (float)(ref[j] / sum_nomask);
    reference(ref, r, bias, lab, 0, n);
    bool ok = true;
    /* normalised rows: probabilities <= 1, exp within ~1 ulp: 1e-7 absolute + 3e-7 relative */
    for (int j = 0; j < n; j++) want[j] = (float)(ref[j] / sum);
    const struct {
        const char *name;
        void (*row)(float *, const float *, const int *, int, int);
        bool cpu_has;
    } paths[] = {
        {"softmax_row (portable)", swin_cpu_softmax_row, true},
    };
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        snprintf(name, sizeof name, "%s, %d keys, mask %d", paths[p].name, n, masked);
        if (!paths[p].cpu_has) {
            fprintf(stderr, "note: this CPU lacks the instructions of %s; not tested here\n", name);
            continue;
        }
        for (int j = 0; j < n; j++) got[j] = r[j];
        paths[p].row(got, bias, lab, 0, n);
        ok &= check_close(name, got, want, (size_t)n, 1e-7, 3e-7);
        if (masked) {
            size_t bad = 0;
            for (int j = 0; j < n; j++) bad += !(fabsf(got[j] - nomask[j]) <= 1e-7f + 3e-7f * fabsf(nomask[j]));
            ok &= check_true("a reference without the mask is rejected (the test can fail)", bad > 0);
        }
    }
    /* AVX2 and AVX-512: exp(v - max) <= 1 unnormalised, the same bounds: the float sum v = r +
     * bias rounds by up to ulp(7) / 2 = 2.4e-7 (exact in the double reference), then 2.2e-8
     * absolute from rounding v log2e and 7.9e-8 relative from the polynomial; 1 / sum to 3e-7
     * relative */
    const enum swin_cpu_simd cpu = swin_cpu_simd_of_cpu();
    const struct {
        const char *name;
        float (*row)(float *, const float *, const int *, int, int);
        bool cpu_has;
    } exp_paths[] = {
        {"softmax_exp_row_avx2", swin_cpu_softmax_exp_row_avx2, cpu >= SWIN_CPU_SIMD_AVX2},
        {"softmax_exp_row_avx512", swin_cpu_softmax_exp_row_avx512, cpu >= SWIN_CPU_SIMD_AVX512},
    };
    for (size_t p = 0; p < sizeof exp_paths / sizeof exp_paths[0]; p++) {
        snprintf(name, sizeof name, "%s, %d keys, mask %d", exp_paths[p].name, n, masked);
        if (!exp_paths[p].cpu_has) {
            fprintf(stderr, "note: this CPU lacks the instructions of %s; not tested here\n", name);
            continue;
        }
        for (int j = 0; j < n; j++) {
            got[j] = r[j];
            want[j] = (float)ref[j];
        }
        const float inv = exp_paths[p].row(got, bias, lab, 0, n);
        ok &= check_close(name, got, want, (size_t)n, 1e-7, 3e-7);
        char what[128];
        snprintf(what, sizeof what, "%s: 1 / sum within 3e-7", name);
        ok &= check_true(what, fabs(inv * sum - 1.0) <= 3e-7);
    }
    free(r); free(bias); free(got); free(want); free(nomask); free(ref); free(label);
    return ok;
}

int main(void)
{
    bool ok = true;
    const int sizes[] = {7, 16, 343, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ok &= run_row(sizes[i], false);
        ok &= run_row(sizes[i], true);
    }
    return test_exit(ok);
}
