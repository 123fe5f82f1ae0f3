/* The float32 weight GEMM with AVX2 + FMA (gemm_f32.h; compiled for avx2,fma only):
 *   C (m x n, ldc) = [C +] A (m x k, lda) . W (k x n, ldw)
 * Nothing is packed: the weight GEMMs of the model have k of 1 to a few hundred, where
 * packing A and W and zeroing C (OpenBLAS's route) cost as much as the products; k runs in
 * blocks of KC rows; the first block's sum gets the bias, then C (with accumulate) at the
 * store, each later block's is added to C. Per block, columns outermost (a 24-column panel of
 * KC rows, 24 KiB, stays in L1 while every row of A passes), or, where the block of W is small,
 * spans more than one tile and the block of A is large (a 1x1 conv's input rows, streaming
 * from memory), rows outermost: each group of 4 rows meets every column tile while it is in
 * L1, so A is read from memory once, not once per tile. Either order computes each element of
 * C with the same operations.
 * Columns in tiles of 24 (3 ymm, MR = 4 rows: 12 accumulators) or, for a last tile of 16
 * or fewer, 16 (2 ymm, 6 rows: 12 accumulators again, so that the two FMA pipes never
 * wait on their 4-cycle latency; 4 rows where the tile is partial) or 8 (6 rows). Per k:
 * the tile's W row (from L1 or L2: W is swept tile by tile, each tile's k x 24 panel used
 * by every row of A before the next), then per row one broadcast of A and its FMAs. k is summed in order in one set of registers; with
 * accumulate the sums are added to C once, at the store. Rows past m read the last real
 * row and are not stored; columns past n read W through masked loads and are stored
 * through a stack copy (AMD CPUs run masked stores far slower). */
#include "kernels/cpu/gemm/gemm_f32.h"

#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/isa.h"

#define KC 256
/* The rows-first order: at most this many bytes of a k block of W, kept in L1 (3/4 of a 32 KiB
 * L1d), and more than this many of the block of A, which then comes from beyond L2; on blocks
 * of A that stay near the core columns first is faster (bench/results/gemm_f32_cpu.md). */
#define ROWS_FIRST_W_BYTES (24 * 1024)
#define ROWS_FIRST_A_BYTES (128 * 1024)


/* tile_MRxNV: rows [0, rows) of the MR x 8NV tile at c (stride ldc), its columns [0, cols)
 * (cols > 8 (NV - 1)). One function per shape, its accumulator array of exactly MR x NV:
 * a larger one, partly used, made gcc keep it on the stack. */
#define GEMM_TILE(MR, NV)                                                                                       \
    SWIN_AVX2_INLINE void tile_##MR##x##NV(const float *a, int lda, int rows, const float *w, int ldw, int k,        \
                                           const float *bias, float *c, int ldc, int cols, bool accumulate)     \
    {                                                                                                           \
        __m256 acc[MR][NV];                                                                                     \
        for (int r = 0; r < MR; r++)                                                                            \
            for (int j = 0; j < NV; j++) acc[r][j] = _mm256_setzero_ps();                                       \
        const float *ar[MR];                                                                                    \
        for (int r = 0; r < MR; r++) ar[r] = a + (size_t)(r < rows ? r : rows - 1) * lda;                       \
        const bool full = cols == 8 * NV;                                                                       \
        const __m256i last = swin_cpu_lanes(cols - 8 * (NV - 1));                                               \
        for (int kk = 0; kk < k; kk++, w += ldw) {                                                              \
            __m256 wv[NV];                                                                                      \
            for (int j = 0; j < NV - 1; j++) wv[j] = _mm256_loadu_ps(w + 8 * j);                               \
            wv[NV - 1] = full ? _mm256_loadu_ps(w + 8 * (NV - 1)) : _mm256_maskload_ps(w + 8 * (NV - 1), last); \
            for (int r = 0; r < MR; r++) {                                                                      \
                const __m256 x = _mm256_broadcast_ss(ar[r] + kk);                                               \
                for (int j = 0; j < NV; j++) acc[r][j] = _mm256_fmadd_ps(x, wv[j], acc[r][j]);                  \
            }                                                                                                   \
        }                                                                                                       \
        /* constant trip counts, unrolled: acc is indexed by constants and stays in registers */ \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                                 \
            if (r >= rows) continue;                                                                            \
            float *row = c + (size_t)r * ldc;                                                                   \
            if (full) {                                                                                         \
                for (int j = 0; j < NV; j++) {                                                                  \
                    __m256 y = bias ? _mm256_add_ps(acc[r][j], _mm256_loadu_ps(bias + 8 * j)) : acc[r][j];      \
                    if (accumulate) y = _mm256_add_ps(y, _mm256_loadu_ps(row + 8 * j));                         \
                    _mm256_storeu_ps(row + 8 * j, y);                                                           \
                }                                                                                               \
                continue;                                                                                       \
            }                                                                                                   \
            float tmp[8 * NV];                                                                                  \
            for (int j = 0; j < NV; j++) _mm256_storeu_ps(tmp + 8 * j, acc[r][j]);                              \
            for (int i = 0; i < cols; i++) {                                                                    \
                const float y = bias ? tmp[i] + bias[i] : tmp[i];                                               \
                row[i] = accumulate ? y + row[i] : y;                                                           \
            }                                                                                                   \
        }                                                                                                       \
    }

