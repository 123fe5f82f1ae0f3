/* Block-level test kernels: barriers, early exit, barrier reductions, 3D indices,
 * dynamic shared memory, poison. See k_block.h. */
#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_block.h"

__global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

__global__ void early_exit_sum(const float *in, float *out, int n)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t >= n)
        return; /* exited threads do not hold the barrier */
    s[t] = in[t];
    __syncthreads();
    if (t == 0) {
        float acc = 0.0f;
        for (int k = 0; k < n; k++)
            acc += s[k];
        *out = acc;
    }
}

__global__ void bar_reduce(const int *pred, int *out)
{
    int t = threadIdx.x, p = pred[t];
    int c = __syncthreads_count(p);
    int a = __syncthreads_and(p);
    int o = __syncthreads_or(p);
    out[3 * t] = c;
    out[3 * t + 1] = a;
    out[3 * t + 2] = o;
}

__global__ void index3d(unsigned *out, unsigned *dims)
{
    unsigned blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned thr = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned *o = out + 6 * (blk * blockDim.x * blockDim.y * blockDim.z + thr);
    o[0] = threadIdx.x;
    o[1] = threadIdx.y;
    o[2] = threadIdx.z;
    o[3] = blockIdx.x;
    o[4] = blockIdx.y;
    o[5] = blockIdx.z;
    if (blk == 0 && thr == 0) {
        dims[0] = blockDim.x;
        dims[1] = blockDim.y;
        dims[2] = blockDim.z;
        dims[3] = gridDim.x;
        dims[4] = gridDim.y;
        dims[5] = gridDim.z;
    }
}

__global__ void reverse_dyn(const float *in, float *out)
{
    SWIN_DYN_SMEM(float, buf);
    int t = threadIdx.x, n = blockDim.x;
    buf[t] = in[blockIdx.x * n + t];
    __syncthreads();
    out[blockIdx.x * n + t] = buf[n - 1 - t];
}

__global__ void read_uninit(unsigned *out)
{
    __shared__ unsigned s[32];
    SWIN_DYN_SMEM(unsigned, d);
    out[threadIdx.x] = s[threadIdx.x];
    out[32 + threadIdx.x] = d[threadIdx.x];
}

__constant__ float table16[16];

__global__ void scale_table(float *out)
{
    out[threadIdx.x] = 2.0f * table16[threadIdx.x];
}

__global__ void config_kernel(int *flag)
{
    /* exactly one writer: several would race (same value, still a race for TSan) */
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z == 0)
        flag[0] = 1;
}

extern "C" {
cudaError_t kb_block_sum(const float *in, float *out, int n, int blocks)
{
    SWIN_LAUNCH(block_sum, blocks, 256, 0, 0)(in, out, n);
    return cudaGetLastError();
}

cudaError_t kb_early_exit_sum(const float *in, float *out, int n)
{
    SWIN_LAUNCH(early_exit_sum, 1, 128)(in, out, n);
    return cudaGetLastError();
}

cudaError_t kb_bar_reduce(const int *pred, int *out, int threads)
{
    SWIN_LAUNCH(bar_reduce, 1, threads)(pred, out);
    return cudaGetLastError();
}

cudaError_t kb_index3d(unsigned *out, unsigned *dims, dim3 g, dim3 b)
{
    SWIN_LAUNCH(index3d, g, b)(out, dims);
    return cudaGetLastError();
}

cudaError_t kb_reverse_dyn(const float *in, float *out, int n, int blocks)
{
    SWIN_LAUNCH(reverse_dyn, blocks, n, n * sizeof(float))(in, out);
    return cudaGetLastError();
}

cudaError_t kb_read_uninit(unsigned *out)
{
    SWIN_LAUNCH(read_uninit, 1, 32, 32 * sizeof(unsigned))(out);
    return cudaGetLastError();
}

cudaError_t kb_constant_table(const float *table, float *out, float *back)
{
    cudaError_t e = cudaMemcpyToSymbol(table16, table, 16 * sizeof(float));
    if (e != cudaSuccess)
        return e;
    SWIN_LAUNCH(scale_table, 1, 16)(out);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    return cudaMemcpyFromSymbol(back, table16, 16 * sizeof(float));
}

cudaError_t kb_config(int *flag, dim3 g, dim3 b, size_t smem, cudaStream_t s)
{
    SWIN_LAUNCH(config_kernel, g, b, smem, s)(flag);
    return cudaGetLastError();
}

cudaError_t kb_config_optin(int bytes)
{
    return cudaFuncSetAttribute(config_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
}
