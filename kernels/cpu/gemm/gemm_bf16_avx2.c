/* The bfloat16 weight GEMM with AVX2 + FMA (this file is compiled for avx2,fma only; the
 * dispatcher checks the CPU first). CPUs without bfloat16 dot-product instructions get the
 * same numerics by widening: a bfloat16 is the upper half of a float32, so a 16-bit shift
 * makes it one, and the product of two bfloat16 values is exact in float32.
 *
 *   C (m x n) = [C +] round_bf16(A) (m x k) . W (k x n, bfloat16)
 * Blocking: k in panels of KC; per panel, MR = 4 rows of A are rounded once into a stack
 * buffer (4 x KC floats), then swept across n in tiles of NR = 24 columns (3 ymm), 12
 * accumulators loaded from C (or zero on the first panel without accumulate) and stored
 * back, so k is summed in order. The last tile's columns are masked, and its W row is
 * read through a zero-padded copy (no 16-bit masked load in AVX2). */
#include "kernels/cpu/gemm/gemm_bf16.h"

#include <immintrin.h>
#include <string.h>

#include "kernels/cpu/isa.h"

#define MR 4
#define NR 24
#define KC 256

/* dst[0..n) = round_bf16(src[0..n)) as float32: nearest even, NaN kept a NaN. */
SWIN_AVX2
static void round_row(float *dst, const float *src, int n)
{
    const __m256i keep_hi = _mm256_set1_epi32((int)0xffff0000u), bias = _mm256_set1_epi32(0x7fff),
                  one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x00400000);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(src + i);
        const __m256i u = _mm256_castps_si256(x);
        const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
        const __m256i r = _mm256_and_si256(_mm256_add_epi32(u, _mm256_add_epi32(bias, odd)), keep_hi);
        const __m256i nan = _mm256_and_si256(_mm256_or_si256(u, quiet), keep_hi);
        const __m256 isnan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
        _mm256_storeu_ps(dst + i, _mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan), isnan));
    }
    for (; i < n; i++) dst[i] = swin_bf16_round(src[i]);
}

/* 8 bfloat16 -> 8 float32. */
SWIN_AVX2_INLINE __m256 widen(__m128i h)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

SWIN_AVX2_INLINE __m128i load8(const swin_bf16 *p) { return _mm_loadu_si128((const __m128i *)(const void *)p); }

/* The first nl (1..8) bfloat16 at p, zero-padded. */
SWIN_AVX2_INLINE __m128i load_part(const swin_bf16 *p, int nl)
{
    swin_bf16 tmp[8] = {0};
    memcpy(tmp, p, (size_t)nl * sizeof *tmp);
    return load8(tmp);
}

#define ACC_LOAD(i)                                                                        \
    __m256 acc##i##0 = z8, acc##i##1 = z8, acc##i##2 = z8;                                 \
    if (load && (i) < mr) {                                                                \
        const float *ci = c + (size_t)(i) * ldc;                                           \
        acc##i##0 = NV == 1 ? _mm256_maskload_ps(ci, last) : _mm256_loadu_ps(ci);          \
        if (NV > 1) acc##i##1 = NV == 2 ? _mm256_maskload_ps(ci + 8, last) : _mm256_loadu_ps(ci + 8); \
        if (NV > 2) acc##i##2 = _mm256_maskload_ps(ci + 16, last);                         \
    }
#define ACC_STEP(i)                                                                        \
    {                                                                                      \
        const __m256 av = _mm256_broadcast_ss(ap + (i) * KC + p);                          \
        acc##i##0 = _mm256_fmadd_ps(av, w0, acc##i##0);                                    \
        if (NV > 1) acc##i##1 = _mm256_fmadd_ps(av, w1, acc##i##1);                        \
        if (NV > 2) acc##i##2 = _mm256_fmadd_ps(av, w2, acc##i##2);                        \
    }
