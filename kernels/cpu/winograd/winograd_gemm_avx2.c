/* The point GEMM both Winograd tile sizes share at the AVX2 level (AVX2 + FMA; compiled for
 * it only, the backend checks the CPU first): M[tile][p] = V[p][tile] . U[p] for a block of
 * tiles, 4 tiles x 24 channels per register tile. Notation in winograd.h. */
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/cpu/isa.h"

/* M rows [r0, r0 + 4) of one point: C (4 x 8NV) = A (4 x K, lda) . B (K x 8NV, ldb).
 * Per k: NV loads of B, then row by row one broadcast of A and its NV FMAs, so that the
 * 4 x 3 accumulators, 3 B vectors and one broadcast fill the 16 ymm registers. Written with
 * the four broadcasts first, gcc 12 kept them all live and folded the B loads into every
 * FMA: 16 loads per 12 FMAs, load-bound at 2 loads per cycle. */
SWIN_AVX2_INLINE void gemm4(const float *a, int lda, const float *b, int ldb, int K, float *c, int ldc, const int NV)
{
    __m256 acc[4][3];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 3; j++) acc[r][j] = _mm256_setzero_ps();
    const float *ar[4] = {a, a + lda, a + 2 * lda, a + 3 * lda};
    for (int k = 0; k < K; k++, b += ldb) {
        __m256 bv[3];
        for (int j = 0; j < NV; j++) bv[j] = _mm256_loadu_ps(b + 8 * j);
        for (int r = 0; r < 4; r++) {
            const __m256 x = _mm256_broadcast_ss(ar[r] + k);
            for (int j = 0; j < NV; j++) acc[r][j] = _mm256_fmadd_ps(x, bv[j], acc[r][j]);
        }
    }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < NV; j++) _mm256_store_ps(c + (size_t)r * ldc + 8 * j, acc[r][j]);
}

/* M[tile][p][j0, j1) for every tile of a block at point p, U columns [co0 + j0, co0 + j1).
 * M is tile-major so that the output transform reads a tile's points from one contiguous
 * np cob run; point-major, its loads 4 KiB or more apart stalled on L2 and L3 misses the
 * prefetchers did not cover. */
SWIN_AVX2 void swin_cpu_winograd_avx2_gemm_point(const struct wino_task *t, const float *v, float *m, int p, int co0,
                                            int j0, int j1)
{
    const int cin = t->in.c, nt = t->nt, np = t->np;
    const float *vp = v + (size_t)p * t->v_pstride;
    float *mp = m + (size_t)p * t->cob;
    const int lda = (int)t->v_tstride, ldc = np * t->cob;
    for (int j = j0; j < j1; j += t->panel) {
        const float *up = t->u + swin_cpu_wino_u_at(t, p, 0, co0 + j);
        const int ldb = swin_cpu_wino_panel_width(t, co0 + j), nv = ldb / 8;
        for (int r = 0; r < nt; r += 4) {
            const float *a = vp + (size_t)r * t->v_tstride;
            float *c = mp + (size_t)r * ldc + j;
            if (nv == 3) gemm4(a, lda, up, ldb, cin, c, ldc, 3);
            else if (nv == 2) gemm4(a, lda, up, ldb, cin, c, ldc, 2);
            else gemm4(a, lda, up, ldb, cin, c, ldc, 1);
        }
    }
}
