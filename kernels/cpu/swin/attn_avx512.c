/* One head of window attention at the AVX-512 level (compiled for it only), fused per block of
 * 12 query rows so that the block's logits stay in L1:
 *
 *   once per head: kt (hd, npad) = k transposed, vp (n, hd16) = v with its columns padded to
 *                  hd16 = hd rounded up to 16, both zero padded
 *   per block of 12 query rows i0 .. i0+11:
 *     s (12, npad) = q k^T two groups of 6 rows, 64 keys per tile (48, 32 or 16 for the last):
 *                          for every e < hd, 4 rows of kt times 6 broadcasts of q_i[e] into 24
 *                          accumulators; keys past n come from zero columns of kt
 *     softmax of each of the 12 rows over its n keys, with its bias row and mask, left
 *     unnormalised (swin_cpu_softmax_exp_row_avx512)
 *     o rows = s vp        12 rows x 32 columns per tile (16 for the last): for every key t < n,
 *                          the vectors of vp row t times 12 broadcasts of s_i[t] into 24
 *                          accumulators, then times the row's 1 / sum (hd products instead of n)
 * attn_avx2.c's algorithm at 16 lanes. The logit block has row stride npad
 * (swin_cpu_attn_sblk_floats). Rows past n repeat a real row and are not stored; columns
 * past hd come from zero columns of vp and are not stored. float32 accumulation in an order
 * that differs from the portable path: results agree to rounding, not bit for bit. */
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <immintrin.h>
#include <string.h>

#define BLOCK 12

/* s rows 0..5 (stride lds), keys t0 .. t0 + 16 KW - 1, of q rows qr[] times kt. */
SWIN_AVX512_INLINE void qk_tile(float *s, int lds, const float *const qr[6], int hd, const float *kt, int npad, int t0,
                                const int KW)
{
    __m512 acc[6][4];
    for (int i = 0; i < 6; i++)
        for (int w = 0; w < KW; w++) acc[i][w] = _mm512_setzero_ps();
    for (int e = 0; e < hd; e++) {
        const float *kr = kt + (size_t)e * npad + t0;
        __m512 kv[4];
        for (int w = 0; w < KW; w++) kv[w] = _mm512_loadu_ps(kr + 16 * w);
        for (int i = 0; i < 6; i++) {
            const __m512 b = _mm512_set1_ps(qr[i][e]);
            for (int w = 0; w < KW; w++) acc[i][w] = _mm512_fmadd_ps(b, kv[w], acc[i][w]);
        }
    }
    for (int i = 0; i < 6; i++)
        for (int w = 0; w < KW; w++) _mm512_storeu_ps(s + (size_t)i * lds + t0 + 16 * w, acc[i][w]);
}

/* s rows 0..5 (stride npad) = q rows i0 .. i0 + 5 (rows past n repeat row i0) times kt. */
SWIN_AVX512_INLINE void qk_rows6(float *s, const float *q, int ld, int i0, int n, int hd, const float *kt, int npad)
{
    const float *qr[6];
    for (int i = 0; i < 6; i++) qr[i] = q + (size_t)(i0 + i < n ? i0 + i : i0) * ld;
    int t0 = 0;
    for (; t0 + 64 <= npad; t0 += 64) qk_tile(s, npad, qr, hd, kt, npad, t0, 4);
    /* npad is a multiple of 16 */
    if (npad - t0 == 48) qk_tile(s, npad, qr, hd, kt, npad, t0, 3);
    else if (npad - t0 == 32) qk_tile(s, npad, qr, hd, kt, npad, t0, 2);
    else if (npad - t0 == 16) qk_tile(s, npad, qr, hd, kt, npad, t0, 1);
}

/* o rows [0, rows) (rows <= 12, stride ldo), columns [e0, e0 + 16 NV) of hd = (p rows (stride
 * npad, n keys) . vp) times inv[i]. */
SWIN_AVX512_INLINE void pv_tile(float *o, int ldo, const float *p, int npad, int rows, int n, int hd, const float *vp,
                                int hd16, int e0, const float *inv, const int NV)
{
    const float *pr[BLOCK];
    for (int i = 0; i < BLOCK; i++) pr[i] = p + (size_t)(i < rows ? i : 0) * npad;
    __m512 acc[BLOCK][2];
    for (int i = 0; i < BLOCK; i++)
        for (int j = 0; j < NV; j++) acc[i][j] = _mm512_setzero_ps();
    for (int t = 0; t < n; t++) {
        const float *vr = vp + (size_t)t * hd16 + e0;
        __m512 w[2];
        for (int j = 0; j < NV; j++) w[j] = _mm512_loadu_ps(vr + 16 * j);
        for (int i = 0; i < BLOCK; i++) {
            const __m512 b = _mm512_set1_ps(pr[i][t]);
            for (int j = 0; j < NV; j++) acc[i][j] = _mm512_fmadd_ps(b, w[j], acc[i][j]);
        }
    }
    for (int i = 0; i < BLOCK; i++) {
        if (i >= rows) continue;
        float *row = o + (size_t)i * ldo + e0;
        const __m512 s = _mm512_set1_ps(inv[i]);
        for (int j = 0; j < NV; j++) {
            const int left = hd - e0 - 16 * j;
            const __mmask16 m = (__mmask16)(left >= 16 ? 0xffffu : (1u << left) - 1u);
            swin_store16(row + 16 * j, m, _mm512_mul_ps(acc[i][j], s));
        }
    }
}

SWIN_AVX512 void swin_cpu_attn_head_avx512(float *o, int ldo, const float *q, const float *k, const float *v, int ld,
                                           int n, int hd, const float *bias, const int *label, const int *label_all,
                                           float *kt, float *vt, float *sblk)
{
    const int npad = swin_cpu_attn_npad(n), hd16 = (hd + 15) / 16 * 16;
    swin_cpu_attn_transpose_pad(kt, hd, npad, k, ld, n, hd);
    float *vp = vt;
    for (int t = 0; t < n; t++) {
        float *row = vp + (size_t)t * hd16;
        memcpy(row, v + (size_t)t * ld, (size_t)hd * sizeof(float));
        memset(row + hd, 0, (size_t)(hd16 - hd) * sizeof(float));
    }
    for (int i0 = 0; i0 < n; i0 += BLOCK) {
        const int rows = n - i0 < BLOCK ? n - i0 : BLOCK;
        for (int g = 0; g < rows; g += 6) qk_rows6(sblk + (size_t)g * npad, q, ld, i0 + g, n, hd, kt, npad);
        float inv[BLOCK];
        for (int i = 0; i < rows; i++)
            inv[i] = swin_cpu_softmax_exp_row_avx512(sblk + (size_t)i * npad, bias + (size_t)(i0 + i) * n, label,
                                                     label_all[i0 + i], n);
        int e0 = 0;
        for (; hd16 - e0 >= 32; e0 += 32)
            pv_tile(o + (size_t)i0 * ldo, ldo, sblk, npad, rows, n, hd, vp, hd16, e0, inv, 2);
        if (e0 < hd16) pv_tile(o + (size_t)i0 * ldo, ldo, sblk, npad, rows, n, hd, vp, hd16, e0, inv, 1);
    }
}
