/* The float32 weight GEMMs of the AVX2 and AVX-512 levels, without packing (every weight GEMM
 * of the model at those levels; against OpenBLAS per shape: bench/results/gemm_f32_cpu.md):
 *   C (m x n, ldc) = A (m x k, lda) . W (k x n, ldw) [+ bias] [+ C]      row-major, float32
 * bias: NULL or n floats added to every row; accumulate: C is added, else not read. k summed
 * in order with FMA (in blocks, each added to C at its store). */
#ifndef SWIN_CPU_GEMM_F32_H
#define SWIN_CPU_GEMM_F32_H

#include <stdbool.h>

/* The AVX2 + FMA kernel (gemm_f32_avx2.c); call only where the CPU has both. */
void swin_cpu_sgemm_avx2(int m, int n, int k, const float *a, int lda, const float *w, int ldw, const float *bias,
                         bool accumulate, float *c, int ldc);
/* The AVX-512 kernel (gemm_f32_avx512.c); call only where the CPU has the AVX-512 level. */
void swin_cpu_sgemm_avx512(int m, int n, int k, const float *a, int lda, const float *w, int ldw,
                           const float *bias, bool accumulate, float *c, int ldc);

#endif
