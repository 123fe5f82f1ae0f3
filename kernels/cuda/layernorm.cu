/* layernorm: out = LN(in) over the channels of each voxel, * gamma + beta when gamma != NULL.
 *   in, out (D, H, W, C) channels-last with their pitches; out may be in (same pitch).
 * Kernel layernorm_rows: one warp per row (ln_row.cuh), 8 rows per 256-thread block, no
 * shared memory. swin_cuda_ln_rows is also the LN step of swin_mlp and patch_merge. */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/ln_row.cuh"

namespace swin_cuda {

constexpr int LN_ROWS_PER_BLOCK = 8;

/* Rows r = blockIdx.x * 8 + warp; a warp past the last row exits as a whole. */
template <class T>
__global__ void __launch_bounds__(256) layernorm_rows(T *out, int out_pitch, const T *in, int in_pitch, long long rows,
                                                      int c, const T *gamma, const T *beta)
{
    const long long r = (long long)blockIdx.x * LN_ROWS_PER_BLOCK + threadIdx.x / 32;
    if (r >= rows) return;
    ln_row_warp(out + r * out_pitch, in + r * in_pitch, c, gamma, beta, threadIdx.x % 32);
}

} // namespace swin_cuda

template <class T>
void swin_cuda_ln_rows(cudaStream_t s, T *out, int out_pitch, const T *in, int in_pitch, long long rows, int c,
                       const T *gamma, const T *beta)
{
    SWIN_LAUNCH(swin_cuda::layernorm_rows<T>, dim3(swin_cuda_blocks(rows, swin_cuda::LN_ROWS_PER_BLOCK)), dim3(256),
                0, s)(out, out_pitch, in, in_pitch, rows, c, gamma, beta);
}
template void swin_cuda_ln_rows<float>(cudaStream_t, float *, int, const float *, int, long long, int, const float *,
                                       const float *);
template void swin_cuda_ln_rows<__half>(cudaStream_t, __half *, int, const __half *, int, long long, int,
                                        const __half *, const __half *);

template <class T>
static int layernorm_typed(struct swin_cuda_backend *be, struct swin_vol out, struct swin_vol in, const float *gamma,
                           const float *beta)
{
    const T *g, *b;
    if (!swin_cuda_weight(be, "layernorm", "gamma", gamma, (size_t)in.c, &g) ||
        !swin_cuda_weight(be, "layernorm", "beta", beta, (size_t)in.c, &b))
        return SWIN_ERR_ARG;
    swin_cuda_ln_rows(be->stream, (T *)out.data, out.pitch, (const T *)in.data, in.pitch,
                      (long long)swin_vol_voxels(in), in.c, g, b);
    return swin_cuda_check_launch(be, "layernorm", "c%d on %dx%dx%d", in.c, in.d, in.h, in.w);
}

extern "C" int swin_cuda_layernorm(void *bev, struct swin_vol out, struct swin_vol in, const float *gamma,
                                   const float *beta)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? layernorm_typed<__half>(be, out, in, gamma, beta)
                                 : layernorm_typed<float>(be, out, in, gamma, beta);
}
