/* Block-level test kernels (k_block.cu): launch wrappers callable from C. Pointers are
 * device pointers; each returns cudaGetLastError() after its launch. */
#ifndef TESTS_EMU_K_BLOCK_H
#define TESTS_EMU_K_BLOCK_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[b] = sum of in[b*256 .. b*256+255] (zero past n), by a tree in shared memory. */
cudaError_t kb_block_sum(const float *in, float *out, int n, int blocks);
/* *out = sum of in[0..n); threads t >= n of the 128-thread block return before the barrier. */
cudaError_t kb_early_exit_sum(const float *in, float *out, int n);
/* For a block of `threads`: out[3t..3t+2] = __syncthreads_count/and/or of pred[t]. */
cudaError_t kb_bar_reduce(const int *pred, int *out, int threads);
/* Every thread of grid g and block b writes its threadIdx and blockIdx to out[6 * gid]
 * (gid = linear block * threads per block + linear thread) and the dims to dims[0..5]. */
cudaError_t kb_index3d(unsigned *out, unsigned *dims, dim3 g, dim3 b);
/* out[b*n + t] = in[b*n + n-1-t] through dynamic shared memory (n = threads). */
cudaError_t kb_reverse_dyn(const float *in, float *out, int n, int blocks);
/* out[0..32) = an unwritten static shared array, out[32..64) = unwritten dynamic. */
cudaError_t kb_read_uninit(unsigned *out);
/* Copies `table` (16 floats) into a __constant__ array with cudaMemcpyToSymbol, then a
 * kernel writes table[i] * 2 to out[i]; finally reads the symbol back into `back`. */
cudaError_t kb_constant_table(const float *table, float *out, float *back);
/* Launch with the given configuration (for the launcher's validation); the kernel
 * writes 1 to flag[0]. */
cudaError_t kb_config(int *flag, dim3 g, dim3 b, size_t smem, cudaStream_t s);
/* Opt kb_config's kernel into `bytes` of dynamic shared memory. */
cudaError_t kb_config_optin(int bytes);

#ifdef __cplusplus
}
#endif
#endif
