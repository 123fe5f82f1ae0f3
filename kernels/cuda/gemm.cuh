/* gemm_tiled: the backend's float32 GEMM, used by every linear layer and convolution
 * (half mode runs the same contract on tensor cores: gemm_wmma.cuh).
 *
 *   for each batch index z (gridDim.z):   C_z(M x N) = A_z(M x K) . B_z(K x N)
 *
 * B is a row-major weight matrix in the model layout (in, out) = (K x N), leading
 * dimension ldb, B_z = b + z * b_zstride. A is read through a loader functor, so A can be
 * plain rows with a pitch, an implicit im2col of a channels-last volume (conv3d.cu) or
 * anything else addressable per element:
 *   typename ALoad::Row  a.row(z, m)   per output row m < M, once per block
 *   typename ALoad::Col  a.col(k)      per column k < K, once per k-step and thread
 *   float a.load(row, col)             the element A(m, k)
 * Each result goes through an epilogue functor `void ep.store(z, m, n, acc)` (called once
 * per m < M, n < N), which adds bias, applies GELU, accumulates into the residual stream
 * or scatters to a voxel.
 *
 * Tiling: BM = 128 rows x BN = 16 TN columns (TN = 4: 64, TN = 3: 48, picked per N by
 * gemm_launch so that e.g. N = 48 or 144 wastes no column) per block of 256 threads;
 * K in steps of BK = 16. Thread (tx = tid % 16, ty = tid / 16) owns the 8 x TN register
 * tile at rows 8 ty + i, columns tx + 16 j: its 8 A values per k are two float4 shared
 * loads (2 distinct addresses per warp: broadcasts), its TN B values consecutive in n
 * across the half-warp (conflict-free), so a k costs 2 + TN shared loads for 8 TN FMAs;
 * epilogue stores are consecutive in n. The same thread fetches A at rows 8 ty + i
 * (i < 8), column tx of the k-step, and stores them as two float4 (row and column
 * contexts are computed once per row and once per k-step, not per element).
 * Shared memory, double buffered (one barrier per k-step; the next tile is fetched into
 * registers while the current one is multiplied): as[2][16][128 + 4] (16.5 KiB, k-major)
 * and bs[2][16][BN] (8 or 6 KiB). fp32 fmaf accumulation, k in order within a tile.
 * Grid: (ceil(M / 128), ceil(N / BN), Z splits); M tiles on x because M (voxels) can
 * exceed the 65535 limit of grid y. blockIdx.z = batch index * splits + split index: the
 * loader, B and the epilogue's z see the batch index (conv_transpose2's taps), and split s
 * covers k in [s k_split, (s+1) k_split) (split-K for small M x N with long K; the
 * epilogue then writes partial sums, see gemm_splits and splitk_reduce). */
#ifndef SWIN_CUDA_GEMM_CUH
#define SWIN_CUDA_GEMM_CUH

#include <type_traits>

#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/gemm_wmma.cuh"

namespace swin_cuda {

constexpr int GEMM_BM = 128, GEMM_BK = 16, GEMM_THREADS = 256, GEMM_TM = 8;

template <int TN, class ALoad, class Epi>
__global__ void __launch_bounds__(GEMM_THREADS)
    gemm_tiled(ALoad a, const float *__restrict__ b, long long b_zstride, int ldb, Epi ep, int M, int N, int K,
               int splits, int k_split)
{
    constexpr int BN = 16 * TN, BLOADS = GEMM_BK * BN / GEMM_THREADS;
    __shared__ __align__(16) float as[2][GEMM_BK][GEMM_BM + 4];
    __shared__ float bs[2][GEMM_BK][BN];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const long long m0 = (long long)blockIdx.x * GEMM_BM;
    const int n0 = blockIdx.y * BN, z = blockIdx.z / splits, split = blockIdx.z % splits;
    const int kbeg = split * k_split, kend = kbeg + k_split < K ? kbeg + k_split : K;
    const float *bz = b + z * b_zstride;

    /* This thread's A rows (8 ty + i) and column within the k-step (tx). */
    typename ALoad::Row rows[GEMM_TM];
    unsigned row_ok = 0;
#pragma unroll
    for (int i = 0; i < GEMM_TM; i++) {
        const long long m = m0 + 8 * ty + i;
        if (m < M) {
            rows[i] = a.row(z, m);
            row_ok |= 1u << i;
        }
    }
    float areg[GEMM_TM], breg[BLOADS];
    auto fetch = [&](int k0) {
        const int k = k0 + tx;
        if (k < kend) {
            const typename ALoad::Col col = a.col(k);
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++) areg[i] = (row_ok >> i & 1) ? a.load(rows[i], col) : 0.0f;
        } else {
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++) areg[i] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < BLOADS; i++) {
            const int e = tid + i * GEMM_THREADS, kb = e / BN, c = e % BN;
            breg[i] = (k0 + kb < kend && n0 + c < N) ? bz[(long long)(k0 + kb) * ldb + n0 + c] : 0.0f;
        }
    };
    auto stash = [&](int buf) {
        float4 *dst = reinterpret_cast<float4 *>(&as[buf][tx][8 * ty]);
        dst[0] = make_float4(areg[0], areg[1], areg[2], areg[3]);
        dst[1] = make_float4(areg[4], areg[5], areg[6], areg[7]);
#pragma unroll
        for (int i = 0; i < BLOADS; i++) {
            const int e = tid + i * GEMM_THREADS;
            bs[buf][e / BN][e % BN] = breg[i];
        }
    };

    float acc[GEMM_TM][TN];
