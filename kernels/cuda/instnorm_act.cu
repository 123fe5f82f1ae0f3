/* instnorm_act, in place on x (D, H, W, C) channels-last:
 *   x = IN(x)        when normalize: per channel over all D H W voxels, biased variance, eps 1e-5
 *       * gamma + beta      when gamma != NULL
 *       + residual          when residual != NULL (same dims and c, own pitch), or
 *       + IN(residual) * its gamma + beta   when residual->normalize (its statistics as x's,
 *                           finalised into the second half of be->mean, scale, shift)
 *   x = LeakyReLU_0.01(x)   when lrelu
 * Statistics in double, deterministically (fixed partition, fixed order, no atomics), per
 * voxel part of swin_cuda_stats_parts (cuda_internal.cuh): each part's mean and M2 either
 * from the conv that wrote x (`stats`, filled by conv3d) or from one read of x into the
 * context's scratch be->red; then, in channel blocks of SWIN_CUDA_RED_CH (be->mean,
 * scale, shift):
 *   instnorm_partial   grid (parts, ceil(nc/32)), block (32 channels, 8 voxel lanes): per
 *                      part p of n_p voxels and channel, the sums S1, S2 of d = x - K_p,
 *                      K_p = x at the part's first voxel (the shift keeps S2 - S1^2 / n_p
 *                      free of cancellation), then mean_p = K_p + S1 / n_p and
 *                      M2_p = S2 - S1^2 / n_p, stored at pmean / pm2 [p pstride + ch];
 *   instnorm_finalize  one block, thread per channel, parts merged in order:
 *                      mean = sum n_p mean_p / n, M2 = sum (M2_p + n_p (mean_p - mean)^2)
 *                      (the exact pairwise-merge identity), var = M2 / n, scale = rstd
 *                      * gamma, shift = beta (1 and 0 without gamma); without
 *                      normalize mean 0, scale gamma, shift beta;
 *   instnorm_apply     grid-stride over (voxel, channel or 16-byte channel vector),
 *                      channel fastest, fp32, no division per element (grid_walk.cuh):
 *                      y = (x - mean) * scale + shift (+ residual, or + (r - rmean) rscale
 *                      + rshift, LeakyReLU);
 *                      vectors of 4 float / 8 __half when x, residual, their pitches
 *                      and nc allow, else one channel at a time.
 * groupnorm_act (ops.h) is the same with each channel's statistics those of its group of cpg
 * channels: in spans of whole groups, each block's parts (instnorm_partial, or the conv's)
 *   groupnorm_merge    one block, thread per group, its channels in order: each channel's
 *                      mean and M2 merged from its parts as above, then into the group's
 *                      by the pairwise update (equal voxel counts);
 *   groupnorm_coef     thread per channel: mean = its group's, scale = rstd * gamma, shift =
 *                      beta; then instnorm_apply as above. */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/grid_walk.cuh"

namespace swin_cuda {

/* Part p covers voxels [p chunk, min((p + 1) chunk, nvox)). */
template <class T>
__global__ void __launch_bounds__(256) instnorm_partial(const T *x, long long pitch, long long nvox, int c0, int nc,
                                                        long long chunk, double *pmean, double *pm2,
                                                        long long pstride)
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
        pmean[blockIdx.x * pstride + ch] = k + m;
        pm2[blockIdx.x * pstride + ch] = fmax(t2 - t1 * m, 0.0);
    }
}

/* parts > 0: merge the parts (chunk voxels each, the last nvox - (parts - 1) chunk; mean
 * and M2 of channel ch at pmean / pm2 [p pstride + ch]) into mean, scale = rstd * gamma,
 * shift = beta (gamma 1, beta 0 without gamma);
 * parts == 0 (no normalisation): mean 0, scale gamma, shift beta. */
