/* The float32 weight GEMMs of the AVX2 and AVX-512 levels, without packing (every weight GEMM
 * of the model at those levels; against OpenBLAS per shape: bench/results/gemm_f32_cpu.md):
 *   C (m x n, ldc) = [C +] A (m x k, lda) . W (k x n, ldw)       row-major, float32
 * accumulate: C += A.W, else C = A.W (C is not read). k summed in order with FMA. */
#ifndef SWIN_CPU_GEMM_F32_H
#define SWIN_CPU_GEMM_F32_H

#include <stdbool.h>

/* The AVX2 + FMA kernel (gemm_f32_avx2.c); call only where the CPU has both. */
void swin_cpu_sgemm_avx2(int m, int n, int k, const float *a, int lda, const float *w, int ldw, bool accumulate,
                         float *c, int ldc);
/* The AVX-512 kernel (gemm_f32_avx512.c); call only where the CPU has the AVX-512 level. */
void swin_cpu_sgemm_avx512(int m, int n, int k, const float *a, int lda, const float *w, int ldw, bool accumulate,
                           float *c, int ldc);

#endif
