/* Launcher of window_attention_fused (window_attention.cu), used by swin_attention.cu. */
#ifndef SWIN_CUDA_WINDOW_ATTENTION_CUH
#define SWIN_CUDA_WINDOW_ATTENTION_CUH

#include "kernels/cuda/window_geom.cuh"

/* o (wc n, C) = attention of the wc windows w0 .. w0 + wc - 1 whose qkv rows (wc n, 3C)
 * are in qkv; table is the device bias table (T, heads). Returns the launch status
 * (including a refused shared-memory opt-in for very large head dims). T = float or
 * __half (storage; the kernel computes in float32). */
template <class T>
cudaError_t swin_cuda_window_attention(cudaStream_t s, T *o, const T *qkv, long long w0, int wc,
                                       const swin_cuda::WinGeom &g, const T *table, int C);

#endif
