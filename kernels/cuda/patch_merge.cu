/* patch_merge: out(i, j, k, :) = LN_8C( concat_m in(2i+o_m0, 2j+o_m1, 2k+o_m2, :) ) . red_w
 *   in (D, H, W, C) with even dims, out (D/2, H/2, W/2, 2C), order[m] = (o_d, o_h, o_w) of
 *   sub-grid m (channels [mC, (m+1)C) of the concat), LN affine over 8C, red_w (8C, 2C),
 *   no bias (forward spec 3.6).
 * On chunks of R consecutive output voxels (R from the backend's chunk budget, cuda_backend.h):
 *   merge_gather    a (R, 8C) = the concatenated sub-grid rows (warp per row, 16-byte copies)
 *   layernorm_rows  a = LN(a) in place (warp per row)
 *   gemm_launch     out rows = a . red_w (StoreRows epilogue, out.pitch)
 * Workspace: a (R, 8C) in the storage type of in. */
#include "kernels/cuda/gemm.cuh"

#include <climits>

namespace swin_cuda {

/* a[r 8C + m C + ci] = in(2i + o_m0, 2j + o_m1, 2k + o_m2, ci) for output voxel v0 + r.
 * order: sub-grid m's offsets packed in bits [3m, 3m+3) as (o_m0 << 2) | (o_m1 << 1) | o_m2
 * (a plain int: an indexed array parameter would be copied to local memory).
 * A warp per output row (8 per block, grid-stride over rows): the row's voxel is decoded
 * once (the only divisions), then for each sub-grid the lanes copy its C channels, as U
 * units (uint4: 16 bytes, when C, the pitch and the pointers allow; else T), raw bits. */
template <class T, class U>
__global__ void __launch_bounds__(256) merge_gather(T *a, const T *in, int pitch, int ih, int iw, long long v0,
                                                    long long rows, int c, int order)
{
    constexpr int UE = (int)(sizeof(U) / sizeof(T)); /* elements per unit */
    const int oh = ih / 2, ow = iw / 2, lane = threadIdx.x % 32, cu = c / UE;
    const long long wstep = (long long)gridDim.x * 8;
    for (long long r = (long long)blockIdx.x * 8 + threadIdx.x / 32; r < rows; r += wstep) {
        /* 32-bit decode (the caller checks the output voxels fit): a 64-bit division is a
         * call whose saved registers spill */
        const unsigned v = (unsigned)(v0 + r), vij = v / (unsigned)ow;
        const int k = (int)(v - vij * (unsigned)ow), jj = (int)(vij % (unsigned)oh), i = (int)(vij / (unsigned)oh);
        U *dst = (U *)(a + r * 8 * c);
        for (int m = 0; m < 8; m++) {
            const int o = order >> (3 * m);
            const long long src =
                ((long long)(2 * i + (o >> 2 & 1)) * ih + (2 * jj + (o >> 1 & 1))) * iw + (2 * k + (o & 1));
            const U *s = (const U *)(in + src * pitch);
            for (int j = lane; j < cu; j += 32) dst[m * cu + j] = s[j];
        }
    }
}

} // namespace swin_cuda

using namespace swin_cuda;

static long long merge_rows(const void *be, long long nout, int c, size_t elem)
{
    long long r = (long long)(swin_cuda_chunk_bytes(be) / ((size_t)8 * c * elem));
    if (r < 64) r = 64;
    return r < nout ? r : nout;
}

extern "C" size_t swin_cuda_patch_merge_ws(void *be, struct swin_vol out, struct swin_vol in)
{
    const size_t elem = swin_dtype_bytes(in.dtype);
    const size_t r = (size_t)merge_rows(be, (long long)swin_vol_voxels(out), in.c, elem);
    return SWIN_CUDA_ALIGN + swin_cuda_round(r * 8 * in.c * elem);
}

template <class T>
static int patch_merge_typed(struct swin_cuda_backend *be, struct swin_vol out, struct swin_vol in, int packed,
                             const float *norm_w, const float *norm_b, const float *red_w, void *ws)
{
    const int c8 = 8 * in.c;
    const T *nw, *nb, *rw;
    if (!swin_cuda_weight(be, "patch_merge", "norm_w", norm_w, c8, &nw) ||
        !swin_cuda_weight(be, "patch_merge", "norm_b", norm_b, c8, &nb) ||
        !swin_cuda_weight(be, "patch_merge", "red_w", red_w, (size_t)c8 * out.c, &rw))
        return SWIN_ERR_ARG;
    const long long nout = (long long)swin_vol_voxels(out), rmax = merge_rows(be, nout, in.c, sizeof(T));
    if (nout > (long long)UINT_MAX)
        return swin_cuda_fail(be, SWIN_ERR_ARG, "patch_merge: %lld output voxels: at most %u (use a smaller cube)",
                              nout, UINT_MAX);
    T *a = (T *)swin_cuda_align_ptr(ws);
    /* 16-byte units: C and the pitch whole units, in 16-byte aligned (a is, and its rows of
     * 8C elements are whole units then) */
    const int ue = 16 / (int)sizeof(T);
    const bool vec = in.c % ue == 0 && in.pitch % ue == 0 && (uintptr_t)in.data % 16 == 0;
    long long chunks = 0;
    for (long long b = 0; b < nout; b += rmax, chunks++) {
        const long long m = nout - b < rmax ? nout - b : rmax;
        const unsigned blocks = swin_cuda_blocks(m, 8);
        const dim3 grid(blocks < 4096 ? blocks : 4096);
        if (vec)
            SWIN_LAUNCH((merge_gather<T, uint4>), grid, dim3(256), 0, be->stream)(
                a, (const T *)in.data, in.pitch, in.h, in.w, b, m, in.c, packed);
        else
            SWIN_LAUNCH((merge_gather<T, T>), grid, dim3(256), 0, be->stream)(
                a, (const T *)in.data, in.pitch, in.h, in.w, b, m, in.c, packed);
        swin_cuda_ln_rows(be->stream, a, c8, (const T *)a, c8, m, c8, nw, nb);
        gemm_launch(be->stream, RowsA<T>{a, c8}, rw, 0, out.c,
                    StoreRows<T>{(T *)out.data + b * out.pitch, out.pitch, nullptr, false}, (int)m, out.c, c8, 1);
        int rc = swin_cuda_check_launch(be, "patch_merge", "%d->%d on %dx%dx%d, rows %lld+%lld", in.c, out.c, in.d,
                                        in.h, in.w, b, m);
        if (rc) return rc;
    }
    swin_cuda_count_chunks(be, SWIN_CUDA_CHUNKED_MERGE, chunks);
    return 0;
}

extern "C" int swin_cuda_patch_merge(void *bev, struct swin_vol out, struct swin_vol in, const swin_merge_order order,
                                     const float *norm_w, const float *norm_b, const float *red_w, void *ws,
                                     size_t ws_bytes)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    int packed = 0;
    for (int m = 0; m < 8; m++)
        for (int a = 0; a < 3; a++) packed |= order[m][a] << (3 * m + 2 - a);
    return be->dtype == SWIN_F16 ? patch_merge_typed<__half>(be, out, in, packed, norm_w, norm_b, red_w, ws)
                                 : patch_merge_typed<float>(be, out, in, packed, norm_w, norm_b, red_w, ws);
}
