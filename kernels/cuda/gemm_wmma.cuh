/* gemm_wmma: the half-mode GEMM on tensor cores (nvcuda::wmma, m16n16k16, float16 inputs,
 * float32 accumulators), with the same contract as gemm_tiled (gemm.cuh): per batch
 * index z, C_z (M x N) = A_z (M x K) . B_z (K x N); A through the loader functor, B the
 * float16 weight matrix (K x N, leading dimension ldb), every result through the
 * epilogue functor `ep.store(blockIdx.z, m, n, acc)`, split-K by blockIdx.z.
 *
 * Tiling: a block of 128 threads (4 warps) computes a 64 x 64 tile of C in k-steps of 16.
 * Per k-step the block stages A (64 x 16) and B (16 x 64) in shared memory as float16
 * (A's loader converts to float and back: exact, A is float16 storage already), and
 * warp w multiplies its 32 x 32 quarter (rows 32 (w / 2), columns 32 (w % 2)) as 2 x 2
 * accumulator fragments. Thread t fetches A row t / 2, columns 8 (t % 2) .. + 8 of the
 * k-step (one row context, 8 column contexts) and B row t / 8, columns 8 (t % 8) .. + 8.
 * Out-of-range rows, columns and k are staged as zeros, so partial tiles need no special
 * case in the MMA. At the end the fragments go to a float32 shared tile (64 x 68) from
 * which each thread hands 32 results to the epilogue, consecutive in n across the block.
 * Shared memory: as 64 x 24 halves (3 KiB), bs 16 x 72 halves (2.25 KiB), cs 64 x 68
 * floats (17 KiB); leading dimensions are multiples of 16 bytes and fragment pointers
 * 32-byte aligned, as wmma requires. Single-buffered: two barriers per k-step.
 * Rounding: products of float16 values are exact in float32 and sums stay float32, like
 * gemm_tiled on the same float16 data; only the summation order differs. */
#ifndef SWIN_CUDA_GEMM_WMMA_CUH
#define SWIN_CUDA_GEMM_WMMA_CUH

#include "kernels/cuda/cuda_internal.cuh"

#ifndef SWIN_EMU
#include <mma.h>
#endif

namespace swin_cuda {

constexpr int WMMA_BM = 64, WMMA_BN = 64, WMMA_BK = 16, WMMA_THREADS = 128;
constexpr int WMMA_LDA = WMMA_BK + 8, WMMA_LDB = WMMA_BN + 8, WMMA_LDC = WMMA_BN + 4;

template <class ALoad, class Epi>
__global__ void __launch_bounds__(WMMA_THREADS)
    gemm_wmma(ALoad a, const __half *__restrict__ b, long long b_zstride, int ldb, Epi ep, int M, int N, int K,
              int splits, int k_split)
{
    using namespace nvcuda;
    __shared__ __align__(32) __half as[WMMA_BM][WMMA_LDA];
    __shared__ __align__(32) __half bs[WMMA_BK][WMMA_LDB];
    __shared__ __align__(32) float cs[WMMA_BM][WMMA_LDC];
    const int tid = threadIdx.x, warp = tid / 32;
    const long long m0 = (long long)blockIdx.x * WMMA_BM;
    const int n0 = blockIdx.y * WMMA_BN, z = blockIdx.z / splits, split = blockIdx.z % splits;
    const int kbeg = split * k_split, kend = kbeg + k_split < K ? kbeg + k_split : K;
    const __half *bz = b + z * b_zstride;

    /* This thread's A row (staging) and its context. */
    const int ar = tid / 2, ac0 = 8 * (tid % 2);
    const long long am = m0 + ar;
    const bool arow_ok = am < M;
    typename ALoad::Row arow{};
    if (arow_ok) arow = a.row(z, am);
    const int br = tid / 8, bc0 = 8 * (tid % 8);

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    const int wr = 32 * (warp / 2), wc = 32 * (warp % 2);

    for (int k0 = kbeg; k0 < kend; k0 += WMMA_BK) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int k = k0 + ac0 + i;
            as[ar][ac0 + i] = __float2half_rn(arow_ok && k < kend ? a.load(arow, a.col(k)) : 0.0f);
        }
        const int kb = k0 + br;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int n = n0 + bc0 + i;
            bs[br][bc0 + i] = kb < kend && n < N ? bz[(long long)kb * ldb + n] : __float2half_rn(0.0f);
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
#pragma unroll
        for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], &as[wr + 16 * i][0], WMMA_LDA);
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &bs[0][wc + 16 * j], WMMA_LDB);
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        __syncthreads();  /* as/bs are refilled next step */
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(&cs[wr + 16 * i][wc + 16 * j], acc[i][j], WMMA_LDC, wmma::mem_row_major);
    __syncthreads();
    for (int e = tid; e < WMMA_BM * WMMA_BN; e += WMMA_THREADS) {
        const int r = e / WMMA_BN, c = e % WMMA_BN;
        const long long m = m0 + r;
        const int n = n0 + c;
        if (m < M && n < N) ep.store(blockIdx.z, m, n, cs[r][c]);
    }
}

} // namespace swin_cuda

#endif
