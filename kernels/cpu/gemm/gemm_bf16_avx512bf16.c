/* The bfloat16 weight GEMM with AVX512_BF16 (gemm_bf16.h; compiled for that level only, the
 * dispatcher checks the CPU first):
 *   C (m x n, ldc) = [C +] round_bf16(A) (m x k, lda, float32) . W (k x n, ldw, bfloat16)
 * with vdpbf16ps, which multiplies pairs of bfloat16 along k and adds both products to a
 * float32 lane: each instruction takes 16 columns x 2 k of W against one pair of A broadcast.
 * k runs in blocks of KC rows; per block and panel of 48 columns, the panel of W is
 * interleaved in pairs along k into a buffer on the stack (W[k][j], W[k + 1][j] adjacent; a
 * last odd row and the columns past n paired with zeros), then per tile of 8 rows (4 for a
 * last group of 4 or fewer) the tile's A is rounded to bfloat16 into a second buffer (pairs
 * along k come out adjacent as A is row-major) and 8 x 3 zmm accumulators run over the pairs.
 * The first block's sum gets the bias, then C (with accumulate) at the store; each later
 * block's is added to C.
 * Products of two bfloat16 are exact in float32; the sums are float32 in pair order, each
 * pair's two products added together first: the same numbers as the other levels' bfloat16
 * GEMMs up to float32 summation order. vcvtne2ps2bf16 rounds to nearest even, as
 * swin_bf16_from_f32 does (float32 subnormals, below 1.2e-38, become zero). */
#include "kernels/cpu/gemm/gemm_bf16.h"

#include <string.h>

#include "kernels/cpu/isa.h"

#define KC 256 /* even */
#define PW 48
/* From this many rows on, A is prefetched a tile ahead. */
#define STREAM_ROWS 512

/* W[k0 .. k0 + kc)[j0 .. j0 + cols) as kp = ceil(kc / 2) rows of PW pairs: wp[(p * PW + j) * 2 + i] =
 * W[k0 + 2p + i][j0 + j], zero past kc rows or cols columns. */
SWIN_AVX512BF16_INLINE void pack_w(uint16_t *wp, const swin_bf16 *w, int ldw, int kc, int cols)
{
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int p = 0; 2 * p < kc; p++) {
        const swin_bf16 *r0 = w + (size_t)(2 * p) * ldw, *r1 = r0 + ldw;
        const bool odd = 2 * p + 1 >= kc;
        for (int j = 0; j < PW; j += 16) {
            const __mmask16 mk = (__mmask16)(cols - j >= 16 ? 0xffffu : cols - j <= 0 ? 0u : (1u << (cols - j)) - 1u);
            const __m256i a = _mm256_maskz_loadu_epi16(mk, r0 + j);
            const __m256i b = odd ? _mm256_setzero_si256() : _mm256_maskz_loadu_epi16(mk, r1 + j);
            const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
            _mm512_storeu_si512(wp + ((size_t)p * PW + j) * 2, _mm512_permutexvar_epi16(idx, x));
        }
    }
}

/* Rows [0, rows) of A (stride lda), columns [0, kc), rounded into ap (R rows of 2 kp
 * bfloat16, the odd column's partner 0); rows past `rows` repeat the last real one. */
SWIN_AVX512BF16_INLINE void pack_a(uint16_t *ap, int kp, const float *a, int lda, int rows, int kc, const int R)
{
    for (int r = 0; r < R; r++) {
        const float *src = a + (size_t)(r < rows ? r : rows - 1) * lda;
        uint16_t *dst = ap + (size_t)r * 2 * kp;
        for (int k = 0; k < 2 * kp; k += 32) {
            const int n0 = kc - k, n1 = kc - k - 16;
            const __mmask16 m0 = (__mmask16)(n0 >= 16 ? 0xffffu : n0 <= 0 ? 0u : (1u << n0) - 1u);
            const __mmask16 m1 = (__mmask16)(n1 >= 16 ? 0xffffu : n1 <= 0 ? 0u : (1u << n1) - 1u);
            const __m512 lo = _mm512_maskz_loadu_ps(m0, src + k), hi = _mm512_maskz_loadu_ps(m1, src + k + 16);
            const __m512bh h = _mm512_cvtne2ps_pbh(hi, lo);
            const int left = 2 * kp - k;
            const __mmask32 st = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
            _mm512_mask_storeu_epi16(dst + k, st, (__m512i)h);
        }
    }
}

