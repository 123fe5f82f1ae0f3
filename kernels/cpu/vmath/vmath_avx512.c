/* 16-lane AVX-512 versions of the row functions of cpu_rowops.h (compiled for avx512f only;
 * the backend calls them only where the CPU has it):
 *   swin_cpu_softmax_row_avx512  the attention softmax (bias and mask added first), same
 *                                algorithm as vexp.c (max-subtracted, Cephes expf clamped at -87)
 *   swin_cpu_gelu_erf_avx512     exact-erf GELU, same algorithm as gelu.c
 * with fused multiply-adds in the polynomials, so they agree with the portable versions to
 * ~1 ulp, not bit for bit. Tails use masked loads and stores. */
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/vmath_coef.h"

#include <immintrin.h>
#include <math.h>

SWIN_AVX512_INLINE __m512 exp16_nonpos(__m512 x)
{
    const __m512 cx = _mm512_max_ps(x, _mm512_set1_ps(SWIN_EXP_MIN));
    /* n = round(x / ln 2) */
    const __m512 fn = _mm512_roundscale_ps(_mm512_mul_ps(cx, _mm512_set1_ps(SWIN_EXP_LOG2E)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(SWIN_EXP_LN2_HI), cx);
    r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(SWIN_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(swin_exp_p[0]);
    for (int i = 1; i < SWIN_EXP_P_TERMS; i++) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(swin_exp_p[i]));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    /* 2^n, n in [-126, 0], built in the exponent field */
    const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fn), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
}

/* Logits + bias (+ mask) of the lanes in `m`, from r + j. */
SWIN_AVX512_INLINE __m512 biased(const float *r, const float *bias, const int *label, int label_i, int j, __mmask16 m)
{
    __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, r + j), _mm512_maskz_loadu_ps(m, bias + j));
    if (label) {
        const __mmask16 other =
            _mm512_mask_cmpneq_epi32_mask(m, _mm512_maskz_loadu_epi32(m, label + j), _mm512_set1_epi32(label_i));
        v = _mm512_mask_add_ps(v, other, v, _mm512_set1_ps(-100.0f));
    }
    return v;
}

SWIN_AVX512
void swin_cpu_softmax_row_avx512(float *r, const float *bias, const int *label, int label_i, int n)
{
    const int n16 = n / 16 * 16;
    const __mmask16 all = 0xFFFF, tail = (__mmask16)((1u << (n - n16)) - 1u);
    __m512 vm = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < n16; j += 16) {
        const __m512 v = biased(r, bias, label, label_i, j, all);
        _mm512_storeu_ps(r + j, v);
        vm = _mm512_max_ps(vm, v);
    }
    if (tail) {
        const __m512 v = biased(r, bias, label, label_i, n16, tail);
        _mm512_mask_storeu_ps(r + n16, tail, v);
        vm = _mm512_mask_max_ps(vm, tail, vm, v);
    }
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vm));
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < n16; j += 16) {
        const __m512 v = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + j), mx));
        _mm512_storeu_ps(r + j, v);
        acc = _mm512_add_ps(acc, v);
    }
    if (tail) {
        const __m512 v = exp16_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, r + n16), mx));
        _mm512_mask_storeu_ps(r + n16, tail, v);
        acc = _mm512_mask_add_ps(acc, tail, acc, v);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
    for (int j = 0; j < n16; j += 16) _mm512_storeu_ps(r + j, _mm512_mul_ps(_mm512_loadu_ps(r + j), inv));
    if (tail) _mm512_mask_storeu_ps(r + n16, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, r + n16), inv));
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
    const __m512 e = _mm512_sub_ps(_mm512_set1_ps(1.0f), exp16_nonpos(_mm512_sub_ps(_mm512_setzero_ps(), q)));
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
