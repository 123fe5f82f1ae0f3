/* The point GEMM both Winograd tile sizes share at the AVX-512 level (compiled for it only;
 * the backend checks the CPU first): M[tile][p] = V[p][tile] . U[p] for a block of tiles,
 * 8 tiles x 48 channels per register tile (24 zmm accumulators, 3 U vectors and the
 * broadcast of V), 4 tiles for a last partial group of rows. Notation in winograd.h. */
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/cpu/isa.h"

/* C (R x 16NV) = A (R x K, lda) . B (K x 16NV, ldb), C aligned. Per k: NV loads of B, then
 * row by row one broadcast of A and its NV FMAs. */
SWIN_AVX512_INLINE void gemm_rows(const float *a, int lda, const float *b, int ldb, int K, float *c, int ldc,
                                  const int R, const int NV)
{
    __m512 acc[8][3];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) acc[r][j] = _mm512_setzero_ps();
    const float *ar[8];
    for (int r = 0; r < R; r++) ar[r] = a + (size_t)r * lda;
    for (int k = 0; k < K; k++, b += ldb) {
        __m512 bv[3];
        for (int j = 0; j < NV; j++) bv[j] = _mm512_loadu_ps(b + 16 * j);
        for (int r = 0; r < R; r++) {
            const __m512 x = _mm512_set1_ps(ar[r][k]);
            for (int j = 0; j < NV; j++) acc[r][j] = _mm512_fmadd_ps(x, bv[j], acc[r][j]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) _mm512_store_ps(c + (size_t)r * ldc + 16 * j, acc[r][j]);
}

/* One panel (nv vectors wide) for rows [0, nt), 8 at a time, then 4. */
SWIN_AVX512_INLINE void panel_rows(const float *a, int lda, const float *b, int ldb, int K, float *c, int ldc, int nt,
                                   const int NV)
{
    int r = 0;
    for (; r + 8 <= nt; r += 8) gemm_rows(a + (size_t)r * lda, lda, b, ldb, K, c + (size_t)r * ldc, ldc, 8, NV);
    for (; r < nt; r += 4) gemm_rows(a + (size_t)r * lda, lda, b, ldb, K, c + (size_t)r * ldc, ldc, 4, NV);
}

SWIN_AVX512 void swin_cpu_winograd_avx512_gemm_point(const struct wino_task *t, const float *v, float *m, int p,
                                                     int co0, int j0, int j1)
{
    const int cin = t->in.c, nt = t->nt, np = t->np;
    const float *vp = v + (size_t)p * t->v_pstride;
    float *mp = m + (size_t)p * t->cob;
    const int lda = (int)t->v_tstride, ldc = np * t->cob;
    for (int j = j0; j < j1; j += t->panel) {
        const float *up = t->u + swin_cpu_wino_u_at(t, p, 0, co0 + j);
        const int ldb = swin_cpu_wino_panel_width(t, co0 + j), nv = ldb / 16;
        float *c = mp + j;
        if (nv == 3) panel_rows(vp, lda, up, ldb, cin, c, ldc, nt, 3);
        else if (nv == 2) panel_rows(vp, lda, up, ldb, cin, c, ldc, nt, 2);
        else panel_rows(vp, lda, up, ldb, cin, c, ldc, nt, 1);
    }
}
