/* wmma kernels: GEMMs with fp16, bf16 and tf32 fragments, and three misuses. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_wmma.h"

using namespace nvcuda;

template <typename T> __global__ void to_16bit(const float *in, T *out, int n);
template <> __global__ void to_16bit<__half>(const float *in, __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __float2half_rn(in[i]);
}
template <> __global__ void to_16bit<__nv_bfloat16>(const float *in, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __float2bfloat16_rn(in[i]);
}

/* One warp per 16x16 tile of C; warps past the last tile exit together. */
template <typename T> __global__ void gemm16(const T *a, const T *b, float *c, int m, int n, int k, float alpha)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, tiles_n = n / 16;
    int tm = warp / tiles_n, tn = warp % tiles_n;
    if (tm * 16 >= m)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + tm * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + tn * 16 * k + kk, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    for (int i = 0; i < acc.num_elements; i++) /* elementwise: layout-independent */
        acc.x[i] *= alpha;
    wmma::store_matrix_sync(c + tm * 16 * n + tn * 16, acc, n, wmma::mem_row_major);
}

__global__ void gemm_tf32(const float *a, const float *b, float *c, int m, int n, int k)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, tiles_n = n / 16;
    int tm = warp / tiles_n, tn = warp % tiles_n;
    if (tm * 16 >= m)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 8) {
        wmma::load_matrix_sync(fa, a + tm * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + tn * 16 * k + kk, k);
        for (int i = 0; i < fa.num_elements; i++)
            fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
        for (int i = 0; i < fb.num_elements; i++)
            fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tn * 16 * m + tm * 16, acc, m, wmma::mem_col_major);
}

__global__ void assume_layout(const float *in, float *out)
{
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, in, 16, wmma::mem_row_major);
    int lane = threadIdx.x % 32;
    for (int i = 0; i < acc.num_elements; i++) /* wrong: slot-to-element mapping is unspecified */
        out[lane * acc.num_elements + i] = acc.x[i];
}

__global__ void poke_fragment(const __half *a, const __half *b, float *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    if (threadIdx.x == 0) /* wrong: changes "element 0" by position */
        fa.x[0] = __float2half(100.0f);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

__global__ void misaligned_load(const float *c, float *out)
{
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, c + 1, 16, wmma::mem_row_major); /* wrong: c + 1 is 4-byte aligned */
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

static int warps_grid(int m, int n)
{
    return (m / 16 * (n / 16) + 3) / 4; /* 4 warps per block */
}

extern "C" {
cudaError_t kwm_to_half(const float *in, void *out, int n)
{
    SWIN_LAUNCH(to_16bit<__half>, (n + 127) / 128, 128)(in, static_cast<__half *>(out), n);
    return cudaGetLastError();
}

cudaError_t kwm_to_bf16(const float *in, void *out, int n)
{
    SWIN_LAUNCH(to_16bit<__nv_bfloat16>, (n + 127) / 128, 128)(in, static_cast<__nv_bfloat16 *>(out), n);
    return cudaGetLastError();
}

cudaError_t kwm_gemm_f16(const void *a, const void *b, float *c, int m, int n, int k, float alpha)
{
    SWIN_LAUNCH((gemm16<__half>), warps_grid(m, n), 128)(static_cast<const __half *>(a),
                                                          static_cast<const __half *>(b), c, m, n, k, alpha);
    return cudaGetLastError();
}

cudaError_t kwm_gemm_bf16(const void *a, const void *b, float *c, int m, int n, int k, float alpha)
{
    SWIN_LAUNCH((gemm16<__nv_bfloat16>), warps_grid(m, n), 128)(
        static_cast<const __nv_bfloat16 *>(a), static_cast<const __nv_bfloat16 *>(b), c, m, n, k, alpha);
    return cudaGetLastError();
}

cudaError_t kwm_gemm_tf32(const float *a, const float *b, float *c, int m, int n, int k)
{
    SWIN_LAUNCH(gemm_tf32, warps_grid(m, n), 128)(a, b, c, m, n, k);
    return cudaGetLastError();
}

cudaError_t kwm_assume_layout(const float *in, float *out)
{
    SWIN_LAUNCH(assume_layout, 1, 32)(in, out);
    return cudaGetLastError();
}

cudaError_t kwm_poke_fragment(const void *a, const void *b, float *c)
{
    SWIN_LAUNCH(poke_fragment, 1, 32)(static_cast<const __half *>(a), static_cast<const __half *>(b), c);
    return cudaGetLastError();
}

cudaError_t kwm_misaligned_load(const float *c, float *out)
{
    SWIN_LAUNCH(misaligned_load, 1, 32)(c, out);
    return cudaGetLastError();
}
}
