/* Deliberately broken kernels (and their correct twins) for the detector tests. */
#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_detect.h"

#define FULL 0xFFFFFFFFu

__global__ void barrier_kernel(int *out, int divergent)
{
    if (divergent && threadIdx.x < 16)
        __syncthreads(); /* wrong: half the block waits here ... */
    else
        __syncthreads(); /* ... and the other half here */
    out[threadIdx.x] = 1;
}

__global__ void exited_lane(int *out, int broken)
{
    int lane = threadIdx.x % 32;
    if (lane >= 16)
        return;
    out[lane] = __shfl_sync(broken ? FULL : 0x0000FFFFu, lane, 15 - lane);
}

__global__ void mask_mismatch(int *out)
{
    int lane = threadIdx.x % 32;
    out[lane] = __shfl_sync(lane < 16 ? FULL : 0xFFFF00FFu, lane, 0);
}

__global__ void op_mismatch(int *out)
{
    int lane = threadIdx.x % 32;
    if (lane < 16)
        out[lane] = __shfl_sync(FULL, lane, 0);
    else
        out[lane] = (int)__ballot_sync(FULL, 1);
}

__global__ void not_in_mask(int *out)
{
    int lane = threadIdx.x % 32;
    out[lane] = __shfl_sync(1u << ((lane + 1) % 32), lane, 0);
}

__global__ void deadlock(int *out)
{
    if (threadIdx.x == 0)
        __syncwarp(); /* lanes 1..31 never come: they wait at the barrier below */
    else
        __syncthreads();
    out[threadIdx.x] = 1;
}

__global__ void neighbour(const float *in, float *out, int barrier)
{
    SWIN_DYN_SMEM(float, s);
    int t = threadIdx.x, n = blockDim.x;
    s[t] = in[t];
    if (barrier)
        __syncthreads();
    out[t] = s[(t + 1) % n];
}

__global__ void uninit_sum(const float *in, float *out, int fill_all)
{
    SWIN_DYN_SMEM(float, s); /* 256 floats */
    int t = threadIdx.x;
    if (fill_all)
        for (int i = t; i < 256; i += blockDim.x)
            s[i] = 0.0f;
    __syncthreads();
    s[t] = in[t];
    __syncthreads();
    if (t == 0) {
        float acc = 0.0f;
        for (int i = 0; i < 256; i++)
            acc += s[i];
        *out = acc;
    }
}

__global__ void sanitize(const float *in, float *out, int mode)
{
    __shared__ float s[64], r[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    if (mode == 1)
        out[t + 1] = s[t]; /* thread 63 writes one past the end of out */
    else if (mode == 2)
        out[t] = s[t + 1]; /* thread 63 reads one past the end of s */
    else if (mode == 3) {
        float4 v = reinterpret_cast<const float4 *>(in + 1)[t % 8]; /* only 4-byte aligned */
        out[t] = v.x + v.w;
    }
    else if (mode == 4) {
        r[t] = 2.0f * s[t];
        out[t] = r[(t + 1) % 64]; /* wrong: no __syncthreads between write and read */
    } else
        out[t] = s[t];
}

__global__ void stack_overflow(float *out)
{
    volatile float big[256 * 1024]; /* wrong: 1 MiB of locals per thread */
    for (int i = 0; i < 256 * 1024; i += 1024)
        big[i] = (float)i;
    out[threadIdx.x] = big[1024 * threadIdx.x];
}

extern "C" {
cudaError_t kd_stack_overflow(float *out)
{
    SWIN_LAUNCH(stack_overflow, 1, 32)(out);
    return cudaGetLastError();
}

cudaError_t kd_barrier(int *out, int divergent)
{
    SWIN_LAUNCH(barrier_kernel, 1, 64)(out, divergent);
    return cudaGetLastError();
}

cudaError_t kd_exited_lane(int *out, int broken)
{
    SWIN_LAUNCH(exited_lane, 1, 32)(out, broken);
    return cudaGetLastError();
}

cudaError_t kd_mask_mismatch(int *out)
{
    SWIN_LAUNCH(mask_mismatch, 1, 32)(out);
    return cudaGetLastError();
}

cudaError_t kd_op_mismatch(int *out)
{
    SWIN_LAUNCH(op_mismatch, 1, 32)(out);
    return cudaGetLastError();
}

cudaError_t kd_not_in_mask(int *out)
{
    SWIN_LAUNCH(not_in_mask, 1, 32)(out);
    return cudaGetLastError();
}

cudaError_t kd_deadlock(int *out)
{
    SWIN_LAUNCH(deadlock, 1, 64)(out);
    return cudaGetLastError();
}

cudaError_t kd_neighbour(const float *in, float *out, int n, int barrier)
{
    SWIN_LAUNCH(neighbour, 1, n, n * sizeof(float))(in, out, barrier);
    return cudaGetLastError();
}

cudaError_t kd_uninit_sum(const float *in, float *out, int n, int fill_all)
{
    SWIN_LAUNCH(uninit_sum, 1, n, 256 * sizeof(float))(in, out, fill_all);
    return cudaGetLastError();
}

cudaError_t kd_sanitize(const float *in, float *out, int mode)
{
    SWIN_LAUNCH(sanitize, 1, 64)(in, out, mode);
    return cudaGetLastError();
}
}
