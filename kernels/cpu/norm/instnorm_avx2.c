/* instnorm_act's two passes with AVX2 + FMA (compiled for avx2,fma only; the backend checks
 * the CPU first); the algorithm and its numbers are instnorm_act.c's:
 *   statistics: per channel the shifted sums of d = x - K and d^2 in double, over voxels
 *               [vb, ve), added to s1[c] and s2[c] (so the caller's chunk order holds);
 *               runs of SUB voxels (SUB x pitch floats stay in L1) swept once per group of
 *               16 channels (4 + 4 double accumulators), then once per group of 8, the
 *               channels left over in scalar double
 *   apply:      y = ((x - mean_hi) - mean_lo) * scale + shift (+ residual), LeakyReLU(0.01)
 *               as max(y, 0.01 y), 8 channels per vector, the rest scalar. */
#include "kernels/cpu/norm/instnorm_avx2.h"
#include "kernels/cpu/isa.h"

#include <immintrin.h>


/* voxels per run of the statistics pass */
#define SUB 64

/* d = x - K of 8 floats as two vectors of 4 doubles, added into s1 and (squared) s2. */
SWIN_AVX2_INLINE void acc8(const float *x, __m256d k0, __m256d k1, __m256d *s1, __m256d *s2)
{
    const __m256 v = _mm256_loadu_ps(x);
    const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), k0);
    const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), k1);
    s1[0] = _mm256_add_pd(s1[0], d0);
    s1[1] = _mm256_add_pd(s1[1], d1);
    s2[0] = _mm256_fmadd_pd(d0, d0, s2[0]);
    s2[1] = _mm256_fmadd_pd(d1, d1, s2[1]);
}

SWIN_AVX2_INLINE void flush(double *s1, double *s2, const __m256d *a1, const __m256d *a2, int n)
{
    for (int i = 0; i < n; i++) {
        _mm256_storeu_pd(s1 + 4 * i, _mm256_add_pd(_mm256_loadu_pd(s1 + 4 * i), a1[i]));
        _mm256_storeu_pd(s2 + 4 * i, _mm256_add_pd(_mm256_loadu_pd(s2 + 4 * i), a2[i]));
    }
}

SWIN_AVX2 void swin_cpu_instnorm_stats_avx2(const float *x, int64_t pitch, int64_t vb, int64_t ve, int nc,
                                       const float *shift_k, double *s1, double *s2)
{
    const int n16 = nc / 16 * 16, n8 = nc / 8 * 8;
    for (int64_t b = vb; b < ve; b += SUB) {
        const int64_t e = b + SUB < ve ? b + SUB : ve;
        for (int c = 0; c < n16; c += 16) {
            const __m256d k0 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + c)), k1 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + c + 4));
            const __m256d k2 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + c + 8));
            const __m256d k3 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + c + 12));
            __m256d a1[4], a2[4];
            for (int i = 0; i < 4; i++) a1[i] = a2[i] = _mm256_setzero_pd();
            for (int64_t v = b; v < e; v++) {
                const float *row = x + v * pitch + c;
                acc8(row, k0, k1, a1, a2);
                acc8(row + 8, k2, k3, a1 + 2, a2 + 2);
            }
            flush(s1 + c, s2 + c, a1, a2, 4);
        }
        if (n8 > n16) {
            const __m256d k0 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + n16));
            const __m256d k1 = _mm256_cvtps_pd(_mm_loadu_ps(shift_k + n16 + 4));
            __m256d a1[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()}, a2[2] = {a1[0], a1[1]};
            for (int64_t v = b; v < e; v++) acc8(x + v * pitch + n16, k0, k1, a1, a2);
            flush(s1 + n16, s2 + n16, a1, a2, 2);
        }
        for (int c = n8; c < nc; c++)
            for (int64_t v = b; v < e; v++) {
                const double d = (double)x[v * pitch + c] - shift_k[c];
                s1[c] += d;
                s2[c] += d * d;
            }
    }
}

SWIN_AVX2 void swin_cpu_instnorm_apply_avx2(float *x, int64_t pitch, const float *res, int64_t res_pitch, int64_t vb,
                                       int64_t ve, int nc, const struct swin_cpu_in_coef *k,
                                       const struct swin_cpu_in_coef *rk, const struct swin_cpu_in_proj *proj,
                                       bool lrelu)
{
    const int n8 = nc / 8 * 8, cin = proj ? proj->cin : 0;
    const __m256 slope = _mm256_set1_ps(0.01f);
    for (int64_t v = vb; v < ve; v++) {
        float *row = x + v * pitch;
        const float *r = res ? res + v * res_pitch : NULL;
        float d[SWIN_NARROW_SHORTCUT_MAX_CIN];
        for (int i = 0; i < cin; i++) d[i] = proj->src[v * proj->pitch + i] - proj->m[i];
        for (int c = 0; c < n8; c += 8) {
            __m256 y = _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(row + c), _mm256_loadu_ps(k->mean_hi + c)),
                                     _mm256_loadu_ps(k->mean_lo + c));
            y = _mm256_fmadd_ps(y, _mm256_loadu_ps(k->scale + c), _mm256_loadu_ps(k->shift + c));
            if (r) {
                const __m256 q = _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(r + c), _mm256_loadu_ps(rk->mean_hi + c)),
                                               _mm256_loadu_ps(rk->mean_lo + c));
                y = _mm256_add_ps(y, _mm256_fmadd_ps(q, _mm256_loadu_ps(rk->scale + c), _mm256_loadu_ps(rk->shift + c)));
            }
            for (int i = 0; i < cin; i++) y = _mm256_fmadd_ps(_mm256_set1_ps(d[i]), _mm256_loadu_ps(proj->a[i] + c), y);
            if (lrelu) y = _mm256_max_ps(y, _mm256_mul_ps(y, slope));
            _mm256_storeu_ps(row + c, y);
        }
        for (int c = n8; c < nc; c++) {
            float y = ((row[c] - k->mean_hi[c]) - k->mean_lo[c]) * k->scale[c] + k->shift[c];
            if (r) y += ((r[c] - rk->mean_hi[c]) - rk->mean_lo[c]) * rk->scale[c] + rk->shift[c];
            for (int i = 0; i < cin; i++) y += d[i] * proj->a[i][c];
            if (lrelu && y < 0.0f) y *= 0.01f;
            row[c] = y;
        }
    }
}
