/* Grid-stride walks over a (rows x cols) element range, column fastest, for the
 * elementwise kernels over channels-last volumes (row = voxel, col = channel or channel
 * vector), without a division per element: thread t starts at flat index t and steps by
 * the grid size S, so (row, col) advances by (S / cols, S % cols) plus one carry; the
 * two divisions happen once per thread.
 *
 *   for (RowColWalk w(cols); w.row < rows; w.next(cols)) { ... w.row, w.col ... }
 *
 * 16-byte vectors: ld16 / st16 move 16 / sizeof(T) elements (4 float, 8 __half) between
 * an aligned pointer and float32 registers; vec16_ok tells the host whether a pointer and
 * its pitches allow them. */
#ifndef SWIN_CUDA_GRID_WALK_CUH
#define SWIN_CUDA_GRID_WALK_CUH

#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

struct RowColWalk {
    long long row, drow;
    int col, dcol;
    __device__ explicit RowColWalk(int cols)
    {
        const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        const long long s = (long long)gridDim.x * blockDim.x;
        row = i / cols;
        col = (int)(i % cols);
        drow = s / cols;
        dcol = (int)(s % cols);
    }
    __device__ void next(int cols)
    {
        row += drow;
        col += dcol;
        if (col >= cols) {
            col -= cols;
            row++;
        }
    }
};

/* Elements per 16-byte vector. */
template <class T> constexpr int vec16_elems() { return 16 / (int)sizeof(T); }

__device__ inline void ld16(const float *p, float v[4])
{
    const float4 f = *reinterpret_cast<const float4 *>(p);
    v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
}
__device__ inline void ld16(const __half *p, float v[8])
{
    const uint4 u = *reinterpret_cast<const uint4 *>(p);
    const unsigned w[4] = {u.x, u.y, u.z, u.w};   /* element 2k in the low half of w[k] */
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[2 * k] = __half2float(__ushort_as_half((unsigned short)(w[k] & 0xffffu)));
        v[2 * k + 1] = __half2float(__ushort_as_half((unsigned short)(w[k] >> 16)));
    }
}
__device__ inline void st16(float *p, const float v[4]) { *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]); }
__device__ inline void st16(__half *p, const float v[8])
{
    unsigned w[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        w[k] = (unsigned)__half_as_ushort(__float2half_rn(v[2 * k])) |
               (unsigned)__half_as_ushort(__float2half_rn(v[2 * k + 1])) << 16;
    *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}

/* Host: p is 16-byte aligned and `count` (a pitch, a channel count or offset) is a whole
 * number of 16-byte vectors of T. */
template <class T> inline bool vec16_ok(const void *p, long long count)
{
    return (uintptr_t)p % 16 == 0 && count % vec16_elems<T>() == 0;
}

} // namespace swin_cuda

#endif
