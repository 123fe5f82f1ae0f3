/* The vector vocabulary of the AVX-512 level (16 float32 lanes; AVX-512 F, BW, DQ, VL), for
 * kernels written once for every level: the same names as vec_avx2.h. Include one of the two
 * per translation unit. */
#ifndef SWIN_CPU_VEC_AVX512_H
#define SWIN_CPU_VEC_AVX512_H

#include <stdint.h>

#include "kernels/cpu/isa.h"

#define VW 16
#define VALIGN 64
#define V_FN SWIN_AVX512
#define V_INLINE SWIN_AVX512_INLINE
typedef __m512 vf;
typedef __mmask16 vmask;

#define v_zero() _mm512_setzero_ps()
#define v_set1(x) _mm512_set1_ps(x)
#define v_load(p) _mm512_load_ps(p)
#define v_loadu(p) _mm512_loadu_ps(p)
#define v_store(p, x) _mm512_store_ps(p, x)
#define v_storeu(p, x) _mm512_storeu_ps(p, x)
#define v_stream(p, x) _mm512_stream_ps(p, x) /* non-temporal; p aligned to VALIGN */
#define v_add(a, b) _mm512_add_ps(a, b)
#define v_sub(a, b) _mm512_sub_ps(a, b)
#define v_mul(a, b) _mm512_mul_ps(a, b)
#define v_max(a, b) _mm512_max_ps(a, b)
#define v_fmadd(a, b, c) _mm512_fmadd_ps(a, b, c)
#define v_mask(n) ((__mmask16)((n) >= 16 ? 0xffffu : (n) <= 0 ? 0u : (1u << (n)) - 1u))
#define v_maskload(p, m) _mm512_maskz_loadu_ps(m, p)
#define v_maskstore(p, m, x) _mm512_mask_storeu_ps(p, m, x)

V_INLINE vf v_widen_bf16(const uint16_t *p, int n)
{
    const __m256i h = _mm256_maskz_loadu_epi16(v_mask(n), p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

#endif
