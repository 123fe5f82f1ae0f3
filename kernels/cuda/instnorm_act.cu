/* instnorm_act, in place on x (D, H, W, C) channels-last:
 *   x = IN(x)        when normalize: per channel over all D H W voxels, biased variance, eps 1e-5
 *       * gamma + beta      when gamma != NULL
 *       + residual          when residual != NULL (same dims and c, own pitch)
 *   x = LeakyReLU_0.01(x)   when lrelu
 * Statistics in two passes like the CPU op (mean, then mean squared deviation), summed in
 * double, deterministically (fixed partition, fixed order), in channel blocks of
 * SWIN_CUDA_RED_CH using the context's scratch (be->red, mean, scale, shift):
 *   instnorm_partial   grid (parts, ceil(nc/32)), block (32 channels, 8 voxel lanes):
 *                      partial[part][ch] = sum over the part's voxels; smem 8x32 doubles
 *   instnorm_finalize  one block, thread per channel: mean, then scale = rstd * gamma,
 *                      shift = beta (sums the parts in order); without normalize only
 *                      pass 0: mean 0, scale gamma, shift beta
 *   instnorm_apply     grid-stride over (voxel, channel), channel fastest, fp32. */
#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

/* pass 1: sum x; pass 2: sum (x - mean)^2. Part p covers voxels [p chunk, (p+1) chunk). */
template <class T>
__global__ void __launch_bounds__(256) instnorm_partial(const T *x, int pitch, long long nvox, int c0, int nc,
                                                        long long chunk, const double *mean, double *partial)
{
    __shared__ double red[8][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int ch = blockIdx.y * 32 + tx;
    const long long b = (long long)blockIdx.x * chunk, e = b + chunk < nvox ? b + chunk : nvox;
    double acc = 0.0;
    if (ch < nc) {
        const double mu = mean ? mean[ch] : 0.0;
        for (long long v = b + ty; v < e; v += 8) {
            const double d = (double)ldf(x + v * pitch + c0 + ch) - mu;
            acc += mean ? d * d : d;
        }
    }
    red[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && ch < nc) {
        double s = 0.0;
        for (int i = 0; i < 8; i++) s += red[i][tx];
        partial[(long long)blockIdx.x * SWIN_CUDA_RED_CH + ch] = s;
    }
}

/* pass 1: mean[ch] = S / n; pass 2: scale = rstd * gamma, shift = beta (1 and 0 without gamma);
 * pass 0 (no normalisation): mean 0, scale gamma, shift beta. */
template <class T>
__global__ void __launch_bounds__(256) instnorm_finalize(int pass, int parts, int nc, int c0, const double *partial,
                                                         double n, double *mean, float *scale, float *shift,
                                                         const T *gamma, const T *beta)
{
    for (int ch = threadIdx.x; ch < nc; ch += blockDim.x) {
        double s = 0.0;
        for (int p = 0; p < parts; p++) s += partial[(long long)p * SWIN_CUDA_RED_CH + ch];
        if (pass == 1) {
            mean[ch] = s / n;
        } else {
            if (pass == 0) mean[ch] = 0.0;
            const double rstd = pass == 0 ? 1.0 : 1.0 / sqrt(s / n + 1e-5);
            scale[ch] = (float)(rstd * (gamma ? ldf(gamma + c0 + ch) : 1.0f));
            shift[ch] = gamma ? ldf(beta + c0 + ch) : 0.0f;
        }
    }
}

template <class T>
__global__ void __launch_bounds__(256) instnorm_apply(T *x, int pitch, long long nvox, int c0, int nc,
                                                      const double *mean, const float *scale, const float *shift,
                                                      const T *res, int res_pitch, bool lrelu)
{
    const long long n = nvox * nc;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long v = i / nc;
        const int ch = (int)(i % nc);
        T *p = x + v * pitch + c0 + ch;
        float y = fmaf(ldf(p) - (float)mean[ch], scale[ch], shift[ch]);
        if (res) y += ldf(res + v * res_pitch + c0 + ch);
        if (lrelu && y < 0.0f) y *= 0.01f;
        stf(p, y);
    }
}

} // namespace swin_cuda

using namespace swin_cuda;

template <class T>
static int instnorm_act_typed(struct swin_cuda_backend *be, struct swin_vol x, bool normalize, const float *gamma,
                              const float *beta, const struct swin_vol *residual, bool lrelu)
{
    const T *g, *b;
    if (!swin_cuda_weight(be, "instnorm_act", "gamma", gamma, (size_t)x.c, &g) ||
        !swin_cuda_weight(be, "instnorm_act", "beta", beta, (size_t)x.c, &b))
        return SWIN_ERR_ARG;
    T *xd = (T *)x.data;
    const T *rd = residual ? (const T *)residual->data : nullptr;
    const long long nvox = (long long)swin_vol_voxels(x);
    const long long want = (nvox + 255) / 256;
    const int parts = (int)(want < SWIN_CUDA_RED_PARTS ? want : SWIN_CUDA_RED_PARTS);
    const long long chunk = (nvox + parts - 1) / parts;
    const unsigned apply_blocks = swin_cuda_blocks(nvox * SWIN_CUDA_RED_CH, 256);
    for (int c0 = 0; c0 < x.c; c0 += SWIN_CUDA_RED_CH) {
        const int nc = x.c - c0 < SWIN_CUDA_RED_CH ? x.c - c0 : SWIN_CUDA_RED_CH;
        const dim3 grid(parts, swin_cuda_blocks(nc, 32)), block(32, 8);
        if (normalize) {
            SWIN_LAUNCH(instnorm_partial<T>, grid, block, 0, be->stream)(xd, x.pitch, nvox, c0, nc, chunk, nullptr,
                                                                         be->red);
            SWIN_LAUNCH(instnorm_finalize<T>, dim3(1), dim3(256), 0, be->stream)(
                1, parts, nc, c0, be->red, (double)nvox, be->mean, be->scale, be->shift, g, b);
            SWIN_LAUNCH(instnorm_partial<T>, grid, block, 0, be->stream)(xd, x.pitch, nvox, c0, nc, chunk, be->mean,
                                                                         be->red);
        }
        SWIN_LAUNCH(instnorm_finalize<T>, dim3(1), dim3(256), 0, be->stream)(
            normalize ? 2 : 0, normalize ? parts : 0, nc, c0, be->red, (double)nvox, be->mean, be->scale, be->shift, g, b);
        SWIN_LAUNCH(instnorm_apply<T>, dim3(apply_blocks < 4096 ? apply_blocks : 4096), dim3(256), 0, be->stream)(
            xd, x.pitch, nvox, c0, nc, be->mean, be->scale, be->shift, rd, residual ? residual->pitch : 0, lrelu);
        int rc = swin_cuda_check_launch(be, "instnorm_act");
        if (rc) return rc;
    }
    return 0;
}

extern "C" int swin_cuda_instnorm_act(void *bev, struct swin_vol x, bool normalize, const float *gamma,
                                      const float *beta, const struct swin_vol *residual, bool lrelu)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? instnorm_act_typed<__half>(be, x, normalize, gamma, beta, residual, lrelu)
                                 : instnorm_act_typed<float>(be, x, normalize, gamma, beta, residual, lrelu);
}
