/* Per-row helpers shared by the fused CPU ops. */
#ifndef SWIN_CPU_ROWOPS_H
#define SWIN_CPU_ROWOPS_H

#include <stddef.h>

#include "kernels/cpu/cpu_internal.h"

/* y[0..c) = LN(x[0..c)) (eps 1e-5, biased variance, two-pass statistics in double), then
 * * gamma + beta when gamma != NULL. y may equal x. */
void swin_cpu_ln_row(float *y, const float *x, int c, const float *gamma, const float *beta);
/* The same with AVX2 + FMA (vmath_avx2.c; call only where the CPU has both): the double sums
 * in another order, so it agrees with swin_cpu_ln_row to rounding, not bit for bit. */
void swin_cpu_ln_row_avx2(float *y, const float *x, int c, const float *gamma, const float *beta);
typedef void swin_cpu_ln_row_fn(float *y, const float *x, int c, const float *gamma, const float *beta);

/* The LayerNorm row backend be runs: the AVX2 one at the AVX2 and AVX-512 levels. */
static inline swin_cpu_ln_row_fn *swin_cpu_ln_row_of(const struct swin_cpu_backend *be)
{
    return be->simd == SWIN_CPU_SIMD_BASELINE ? swin_cpu_ln_row : swin_cpu_ln_row_avx2;
}

/* One attention row in place (vexp.c): r[j] = softmax_j(r[j] + bias[j] + m[j]) with
 * m[j] = -100 where label && label[j] != label_i, else 0 (label NULL: no mask);
 * max-subtracted, vectorised exp (~1 ulp). */
void swin_cpu_softmax_row(float *r, const float *bias, const int *label, int label_i, int n);
/* The same with AVX2 + FMA (vmath_avx2.c; call only where the CPU has both) but left
 * unnormalised: r[j] = exp(r[j] + bias[j] + m[j] - max), and the return value is 1 / sum_j
 * r[j], for the caller to apply to what it makes of the row (the head's outputs: hd values
 * instead of n). */
float swin_cpu_softmax_exp_row_avx2(float *r, const float *bias, const int *label, int label_i, int n);
/* The same with AVX-512 (vmath_avx512.c; call only at the AVX-512 level). */
float swin_cpu_softmax_exp_row_avx512(float *r, const float *bias, const int *label, int label_i, int n);

/* h[0..n) = GELU(h) = 0.5 h (1 + erf(h / sqrt 2)) in place, exact-erf form, within a few
 * ulp (gelu.c). */
void swin_cpu_gelu_erf(float *h, size_t n);
/* The same with AVX-512 (vmath_avx512.c); call only at the AVX-512 level. */
void swin_cpu_gelu_erf_avx512(float *h, size_t n);
/* The same with AVX2 + FMA (vmath_avx2.c); call only where the CPU has both. */
void swin_cpu_gelu_erf_avx2(float *h, size_t n);

#endif