template <class T>
__global__ void __launch_bounds__(256) instnorm_finalize(int parts, long long chunk, long long nvox, int nc, int c0,
                                                         const double *pmean, const double *pm2, long long pstride,
                                                         double *mean_out, float *scale, float *shift,
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
            s += (p + 1 < parts ? (double)chunk : last) * pmean[p * pstride + ch];
        const double mean = s / n;
        double m2 = 0.0;
        for (int p = 0; p < parts; p++) {
            const double d = pmean[p * pstride + ch] - mean;
            m2 += pm2[p * pstride + ch] + (p + 1 < parts ? (double)chunk : last) * d * d;
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
                                                      const T *res, int res_pitch, const double *rmean,
                                                      const float *rscale, const float *rshift, bool lrelu)
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
            if (q && rmean) v += fmaf(r[k] - (float)rmean[ch + k], rscale[ch + k], rshift[ch + k]);
            else if (q) v += r[k];
            if (lrelu && v < 0.0f) v *= 0.01f;
            y[k] = v;
        }
        if constexpr (VW == 1)
            stf(p, y[0]);
        else
            st16(p, y);
    }
}

/* Group norm's statistics (groupnorm_act): channels [c0, c0 + nc) of a span of whole groups of
 * cpg channels (span offset off = c0 - the span's first channel) merged into their groups'
 * mean and M2 (gmean, gm2 [group in span]), one thread per group, its channels in order, each
 * channel's mean and M2 merged from the parts as instnorm_finalize does; a group's first channel
 * starts it afresh. With n voxels a channel, merging channel k (k channels of n voxels merged
 * before) is the pairwise update with weights k n and n: mean += d / (k + 1), M2 += M2_c + d^2
 * n k / (k + 1). */
static __global__ void __launch_bounds__(256) groupnorm_merge(int parts, long long chunk, long long nvox, int nc,
                                                              int off, int cpg, const double *pmean, const double *pm2,
                                                              long long pstride, double *gmean, double *gm2)
{
    const int g0 = off / cpg, g1 = (off + nc - 1) / cpg;
    const double n = (double)nvox, last = (double)(nvox - (long long)(parts - 1) * chunk);
    for (int j = g0 + (int)threadIdx.x; j <= g1; j += blockDim.x) {
        const int b = j * cpg > off ? j * cpg : off, e = (j + 1) * cpg < off + nc ? (j + 1) * cpg : off + nc;
        for (int sc = b; sc < e; sc++) {
            const int ch = sc - off;
            double s = 0.0;
            for (int p = 0; p < parts; p++)
                s += (p + 1 < parts ? (double)chunk : last) * pmean[p * pstride + ch];
            const double mean = s / n;
            double m2 = 0.0;
            for (int p = 0; p < parts; p++) {
                const double d = pmean[p * pstride + ch] - mean;
                m2 += pm2[p * pstride + ch] + (p + 1 < parts ? (double)chunk : last) * d * d;
            }
            const int k = sc - j * cpg;
            if (k == 0) gmean[j] = gm2[j] = 0.0;
            const double d = mean - gmean[j];
            gmean[j] += d / (k + 1);
            gm2[j] += m2 + d * d * n * k / (k + 1);
        }
    }
}

/* The apply coefficients of channels [c0, c0 + nc) (span offset off) from their groups':
 * mean, scale = gamma / sqrt(M2 / (n cpg) + eps), shift = beta (1 and 0 without gamma). */
template <class T>
__global__ void __launch_bounds__(256) groupnorm_coef(long long nvox, int nc, int c0, int off, int cpg,
                                                      const double *gmean, const double *gm2, double *mean_out,
                                                      float *scale, float *shift, const T *gamma, const T *beta)
{
    for (int ch = threadIdx.x; ch < nc; ch += blockDim.x) {
        const int j = (off + ch) / cpg;
        const float g = gamma ? ldf(gamma + c0 + ch) : 1.0f, bt = gamma ? ldf(beta + c0 + ch) : 0.0f;
        mean_out[ch] = gmean[j];
        scale[ch] = (float)((double)g / sqrt(gm2[j] / ((double)nvox * cpg) + 1e-5));
        shift[ch] = bt;
    }
}

} // namespace swin_cuda

using namespace swin_cuda;

template <class T>
void swin_cuda_stats_of_volume(cudaStream_t s, const T *x, long long pitch, long long nvox, int c, double *stats)
{
    const struct swin_cuda_parts pp = swin_cuda_stats_parts(nvox);
    SWIN_LAUNCH(instnorm_partial<T>, dim3(pp.parts, swin_cuda_blocks(c, 32)), dim3(32, 8), 0, s)(
        x, pitch, nvox, 0, c, pp.chunk, stats, stats + (long long)pp.parts * c, (long long)c);
}
template void swin_cuda_stats_of_volume<float>(cudaStream_t, const float *, long long, long long, int, double *);
template void swin_cuda_stats_of_volume<__half>(cudaStream_t, const __half *, long long, long long, int, double *);

