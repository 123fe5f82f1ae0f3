/* Weight GEMMs of the CPU backend, in float32 (OpenBLAS or gemm_f32.h) or bfloat16
 * (precision BF16):
 *   C (m x n, ldc) = A (m x k, lda, float32) . W (k x n, ldw) [+ bias] [+ C]
 * bfloat16: W holds bfloat16 (kernels/cpu/model_bf16.h), each element of A is rounded to
 * bfloat16 (nearest even) as it is read, the products (exact in float32: 8-bit x 8-bit
 * significands) are accumulated in float32 in k order. Every SIMD level computes the same
 * products; AVX2 fuses multiply and add (FMA), the baseline rounds the product first, so
 * levels agree to float32 rounding of the sums. */
#ifndef SWIN_CPU_GEMM_BF16_H
#define SWIN_CPU_GEMM_BF16_H

#include <stdbool.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/cpu_internal.h"

/* bias: NULL or n floats added to every row; accumulate: C is added, else not read. simd picks
 * the kernel (AVX512 without BF16 runs the AVX2 one). */
void swin_cpu_gemm_bf16(enum swin_cpu_simd simd, int m, int n, int k, const float *a, int lda, const swin_bf16 *w,
                        int ldw, const float *bias, bool accumulate, float *c, int ldc);
/* The AVX2 + FMA kernel (gemm_bf16_avx2.c; bfloat16 widened to float32 for FMA); call only
 * where the CPU has both. */
void swin_cpu_gemm_bf16_avx2(int m, int n, int k, const float *a, int lda, const swin_bf16 *w, int ldw,
                             bool accumulate, float *c, int ldc);
/* The vdpbf16ps kernel (gemm_bf16_avx512bf16.c; its own bias); call only at the AVX512_BF16
 * level. */
void swin_cpu_gemm_bf16_avx512bf16(int m, int n, int k, const float *a, int lda, const swin_bf16 *w, int ldw,
                                   const float *bias, bool accumulate, float *c, int ldc);

/* How a backend runs its weight GEMMs. */
struct swin_cpu_wgemm {
    bool bf16;                /* the weight is bfloat16 (in the range of swin_cpu_backend_set_bf16) */
    enum swin_cpu_simd simd;
};

/* How backend be runs the GEMM of weight w: in bfloat16 when w lies in its bfloat16 range. */
static inline struct swin_cpu_wgemm swin_cpu_wgemm_of(const struct swin_cpu_backend *be, const float *w)
{
    const uintptr_t p = (uintptr_t)(const void *)w;
    return (struct swin_cpu_wgemm){.bf16 = p >= be->bf16_lo && p < be->bf16_hi, .simd = be->simd};
}

/* The weight GEMM above with w typed as the model holds it: bfloat16 weights through
 * swin_cpu_gemm_bf16; float32 ones through the level's kernel of gemm_f32.h (AVX2, AVX-512),
 * or cblas_sgemm at the baseline level. */
void swin_cpu_wgemm_run(struct swin_cpu_wgemm g, int m, int n, int k, const float *a, int lda, const float *w,
                        int ldw, const float *bias, bool accumulate, float *c, int ldc);

#endif