GEMM_TILE(4, 3)
GEMM_TILE(6, 2)
GEMM_TILE(4, 2)
GEMM_TILE(6, 1)
GEMM_TILE(4, 1)

/* Every row for one block of k, columns first: columns in 24-wide tiles, the last 16 or fewer
 * 8 or 16 wide. */
SWIN_AVX2_INLINE void block_columns_first(int m, int n, int k, const float *a, int lda, const float *w, int ldw,
                                          const float *bias, bool add_c, float *c, int ldc)
{
    int j = 0;
    for (; n - j > 16; j += 24) {
        const int cols = n - j < 24 ? n - j : 24;
        for (int i = 0; i < m; i += 4)
            tile_4x3(a + (size_t)i * lda, lda, m - i < 4 ? m - i : 4, w + j, ldw, k, bias ? bias + j : NULL,
                     c + (size_t)i * ldc + j, ldc, cols, add_c);
    }
    if (j >= n) return;
    /* the last 16 or fewer columns; a partial 16 takes 4 rows, its mask needing the 16th
     * register */
    const int cols = n - j, mr = cols == 16 ? 6 : cols > 8 ? 4 : 6;
    const float *bj = bias ? bias + j : NULL;
    for (int i = 0; i < m; i += mr) {
        const int rows = m - i < mr ? m - i : mr;
        const float *ai = a + (size_t)i * lda;
        float *ci = c + (size_t)i * ldc + j;
        if (cols == 16) tile_6x2(ai, lda, rows, w + j, ldw, k, bj, ci, ldc, cols, add_c);
        else if (cols > 8) tile_4x2(ai, lda, rows, w + j, ldw, k, bj, ci, ldc, cols, add_c);
        else tile_6x1(ai, lda, rows, w + j, ldw, k, bj, ci, ldc, cols, add_c);
    }
}

/* Every row for one block of k, rows first: per group of 4 rows, the 24-wide tiles, then the
 * last 16 or fewer columns 8 or 16 wide. */
SWIN_AVX2_INLINE void block_rows_first(int m, int n, int k, const float *a, int lda, const float *w, int ldw,
                                       const float *bias, bool add_c, float *c, int ldc)
{
    for (int i = 0; i < m; i += 4) {
        const int rows = m - i < 4 ? m - i : 4;
        const float *ai = a + (size_t)i * lda;
        float *ci = c + (size_t)i * ldc;
        int j = 0;
        for (; n - j > 16; j += 24)
            tile_4x3(ai, lda, rows, w + j, ldw, k, bias ? bias + j : NULL, ci + j, ldc, n - j < 24 ? n - j : 24, add_c);
        if (j >= n) continue;
        const int cols = n - j;
        if (cols > 8) tile_4x2(ai, lda, rows, w + j, ldw, k, bias ? bias + j : NULL, ci + j, ldc, cols, add_c);
        else tile_4x1(ai, lda, rows, w + j, ldw, k, bias ? bias + j : NULL, ci + j, ldc, cols, add_c);
    }
}

SWIN_AVX2 void swin_cpu_sgemm_avx2(int m, int n, int k, const float *a, int lda, const float *w, int ldw,
                                   const float *bias, bool accumulate, float *c, int ldc)
{
    for (int k0 = 0; k0 == 0 || k0 < k; k0 += KC) { /* k = 0: one pass that stores C, bias or 0 */
        const int kc = k - k0 < KC ? k - k0 : KC;
        const float *wk = w + (size_t)k0 * ldw, *bk = k0 == 0 ? bias : NULL;
        const bool add_c = accumulate || k0 > 0;
        if (n > 24 && (size_t)kc * n * sizeof(float) <= ROWS_FIRST_W_BYTES &&
            (size_t)m * kc * sizeof(float) > ROWS_FIRST_A_BYTES)
            block_rows_first(m, n, kc, a + k0, lda, wk, ldw, bk, add_c, c, ldc);
        else block_columns_first(m, n, kc, a + k0, lda, wk, ldw, bk, add_c, c, ldc);
    }
}