extern "C" size_t swin_cuda_conv3d_stats_bytes(void *, struct swin_vol out)
{
    const long long nvox = (long long)swin_vol_voxels(out);
    return SWIN_CUDA_ALIGN + swin_cuda_round((size_t)2 * swin_cuda_stats_parts(nvox).parts * out.c * sizeof(double));
}

/* The device copies of the norm's affine and its residual's (nullptr where absent); false with
 * the error recorded in be. */
template <class T>
static bool norm_affine(struct swin_cuda_backend *be, const char *op, struct swin_vol x, const float *gamma,
                        const float *beta, const struct swin_residual *residual, const T **g, const T **b,
                        const T **rg, const T **rb)
{
    *rg = *rb = nullptr;
    return swin_cuda_weight(be, op, "gamma", gamma, (size_t)x.c, g) &&
           swin_cuda_weight(be, op, "beta", beta, (size_t)x.c, b) &&
           (!residual || (swin_cuda_weight(be, op, "residual gamma", residual->gamma, (size_t)x.c, rg) &&
                          swin_cuda_weight(be, op, "residual beta", residual->beta, (size_t)x.c, rb)));
}

/* instnorm_apply on channels [c0, c0 + nc) of x with the coefficients in be->mean, scale,
 * shift (a normalised residual's in their second halves): 16-byte vectors where x, the
 * residual, their pitches and nc allow. */
template <class T>
static void apply_block(struct swin_cuda_backend *be, struct swin_vol x, const struct swin_residual *residual, int c0,
                        int nc, bool lrelu)
{
    T *xd = (T *)x.data;
    const T *rd = residual ? (const T *)residual->v.data : nullptr;
    const int rpitch = residual ? residual->v.pitch : 0;
    const double *rmean = residual && residual->normalize ? be->mean + SWIN_CUDA_RED_CH : nullptr;
    const float *rscale = be->scale + SWIN_CUDA_RED_CH, *rshift = be->shift + SWIN_CUDA_RED_CH;
    const long long nvox = (long long)swin_vol_voxels(x);
    const unsigned blocks = swin_cuda_blocks(nvox * SWIN_CUDA_RED_CH, 256);
    const dim3 grid(blocks < 4096 ? blocks : 4096);
    constexpr int VW = vec16_elems<T>();
    if (nc % VW == 0 && vec16_ok<T>(xd + c0, x.pitch) && (!rd || vec16_ok<T>(rd + c0, rpitch)))
        SWIN_LAUNCH((instnorm_apply<T, VW>), grid, dim3(256), 0, be->stream)(
            xd, x.pitch, nvox, c0, nc, be->mean, be->scale, be->shift, rd, rpitch, rmean, rscale, rshift, lrelu);
    else
        SWIN_LAUNCH((instnorm_apply<T, 1>), grid, dim3(256), 0, be->stream)(
            xd, x.pitch, nvox, c0, nc, be->mean, be->scale, be->shift, rd, rpitch, rmean, rscale, rshift, lrelu);
}

