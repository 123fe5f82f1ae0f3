/* One head of window attention with AVX512_BF16 (compiled for that level only), for the blocks
 * whose qkv weight is bfloat16 (precision BF16): attn_avx512.c's blocking with both products
 * on vdpbf16ps, which multiplies pairs of bfloat16 and adds both products to a float32 lane.
 * q, k, v and the unnormalised softmax p are rounded to bfloat16 (nearest even); the logits,
 * the softmax and every sum stay float32.
 *
 *   once per head (hp = ceil(hd / 2) pairs along e, hd16 = hd rounded up to 16):
 *     kp (hp, npad) u32   kp[p][t] = (k_t[2p], k_t[2p+1])   zero past hd and for t >= n
 *     qp (n, hp) u32      qp[i][p] = (q_i[2p], q_i[2p+1])   (q's own row order, zero past hd)
 *     vp (ceil(n/2), hd16) u32  vp[u][e] = (v_2u[e], v_2u+1[e])  zero past hd and for keys >= n
 *   per block of 12 query rows i0 .. i0+11:
 *     s (12, npad) = q k^T  two groups of 6 rows, 64 keys per tile: for every pair p, 4
 *                           vectors of kp row p times 6 broadcast pairs of qp into 24
 *                           accumulators (keys past n are zero columns of kp)
 *     each row: bias and mask added and the maximum taken (softmax_avx512.h), then
 *                           exp(s - max) (to 1e-4 relative: p is rounded next) and 1 / sum
 *                           in float32, p rounded to bfloat16 as it is stored into the
 *                           row's own first half (2 npad bfloat16 per row), zero from key n
 *                           to the row's end
 *     o rows = p vp / sum   12 rows x 32 columns per tile: for every pair of keys u, the
 *                           vectors of vp row u times 12 broadcast pairs of p into 24
 *                           accumulators, then times the row's 1 / sum
 * Scratch (attn_head.h's sizes): kp, then qp from float (hd16 / 2) npad of kt on; vp in vt;
 * the logit block sblk holds p in place. Rows past n repeat a real row and are not stored;
 * columns past hd are not stored. */
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/softmax_avx512.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#define BLOCK 12

/* The first `lanes` lanes on (<= 0: none, >= 16: all). */
SWIN_AVX512BF16_INLINE __mmask16 first_lanes(int lanes)
{
    return (__mmask16)(lanes >= 16 ? 0xffffu : lanes <= 0 ? 0u : (1u << lanes) - 1u);
}

/* dst[0 .. 2 hp) = x[0 .. hd) rounded to bfloat16, zero past hd (hp = ceil(hd / 2)). */
SWIN_AVX512BF16_INLINE void round_row(uint16_t *dst, const float *x, int hd, int hp)
{
    for (int e = 0; e < 2 * hp; e += 32) {
        const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(hd - e), x + e);
        const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(hd - e - 16), x + e + 16);
        const int left = 2 * hp - e;
        const __mmask32 st = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
        _mm512_mask_storeu_epi16(dst + e, st, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}

