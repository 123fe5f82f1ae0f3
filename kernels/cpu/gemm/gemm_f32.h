/* The float32 weight GEMM without packing, for the small inner dimensions of the model's
 * weight GEMMs (gemm_f32_avx2.c):
 *   C (m x n, ldc) = [C +] A (m x k, lda) . W (k x n, ldw)       row-major, float32
 * accumulate: C += A.W, else C = A.W (C is not read). k summed in order with FMA. */
#ifndef SWIN_CPU_GEMM_F32_H
#define SWIN_CPU_GEMM_F32_H

#include <stdbool.h>

/* Whether the AVX2 kernel beats OpenBLAS on this shape: W (k x n) within 36 KiB, so that
 * each 24-column panel stays in L1 while every row of A passes, and 8 columns or more (below,
 * one 8-lane vector per row does not hide the FMA latency). Measured against OpenBLAS 0.3 on
 * one Zen 3 thread (bench/results/gemm_f32_cpu.md): 1.4x-1.7x at 48 x 48, 96 x 48 and
 * 48 x 14, even at 48 x 192 and 192 x 48, 0.55x-0.8x at 96 x 384 and larger. */
static inline bool swin_cpu_sgemm_avx2_fits(int n, int k) { return n >= 8 && (long)k * n <= 48L * 192; }

/* The AVX2 + FMA kernel; call only where the CPU has both. */
void swin_cpu_sgemm_avx2(int m, int n, int k, const float *a, int lda, const float *w, int ldw, bool accumulate,
                         float *c, int ldc);

#endif
