/* The instruction sets of the CPU kernels, and the attributes that compile a function for one.
 *
 * The library is built for baseline x86-64. A kernel file named for its level (*_avx2.c,
 * *_avx512.c, *_avx512bf16.c) marks each of its functions with that level's attribute,
 * and the backend calls it only at a level the CPU has (cpuid at creation; enum
 * swin_cpu_simd in cpu_backend.h says what each level runs):
 *   SWIN_AVX2    AVX2 + FMA (Haswell, Zen 1 and later)
 *   SWIN_AVX512  AVX-512 F, BW, DQ and VL, with AVX2 + FMA (x86-64-v4: Skylake-SP, Zen 4 and later)
 *   SWIN_AVX512BF16  the above + AVX512_BF16 (vdpbf16ps: Cooper Lake, Sapphire Rapids, Zen 4 and later)
 * SWIN_*_INLINE is the same attribute for a static helper that must inline into such a
 * function (a vector argument cannot cross a call between differently targeted functions
 * without inlining). */
#ifndef SWIN_CPU_ISA_H
#define SWIN_CPU_ISA_H

#include <immintrin.h>

#define SWIN_AVX2 __attribute__((target("avx2,fma")))
#define SWIN_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline
#define SWIN_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define SWIN_AVX512_INLINE \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), always_inline)) static inline
#define SWIN_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,fma")))
#define SWIN_AVX512BF16_INLINE \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,fma"), always_inline)) static inline

/* *p = the lanes of v that m selects. A full mask goes out as a plain store: Zen 5 runs masked
 * stores to memory well below plain stores' rate (bench/results/cpu_speed/zen5/README.md). */
SWIN_AVX512_INLINE void swin_store16(float *p, __mmask16 m, __m512 v)
{
    if (m == (__mmask16)0xffffu) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, m, v);
}

/* 8 lanes, the first n on (n >= 8: all, n <= 0: none): the mask of the AVX2 kernels' partial
 * vectors (maskload / maskstore). */
SWIN_AVX2_INLINE __m256i swin_cpu_lanes(int n)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

#endif