/* kp, qp and vp of the head (see the top of the file). */
SWIN_AVX512BF16_INLINE void pack_head(uint32_t *kp, uint32_t *qp, uint32_t *vp, const float *q, const float *k,
                                      const float *v, int ld, int n, int npad, int hd, int hd16)
{
    const int hp = (hd + 1) / 2;
    _Alignas(64) uint32_t row[8];
    for (int t = 0; t < npad; t++) {
        if (t >= n) {
            for (int p = 0; p < hp; p++) kp[(size_t)p * npad + t] = 0;
            continue;
        }
        for (int p0 = 0; p0 < hp; p0 += 8) {
            const int pn = hp - p0 < 8 ? hp - p0 : 8;
            const int en = hd - 2 * p0 < 16 ? hd - 2 * p0 : 16;
            round_row((uint16_t *)row, k + (size_t)t * ld + 2 * p0, en, pn);
            for (int p = 0; p < pn; p++) kp[(size_t)(p0 + p) * npad + t] = row[p];
        }
    }
    for (int i = 0; i < n; i++) round_row((uint16_t *)(qp + (size_t)i * hp), q + (size_t)i * ld, hd, hp);
    /* vp row u: lane e of 16 pairs (v_2u[e], v_2u+1[e]) from the two rows rounded side by side */
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int u = 0; 2 * u < n; u++) {
        const float *v0 = v + (size_t)(2 * u) * ld, *v1 = v0 + ld;
        const bool pair = 2 * u + 1 < n;
        for (int e = 0; e < hd16; e += 16) {
            const __mmask16 m = first_lanes(hd - e);
            const __m512 a = _mm512_maskz_loadu_ps(m, v0 + e);
            const __m512 b = pair ? _mm512_maskz_loadu_ps(m, v1 + e) : _mm512_setzero_ps();
            const __m512i ab = (__m512i)_mm512_cvtne2ps_pbh(b, a); /* a's 16 bfloat16, then b's */
            _mm512_storeu_si512(vp + (size_t)u * hd16 + e, _mm512_permutexvar_epi16(idx, ab));
        }
    }
}

/* s rows 0..5 (stride lds), keys t0 .. t0 + 16 KW - 1, of the pair rows qr[] times kp. */
SWIN_AVX512BF16_INLINE void qk_tile(float *s, int lds, const uint32_t *const qr[6], int hp, const uint32_t *kp,
                                    int npad, int t0, const int KW)
{
    __m512 acc[6][4];
    for (int i = 0; i < 6; i++)
        for (int w = 0; w < KW; w++) acc[i][w] = _mm512_setzero_ps();
    for (int p = 0; p < hp; p++) {
        const uint32_t *kr = kp + (size_t)p * npad + t0;
        __m512bh kv[4];
        for (int w = 0; w < KW; w++) kv[w] = (__m512bh)_mm512_loadu_si512(kr + 16 * w);
        for (int i = 0; i < 6; i++) {
            const __m512bh b = (__m512bh)_mm512_set1_epi32((int)qr[i][p]);
            for (int w = 0; w < KW; w++) acc[i][w] = _mm512_dpbf16_ps(acc[i][w], b, kv[w]);
        }
    }
    for (int i = 0; i < 6; i++)
        for (int w = 0; w < KW; w++) _mm512_storeu_ps(s + (size_t)i * lds + t0 + 16 * w, acc[i][w]);
}

/* s rows 0..5 (stride npad) = qp rows i0 .. i0 + 5 (rows past n repeat row i0) times kp. */
SWIN_AVX512BF16_INLINE void qk_rows6(float *s, const uint32_t *qp, int hp, int i0, int n, const uint32_t *kp, int npad)
{
    const uint32_t *qr[6];
    for (int i = 0; i < 6; i++) qr[i] = qp + (size_t)(i0 + i < n ? i0 + i : i0) * hp;
    int t0 = 0;
    for (; t0 + 64 <= npad; t0 += 64) qk_tile(s, npad, qr, hp, kp, npad, t0, 4);
    /* npad is a multiple of 16 */
    if (npad - t0 == 48) qk_tile(s, npad, qr, hp, kp, npad, t0, 3);
    else if (npad - t0 == 32) qk_tile(s, npad, qr, hp, kp, npad, t0, 2);
    else if (npad - t0 == 16) qk_tile(s, npad, qr, hp, kp, npad, t0, 1);
}

/* The second pass of a row of biased logits with maximum mx: p = exp(s - mx) for its n keys,
 * rounded to bfloat16 in place (bfloat16 j at byte 2j, written after float32 j at byte 4j was
 * read), zero from n up to npad; returns 1 / the float32 sum of the unrounded p. */
