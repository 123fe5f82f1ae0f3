/* A 3-stage shared-memory pipeline with cuda_pipeline.h primitives, and its misuses. */
#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_pipeline.h"

#ifndef SWIN_EMU
#include <cuda_pipeline.h>
#endif

constexpr int KP_THREADS = 64, KP_STAGES = 3;

__global__ void pipeline_kernel(const float *in, float *out, int steps, int mode)
{
    __shared__ __align__(16) float st[KP_STAGES][KP_THREADS][4];
    const int t = threadIdx.x;
    auto issue = [&](int s) {
        const size_t zfill = s % 2 == 1 && t % 4 == 0 ? 16 : 0;
        const float *src = mode == KP_ZFILL_OUTSIDE && zfill
                               ? in - 4 * KP_THREADS /* a row before the allocation */
                               : in + ((size_t)s * KP_THREADS + t) * 4 + (mode == KP_MISALIGNED ? 1 : 0);
        void *dst = mode == KP_DEVICE_DST ? (void *)(out + 4 * t) : (void *)&st[s % KP_STAGES][t][0];
        __pipeline_memcpy_async(dst, src, mode == KP_BAD_SIZE ? 12 : 16, zfill);
        if (mode == KP_DST_IN_FLIGHT) __pipeline_memcpy_async(dst, src, 16);
        if (mode != KP_UNCOMMITTED) __pipeline_commit();
    };
    for (int s = 0; s < KP_STAGES - 1; s++) {
        if (s < steps) issue(s);
        else __pipeline_commit();
    }
    float acc = 0.0f;
    auto add = [&](int s) {
        const float *v = st[s % KP_STAGES][(t + 1) % KP_THREADS];
        acc += v[0] + v[1] + v[2] + v[3];
    };
    for (int s = 0; s < steps; s++) {
        /* Stage s + 2 reuses the buffer read in step s - 1, released by its last barrier. */
        if (s + KP_STAGES - 1 < steps) issue(s + KP_STAGES - 1);
        else __pipeline_commit();
        if (mode == KP_READ_EARLY) { /* the barrier without the wait before it */
            __syncthreads();
            add(s);
        }
        __pipeline_wait_prior(KP_STAGES - 1);
        __syncthreads();
        if (mode != KP_READ_EARLY) add(s);
        __syncthreads();
    }
    __pipeline_wait_prior(0);
    if (mode == KP_NEVER_WAITED) issue(0);
    if (mode != KP_DEVICE_DST) out[t] = acc;
}

extern "C" cudaError_t kp_pipeline(const float *in, float *out, int steps, enum kp_mode mode)
{
    SWIN_LAUNCH(pipeline_kernel, dim3(1), dim3(KP_THREADS), 0, 0)(in, out, steps, (int)mode);
    return cudaGetLastError();
}