template <class T>
static int instnorm_act_typed(struct swin_cuda_backend *be, struct swin_vol x, const void *stats, bool normalize,
                              const float *gamma, const float *beta, const struct swin_residual *residual,
                              bool lrelu)
{
    const T *g, *b, *rg, *rb;
    if (!norm_affine<T>(be, "instnorm_act", x, gamma, beta, residual, &g, &b, &rg, &rb)) return SWIN_ERR_ARG;
    T *xd = (T *)x.data;
    const T *rd = residual ? (const T *)residual->v.data : nullptr;
    const int rpitch = residual ? residual->v.pitch : 0;
    const bool res_norm = residual && residual->normalize;
    /* the residual's coefficients: the second half of be->mean, scale, shift */
    double *rmean = be->mean + SWIN_CUDA_RED_CH;
    float *rscale = be->scale + SWIN_CUDA_RED_CH, *rshift = be->shift + SWIN_CUDA_RED_CH;
    const long long nvox = (long long)swin_vol_voxels(x);
    const struct swin_cuda_parts pp = swin_cuda_stats_parts(nvox);
    const double *st = stats ? (const double *)swin_cuda_align_ptr((void *)stats) : nullptr;
    double *red_m2 = be->red + SWIN_CUDA_RED_PARTS / 2 * SWIN_CUDA_RED_CH; /* be->red's M2 half */
    for (int c0 = 0; c0 < x.c; c0 += SWIN_CUDA_RED_CH) {
        const int nc = x.c - c0 < SWIN_CUDA_RED_CH ? x.c - c0 : SWIN_CUDA_RED_CH;
        /* the parts' means and M2s of channels c0.. : the conv's, or from a read of x */
        if (res_norm) {
            SWIN_LAUNCH(instnorm_partial<T>, dim3(pp.parts, swin_cuda_blocks(nc, 32)), dim3(32, 8), 0, be->stream)(
                rd, rpitch, nvox, c0, nc, pp.chunk, be->red, red_m2, (long long)SWIN_CUDA_RED_CH);
            SWIN_LAUNCH(instnorm_finalize<T>, dim3(1), dim3(256), 0, be->stream)(
                pp.parts, pp.chunk, nvox, nc, c0, be->red, red_m2, (long long)SWIN_CUDA_RED_CH, rmean, rscale, rshift,
                rg, rb);
        }
        const double *pmean = st ? st + c0 : be->red, *pm2 = st ? st + (long long)pp.parts * x.c + c0 : red_m2;
        const long long pstride = st ? x.c : SWIN_CUDA_RED_CH;
        if (normalize && !st)
            SWIN_LAUNCH(instnorm_partial<T>, dim3(pp.parts, swin_cuda_blocks(nc, 32)), dim3(32, 8), 0, be->stream)(
                xd, x.pitch, nvox, c0, nc, pp.chunk, be->red, red_m2, (long long)SWIN_CUDA_RED_CH);
        SWIN_LAUNCH(instnorm_finalize<T>, dim3(1), dim3(256), 0, be->stream)(
            normalize ? pp.parts : 0, pp.chunk, nvox, nc, c0, pmean, pm2, pstride, be->mean, be->scale, be->shift, g,
            b);
        apply_block<T>(be, x, residual, c0, nc, lrelu);
        int rc = swin_cuda_check_launch(be, "instnorm_act", "c%d on %dx%dx%d, channels %d+%d", x.c, x.d, x.h, x.w,
                                        c0, nc);
        if (rc) return rc;
    }
    return 0;
}

extern "C" int swin_cuda_instnorm_act(void *bev, struct swin_vol x, const void *stats, bool normalize,
                                      const float *gamma, const float *beta, const struct swin_residual *residual,
                                      bool lrelu)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? instnorm_act_typed<__half>(be, x, stats, normalize, gamma, beta, residual, lrelu)
                                 : instnorm_act_typed<float>(be, x, stats, normalize, gamma, beta, residual, lrelu);
}

/* The group statistics of v's channels [s0, s0 + ns) (whole groups of cpg) into gmean, gm2:
 * per block of SWIN_CUDA_RED_CH channels, the parts' means and M2s from the conv that wrote v
 * (st, over all c channels) or from a read of v, then merged into the groups. */
template <class T>
static void group_stats(struct swin_cuda_backend *be, const T *v, int pitch, int c, long long nvox,
                        const double *st, int s0, int ns, int cpg, double *gmean, double *gm2)
{
    const struct swin_cuda_parts pp = swin_cuda_stats_parts(nvox);
    double *red_m2 = be->red + SWIN_CUDA_RED_PARTS / 2 * SWIN_CUDA_RED_CH;
    for (int c0 = s0; c0 < s0 + ns; c0 += SWIN_CUDA_RED_CH) {
        const int nc = s0 + ns - c0 < SWIN_CUDA_RED_CH ? s0 + ns - c0 : SWIN_CUDA_RED_CH;
        const double *pmean = st ? st + c0 : be->red, *pm2 = st ? st + (long long)pp.parts * c + c0 : red_m2;
        const long long pstride = st ? c : SWIN_CUDA_RED_CH;
        if (!st)
            SWIN_LAUNCH(instnorm_partial<T>, dim3(pp.parts, swin_cuda_blocks(nc, 32)), dim3(32, 8), 0, be->stream)(
                v, pitch, nvox, c0, nc, pp.chunk, be->red, red_m2, (long long)SWIN_CUDA_RED_CH);
        SWIN_LAUNCH(groupnorm_merge, dim3(1), dim3(256), 0, be->stream)(pp.parts, pp.chunk, nvox, nc, c0 - s0, cpg,
                                                                       pmean, pm2, pstride, gmean, gm2);
    }
}

