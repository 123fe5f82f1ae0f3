/* Per-tile instance-norm statistics in the conv kernels' epilogue (conv_igemm.cuh), for a
 * conv whose output an instance norm reads next (epilogue ConvStoreStats).
 *
 * For each column n of a 128-row output tile, the mean and M2 (sum of squared deviations
 * from the mean) of the values as stored (after bias, rounded to T), over the tile's valid
 * rows, go to tmean / tm2 [tile][n] (float [ceil(M / 128)][N]); conv_stats.cu merges the
 * tiles into the instance norm's voxel parts. Within a tile, in two steps:
 *   1. TILE_SEGS = 16 row segments of at most 8 rows: one thread computes a segment's
 *      (mean, M2, count) of one column, two passes over its <= 8 values, and writes
 *      them to a shared scratch float [3][16][BN];
 *   2. thread c < cols merges column c's 16 segments in segment order (in float, two
 *      passes: tile_merge_segments), so the result does not depend on scheduling.
 * Both steps are straight-line code (unrolled); bench/sass/sass_census.py counts what they add
 * to a conv tile (stats_epilogue). */
#ifndef SWIN_CUDA_CONV_TILE_STATS_CUH
#define SWIN_CUDA_CONV_TILE_STATS_CUH

#include <type_traits>

#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

constexpr int TILE_SEGS = 16, TILE_SEG_ROWS = 8;

/* out[m ldc + n] = acc + bias[n] (bias may be NULL), stored as T. The kernel walks a
 * column's rows with a pointer (at(), then + ldc per row), adds bias_at(n), read once
 * per column, and put() returns the value as stored; it fills tmean / tm2 (header
 * comment). Only with one K split. */
template <class T> struct ConvStoreStats {
    T *out;
    long long ldc;
    const T *bias;
    float *tmean, *tm2;
    __device__ float bias_at(int n) const { return bias ? ldf(bias + n) : 0.0f; }
    __device__ T *at(long long m, int n) const { return out + m * ldc + n; }
    /* v rounded to T, stored at p when `store`. */
    __device__ float put(T *p, float v, bool store) const
    {
        T t;
        stf(&t, v);
        if (store) *p = t;
        return ldf(&t);
    }
};

template <class Epi> struct ConvTileStats : std::false_type {};
template <class T> struct ConvTileStats<ConvStoreStats<T>> : std::true_type {};

/* Step 1: the moments of one (segment, column). */
struct SegMoments {
    float mean, m2;
    int n;
};
/* Mean and M2 of v[0 .. n), n <= R. */
template <int R> __device__ inline SegMoments seg_moments(const float (&v)[R], int n)
{
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < R; i++)
        if (i < n) sum += v[i];
    const float mean = n > 0 ? __fdividef(sum, (float)n) : 0.0f;
    float m2 = 0.0f;
#pragma unroll
    for (int i = 0; i < R; i++)
        if (i < n) m2 = fmaf(v[i] - mean, v[i] - mean, m2);
    return SegMoments{mean, m2, n};
}
template <int BN> __device__ inline void tile_put_segment(float *scratch, int seg, int col, SegMoments s)
{
    scratch[seg * BN + col] = s.mean;
    scratch[(TILE_SEGS + seg) * BN + col] = s.m2;
    scratch[(2 * TILE_SEGS + seg) * BN + col] = (float)s.n;
}
/* Bytes of the scratch. */
template <int BN> struct TileScratch {
    static constexpr int bytes = 3 * TILE_SEGS * BN * (int)sizeof(float);
};

/* Step 2 by thread c = threadIdx.x < cols (BN <= the block's threads); tmean / tm2 point at
 * the tile's row, column n0. Two passes over the 16 segments (n_s, mean_s, M2_s):
 * mean = sum n_s mean_s / n, M2 = sum M2_s + n_s (mean_s - mean)^2 (the exact merge
 * identity: no cancellation). */
template <int BN> __device__ inline void tile_merge_segments(const float *scratch, int cols, float *tmean, float *tm2)
{
    const int c = threadIdx.x;
    if (c >= cols) return;
    float n = 0.0f, sum = 0.0f;
#pragma unroll
    for (int s = 0; s < TILE_SEGS; s++) {
        const float ns = scratch[(2 * TILE_SEGS + s) * BN + c];
        n += ns;
        sum = fmaf(ns, scratch[s * BN + c], sum);
    }
    const float mean = __fdividef(sum, n);
    float m2 = 0.0f;
#pragma unroll
    for (int s = 0; s < TILE_SEGS; s++) {
        const float d = scratch[s * BN + c] - mean;
        m2 += fmaf(scratch[(2 * TILE_SEGS + s) * BN + c] * d, d, scratch[(TILE_SEGS + s) * BN + c]);
    }
    tmean[c] = mean;
    tm2[c] = m2;
}

} // namespace swin_cuda

#endif
