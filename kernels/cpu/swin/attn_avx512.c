/* One head of window attention with AVX-512 (compiled for avx512f only), fused per block of
 * 8 query rows so that the block's logits stay in L1:
 *
 *   once per head: k and v transposed into kt, vt ((hd or hd4), npad), zero padded
 *   per block of 8 query rows i0 .. i0+7:
 *     s (8, n) = q k^T     8 rows x 48 keys per tile: for every e < hd, 8 broadcasts of
 *                          q_i[e] times 3 rows of kt into 24 accumulators
 *     softmax of each row with its bias row and mask (swin_cpu_softmax_row_avx512)
 *     o rows = s v         4 rows x 4 columns per tile: 16 accumulators of 16-lane partial
 *                          dot products over t, reduced across lanes at the end
 * Rows past n repeat a valid row and are not stored; keys past n are masked; columns past hd
 * are computed from zero rows of vt and not stored. fp32 accumulation in an order that
 * differs from OpenBLAS (the portable path): results agree to rounding, not bit for bit. */
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

static inline __mmask16 lanes_upto(int avail)
{
    return avail >= 16 ? (__mmask16)0xFFFF : (avail <= 0 ? (__mmask16)0 : (__mmask16)((1u << avail) - 1u));
}

#define QK_DECL(i) __m512 a##i##0 = z, a##i##1 = z, a##i##2 = z;
#define QK_STEP(i)                                                         \
    {                                                                      \
        const __m512 b = _mm512_set1_ps(q##i[e]);                          \
        a##i##0 = _mm512_fmadd_ps(b, k0, a##i##0);                         \
        a##i##1 = _mm512_fmadd_ps(b, k1, a##i##1);                         \
        a##i##2 = _mm512_fmadd_ps(b, k2, a##i##2);                         \
    }
#define QK_STORE(i)                                                        \
    {                                                                      \
        float *row = s + (size_t)(i) * n + t0;                             \
        _mm512_mask_storeu_ps(row, m0, a##i##0);                           \
        _mm512_mask_storeu_ps(row + 16, m1, a##i##1);                      \
        _mm512_mask_storeu_ps(row + 32, m2, a##i##2);                      \
    }

/* s (8, n): rows i0 .. i0+7 of q k^T (rows past n repeat row i0; s holds 8 rows). */
SWIN_AVX512
static void qk_block(float *s, const float *q, int ld, int i0, int n, int hd, const float *kt, int npad)
{
    const __m512 z = _mm512_setzero_ps();
    const float *qr[8];
    for (int i = 0; i < 8; i++) qr[i] = q + (size_t)(i0 + i < n ? i0 + i : i0) * ld;
    const float *q0 = qr[0], *q1 = qr[1], *q2 = qr[2], *q3 = qr[3], *q4 = qr[4], *q5 = qr[5], *q6 = qr[6],
                *q7 = qr[7];
    for (int t0 = 0; t0 < n; t0 += 48) {
        const __mmask16 m0 = lanes_upto(n - t0), m1 = lanes_upto(n - t0 - 16), m2 = lanes_upto(n - t0 - 32);
        QK_DECL(0) QK_DECL(1) QK_DECL(2) QK_DECL(3) QK_DECL(4) QK_DECL(5) QK_DECL(6) QK_DECL(7)
        for (int e = 0; e < hd; e++) {
            const float *kr = kt + (size_t)e * npad + t0;
            const __m512 k0 = _mm512_maskz_loadu_ps(m0, kr), k1 = _mm512_maskz_loadu_ps(m1, kr + 16),
                         k2 = _mm512_maskz_loadu_ps(m2, kr + 32);
            QK_STEP(0) QK_STEP(1) QK_STEP(2) QK_STEP(3) QK_STEP(4) QK_STEP(5) QK_STEP(6) QK_STEP(7)
        }
        QK_STORE(0) QK_STORE(1) QK_STORE(2) QK_STORE(3) QK_STORE(4) QK_STORE(5) QK_STORE(6) QK_STORE(7)
    }
}

#define PV_DECL(i) __m512 c##i##0 = z, c##i##1 = z, c##i##2 = z, c##i##3 = z;
#define PV_STEP(i)                                                         \
    {                                                                      \
        const __m512 a = _mm512_maskz_loadu_ps(m, p##i + t);               \
        c##i##0 = _mm512_fmadd_ps(a, w0, c##i##0);                         \
        c##i##1 = _mm512_fmadd_ps(a, w1, c##i##1);                         \
        c##i##2 = _mm512_fmadd_ps(a, w2, c##i##2);                         \
        c##i##3 = _mm512_fmadd_ps(a, w3, c##i##3);                         \
    }
#define PV_STORE(i)                                                                       \
    if (i < rows) {                                                                       \
        float *row = o + (size_t)(i) * ldo + e0;                                          \
        const float r[4] = {_mm512_reduce_add_ps(c##i##0), _mm512_reduce_add_ps(c##i##1), \
                            _mm512_reduce_add_ps(c##i##2), _mm512_reduce_add_ps(c##i##3)}; \
        for (int j = 0; j < 4 && e0 + j < hd; j++) row[j] = r[j];                         \
    }

/* o rows [0, rows) (rows <= 4, stride ldo) = p rows (stride n) . v, v given as vt. */
SWIN_AVX512
static void pv_tile(float *o, int ldo, const float *p, int rows, int n, int hd, const float *vt, int npad)
{
    const __m512 z = _mm512_setzero_ps();
    const float *p0 = p, *p1 = rows > 1 ? p + n : p, *p2 = rows > 2 ? p + 2 * (size_t)n : p,
                *p3 = rows > 3 ? p + 3 * (size_t)n : p;
    for (int e0 = 0; e0 < hd; e0 += 4) {
        const float *v0 = vt + (size_t)e0 * npad, *v1 = v0 + npad, *v2 = v1 + npad, *v3 = v2 + npad;
        PV_DECL(0) PV_DECL(1) PV_DECL(2) PV_DECL(3)
        for (int t = 0; t < n; t += 16) {
            const __mmask16 m = lanes_upto(n - t);
            const __m512 w0 = _mm512_loadu_ps(v0 + t), w1 = _mm512_loadu_ps(v1 + t), w2 = _mm512_loadu_ps(v2 + t),
                         w3 = _mm512_loadu_ps(v3 + t);
            PV_STEP(0) PV_STEP(1) PV_STEP(2) PV_STEP(3)
        }
        PV_STORE(0) PV_STORE(1) PV_STORE(2) PV_STORE(3)
    }
}

SWIN_AVX512
void swin_cpu_attn_head_avx512(float *o, int ldo, const float *q, const float *k, const float *v, int ld, int n,
                               int hd, const float *bias, const int *label, const int *label_all, float *kt,
                               float *vt, float *sblk)
{
    const int npad = swin_cpu_attn_npad(n), hd4 = (hd + 3) / 4 * 4;
    swin_cpu_attn_transpose_pad(kt, hd, npad, k, ld, n, hd);
    swin_cpu_attn_transpose_pad(vt, hd4, npad, v, ld, n, hd);
    for (int i0 = 0; i0 < n; i0 += 8) {
        const int rows = n - i0 < 8 ? n - i0 : 8;
        qk_block(sblk, q, ld, i0, n, hd, kt, npad);
        for (int i = 0; i < rows; i++)
            swin_cpu_softmax_row_avx512(sblk + (size_t)i * n, bias + (size_t)(i0 + i) * n, label, label_all[i0 + i], n);
        pv_tile(o + (size_t)i0 * ldo, ldo, sblk, rows < 4 ? rows : 4, n, hd, vt, npad);
        if (rows > 4) pv_tile(o + (size_t)(i0 + 4) * ldo, ldo, sblk + 4 * (size_t)n, rows - 4, n, hd, vt, npad);
    }
}