SWIN_AVX512BF16_INLINE float exp_row_bf16(float *r, float mx, int n, int npad)
{
    uint16_t *h = (uint16_t *)(void *)r;
    const __m512 vm = _mm512_set1_ps(mx);
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < npad; j += 16) {
        const __mmask16 m = first_lanes(n - j);
        const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, r + j), vm);
        const __m512 p = _mm512_maskz_mov_ps(m, swin_exp16_nonpos_bf16(x));
        acc = _mm512_add_ps(acc, p);
        _mm256_storeu_si256((__m256i *)(void *)(h + j), (__m256i)_mm512_cvtneps_pbh(p));
    }
    return 1.0f / _mm512_reduce_add_ps(acc);
}

/* o rows [0, rows) (rows <= 12, stride ldo), columns [e0, e0 + 16 NV) of hd = (p rows (pairs,
 * row stride npad u32) . vp) times inv[i]. */
SWIN_AVX512BF16_INLINE void pv_tile(float *o, int ldo, const uint32_t *p, int npad, int rows, int n, int hd,
                                    const uint32_t *vp, int hd16, int e0, const float *inv, const int NV)
{
    const uint32_t *pr[BLOCK];
    for (int i = 0; i < BLOCK; i++) pr[i] = p + (size_t)(i < rows ? i : 0) * npad;
    __m512 acc[BLOCK][2];
    for (int i = 0; i < BLOCK; i++)
        for (int j = 0; j < NV; j++) acc[i][j] = _mm512_setzero_ps();
    const int pairs = (n + 1) / 2;
    for (int u = 0; u < pairs; u++) {
        const uint32_t *vr = vp + (size_t)u * hd16 + e0;
        __m512bh w[2];
        for (int j = 0; j < NV; j++) w[j] = (__m512bh)_mm512_loadu_si512(vr + 16 * j);
        for (int i = 0; i < BLOCK; i++) {
            const __m512bh b = (__m512bh)_mm512_set1_epi32((int)pr[i][u]);
            for (int j = 0; j < NV; j++) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], b, w[j]);
        }
    }
    for (int i = 0; i < BLOCK; i++) {
        if (i >= rows) continue;
        float *row = o + (size_t)i * ldo + e0;
        const __m512 s = _mm512_set1_ps(inv[i]);
        for (int j = 0; j < NV; j++)
            swin_store16(row + 16 * j, first_lanes(hd - e0 - 16 * j), _mm512_mul_ps(acc[i][j], s));
    }
}

SWIN_AVX512BF16 void swin_cpu_attn_head_avx512bf16(float *o, int ldo, const float *q, const float *k, const float *v,
                                                   int ld, int n, int hd, const float *bias, const int *label,
                                                   const int *label_all, float *kt, float *vt, float *sblk)
{
    const int npad = swin_cpu_attn_npad(n), hd16 = (hd + 15) / 16 * 16, hp = (hd + 1) / 2;
    uint32_t *kp = (uint32_t *)(void *)kt, *qp = kp + (size_t)(hd16 / 2) * npad, *vp = (uint32_t *)(void *)vt;
    pack_head(kp, qp, vp, q, k, v, ld, n, npad, hd, hd16);
    for (int i0 = 0; i0 < n; i0 += BLOCK) {
        const int rows = n - i0 < BLOCK ? n - i0 : BLOCK;
        for (int g = 0; g < rows; g += 6) qk_rows6(sblk + (size_t)g * npad, qp, hp, i0 + g, n, kp, npad);
        float inv[BLOCK];
        for (int i = 0; i < rows; i++) {
            float *r = sblk + (size_t)i * npad;
            const float mx = swin_softmax_bias_max(r, bias + (size_t)(i0 + i) * n, label, label_all[i0 + i], n);
            inv[i] = exp_row_bf16(r, mx, n, npad);
        }
        const uint32_t *p = (const uint32_t *)(const void *)sblk;
        int e0 = 0;
        for (; hd16 - e0 >= 32; e0 += 32) pv_tile(o + (size_t)i0 * ldo, ldo, p, npad, rows, n, hd, vp, hd16, e0, inv, 2);
        if (e0 < hd16) pv_tile(o + (size_t)i0 * ldo, ldo, p, npad, rows, n, hd, vp, hd16, e0, inv, 1);
    }
}