#pragma unroll
    for (int i = 0; i < GEMM_TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    fetch(kbeg);
    stash(0);
    __syncthreads();
    for (int k0 = kbeg, buf = 0; k0 < kend; k0 += GEMM_BK, buf ^= 1) {
        const bool more = k0 + GEMM_BK < kend;
        if (more) fetch(k0 + GEMM_BK);
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk++) {
            const float4 a0 = reinterpret_cast<const float4 *>(&as[buf][kk][8 * ty])[0];
            const float4 a1 = reinterpret_cast<const float4 *>(&as[buf][kk][8 * ty])[1];
            const float av[GEMM_TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[TN];
#pragma unroll
            for (int j = 0; j < TN; j++) bv[j] = bs[buf][kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        /* The other buffer was last read before the previous barrier. */
        if (more) stash(buf ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < GEMM_TM; i++) {
        const long long m = m0 + 8 * ty + i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int n = n0 + tx + 16 * j;
            if (n < N) ep.store(blockIdx.z, m, n, acc[i][j]);
        }
    }
}

/* Column tile of N: 48 when 48-column tiles cover N with fewer wasted columns than 64. */
inline int gemm_col_tile(int N)
{
    return 48u * swin_cuda_blocks(N, 48) < 64u * swin_cuda_blocks(N, 64) ? 48 : 64;
}

/* Split-K factor of a single (batch 1) GEMM, a pure function of the shape: enough splits
 * to give the GPU ~256 blocks when the M x N tiles alone are fewer, each split at least
 * 512 of K (32 k-steps); 1 means no split. */
inline int gemm_splits(long long M, int N, int K)
{
    const long long tiles = (long long)swin_cuda_blocks(M, GEMM_BM) * swin_cuda_blocks(N, gemm_col_tile(N));
    long long s = (256 + tiles - 1) / tiles;
    if (s > K / 512) s = K / 512;
    return s > 1 ? (int)s : 1;
}

/* Launches the GEMM on stream s for `batch` problems of the same M, N, K, each split
 * into `splits` K ranges (batch 1 when splits > 1): gemm_tiled for float32 weights,
 * gemm_wmma (tensor cores, gemm_wmma.cuh) for float16 ones (half mode). */
template <class TB, class ALoad, class Epi>
void gemm_launch(cudaStream_t s, ALoad a, const TB *b, long long b_zstride, int ldb, Epi ep, int M, int N, int K,
                 int batch, int splits = 1)
{
    const int k_split = (K + splits - 1) / splits;
    if constexpr (std::is_same<TB, __half>::value) {
        const dim3 grid(swin_cuda_blocks(M, WMMA_BM), swin_cuda_blocks(N, WMMA_BN), (unsigned)(batch * splits));
        SWIN_LAUNCH((gemm_wmma<ALoad, Epi>), grid, dim3(WMMA_THREADS), 0, s)(a, b, b_zstride, ldb, ep, M, N, K, splits,
                                                                             k_split);
    } else {
        const int bn = gemm_col_tile(N);
        const dim3 grid(swin_cuda_blocks(M, GEMM_BM), swin_cuda_blocks(N, bn), (unsigned)(batch * splits));
        if (bn == 48)
            SWIN_LAUNCH((gemm_tiled<3, ALoad, Epi>), grid, dim3(GEMM_THREADS), 0, s)(a, b, b_zstride, ldb, ep, M,
                                                                                         N, K, splits, k_split);
        else
            SWIN_LAUNCH((gemm_tiled<4, ALoad, Epi>), grid, dim3(GEMM_THREADS), 0, s)(a, b, b_zstride, ldb, ep, M,
                                                                                         N, K, splits, k_split);
    }
}

/* Split-K partial sums, float32 in both modes: part[z M N + m N + n] = acc (z = split). */
struct StorePartial {
    float *part;
    long long M;
    int N;
    __device__ void store(int z, long long m, int n, float v) const { part[(z * M + m) * N + n] = v; }
};


/* A = rows of a matrix with pitch lda: A(m, k) = p[m lda + k] (the same for every z). */
template <class T> struct RowsA {
    const T *p;
    long long lda;
    typedef const T *Row;
    typedef int Col;
    __device__ Row row(int, long long m) const { return p + m * lda; }
    __device__ Col col(int k) const { return k; }
    __device__ float load(Row r, Col k) const { return ldf(r + k); }
};

/* out[m ldc + n] = acc + bias[n] (bias may be NULL), then GELU_erf when gelu. */
template <class T> struct StoreRows {
    T *out;
    long long ldc;
    const T *bias;
    bool gelu;
    __device__ void store(int, long long m, int n, float v) const
    {
        if (bias) v += ldf(bias + n);
        if (gelu) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
        stf(out + m * ldc + n, v);
    }
};

/* In place on a residual stream: out[m ldc + n] += acc + bias[n] (the sum in float32,
 * rounded once to T). */
template <class T> struct AddRows {
    T *out;
    long long ldc;
    const T *bias;
    __device__ void store(int, long long m, int n, float v) const
    {
        T *p = out + m * ldc + n;
        stf(p, ldf(p) + (v + ldf(bias + n)));
    }
};

} // namespace swin_cuda

/* out[m ldc + n] = bias[n] + sum over z in order of part[z M N + m N + n] (deterministic;
 * splitk_reduce.cu). T = float or __half. */
template <class T>
void swin_cuda_splitk_reduce(cudaStream_t s, T *out, long long ldc, const float *part, int splits, long long M, int N,
                             const T *bias);

#endif
