/* One warp normalises one row: y[0..c) = LN(x[0..c)) over the row (torch.nn.LayerNorm:
 * eps 1e-5, biased variance), then * gamma + beta when gamma != NULL (beta may be NULL).
 * Two passes like the CPU op (mean, then mean squared deviation), fp32 with a butterfly
 * reduction over the 32 lanes; lane l handles channels l, l + 32, ... y may equal x.
 * All 32 lanes of the warp must call it (full-mask shuffles). T is the storage type of
 * x, y, gamma and beta (float, or __half: read as float, y rounded once). */
#ifndef SWIN_CUDA_LN_ROW_CUH
#define SWIN_CUDA_LN_ROW_CUH

namespace swin_cuda {

__device__ inline float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <class T>
__device__ inline void ln_row_warp(T *y, const T *x, int c, const T *gamma, const T *beta, int lane)
{
    float s = 0.0f;
    for (int i = lane; i < c; i += 32) s += ldf(x + i);
    const float mean = warp_sum(s) / (float)c;
    float ss = 0.0f;
    for (int i = lane; i < c; i += 32) {
        const float d = ldf(x + i) - mean;
        ss = fmaf(d, d, ss);
    }
    const float rstd = 1.0f / sqrtf(warp_sum(ss) / (float)c + 1e-5f);
    for (int i = lane; i < c; i += 32) {
        float v = (ldf(x + i) - mean) * rstd;
        if (gamma) v = fmaf(v, ldf(gamma + i), beta ? ldf(beta + i) : 0.0f);
        stf(y + i, v);
    }
}

} // namespace swin_cuda

#endif
