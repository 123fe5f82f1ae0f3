/* The lane mask of the AVX2 kernels' partial vectors (maskload / maskstore). */
#ifndef SWIN_CPU_AVX2_LANES_H
#define SWIN_CPU_AVX2_LANES_H

#include <immintrin.h>

/* 8 lanes, the first n on (n >= 8: all, n <= 0: none). */
__attribute__((target("avx2"))) static inline __m256i swin_cpu_lanes(int n)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

#endif
