/* The vectorised exact-erf GELU of the MLP (kernels/cpu/gelu.c and its AVX-512 twin) against double
 * 0.5 x (1 + erf(x / sqrt 2)) on a dense grid over [-12, 12], both branch regions of its
 * erf, the boundary at |x / sqrt 2| = 0.921875, the clamp at 3.725, signed zeros and a tail
 * shorter than a vector. The tanh approximation must fail the same check. */
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "tests/common/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2400001   /* odd: the last call has a 1-element tail */

int main(void)
{
    float *x = malloc(N * sizeof(float)), *got = malloc(N * sizeof(float)), *ref = malloc(N * sizeof(float));
    float *tanh_ref = malloc(N * sizeof(float));
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)(-12.0 + 24.0 * (double)i / (N - 1));
        if (i % 1000 == 7) x[i] = (float)(0.921875 * M_SQRT2) * (i % 2000 == 7 ? 1.0f : -1.0f);  /* branch edge */
        if (i % 1000 == 9) x[i] = (float)(3.725 * M_SQRT2) * (i % 2000 == 9 ? 1.0f : -1.0f);     /* clamp edge */
    }
    x[0] = 0.0f;
    x[1] = -0.0f;
    for (size_t i = 0; i < N; i++) {
        const double v = x[i];
        ref[i] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
        tanh_ref[i] = (float)(0.5 * v * (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    }
    /* GELU in float through erf in float: 1 + erf rounds to ulp(1) = 1.2e-7, times 0.5|x| <= 6.
     * On this grid the same formula with glibc erff is off by up to 4.5e-7 absolute, this
     * implementation by up to 9.5e-7 (at |x| ~ 8); 8e-7 + 3e-7 |ref| admits that and no more
     * than ~2x it. The tanh variant differs by up to ~5e-4. */
    bool ok = true;
    const struct {
        const char *name;
        void (*gelu)(float *, size_t);
        bool cpu_has;
    } paths[] = {
        {"gelu_erf (portable) vs double", swin_cpu_gelu_erf, true},
        {"gelu_erf_avx2 vs double", swin_cpu_gelu_erf_avx2,
         __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")},
        {"gelu_erf_avx512 vs double", swin_cpu_gelu_erf_avx512, __builtin_cpu_supports("avx512f")},
    };
    for (size_t path = 0; path < sizeof paths / sizeof paths[0]; path++) {
        const char *name = paths[path].name;
        if (!paths[path].cpu_has) {
            fprintf(stderr, "note: this CPU lacks the instructions of %s; not tested here\n", name);
            continue;
        }
        for (size_t i = 0; i < N; i++) got[i] = x[i];
        paths[path].gelu(got, N);
        ok &= check_close(name, got, ref, N, 8e-7, 3e-7);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++) bad += !(fabsf(got[i] - tanh_ref[i]) <= 8e-7f + 3e-7f * fabsf(tanh_ref[i]));
        ok &= check_true("the tanh approximation is rejected (the test can fail)", bad > 1000);
        ok &= check_true("GELU(+0) = +0 and GELU(-0) = -0 (no NaN)", got[0] == 0.0f && got[1] == 0.0f);
    }
    free(x);
    free(got);
    free(ref);
    free(tanh_ref);
    return test_exit(ok);
}
