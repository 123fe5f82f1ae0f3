/* splitk_reduce: the second half of a split-K GEMM (gemm.cuh):
 *   out[m ldc + n] = bias[n] + sum_{z < splits} part[(z M + m) N + n]
 * summed in z order, so the result does not depend on scheduling. Grid-stride over
 * (m, n) with n fastest (coalesced on both sides), 256 threads, no shared memory. */
#include "kernels/cuda/gemm.cuh"

namespace swin_cuda {

template <class T>
__global__ void __launch_bounds__(256) splitk_reduce(T *out, long long ldc, const float *part, int splits, long long M,
                                                     int N, const T *bias)
{
    const long long n_el = M * N;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n_el;
         e += (long long)gridDim.x * blockDim.x) {
        const long long m = e / N;
        const int n = (int)(e % N);
        float v = 0.0f;
        for (int z = 0; z < splits; z++) v += part[z * n_el + e];
        stf(out + m * ldc + n, bias ? v + ldf(bias + n) : v);
    }
}

} // namespace swin_cuda

template <class T>
void swin_cuda_splitk_reduce(cudaStream_t s, T *out, long long ldc, const float *part, int splits, long long M, int N,
                             const T *bias)
{
    const unsigned blocks = swin_cuda_blocks(M * N, 256);
    SWIN_LAUNCH(swin_cuda::splitk_reduce<T>, dim3(blocks < 4096 ? blocks : 4096), dim3(256), 0, s)(out, ldc, part,
                                                                                                 splits, M, N, bias);
}
template void swin_cuda_splitk_reduce<float>(cudaStream_t, float *, long long, const float *, int, long long, int,
                                             const float *);
template void swin_cuda_splitk_reduce<__half>(cudaStream_t, __half *, long long, const float *, int, long long, int,
                                              const __half *);
