/* 8-lane AVX2 + FMA versions of the row functions of cpu_rowops.h (compiled for avx2,fma
 * only; the backend calls them only where the CPU has both):
 *   swin_cpu_softmax_exp_row_avx2  the attention softmax (bias and mask added first, left
 *                              unnormalised: the head scales its outputs), same
 *                              algorithm as vexp.c (max-subtracted, Cephes expf clamped at -87)
 *   swin_cpu_gelu_erf_avx2     exact-erf GELU, same algorithm as gelu.c
 * with fused multiply-adds in the polynomials, so they agree with the portable versions to
 * ~1 ulp, not bit for bit. Tails use masked loads and stores. */
#include "kernels/cpu/cpu_rowops.h"
#include "kernels/cpu/vmath_coef.h"

#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#include "kernels/cpu/avx2_lanes.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

AVX2_INLINE float hmax8(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

AVX2_INLINE float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

AVX2_INLINE __m256 exp8_nonpos(__m256 x)
{
    const __m256 cx = _mm256_max_ps(x, _mm256_set1_ps(SWIN_EXP_MIN));
    /* n = round(x / ln 2) */
    const __m256 fn = _mm256_round_ps(_mm256_mul_ps(cx, _mm256_set1_ps(SWIN_EXP_LOG2E)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(SWIN_EXP_LN2_HI), cx);
    r = _mm256_fnmadd_ps(fn, _mm256_set1_ps(SWIN_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(swin_exp_p[0]);
    for (int i = 1; i < SWIN_EXP_P_TERMS; i++) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(swin_exp_p[i]));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    /* 2^n, n in [-126, 0], built in the exponent field */
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fn), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/* Logits + bias (+ mask) of the lanes in `m` (zero elsewhere), from r + j; `full`: all 8
 * lanes, read with plain loads (AMD CPUs run masked ones slower). */
AVX2_INLINE __m256 biased(const float *r, const float *bias, const int *label, int label_i, int j, __m256i m,
                          const bool full)
{
    __m256 v = full ? _mm256_add_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(bias + j))
                    : _mm256_add_ps(_mm256_maskload_ps(r + j, m), _mm256_maskload_ps(bias + j, m));
    if (label) {
        const __m256i lab = full ? _mm256_loadu_si256((const __m256i *)(const void *)(label + j))
                                 : _mm256_maskload_epi32(label + j, m);
        const __m256i same = _mm256_cmpeq_epi32(lab, _mm256_set1_epi32(label_i));
        v = _mm256_add_ps(v, _mm256_andnot_ps(_mm256_castsi256_ps(same), _mm256_set1_ps(-100.0f)));
    }
    return v;
}

AVX2 float swin_cpu_softmax_exp_row_avx2(float *r, const float *bias, const int *label, int label_i, int n)
{
    /* two vectors per step with their own max and sum: the exp's dependency chain of one
     * step overlaps the other's */
    const int n8 = n / 8 * 8, n16 = n / 16 * 16;
    const __m256i all = _mm256_set1_epi32(-1), tail = swin_cpu_lanes(n - n8);
    __m256 vm0 = _mm256_set1_ps(-INFINITY), vm1 = vm0;
    int j = 0;
    for (; j < n16; j += 16) {
        const __m256 v0 = biased(r, bias, label, label_i, j, all, true);
        const __m256 v1 = biased(r, bias, label, label_i, j + 8, all, true);
        _mm256_storeu_ps(r + j, v0);
        _mm256_storeu_ps(r + j + 8, v1);
        vm0 = _mm256_max_ps(vm0, v0);
        vm1 = _mm256_max_ps(vm1, v1);
    }
    if (j < n8) {
        const __m256 v = biased(r, bias, label, label_i, j, all, true);
        _mm256_storeu_ps(r + j, v);
        vm0 = _mm256_max_ps(vm0, v);
    }
    if (n8 < n) {
        const __m256 v = biased(r, bias, label, label_i, n8, tail, false);
        _mm256_maskstore_ps(r + n8, tail, v);
        vm1 = _mm256_max_ps(vm1, _mm256_blendv_ps(vm1, v, _mm256_castsi256_ps(tail)));
    }
    const __m256 mx = _mm256_set1_ps(hmax8(_mm256_max_ps(vm0, vm1)));
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (j = 0; j < n16; j += 16) {
        const __m256 v0 = exp8_nonpos(_mm256_sub_ps(_mm256_loadu_ps(r + j), mx));
        const __m256 v1 = exp8_nonpos(_mm256_sub_ps(_mm256_loadu_ps(r + j + 8), mx));
        _mm256_storeu_ps(r + j, v0);
        _mm256_storeu_ps(r + j + 8, v1);
        acc0 = _mm256_add_ps(acc0, v0);
        acc1 = _mm256_add_ps(acc1, v1);
    }
    if (j < n8) {
        const __m256 v = exp8_nonpos(_mm256_sub_ps(_mm256_loadu_ps(r + j), mx));
        _mm256_storeu_ps(r + j, v);
        acc0 = _mm256_add_ps(acc0, v);
    }
    if (n8 < n) {
        const __m256 v = exp8_nonpos(_mm256_sub_ps(_mm256_maskload_ps(r + n8, tail), mx));
        _mm256_maskstore_ps(r + n8, tail, v);
        acc1 = _mm256_add_ps(acc1, _mm256_and_ps(v, _mm256_castsi256_ps(tail)));
    }
    return 1.0f / hsum8(_mm256_add_ps(acc0, acc1));
}

/* erf(x), N. Juffa's erff algorithm as in gelu.c: x + x P(x^2) for |x| <= 0.921875, else
 * sign(x) (1 - exp(-(t + t Q(t)))) with t = min(|x|, 3.725); both computed, then blended. */
AVX2_INLINE __m256 erf8(__m256 x)
{
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    const __m256 sign = _mm256_and_ps(x, signbit), ax = _mm256_andnot_ps(signbit, x);
    const __m256 s = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(swin_erf_p[0]);
    for (int i = 1; i < SWIN_ERF_P_TERMS; i++) p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(swin_erf_p[i]));
    const __m256 small = _mm256_fmadd_ps(p, x, x);
    const __m256 t = _mm256_min_ps(ax, _mm256_set1_ps(SWIN_ERF_CAP));
    __m256 q = _mm256_set1_ps(swin_erf_q[0]);
    for (int i = 1; i < SWIN_ERF_Q_TERMS; i++) q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(swin_erf_q[i]));
    q = _mm256_fmadd_ps(q, t, t);
    const __m256 e = _mm256_sub_ps(_mm256_set1_ps(1.0f), exp8_nonpos(_mm256_sub_ps(_mm256_setzero_ps(), q)));
    const __m256 large = _mm256_or_ps(e, sign);
    const __m256 use_small = _mm256_cmp_ps(ax, _mm256_set1_ps(SWIN_ERF_SPLIT), _CMP_LE_OQ);
    return _mm256_blendv_ps(large, small, use_small);
}

AVX2_INLINE __m256 gelu8(__m256 v)
{
    const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps((float)M_SQRT1_2)));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

AVX2 void swin_cpu_gelu_erf_avx2(float *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(h + i, gelu8(_mm256_loadu_ps(h + i)));
    if (i < n) {
        const __m256i tail = swin_cpu_lanes((int)(n - i));
        _mm256_maskstore_ps(h + i, tail, gelu8(_mm256_maskload_ps(h + i, tail)));
    }
}
