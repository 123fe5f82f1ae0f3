/* instnorm_act, in place on x (D, H, W, C) channels-last:
 *   x = IN(x)        when normalize: per channel over all D H W voxels, biased variance, eps 1e-5
 *       * gamma + beta      when gamma != NULL
 *       + residual          when residual != NULL (same dims and c, own pitch)
 *   x = LeakyReLU_0.01(x)   when lrelu
 * Statistics in one read of x, in double, deterministically (fixed partition, fixed
 * order, no atomics), in channel blocks of SWIN_CUDA_RED_CH using the context's scratch
 * (be->red, mean, scale, shift):
 *   instnorm_partial   grid (parts <= SWIN_CUDA_RED_PARTS / 2, ceil(nc/32)), block (32
 *                      channels, 8 voxel lanes): per part p of n_p voxels and channel, the
 *                      sums S1, S2 of d = x - K_p, K_p = x at the part's first voxel (the
 *                      shift keeps S2 - S1^2 / n_p free of cancellation), then
 *                      mean_p = K_p + S1 / n_p -> red[p][ch],
 *                      M2_p = S2 - S1^2 / n_p  -> red[SWIN_CUDA_RED_PARTS / 2 + p][ch];
 *   instnorm_finalize  one block, thread per channel, parts merged in order:
 *                      mean = sum n_p mean_p / n, M2 = sum (M2_p + n_p (mean_p - mean)^2)
 *                      (the exact pairwise-merge identity), var = M2 / n, scale = rstd
 *                      * gamma, shift = beta (1 and 0 without gamma); without
 *                      normalize mean 0, scale gamma, shift beta;
 *   instnorm_apply     grid-stride over (voxel, channel or 16-byte channel vector),
 *                      channel fastest, fp32, no division per element (grid_walk.cuh):
 *                      y = (x - mean) * scale + shift (+ residual, LeakyReLU);
 *                      vectors of 4 float / 8 __half when x, residual, their pitches
 *                      and nc allow, else one channel at a time. */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/grid_walk.cuh"

