/* The AVX-512 attention softmax's pieces, inline for functions compiled for the AVX-512 level or
 * above: vmath_avx512.c's row (float32 out) and the bfloat16 head's (attn_avx512bf16.c,
 * bfloat16 out) share the exp and the first pass. */
#ifndef SWIN_CPU_SOFTMAX_AVX512_H
#define SWIN_CPU_SOFTMAX_AVX512_H

#include <math.h>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/vmath_coef.h"

/* exp(x) for x <= 0 as 2^(x log2e): n = round(x log2e) (nearest even, as vmath_avx2.c's
 * 1.5 * 2^23 shift), f = x log2e - n exact in [-0.5, 0.5], 2^f by the polynomial c (terms
 * coefficients, vmath_coef.h), times 2^n by vscalefps (exact: n in [-126, 0] after the clamp
 * at -87): vmath_avx2.c's exp8_nonpos with the rounding and the exponent field in one
 * instruction each. */
SWIN_AVX512_INLINE __m512 swin_exp16_nonpos_poly(__m512 x, const float *c, const int terms)
{
    const __m512 x2 = _mm512_mul_ps(_mm512_max_ps(x, _mm512_set1_ps(SWIN_EXP_MIN)), _mm512_set1_ps(SWIN_EXP_LOG2E));
    const __m512 n = _mm512_roundscale_ps(x2, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(x2, n);
    __m512 p = _mm512_set1_ps(c[0]);
    for (int i = 1; i < terms; i++) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c[i]));
    return _mm512_scalef_ps(p, n);
}

/* exp(x), x <= 0, to float32's 7.9e-8 relative (swin_exp2_p). */
SWIN_AVX512_INLINE __m512 swin_exp16_nonpos(__m512 x)
{
    return swin_exp16_nonpos_poly(x, swin_exp2_p, SWIN_EXP2_P_TERMS);
}

/* exp(x), x <= 0, to 1.0e-4 relative (exp(0) = 1), for results rounded to bfloat16 next
 * (swin_exp2_bf16_p). */
SWIN_AVX512_INLINE __m512 swin_exp16_nonpos_bf16(__m512 x)
{
    return swin_exp16_nonpos_poly(x, swin_exp2_bf16_p, SWIN_EXP2_BF16_P_TERMS);
}

/* Logits + bias (+ mask) of the lanes in `m`, from r + j. */
SWIN_AVX512_INLINE __m512 swin_softmax_biased16(const float *r, const float *bias, const int *label, int label_i, int j,
                                                __mmask16 m)
{
    __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, r + j), _mm512_maskz_loadu_ps(m, bias + j));
    if (label) {
        const __mmask16 other =
            _mm512_mask_cmpneq_epi32_mask(m, _mm512_maskz_loadu_epi32(m, label + j), _mm512_set1_epi32(label_i));
        v = _mm512_mask_add_ps(v, other, v, _mm512_set1_ps(-100.0f));
    }
    return v;
}

/* The first pass of a row: r[j] += bias[j] (- 100 where label && label[j] != label_i) for
 * j < n, in place; returns their maximum. Two vectors per step with their own maxima. */
SWIN_AVX512_INLINE float swin_softmax_bias_max(float *r, const float *bias, const int *label, int label_i, int n)
{
    const int n16 = n / 16 * 16, n32 = n / 32 * 32;
    const __mmask16 all = 0xFFFF, tail = (__mmask16)((1u << (n - n16)) - 1u);
    __m512 vm0 = _mm512_set1_ps(-INFINITY), vm1 = vm0;
    int j = 0;
    for (; j < n32; j += 32) {
        const __m512 v0 = swin_softmax_biased16(r, bias, label, label_i, j, all);
        const __m512 v1 = swin_softmax_biased16(r, bias, label, label_i, j + 16, all);
        _mm512_storeu_ps(r + j, v0);
        _mm512_storeu_ps(r + j + 16, v1);
        vm0 = _mm512_max_ps(vm0, v0);
        vm1 = _mm512_max_ps(vm1, v1);
    }
    if (j < n16) {
        const __m512 v = swin_softmax_biased16(r, bias, label, label_i, j, all);
        _mm512_storeu_ps(r + j, v);
        vm0 = _mm512_max_ps(vm0, v);
    }
    if (tail) {
        const __m512 v = swin_softmax_biased16(r, bias, label, label_i, n16, tail);
        _mm512_mask_storeu_ps(r + n16, tail, v);
        vm1 = _mm512_mask_max_ps(vm1, tail, vm1, v);
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(vm0, vm1));
}

#endif
