/* One head of window attention with AVX2 + FMA (compiled for avx2,fma only), fused per block
 * of 12 query rows so that the block's logits stay in L1:
 *
 *   once per head: kt (hd, npad) = k transposed (by 8x8 blocks), vp (n, hd16) = v with its
 *                  columns padded to hd16 = hd rounded up to 16, both zero padded
 *   per block of 12 query rows i0 .. i0+11:
 *     s (12, npad) = q k^T three groups of 4 rows, 24 keys per tile (8 or 16 for the last):
 *                          for every e < hd, 3 rows of kt times 4 broadcasts of q_i[e] into
 *                          12 accumulators; keys past n come from zero columns of kt
 *   softmax of each of the 12 rows over its n keys, with its bias row and mask, left
 *   unnormalised (swin_cpu_softmax_exp_row_avx2)
 *     o rows = s vp        two groups of 6 rows, 16 columns per tile: for every key t < n,
 *                          2 vectors of vp row t times 6 broadcasts of s_i[t] into 12
 *                          accumulators (8 would leave the two FMA pipes waiting on their
 *                          latency), then times the row's 1 / sum (hd products instead of n)
 * The logit block has row stride npad (swin_cpu_attn_sblk_floats). Rows past n repeat a
 * real row and are not stored; columns past hd come from zero columns of vp and are not stored.
 * fp32 accumulation in an order that differs from OpenBLAS (the portable path): results
 * agree to rounding, not bit for bit. */
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <immintrin.h>
#include <stdbool.h>

#include "kernels/cpu/isa.h"


/* dst (hd, npad): dst[e][t] = src[t*ld + e] for t < n, zero for n <= t < npad (as
 * swin_cpu_attn_transpose_pad), by 8x8 blocks where 8 keys and 8 columns are whole. */
SWIN_AVX2_INLINE void transpose_pad(float *dst, int npad, const float *src, int ld, int n, int hd)
{
    const int n8 = n / 8 * 8, hd8 = hd / 8 * 8;
    for (int e = 0; e < hd; e++) memset(dst + (size_t)e * npad + n8, 0, (size_t)(npad - n8) * sizeof(float));
    for (int t = 0; t < n8; t += 8)
        for (int e = 0; e < hd8; e += 8) {
            __m256 r[8], u[8];
            for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + (size_t)(t + i) * ld + e);
            /* rows i of keys t + i become rows e + j of columns t .. t+7 */
            for (int i = 0; i < 8; i += 2) {
                u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
                u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
            }
            for (int i = 0; i < 8; i += 4) {
                r[i] = _mm256_shuffle_ps(u[i], u[i + 2], 0x44);
                r[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], 0xEE);
                r[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0x44);
                r[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0xEE);
            }
            for (int i = 0; i < 4; i++) {
                _mm256_storeu_ps(dst + (size_t)(e + i) * npad + t, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
                _mm256_storeu_ps(dst + (size_t)(e + i + 4) * npad + t, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
            }
        }
    for (int t = 0; t < n8; t++)
        for (int e = hd8; e < hd; e++) dst[(size_t)e * npad + t] = src[(size_t)t * ld + e];
    for (int t = n8; t < n; t++)
        for (int e = 0; e < hd; e++) dst[(size_t)e * npad + t] = src[(size_t)t * ld + e];
}

/* s rows 0..3 (stride lds), keys t0 .. t0 + 8 kw - 1, of q rows qr[] times kt. */
SWIN_AVX2_INLINE void qk_tile(float *s, int lds, const float *const qr[4], int hd, const float *kt, int npad, int t0,
                         int kw)
{
    __m256 acc[4][3];
    for (int i = 0; i < 4; i++)
        for (int w = 0; w < kw; w++) acc[i][w] = _mm256_setzero_ps();
    for (int e = 0; e < hd; e++) {
        const float *kr = kt + (size_t)e * npad + t0;
        __m256 kv[3];
        for (int w = 0; w < kw; w++) kv[w] = _mm256_loadu_ps(kr + 8 * w);
        for (int i = 0; i < 4; i++) {
            const __m256 b = _mm256_broadcast_ss(qr[i] + e);
            for (int w = 0; w < kw; w++) acc[i][w] = _mm256_fmadd_ps(b, kv[w], acc[i][w]);
        }
    }
    for (int i = 0; i < 4; i++)
        for (int w = 0; w < kw; w++) _mm256_storeu_ps(s + (size_t)i * lds + t0 + 8 * w, acc[i][w]);
}

