/* Warp shuffles, votes, match, reduce and __syncwarp, with full and partial masks,
 * every width, and a partial last warp. */
#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_warp.h"

#define FULL 0xFFFFFFFFu

/* Full warps: out[t * KW_FULL_OUTS + k] and dout[t]. */
__global__ void warp_full(const int *v, const int *param, int width, int *out, double *dout)
{
    int t = threadIdx.x, x = v[t], p = param[t];
    int *o = out + t * KW_FULL_OUTS;
    o[0] = __shfl_sync(FULL, x, p, width);
    o[1] = __shfl_up_sync(FULL, x, (unsigned)(p & 7), width);
    o[2] = __shfl_down_sync(FULL, x, (unsigned)(p & 7), width);
    o[3] = __shfl_xor_sync(FULL, x, p & 31, width);
    o[4] = (int)__ballot_sync(FULL, x & 1);
    o[5] = __any_sync(FULL, x > 90);
    o[6] = __all_sync(FULL, x > -1000);
    o[7] = __all_sync(FULL, x & 1);
    dout[t] = __shfl_sync(FULL, 0.5 * x, p, width);
}

/* Partial and disjoint masks. */
__global__ void warp_partial(const int *v, int *out)
{
    const unsigned A = 0x000FFFFFu; /* lanes 0..19 */
    int t = threadIdx.x, lane = t & 31, x = v[t];
    int *o = out + t * KW_PARTIAL_OUTS;
    if (lane < 20) {
        o[0] = __shfl_down_sync(A, x, 4); /* lanes 16..19 read outside the mask */
        o[1] = (int)__ballot_sync(A, x & 1);
        o[2] = __any_sync(A, x > 50);
        o[3] = __all_sync(A, x >= -100);
        o[4] = __shfl_sync(A, x, 19 - lane);
    }
    unsigned h = lane < 16 ? 0x0000FFFFu : 0xFFFF0000u; /* two independent half-warps */
    o[5] = __shfl_xor_sync(h, x, 5, 16);
    o[6] = __reduce_add_sync(h, x);
}

/* Reductions and matches over the lanes that exist (the last warp may be partial). */
__global__ void warp_misc(const int *v, int *out)
{
    int t = threadIdx.x, lane = t & 31, n = blockDim.x - (t - lane), x = v[t], pred;
    unsigned m = n >= 32 ? FULL : (1u << n) - 1;
    int *o = out + t * KW_MISC_OUTS;
    o[0] = __reduce_add_sync(m, x);
    o[1] = __reduce_min_sync(m, x);
    o[2] = __reduce_max_sync(m, x);
    o[3] = (int)__reduce_and_sync(m, (unsigned)x);
    o[4] = (int)__reduce_or_sync(m, (unsigned)x);
    o[5] = (int)__reduce_xor_sync(m, (unsigned)x);
    o[6] = (int)__reduce_min_sync(m, (unsigned)x);
    o[7] = (int)__match_any_sync(m, x % 4);
    o[8] = (int)__match_all_sync(m, x % 4, &pred);
    o[9] = pred;
    o[10] = (int)__match_all_sync(m, 42, &pred);
    o[11] = pred;
    int s = x; /* tree reduction: lane 0 ends with the warp's sum */
    for (int d = 16; d > 0; d >>= 1) {
        int y = __shfl_down_sync(m, s, d);
        if (lane + d < n)
            s += y;
    }
    o[12] = s;
}

/* Neighbour exchange through shared memory, ordered by __syncwarp: out[t] = 2 * v[t]. */
__global__ void warp_syncwarp(const int *v, int *out)
{
    __shared__ int s[1024];
    int t = threadIdx.x, lane = t & 31, base = t - lane;
    s[t] = v[t];
    __syncwarp();
    int r = s[base + ((lane + 1) & 31)];
    __syncwarp();
    s[t] = 2 * r;
    __syncwarp();
    out[t] = s[base + ((lane + 31) & 31)];
}

extern "C" {
cudaError_t kw_full(const int *v, const int *param, int width, int *out, double *dout, int threads)
{
    SWIN_LAUNCH(warp_full, 1, threads)(v, param, width, out, dout);
    return cudaGetLastError();
}

cudaError_t kw_partial(const int *v, int *out, int threads)
{
    SWIN_LAUNCH(warp_partial, 1, threads)(v, out);
    return cudaGetLastError();
}

cudaError_t kw_misc(const int *v, int *out, int threads)
{
    SWIN_LAUNCH(warp_misc, 1, threads)(v, out);
    return cudaGetLastError();
}

cudaError_t kw_syncwarp(const int *v, int *out, int threads)
{
    SWIN_LAUNCH(warp_syncwarp, 1, threads)(v, out);
    return cudaGetLastError();
}
}