/* groupnorm_act in spans of whole groups (as many as fit in SWIN_CUDA_RED_CH channels, or one
 * group of more): the residual's group statistics and x's into be->mean's group part (x's
 * means, x's M2s, the residual's means, its M2s), then per block of the span the
 * coefficients and instnorm_apply. */
template <class T>
static int groupnorm_act_typed(struct swin_cuda_backend *be, struct swin_vol x, const void *stats, int groups,
                               const float *gamma, const float *beta, const struct swin_residual *residual,
                               bool lrelu)
{
    const T *g, *b, *rg, *rb;
    if (!norm_affine<T>(be, "groupnorm_act", x, gamma, beta, residual, &g, &b, &rg, &rb)) return SWIN_ERR_ARG;
    const T *rd = residual ? (const T *)residual->v.data : nullptr;
    const bool res_norm = residual && residual->normalize;
    double *rmean = be->mean + SWIN_CUDA_RED_CH;
    float *rscale = be->scale + SWIN_CUDA_RED_CH, *rshift = be->shift + SWIN_CUDA_RED_CH;
    double *xgs = be->mean + 2 * SWIN_CUDA_RED_CH, *rgs = be->mean + 4 * SWIN_CUDA_RED_CH;
    const long long nvox = (long long)swin_vol_voxels(x);
    const double *st = stats ? (const double *)swin_cuda_align_ptr((void *)stats) : nullptr;
    const int cpg = x.c / groups;
    const int span = cpg <= SWIN_CUDA_RED_CH ? SWIN_CUDA_RED_CH / cpg * cpg : cpg;
    for (int s0 = 0; s0 < x.c; s0 += span) {
        const int ns = x.c - s0 < span ? x.c - s0 : span;
        if (res_norm)
            group_stats<T>(be, rd, residual->v.pitch, x.c, nvox, nullptr, s0, ns, cpg, rgs, rgs + SWIN_CUDA_RED_CH);
        group_stats<T>(be, (const T *)x.data, x.pitch, x.c, nvox, st, s0, ns, cpg, xgs, xgs + SWIN_CUDA_RED_CH);
        for (int c0 = s0; c0 < s0 + ns; c0 += SWIN_CUDA_RED_CH) {
            const int nc = s0 + ns - c0 < SWIN_CUDA_RED_CH ? s0 + ns - c0 : SWIN_CUDA_RED_CH;
            if (res_norm)
                SWIN_LAUNCH(groupnorm_coef<T>, dim3(1), dim3(256), 0, be->stream)(
                    nvox, nc, c0, c0 - s0, cpg, rgs, rgs + SWIN_CUDA_RED_CH, rmean, rscale, rshift, rg, rb);
            SWIN_LAUNCH(groupnorm_coef<T>, dim3(1), dim3(256), 0, be->stream)(
                nvox, nc, c0, c0 - s0, cpg, xgs, xgs + SWIN_CUDA_RED_CH, be->mean, be->scale, be->shift, g, b);
            apply_block<T>(be, x, residual, c0, nc, lrelu);
            int rc = swin_cuda_check_launch(be, "groupnorm_act", "c%d in %d groups on %dx%dx%d, channels %d+%d", x.c,
                                            groups, x.d, x.h, x.w, c0, nc);
            if (rc) return rc;
        }
    }
    return 0;
}

extern "C" int swin_cuda_groupnorm_act(void *bev, struct swin_vol x, const void *stats, int groups,
                                       const float *gamma, const float *beta, const struct swin_residual *residual,
                                       bool lrelu)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? groupnorm_act_typed<__half>(be, x, stats, groups, gamma, beta, residual, lrelu)
                                 : groupnorm_act_typed<float>(be, x, stats, groups, gamma, beta, residual, lrelu);
}