namespace swin_cuda {

/* Part p covers voxels [p chunk, min((p + 1) chunk, nvox)). */
template <class T>
__global__ void __launch_bounds__(256) instnorm_partial(const T *x, int pitch, long long nvox, int c0, int nc,
                                                        long long chunk, double *partial)
{
    __shared__ double s1[8][32], s2[8][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int ch = blockIdx.y * 32 + tx;
    const long long b = (long long)blockIdx.x * chunk, e = b + chunk < nvox ? b + chunk : nvox;
    double a1 = 0.0, a2 = 0.0, k = 0.0;
    if (ch < nc) {
        k = (double)ldf(x + b * pitch + c0 + ch);
        for (long long v = b + ty; v < e; v += 8) {
            const double d = (double)ldf(x + v * pitch + c0 + ch) - k;
            a1 += d;
            a2 = fma(d, d, a2);
        }
    }
    s1[ty][tx] = a1;
    s2[ty][tx] = a2;
    __syncthreads();
    if (ty == 0 && ch < nc) {
        double t1 = 0.0, t2 = 0.0;
        for (int i = 0; i < 8; i++) {
            t1 += s1[i][tx];
            t2 += s2[i][tx];
        }
        const double n = (double)(e - b), m = t1 / n;
        partial[(long long)blockIdx.x * SWIN_CUDA_RED_CH + ch] = k + m;
        partial[(long long)(SWIN_CUDA_RED_PARTS / 2 + blockIdx.x) * SWIN_CUDA_RED_CH + ch] = fmax(t2 - t1 * m, 0.0);
    }
}

/* parts > 0: merge the parts (chunk voxels each, the last nvox - (parts - 1) chunk) into
 * mean, scale = rstd * gamma, shift = beta (gamma 1, beta 0 without gamma);
 * parts == 0 (no normalisation): mean 0, scale gamma, shift beta. */
template <class T>
__global__ void __launch_bounds__(256) instnorm_finalize(int parts, long long chunk, long long nvox, int nc, int c0,
                                                         const double *partial, double *mean_out, float *scale,
                                                         float *shift,
                                                         const T *gamma, const T *beta)
{
    for (int ch = threadIdx.x; ch < nc; ch += blockDim.x) {
        const float g = gamma ? ldf(gamma + c0 + ch) : 1.0f, bt = gamma ? ldf(beta + c0 + ch) : 0.0f;
        if (parts == 0) {
            mean_out[ch] = 0.0;
            scale[ch] = g;
            shift[ch] = bt;
            continue;
        }
        const double n = (double)nvox, last = (double)(nvox - (long long)(parts - 1) * chunk);
        double s = 0.0;
        for (int p = 0; p < parts; p++)
            s += (p + 1 < parts ? (double)chunk : last) * partial[(long long)p * SWIN_CUDA_RED_CH + ch];
        const double mean = s / n;
        double m2 = 0.0;
        for (int p = 0; p < parts; p++) {
            const double d = partial[(long long)p * SWIN_CUDA_RED_CH + ch] - mean;
            m2 += partial[(long long)(SWIN_CUDA_RED_PARTS / 2 + p) * SWIN_CUDA_RED_CH + ch] +
                  (p + 1 < parts ? (double)chunk : last) * d * d;
        }
        mean_out[ch] = mean;
        scale[ch] = (float)((double)g / sqrt(m2 / n + 1e-5));
        shift[ch] = bt;
    }
}

/* VW channels per step: 1, or vec16_elems<T>() (16-byte loads and stores; the host
 * checks the alignment of x + c0, res + c0 and the pitches). */
template <class T, int VW>
__global__ void __launch_bounds__(256) instnorm_apply(T *x, int pitch, long long nvox, int c0, int nc,
                                                      const double *mean, const float *scale, const float *shift,
                                                      const T *res, int res_pitch, bool lrelu)
{
    const int nvec = nc / VW;
    for (RowColWalk w(nvec); w.row < nvox; w.next(nvec)) {
        const int ch = w.col * VW;
        T *p = x + w.row * pitch + c0 + ch;
        const T *q = res ? res + w.row * res_pitch + c0 + ch : nullptr;
        float y[VW], r[VW];
        if constexpr (VW == 1) {
            y[0] = ldf(p);
            if (q) r[0] = ldf(q);
        } else {
            ld16(p, y);
            if (q) ld16(q, r);
        }
#pragma unroll
        for (int k = 0; k < VW; k++) {
            float v = fmaf(y[k] - (float)mean[ch + k], scale[ch + k], shift[ch + k]);
            if (q) v += r[k];
            if (lrelu && v < 0.0f) v *= 0.01f;
            y[k] = v;
        }
        if constexpr (VW == 1)
            stf(p, y[0]);
        else
            st16(p, y);
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
    const int parts = (int)(want < SWIN_CUDA_RED_PARTS / 2 ? want : SWIN_CUDA_RED_PARTS / 2);
    const long long chunk = (nvox + parts - 1) / parts;
    /* ceil-sized chunks can leave the tail parts empty: launch only the nonempty ones */
    const int used = normalize ? (int)((nvox + chunk - 1) / chunk) : 0;
    const unsigned apply_blocks = swin_cuda_blocks(nvox * SWIN_CUDA_RED_CH, 256);
    for (int c0 = 0; c0 < x.c; c0 += SWIN_CUDA_RED_CH) {
        const int nc = x.c - c0 < SWIN_CUDA_RED_CH ? x.c - c0 : SWIN_CUDA_RED_CH;
        if (normalize)
            SWIN_LAUNCH(instnorm_partial<T>, dim3(used, swin_cuda_blocks(nc, 32)), dim3(32, 8), 0, be->stream)(
                xd, x.pitch, nvox, c0, nc, chunk, be->red);
        SWIN_LAUNCH(instnorm_finalize<T>, dim3(1), dim3(256), 0, be->stream)(
            used, chunk, nvox, nc, c0, be->red, be->mean, be->scale, be->shift, g, b);
        constexpr int VW = vec16_elems<T>();
        const bool vec = nc % VW == 0 && vec16_ok<T>(xd + c0, x.pitch) && (!rd || vec16_ok<T>(rd + c0, residual->pitch));
        const dim3 apply_grid(apply_blocks < 4096 ? apply_blocks : 4096);
        if (vec)
            SWIN_LAUNCH((instnorm_apply<T, VW>), apply_grid, dim3(256), 0, be->stream)(
                xd, x.pitch, nvox, c0, nc, be->mean, be->scale, be->shift, rd, residual ? residual->pitch : 0, lrelu);
        else
            SWIN_LAUNCH((instnorm_apply<T, 1>), apply_grid, dim3(256), 0, be->stream)(
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
