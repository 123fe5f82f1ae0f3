/* Launcher of window_attention_fused (window_attention.cu), used by swin_attention.cu, and
 * its block size and shared bytes (also read by launch_manifest.cu). */
#ifndef SWIN_CUDA_WINDOW_ATTENTION_CUH
#define SWIN_CUDA_WINDOW_ATTENTION_CUH

#include "kernels/cuda/window_geom.cuh"

#include <stddef.h>

namespace swin_cuda {
/* Keys per shared-memory tile of window_attention_fused. */
constexpr int ATTN_KT = 32;
/* Its dynamic shared bytes for head dim hd and qt queries per block; reg: the HD > 0
 * instantiation, which keeps the query and accumulator in registers. */
inline size_t attn_smem_bytes(int hd, int qt, bool reg)
{
    return sizeof(float) * (2 * (size_t)ATTN_KT * hd + 2 * ATTN_KT + (reg ? 0 : 2 * (size_t)hd * qt));
}
/* Its block size (queries per block): 64, or 32 when that keeps the shared memory under the
 * default 48 KiB. Above 48 KiB the launch opts in to the device's larger limit. */
inline int attn_block_queries(int hd, bool reg) { return attn_smem_bytes(hd, 64, reg) > 48 * 1024 ? 32 : 64; }
} // namespace swin_cuda

/* o (wc n, C) = attention of the wc windows w0 .. w0 + wc - 1 whose qkv rows (wc n, 3C)
 * are in qkv; table is the device bias table (T, heads). Returns the launch status
 * (including a refused shared-memory opt-in for very large head dims). T = float or
 * __half (storage; the kernel computes in float32). */
template <class T>
cudaError_t swin_cuda_window_attention(cudaStream_t s, T *o, const T *qkv, long long w0, int wc,
                                       const swin_cuda::WinGeom &g, const T *table, int C);

#endif