#define ACC_STORE(i)                                                                       \
    if ((i) < mr) {                                                                        \
        float *ci = c + (size_t)(i) * ldc;                                                 \
        if (NV == 1) _mm256_maskstore_ps(ci, last, acc##i##0);                             \
        else _mm256_storeu_ps(ci, acc##i##0);                                              \
        if (NV == 2) _mm256_maskstore_ps(ci + 8, last, acc##i##1);                         \
        else if (NV > 2) _mm256_storeu_ps(ci + 8, acc##i##1);                              \
        if (NV > 2) _mm256_maskstore_ps(ci + 16, last, acc##i##2);                         \
    }

/* One tile: rows [0, mr) of c, columns [0, nc) (NV = ceil(nc / 8) vectors), over the kc
 * rows of the panel: ap (MR x KC, rounded A), w (kc x ldw bfloat16). */
SWIN_AVX2_INLINE void tile_nv(const float *ap, const swin_bf16 *w, int ldw, int kc, int mr, int nc, bool load, float *c,
                           int ldc, const int NV)
{
    const int nl = nc - 8 * (NV - 1);   /* columns of the last vector, 1..8 */
    const __m256i last = swin_cpu_lanes(nl);
    const __m256 z8 = _mm256_setzero_ps();
    ACC_LOAD(0) ACC_LOAD(1) ACC_LOAD(2) ACC_LOAD(3)
    if (nl == 8) {
        for (int p = 0; p < kc; p++, w += ldw) {
            const __m256 w0 = widen(load8(w));
            const __m256 w1 = NV > 1 ? widen(load8(w + 8)) : z8;
            const __m256 w2 = NV > 2 ? widen(load8(w + 16)) : z8;
            ACC_STEP(0) ACC_STEP(1) ACC_STEP(2) ACC_STEP(3)
        }
    } else {
        for (int p = 0; p < kc; p++, w += ldw) {
            const __m256 w0 = widen(NV == 1 ? load_part(w, nl) : load8(w));
            const __m256 w1 = NV > 1 ? widen(NV == 2 ? load_part(w + 8, nl) : load8(w + 8)) : z8;
            const __m256 w2 = NV > 2 ? widen(load_part(w + 16, nl)) : z8;
            ACC_STEP(0) ACC_STEP(1) ACC_STEP(2) ACC_STEP(3)
        }
    }
    ACC_STORE(0) ACC_STORE(1) ACC_STORE(2) ACC_STORE(3)
}

SWIN_AVX2
static void tile(const float *ap, const swin_bf16 *w, int ldw, int kc, int mr, int nc, bool load, float *c, int ldc)
{
    if (nc > 16) tile_nv(ap, w, ldw, kc, mr, nc, load, c, ldc, 3);
    else if (nc > 8) tile_nv(ap, w, ldw, kc, mr, nc, load, c, ldc, 2);
    else tile_nv(ap, w, ldw, kc, mr, nc, load, c, ldc, 1);
}

SWIN_AVX2
void swin_cpu_gemm_bf16_avx2(int m, int n, int k, const float *a, int lda, const swin_bf16 *w, int ldw,
                             bool accumulate, float *c, int ldc)
{
    float ap[MR * KC] __attribute__((aligned(32)));
    if (k <= 0 && !accumulate) {
        for (int i = 0; i < m; i++) memset(c + (size_t)i * ldc, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int p0 = 0; p0 < k; p0 += KC) {
        const int kc = k - p0 < KC ? k - p0 : KC;
        const bool load = accumulate || p0 > 0;
        for (int i0 = 0; i0 < m; i0 += MR) {
            const int mr = m - i0 < MR ? m - i0 : MR;
            for (int r = 0; r < MR; r++) {
                if (r < mr) round_row(ap + r * KC, a + (size_t)(i0 + r) * lda + p0, kc);
                else memset(ap + r * KC, 0, (size_t)kc * sizeof(float));
            }
            float *ci = c + (size_t)i0 * ldc;
            for (int j0 = 0; j0 < n; j0 += NR)
                tile(ap, w + (size_t)p0 * ldw + j0, ldw, kc, mr, n - j0 < NR ? n - j0 : NR, load, ci + j0, ldc);
        }
    }
}
