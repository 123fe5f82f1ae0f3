/* Warp-level test kernels (k_warp.cu), launched as one block; see k_warp.cu for what
 * each writes. Pointers are device pointers; each returns cudaGetLastError(). */
#ifndef TESTS_EMU_K_WARP_H
#define TESTS_EMU_K_WARP_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KW_FULL_OUTS 8
#define KW_PARTIAL_OUTS 7
#define KW_MISC_OUTS 13

cudaError_t kw_full(const int *v, const int *param, int width, int *out, double *dout, int threads);
cudaError_t kw_partial(const int *v, int *out, int threads);
cudaError_t kw_misc(const int *v, int *out, int threads);
cudaError_t kw_syncwarp(const int *v, int *out, int threads);

#ifdef __cplusplus
}
#endif
#endif
