/* 8-lane AVX2 + FMA versions of the row functions of cpu_rowops.h (compiled for avx2,fma
 * only; the backend calls them only where the CPU has both):
 *   swin_cpu_softmax_exp_row_avx2  the attention softmax (bias and mask added first, left
 *                              unnormalised: the head scales its outputs), max-subtracted as
 *                              vexp.c, its exp in the 2^f form of exp8_nonpos below
 *   swin_cpu_gelu_erf_avx2     exact-erf GELU, same algorithm as gelu.c
 *   swin_cpu_ln_row_avx2       LayerNorm of one row, statistics in double as layernorm.c
 * with fused multiply-adds in the polynomials, so they agree with the portable versions to
 * ~1 ulp, not bit for bit. Tails use masked loads and stores. */
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "kernels/cpu/vmath/vmath_coef.h"

#include <immintrin.h>
#include <math.h>
#include <stdbool.h>

#include "kernels/cpu/isa.h"


SWIN_AVX2_INLINE float hmax8(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

SWIN_AVX2_INLINE float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* exp(x) for x <= 0 as 2^(x log2e): x log2e = n + f with n = round(x log2e) taken by the
 * 1.5 * 2^23 shift (t = x log2e + 1.5 * 2^23 holds n in its low mantissa bits: n is t - 1.5 *
 * 2^23 both as a float, exact, and as the integer difference of the two bit patterns) and
 * f in [-0.5, 0.5] exact, then 2^f by swin_exp2_p and 2^n in the exponent field. Only the
 * product and the polynomial use the FMA pipes (8 of them, against 11 for the Cephes form of
 * vexp.c). Rounding x log2e costs up to |x| 6e-8 relative, an absolute error of at most 2.2e-8
 * (e^x |x| peaks at x = -1), below an ulp of 1: the scale that a softmax over max-subtracted
 * logits and the 1 - exp of erf see; on top, the polynomial's 7.9e-8 relative. Clamped at -87. */
SWIN_AVX2_INLINE __m256 exp8_nonpos(__m256 x)
{
    const __m256 shift = _mm256_set1_ps(12582912.0f);
    const __m256 x2 = _mm256_mul_ps(_mm256_max_ps(x, _mm256_set1_ps(SWIN_EXP_MIN)), _mm256_set1_ps(SWIN_EXP_LOG2E));
    const __m256 t = _mm256_add_ps(x2, shift);
    const __m256 f = _mm256_sub_ps(x2, _mm256_sub_ps(t, shift));
    __m256 p = _mm256_set1_ps(swin_exp2_p[0]);
    for (int i = 1; i < SWIN_EXP2_P_TERMS; i++) p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(swin_exp2_p[i]));
    /* 2^n, n in [-126, 0] */
    const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(shift));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

/* Logits + bias (+ mask) of the lanes in `m` (zero elsewhere), from r + j; `full`: all 8
 * lanes, read with plain loads (AMD CPUs run masked ones slower). */
SWIN_AVX2_INLINE __m256 biased(const float *r, const float *bias, const int *label, int label_i, int j, __m256i m,
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

SWIN_AVX2 float swin_cpu_softmax_exp_row_avx2(float *r, const float *bias, const int *label, int label_i, int n)
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
SWIN_AVX2_INLINE __m256 erf8(__m256 x)
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

SWIN_AVX2_INLINE __m256 gelu8(__m256 v)
{
    const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps((float)M_SQRT1_2)));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

SWIN_AVX2 void swin_cpu_gelu_erf_avx2(float *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(h + i, gelu8(_mm256_loadu_ps(h + i)));
    if (i < n) {
        const __m256i tail = swin_cpu_lanes((int)(n - i));
        _mm256_maskstore_ps(h + i, tail, gelu8(_mm256_maskload_ps(h + i, tail)));
    }
}

/* Sum of the 4 doubles of v. */
SWIN_AVX2_INLINE double hsum4d(__m256d v)
{
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* swin_cpu_ln_row with the statistics in two 4-lane double accumulators (channels i mod 8
 * below and above 4), the normalisation 8 floats per vector. */
SWIN_AVX2 void swin_cpu_ln_row_avx2(float *y, const float *x, int c, const float *gamma, const float *beta)
{
    const int c8 = c / 8 * 8;
    __m256d a0 = _mm256_setzero_pd(), a1 = a0;
    for (int i = 0; i < c8; i += 8) {
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    double s = hsum4d(_mm256_add_pd(a0, a1));
    for (int i = c8; i < c; i++) s += x[i];
    const double mean = s / c;
    const __m256d md = _mm256_set1_pd(mean);
    a0 = a1 = _mm256_setzero_pd();
    for (int i = 0; i < c8; i += 8) {
        const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), md);
        const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)), md);
        a0 = _mm256_fmadd_pd(d0, d0, a0);
        a1 = _mm256_fmadd_pd(d1, d1, a1);
    }
    double ss = hsum4d(_mm256_add_pd(a0, a1));
    for (int i = c8; i < c; i++) ss += (x[i] - mean) * (x[i] - mean);
    /* normalise in float: mean = mean_hi + mean_lo, x - mean_hi is exact near the mean */
    const float rstd = (float)(1.0 / sqrt(ss / c + 1e-5));
    const float mh = (float)mean, ml = (float)(mean - mh);
    const __m256 vh = _mm256_set1_ps(mh), vl = _mm256_set1_ps(ml), vr = _mm256_set1_ps(rstd);
    for (int i = 0; i < c8; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vh), vl), vr);
        if (gamma)
            v = _mm256_add_ps(_mm256_mul_ps(v, _mm256_loadu_ps(gamma + i)),
                              beta ? _mm256_loadu_ps(beta + i) : _mm256_setzero_ps());
        _mm256_storeu_ps(y + i, v);
    }
    for (int i = c8; i < c; i++) {
        float v = ((x[i] - mh) - ml) * rstd;
        if (gamma) v = v * gamma[i] + (beta ? beta[i] : 0.0f);
        y[i] = v;
    }
}
