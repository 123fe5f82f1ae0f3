/* The vector vocabulary of the AVX2 level (8 float32 lanes, AVX2 + FMA), for kernels written
 * once for every level (a *_tmpl.h compiled by its *_avx2.c and *_avx512.c): the same names
 * as vec_avx512.h. Include one of the two per translation unit. Masked loads and stores are
 * for the last, partial vector only: AMD CPUs run AVX2's masked moves far slower than plain
 * ones. */
#ifndef SWIN_CPU_VEC_AVX2_H
#define SWIN_CPU_VEC_AVX2_H

#include <stdint.h>

#include "kernels/cpu/isa.h"

#define VW 8                      /* lanes */
#define VALIGN 32                 /* bytes of a vector, and its alignment */
#define V_FN SWIN_AVX2            /* a function of the level */
#define V_INLINE SWIN_AVX2_INLINE /* a static helper that inlines into one */
typedef __m256 vf;
typedef __m256i vmask;

#define v_zero() _mm256_setzero_ps()
#define v_set1(x) _mm256_set1_ps(x)
#define v_load(p) _mm256_load_ps(p)
#define v_loadu(p) _mm256_loadu_ps(p)
#define v_store(p, x) _mm256_store_ps(p, x)
#define v_storeu(p, x) _mm256_storeu_ps(p, x)
#define v_stream(p, x) _mm256_stream_ps(p, x) /* non-temporal; p aligned to VALIGN */
#define v_add(a, b) _mm256_add_ps(a, b)
#define v_sub(a, b) _mm256_sub_ps(a, b)
#define v_mul(a, b) _mm256_mul_ps(a, b)
#define v_max(a, b) _mm256_max_ps(a, b)
#define v_fmadd(a, b, c) _mm256_fmadd_ps(a, b, c)
/* the first n lanes (n >= VW: all) */
#define v_mask(n) swin_cpu_lanes(n)
#define v_maskload(p, m) _mm256_maskload_ps(p, m)
#define v_maskstore(p, m, x) _mm256_maskstore_ps(p, m, x)

/* n <= VW bfloat16 values at p as float32 (the bits moved to the top half: exact); lanes past
 * n are 0. */
V_INLINE vf v_widen_bf16(const uint16_t *p, int n)
{
    uint16_t part[VW] = {0};
    if (n < VW) {
        for (int i = 0; i < n; i++) part[i] = p[i];
        p = part;
    }
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}

#endif
