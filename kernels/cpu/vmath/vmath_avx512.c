/* 16-lane AVX-512 versions of the row functions of cpu_rowops.h (compiled for the AVX-512
 * level only; the backend calls them only where the CPU has it):
 *   swin_cpu_softmax_exp_row_avx512  the attention softmax (bias and mask added first, left
 *                                    unnormalised: the head scales its outputs), as
 *                                    vmath_avx2.c's, 16 lanes
 *   swin_cpu_gelu_erf_avx512         exact-erf GELU, same algorithm as gelu.c
 * The exp is vmath_avx2.c's 2^f form (softmax_avx512.h); fused multiply-adds in the polynomials,
 * so they agree with the portable versions to ~1 ulp, not bit for bit. Tails use masked loads
 * and stores (AVX-512 masks cost no more than plain moves). */
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/softmax_avx512.h"
#include "kernels/cpu/vmath/vmath_coef.h"

#include <immintrin.h>
#include <math.h>

SWIN_AVX512 float swin_cpu_softmax_exp_row_avx512(float *r, const float *bias, const int *label, int label_i, int n)
{
    /* two vectors per step with their own sums: one step's exp chain overlaps the other's */
    const int n16 = n / 16 * 16, n32 = n / 32 * 32;
    const __mmask16 tail = (__mmask16)((1u << (n - n16)) - 1u);
    const __m512 mx = _mm512_set1_ps(swin_softmax_bias_max(r, bias, label, label_i, n));
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    int j = 0;
    for (; j < n32; j += 32) {
        const __m512 v0 = swin_exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + j), mx));
        const __m512 v1 = swin_exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + j + 16), mx));
        _mm512_storeu_ps(r + j, v0);
        _mm512_storeu_ps(r + j + 16, v1);
        acc0 = _mm512_add_ps(acc0, v0);
        acc1 = _mm512_add_ps(acc1, v1);
    }
    if (j < n16) {
        const __m512 v = swin_exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + j), mx));
        _mm512_storeu_ps(r + j, v);
        acc0 = _mm512_add_ps(acc0, v);
    }
    if (tail) {
        const __m512 v = swin_exp16_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, r + n16), mx));
        _mm512_mask_storeu_ps(r + n16, tail, v);
        acc1 = _mm512_mask_add_ps(acc1, tail, acc1, v);
    }
    return 1.0f / _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* erf(x), N. Juffa's erff algorithm as in gelu.c: x + x P(x^2) for |x| <= 0.921875, else
 * sign(x) (1 - exp(-(t + t Q(t)))) with t = min(|x|, 3.725); both computed, then blended. */
SWIN_AVX512_INLINE __m512 erf16(__m512 x)
{
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000));
    const __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32((int)0x80000000),
                                                              _mm512_castps_si512(x)));
    const __m512 s = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(swin_erf_p[0]);
    for (int i = 1; i < SWIN_ERF_P_TERMS; i++) p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(swin_erf_p[i]));
    const __m512 small = _mm512_fmadd_ps(p, x, x);
    const __m512 t = _mm512_min_ps(ax, _mm512_set1_ps(SWIN_ERF_CAP));
    __m512 q = _mm512_set1_ps(swin_erf_q[0]);
    for (int i = 1; i < SWIN_ERF_Q_TERMS; i++) q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(swin_erf_q[i]));
    q = _mm512_fmadd_ps(q, t, t);
    const __m512 e = _mm512_sub_ps(_mm512_set1_ps(1.0f), swin_exp16_nonpos(_mm512_sub_ps(_mm512_setzero_ps(), q)));
    const __m512 large = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(e), sign));
    const __mmask16 use_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(SWIN_ERF_SPLIT), _CMP_LE_OQ);
    return _mm512_mask_blend_ps(use_small, large, small);
}

SWIN_AVX512_INLINE __m512 gelu16(__m512 v)
{
    const __m512 e = erf16(_mm512_mul_ps(v, _mm512_set1_ps((float)M_SQRT1_2)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

SWIN_AVX512
void swin_cpu_gelu_erf_avx512(float *h, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(h + i, gelu16(_mm512_loadu_ps(h + i)));
    if (i < n) {
        const __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(h + i, tail, gelu16(_mm512_maskz_loadu_ps(tail, h + i)));
    }
}