/* Rows [0, rows) of the R x 16NV tile at c, columns [0, cols): kp pairs of ap against wp. */
SWIN_AVX512BF16_INLINE void tile(const uint16_t *ap, int kp, const uint16_t *wp, int rows, const float *bias, float *c,
                                 int ldc, int cols, bool add_c, const int R, const int NV)
{
    __m512 acc[8][3];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) acc[r][j] = _mm512_setzero_ps();
    const uint32_t *a32 = (const uint32_t *)(const void *)ap;
    for (int p = 0; p < kp; p++) {
        __m512bh wv[3];
        for (int j = 0; j < NV; j++) wv[j] = (__m512bh)_mm512_loadu_si512(wp + ((size_t)p * PW + 16 * j) * 2);
        for (int r = 0; r < R; r++) {
            const __m512bh x = (__m512bh)_mm512_set1_epi32((int)a32[(size_t)r * kp + p]);
            for (int j = 0; j < NV; j++) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], x, wv[j]);
        }
    }
    const int tail = cols - 16 * (NV - 1);
    const __mmask16 last = (__mmask16)(tail >= 16 ? 0xffffu : (1u << tail) - 1u);
    /* constant trip counts, unrolled: acc is indexed by constants and stays in registers */
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
        if (r >= rows) continue;
        float *row = c + (size_t)r * ldc;
        _Pragma("GCC unroll 3") for (int j = 0; j < NV; j++) {
            const __mmask16 mk = j == NV - 1 ? last : (__mmask16)0xffffu;
            __m512 y = acc[r][j];
            if (bias) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mk, bias + 16 * j));
            if (add_c) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mk, row + 16 * j));
            swin_store16(row + 16 * j, mk, y);
        }
    }
}

/* Every row of one panel (cols <= PW columns) for one block of k. */
SWIN_AVX512BF16_INLINE void panel(int m, int cols, int kc, const float *a, int lda, const uint16_t *wp,
                                  const float *bias, bool add_c, float *c, int ldc, const int NV)
{
    const int kp = (kc + 1) / 2;
    _Alignas(64) uint16_t ap[8 * KC];
    int i = 0;
    for (; m - i > 4; i += 8) {
        const int rows = m - i < 8 ? m - i : 8;
        pack_a(ap, kp, a + (size_t)i * lda, lda, rows, kc, 8);
        /* A streamed from memory (a long m: a conv's voxels): the next tile's rows, into L2
         * while this one multiplies (as gemm_f32_avx512.c) */
        for (int r = 8; r < 16 && m >= STREAM_ROWS && i + r < m; r++)
            for (int k = 0; k < kc; k += 16) _mm_prefetch((const char *)(a + (size_t)(i + r) * lda + k), _MM_HINT_T1);
        tile(ap, kp, wp, rows, bias, c + (size_t)i * ldc, ldc, cols, add_c, 8, NV);
    }
    if (i < m) {
        pack_a(ap, kp, a + (size_t)i * lda, lda, m - i, kc, 4);
        tile(ap, kp, wp, m - i, bias, c + (size_t)i * ldc, ldc, cols, add_c, 4, NV);
    }
}

SWIN_AVX512BF16 void swin_cpu_gemm_bf16_avx512bf16(int m, int n, int k, const float *a, int lda, const swin_bf16 *w,
                                                   int ldw, const float *bias, bool accumulate, float *c, int ldc)
{
    _Alignas(64) uint16_t wp[KC / 2 * PW * 2];
    for (int k0 = 0; k0 == 0 || k0 < k; k0 += KC) { /* k = 0: one pass that stores C, bias or 0 */
        const int kc = k - k0 < KC ? k - k0 : KC;
        const bool add_c = accumulate || k0 > 0;
        for (int j = 0; j < n; j += PW) {
            const int cols = n - j < PW ? n - j : PW;
            pack_w(wp, w + (size_t)k0 * ldw + j, ldw, kc, cols);
            const float *ak = a + k0, *bj = bias && k0 == 0 ? bias + j : NULL;
            if (cols > 32) panel(m, cols, kc, ak, lda, wp, bj, add_c, c + j, ldc, 3);
            else if (cols > 16) panel(m, cols, kc, ak, lda, wp, bj, add_c, c + j, ldc, 2);
            else panel(m, cols, kc, ak, lda, wp, bj, add_c, c + j, ldc, 1);
        }
    }
}
