/* The float32 weight GEMM without packing, for the small inner dimensions of the model's
 * weight GEMMs (gemm_f32_avx2.c):
 *   C (m x n, ldc) = [C +] A (m x k, lda) . W (k x n, ldw)       row-major, float32
 * accumulate: C += A.W, else C = A.W (C is not read). k summed in order with FMA. */
#ifndef SWIN_CPU_GEMM_F32_H
#define SWIN_CPU_GEMM_F32_H

#include <stdbool.h>

/* Whether the AVX2 kernel beats OpenBLAS on this shape: W (k x n) within 36 KiB, so that
 * each 24-column panel stays in L1 while every row of A passes, and 8 columns or more (below,
 * one 8-lane vector per row does not hide the FMA latency). Measured per model shape:
 * bench/results/gemm_f32_cpu.md. */
static inline bool swin_cpu_sgemm_avx2_fits(int n, int k) { return n >= 8 && (long)k * n <= 48L * 192; }

/* The AVX2 + FMA kernel; call only where the CPU has both. */
void swin_cpu_sgemm_avx2(int m, int n, int k, const float *a, int lda, const float *w, int ldw, bool accumulate,
                         float *c, int ldc);

#endif