/* s rows 0..3 (stride npad) = q rows i0 .. i0 + 3 (rows past n repeat row i0) times kt. */
SWIN_AVX2_INLINE void qk_rows4(float *s, const float *q, int ld, int i0, int n, int hd, const float *kt, int npad)
{
    const float *qr[4];
    for (int i = 0; i < 4; i++) qr[i] = q + (size_t)(i0 + i < n ? i0 + i : i0) * ld;
    int t0 = 0;
    for (; t0 + 24 <= npad; t0 += 24) qk_tile(s, npad, qr, hd, kt, npad, t0, 3);
    /* npad is a multiple of 16, so 0, 8 or 16 keys are left */
    if (npad - t0 == 16) qk_tile(s, npad, qr, hd, kt, npad, t0, 2);
    else if (npad - t0 == 8) qk_tile(s, npad, qr, hd, kt, npad, t0, 1);
}

/* o rows [0, rows) (rows <= 6, stride ldo, hd columns) = (p rows (stride npad, n keys) . vp)
 * times inv[i] (each row's 1 / sum of its unnormalised probabilities). */
SWIN_AVX2_INLINE void pv_rows6(float *o, int ldo, const float *p, int npad, int rows, int n, int hd, const float *vp,
                          int hd16, const float *inv)
{
    const float *pr[6];
    for (int i = 0; i < 6; i++) pr[i] = p + (size_t)(i < rows ? i : 0) * npad;
    for (int e0 = 0; e0 < hd; e0 += 16) {
        __m256 acc[6][2];
        for (int i = 0; i < 6; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
        for (int t = 0; t < n; t++) {
            const float *vr = vp + (size_t)t * hd16 + e0;
            const __m256 w0 = _mm256_loadu_ps(vr), w1 = _mm256_loadu_ps(vr + 8);
            for (int i = 0; i < 6; i++) {
                const __m256 b = _mm256_broadcast_ss(pr[i] + t);
                acc[i][0] = _mm256_fmadd_ps(b, w0, acc[i][0]);
                acc[i][1] = _mm256_fmadd_ps(b, w1, acc[i][1]);
            }
        }
        const __m256i m0 = swin_cpu_lanes(hd - e0), m1 = swin_cpu_lanes(hd - e0 - 8);
        /* plain stores where all 16 columns are real: AMD CPUs run masked stores far slower */
        const bool full = hd - e0 >= 16;
        for (int i = 0; i < rows; i++) {
            float *row = o + (size_t)i * ldo + e0;
            const __m256 s = _mm256_set1_ps(inv[i]);
            const __m256 y0 = _mm256_mul_ps(acc[i][0], s), y1 = _mm256_mul_ps(acc[i][1], s);
            if (full) {
                _mm256_storeu_ps(row, y0);
                _mm256_storeu_ps(row + 8, y1);
            } else {
                _mm256_maskstore_ps(row, m0, y0);
                _mm256_maskstore_ps(row + 8, m1, y1);
            }
        }
    }
}

SWIN_AVX2 void swin_cpu_attn_head_avx2(float *o, int ldo, const float *q, const float *k, const float *v, int ld, int n,
                                  int hd, const float *bias, const int *label, const int *label_all, float *kt,
                                  float *vt, float *sblk)
{
    const int npad = swin_cpu_attn_npad(n), hd16 = (hd + 15) / 16 * 16;
    transpose_pad(kt, npad, k, ld, n, hd);
    float *vp = vt;
    for (int t = 0; t < n; t++) {
        float *row = vp + (size_t)t * hd16;
        memcpy(row, v + (size_t)t * ld, (size_t)hd * sizeof(float));
        memset(row + hd, 0, (size_t)(hd16 - hd) * sizeof(float));
    }
    for (int i0 = 0; i0 < n; i0 += 12) {
        const int rows = n - i0 < 12 ? n - i0 : 12;
        for (int g = 0; g < rows; g += 4) qk_rows4(sblk + (size_t)g * npad, q, ld, i0 + g, n, hd, kt, npad);
        float inv[12];
        for (int i = 0; i < rows; i++)
            inv[i] = swin_cpu_softmax_exp_row_avx2(sblk + (size_t)i * npad, bias + (size_t)(i0 + i) * n, label,
                                                   label_all[i0 + i], n);
        for (int g = 0; g < rows; g += 6)
            pv_rows6(o + (size_t)(i0 + g) * ldo, ldo, sblk + (size_t)g * npad, npad, rows - g < 6 ? rows - g : 6, n,
                     hd, vp, hd16, inv + g);
    }
}
