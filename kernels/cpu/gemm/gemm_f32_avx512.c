/* The float32 weight GEMM with AVX-512 (gemm_f32.h; compiled for it only):
 *   C (m x n, ldc) = [C +] A (m x k, lda) . W (k x n, ldw)
 * Nothing is packed: W is read in place. Register tiles of 8 rows x 48 columns (24 zmm
 * accumulators, 3 W vectors and the broadcast of A), 4 rows for a last group of 4 or fewer;
 * the last columns 32 or 16 wide, a partial vector masked (AVX-512 masks cost nothing extra).
 * k runs in blocks of KC rows so that a tile's panel of W (KC x 48 floats, 24 KiB) stays in L1
 * while every 8 rows of A pass: within a block k is summed in order in registers; the first
 * block's sum gets the bias, then C (with accumulate) at the store, each later block's is
 * added to C. */
#include "kernels/cpu/gemm/gemm_f32.h"

#include "kernels/cpu/isa.h"

#define KC 128
/* From this many rows on, A is prefetched a tile ahead. */
#define STREAM_ROWS 512

/* Rows [0, rows) of the R x 16NV tile at c, columns [0, cols) (cols > 16 (NV - 1)); rows past
 * `rows` read the last real row and are not stored. */
SWIN_AVX512_INLINE void tile(const float *a, int lda, int rows, const float *w, int ldw, int k, const float *bias,
                             float *c, int ldc, int cols, bool add_c, const int R, const int NV)
{
    __m512 acc[8][3];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) acc[r][j] = _mm512_setzero_ps();
    const float *ar[8];
    for (int r = 0; r < R; r++) ar[r] = a + (size_t)(r < rows ? r : rows - 1) * lda;
    const int tail = cols - 16 * (NV - 1);
    const __mmask16 last = (__mmask16)(tail >= 16 ? 0xffffu : (1u << tail) - 1u);
    for (int kk = 0; kk < k; kk++, w += ldw) {
        __m512 wv[3];
        for (int j = 0; j < NV - 1; j++) wv[j] = _mm512_loadu_ps(w + 16 * j);
        wv[NV - 1] = _mm512_maskz_loadu_ps(last, w + 16 * (NV - 1));
        for (int r = 0; r < R; r++) {
            const __m512 x = _mm512_set1_ps(ar[r][kk]);
            for (int j = 0; j < NV; j++) acc[r][j] = _mm512_fmadd_ps(x, wv[j], acc[r][j]);
        }
    }
    /* constant trip counts, unrolled: acc is indexed by constants and stays in registers */
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
        if (r >= rows) continue;
        float *row = c + (size_t)r * ldc;
        _Pragma("GCC unroll 3") for (int j = 0; j < NV; j++) {
            const __mmask16 mk = j == NV - 1 ? last : (__mmask16)0xffffu;
            __m512 y = acc[r][j];
            if (bias) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mk, bias + 16 * j));
            if (add_c) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mk, row + 16 * j));
            _mm512_mask_storeu_ps(row + 16 * j, mk, y);
        }
    }
}

/* Columns [0, cols) (at most 48) of every row, for one block of k. */
SWIN_AVX512_INLINE void panel(int m, int cols, int k, const float *a, int lda, const float *w, int ldw,
                              const float *bias, bool add_c, float *c, int ldc, const int NV)
{
    int i = 0;
    for (; m - i > 4; i += 8) {
        /* A streamed from memory (a long m: a conv's voxels): the next tile's rows, into L2
         * while this one multiplies (the same prefetch into L1 measured slower) */
        for (int r = 8; r < 16 && m >= STREAM_ROWS && i + r < m; r++)
            for (int kk = 0; kk < k; kk += 16) _mm_prefetch((const char *)(a + (size_t)(i + r) * lda + kk), _MM_HINT_T1);
        tile(a + (size_t)i * lda, lda, m - i < 8 ? m - i : 8, w, ldw, k, bias, c + (size_t)i * ldc, ldc, cols, add_c, 8,
             NV);
    }
    if (i < m) tile(a + (size_t)i * lda, lda, m - i, w, ldw, k, bias, c + (size_t)i * ldc, ldc, cols, add_c, 4, NV);
}

SWIN_AVX512 void swin_cpu_sgemm_avx512(int m, int n, int k, const float *a, int lda, const float *w, int ldw,
                                       const float *bias, bool accumulate, float *c, int ldc)
{
    for (int k0 = 0; k0 == 0 || k0 < k; k0 += KC) { /* k = 0: one pass that stores C, bias or 0 */
        const int kc = k - k0 < KC ? k - k0 : KC;
        const bool add_c = accumulate || k0 > 0;
        const float *ak = a + k0, *wk = w + (size_t)k0 * ldw, *b = k0 == 0 ? bias : NULL;
        for (int j = 0; j < n; j += 48) {
            const int cols = n - j < 48 ? n - j : 48;
            const float *bj = b ? b + j : NULL;
            if (cols > 32) panel(m, cols, kc, ak, lda, wk + j, ldw, bj, add_c, c + j, ldc, 3);
            else if (cols > 16) panel(m, cols, kc, ak, lda, wk + j, ldw, bj, add_c, c + j, ldc, 2);
            else panel(m, cols, kc, ak, lda, wk + j, ldw, bj, add_c, c + j, ldc, 1);
        }
    }
}
