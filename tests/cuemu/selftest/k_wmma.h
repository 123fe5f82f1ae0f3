/* wmma test kernels (k_wmma.cu). Matrices: A (M x K) row-major, B (K x N) column-major,
 * C (M x N) row-major unless noted; M, N multiples of 16, K of 16 (8 for tf32). */
#ifndef TESTS_EMU_K_WMMA_H
#define TESTS_EMU_K_WMMA_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
/* out[i] = in[i] rounded to fp16 / bf16 (out holds 2-byte elements). */
cudaError_t kwm_to_half(const float *in, void *out, int n);
cudaError_t kwm_to_bf16(const float *in, void *out, int n);
/* C = alpha * A * B with m16n16k16 fragments of fp16 or bf16 inputs, fp32 accumulation. */
cudaError_t kwm_gemm_f16(const void *a, const void *b, float *c, int m, int n, int k, float alpha);
cudaError_t kwm_gemm_bf16(const void *a, const void *b, float *c, int m, int n, int k, float alpha);
/* C (column-major, ldc = M) = A * B with m16n16k8 tf32 fragments from fp32 inputs. */
cudaError_t kwm_gemm_tf32(const float *a, const float *b, float *c, int m, int n, int k);
/* Deliberately wrong: one warp copies a 16x16 accumulator tile by assuming which tile
 * element each fragment slot holds. */
cudaError_t kwm_assume_layout(const float *in, float *out);
/* Deliberately wrong: changes one fp16 A-fragment slot by position before mma_sync. */
cudaError_t kwm_poke_fragment(const void *a, const void *b, float *c);
/* Deliberately wrong: loads from a pointer that is not 32-byte aligned. */
cudaError_t kwm_misaligned_load(const float *c, float *out);
#ifdef __cplusplus
}
#endif
#endif
