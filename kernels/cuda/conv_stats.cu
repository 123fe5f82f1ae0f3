/* conv_stats: the statistics buffer (cuda_internal.cuh) of a conv output from the
 * per-tile statistics its kernel left (conv_tile_stats.cuh):
 *   part p = tiles [p G, min((p + 1) G, tiles)), G = chunk / 128, merged in tile order
 *   in double (moments_merge), tile t holding min(128, M - 128 t) rows.
 * Grid (parts, ceil(N / 128)), thread per channel: reads of tmean / tm2 [t][N] are
 * consecutive across the threads. */
#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

/* (n, mean, m2) of a set of values absorbs the set (nb, mean_b, m2_b) after it, the exact
 * pairwise-merge identity: d = mean_b - mean, mean += d nb / (n + nb),
 * m2 += m2_b + d^2 n nb / (n + nb). */
__device__ inline void moments_merge(double &n, double &mean, double &m2, double nb, double mean_b, double m2_b)
{
    const double tot = n + nb, d = mean_b - mean, r = nb / tot;
    mean += d * r;
    m2 += m2_b + d * d * n * r;
    n = tot;
}

static __global__ void __launch_bounds__(128) stats_merge_tiles(const float *tmean, const float *tm2, long long M, int N,
                                                         int tiles_per_part, int parts, double *stats)
{
    const int ch = blockIdx.y * blockDim.x + threadIdx.x;
    if (ch >= N) return;
    const long long tiles = (M + SWIN_CUDA_STATS_TILE - 1) / SWIN_CUDA_STATS_TILE,
                    t0 = (long long)blockIdx.x * tiles_per_part,
                    t1 = t0 + tiles_per_part < tiles ? t0 + tiles_per_part : tiles;
    double n = 0.0, mean = 0.0, m2 = 0.0;
    for (long long t = t0; t < t1; t++) {
        const long long left = M - t * SWIN_CUDA_STATS_TILE;
        moments_merge(n, mean, m2, (double)(left < SWIN_CUDA_STATS_TILE ? left : SWIN_CUDA_STATS_TILE),
                              tmean[t * N + ch], tm2[t * N + ch]);
    }
    stats[(long long)blockIdx.x * N + ch] = mean;
    stats[((long long)parts + blockIdx.x) * N + ch] = m2;
}

} // namespace swin_cuda

void swin_cuda_stats_of_tiles(cudaStream_t s, const float *tmean, const float *tm2, long long M, int N,
                              double *stats)
{
    const struct swin_cuda_parts pp = swin_cuda_stats_parts(M);
    SWIN_LAUNCH(swin_cuda::stats_merge_tiles, dim3(pp.parts, swin_cuda_blocks(N, 128)), dim3(128), 0, s)(
        tmean, tm2, M, N, (int)(pp.chunk / SWIN_CUDA_STATS_TILE), pp.parts, stats);
}
