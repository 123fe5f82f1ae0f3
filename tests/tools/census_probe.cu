// Kernels whose main-loop machine code is known, for test_sass_census.py. Each loop is
// kept rolled (#pragma unroll 1), so one iteration is one pass of the source loop.
#include <cuda_fp16.h>
#include <mma.h>

// A store loop (no FFMA) first, then the main loop: per iteration one 16-byte shared
// load (LDS.128) and exactly 8 dependent FFMA.
extern "C" __global__ void probe_ffma(float *out, int n)
{
    __shared__ float4 s4[64];
    float *s = reinterpret_cast<float *>(s4);
#pragma unroll 1
    for (int i = threadIdx.x; i < 256; i += blockDim.x) s[i] = (float)(i * 3);
    __syncthreads();
    float a = out[threadIdx.x], b = out[threadIdx.x + blockDim.x];
#pragma unroll 1
    for (int i = 0; i < n; i++) {
        const float4 v = s4[(i + threadIdx.x) & 63];
        a = fmaf(a, v.x, v.y);
        b = fmaf(b, v.z, v.w);
        a = fmaf(a, b, v.x);
        b = fmaf(b, a, v.y);
        a = fmaf(a, v.z, b);
        b = fmaf(b, v.w, a);
        a = fmaf(a, a, v.x);
        b = fmaf(b, b, v.y);
    }
    out[threadIdx.x] = a + b;
}

// One wmma m16n16k16 (float16 in, float32 accumulate) per iteration: 16 x 16 x 16 = 4096
// multiply-adds per warp, two HMMA.16816 on sm_80 and sm_90.
extern "C" __global__ void probe_hmma(float *out, const __half *a, const __half *b, int n)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll 1
    for (int i = 0; i < n; i++) {
        wmma::load_matrix_sync(fa, a + 256 * i, 16);
        wmma::load_matrix_sync(fb, b + 256 * i, 16);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
