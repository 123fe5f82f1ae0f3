/* gemm_tiled: the backend's one fp32 GEMM, used by every linear layer and convolution.
 *
 *   for each batch index z (gridDim.z):   C_z(M x N) = A_z(M x K) . B_z(K x N)
 *
 * B is a row-major weight matrix in the model layout (in, out) = (K x N), leading
 * dimension ldb, B_z = b + z * b_zstride. A is read through a loader functor
 * `float a.load(z, m, k)` (called only for m < M, k < K), so A can be plain rows with a
 * pitch, an implicit im2col of a channels-last volume (conv3d.cu) or anything else that
 * is addressable per element. Each result goes through an epilogue functor
 * `void ep.store(z, m, n, acc)` (called once per m < M, n < N), which adds bias, applies
 * GELU, accumulates into the residual stream or scatters to a voxel.
 *
 * Tiling: 64 x 64 outputs per block of 256 threads, K in steps of 16; each thread owns a
 * 4 x 4 register tile at rows ty + 16 i, columns tx + 16 j (tx = tid % 16, ty = tid / 16),
 * so B reads and epilogue stores are consecutive in n across a half-warp.
 * Shared memory: A tile k-major as[16][64 + 4] (4.3 KiB) and B tile bs[16][64] (4 KiB).
 * fp32 accumulation in k order within a 16-step, fmaf. Grid: (ceil(M/64), ceil(N/64), Z);
 * M tiles on x because M (voxels) can exceed the 65535 limit of grid y. */
#ifndef SWIN_CUDA_GEMM_CUH
#define SWIN_CUDA_GEMM_CUH

#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

constexpr int GEMM_BM = 64, GEMM_BN = 64, GEMM_BK = 16, GEMM_THREADS = 256;

template <class ALoad, class Epi>
__global__ void __launch_bounds__(GEMM_THREADS)
    gemm_tiled(ALoad a, const float *__restrict__ b, long long b_zstride, int ldb, Epi ep, int M, int N, int K)
{
    __shared__ float as[GEMM_BK][GEMM_BM + 4];
    __shared__ float bs[GEMM_BK][GEMM_BN];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const long long m0 = (long long)blockIdx.x * GEMM_BM;
    const int n0 = blockIdx.y * GEMM_BN, z = blockIdx.z;
    const float *bz = b + z * b_zstride;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += GEMM_BK) {
#pragma unroll
        for (int i = 0; i < GEMM_BM * GEMM_BK / GEMM_THREADS; i++) {
            const int e = tid + i * GEMM_THREADS;
            const int r = e / GEMM_BK, kk = e % GEMM_BK;
            const long long m = m0 + r;
            const int k = k0 + kk;
            as[kk][r] = (m < M && k < K) ? a.load(z, m, k) : 0.0f;
            const int kb = e / GEMM_BN, c = e % GEMM_BN;
            bs[kb][c] = (k0 + kb < K && n0 + c < N) ? bz[(long long)(k0 + kb) * ldb + n0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk++) {
            float av[4], bv[4];
#pragma unroll
            for (int i = 0; i < 4; i++) av[i] = as[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++) bv[j] = bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long m = m0 + ty + 16 * i;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int n = n0 + tx + 16 * j;
            if (n < N) ep.store(z, m, n, acc[i][j]);
        }
    }
}

/* Launches gemm_tiled on stream s for Z = batch problems of the same M, N, K. */
template <class ALoad, class Epi>
void gemm_launch(cudaStream_t s, ALoad a, const float *b, long long b_zstride, int ldb, Epi ep, int M, int N, int K,
                 int batch)
{
    const dim3 grid(swin_cuda_blocks(M, GEMM_BM), swin_cuda_blocks(N, GEMM_BN), (unsigned)batch);
    SWIN_LAUNCH((gemm_tiled<ALoad, Epi>), grid, dim3(GEMM_THREADS), 0, s)(a, b, b_zstride, ldb, ep, M, N, K);
}

/* A = rows of a matrix with pitch lda: A(m, k) = p[m lda + k] (the same for every z). */
struct RowsA {
    const float *p;
    long long lda;
    __device__ float load(int, long long m, int k) const { return p[m * lda + k]; }
};

/* out[m ldc + n] = acc + bias[n] (bias may be NULL), then GELU_erf when gelu. */
struct StoreRows {
    float *out;
    long long ldc;
    const float *bias;
    bool gelu;
    __device__ void store(int, long long m, int n, float v) const
    {
        if (bias) v += bias[n];
        if (gelu) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
        out[m * ldc + n] = v;
    }
};

/* In place on a residual stream: out[m ldc + n] += acc + bias[n]. */
struct AddRows {
    float *out;
    long long ldc;
    const float *bias;
    __device__ void store(int, long long m, int n, float v) const
    {
        out[m * ldc + n] += v + bias[n];
    }
};

} // namespace swin_cuda

#endif
