/* conv3d: out = conv3d(in, w) + bias, cross-correlation as torch.nn.Conv3d, as an
 * implicit GEMM:
 *   A (M = OD OH OW output voxels, K = k^3 cin): A(m, tap cin + ci) = in(o stride - pad + tap, ci),
 *     zero outside the input; taps in (kz, ky, kx) order, read straight from the
 *     channels-last input (the im2col matrix never exists);
 *   B = w (k, k, k, cin, cout) = (K x cout) row-major;
 *   out row m = output voxel m, written with out.pitch (may be a concat half), + bias.
 * Kernels, by shape:
 *   k > 1 or stride 2: conv_wmma (half) / conv_ffma (float32) of conv_igemm.cuh, whose
 *     loader issues 16- or 4-byte asynchronous copies into a multi-stage shared-memory
 *     pipeline; when the copies cannot be used (float16 with an odd cin, e.g. the
 *     1-channel input of the first conv), gemm_launch with the element-wise Im2colA
 *     loader below;
 *   k = 1, stride 1, pad 0: gemm_launch reading the input rows directly (RowsA, lda = in.pitch).
 * Deep layers (few output tiles, long K: encoder10, decoder5, ...) split K
 * (gemm_splits): partial sums go to the workspace (splits, M, cout) and splitk_reduce adds
 * them in order, plus the bias, into out.
 * With `stats` (an instance norm of out follows), conv_wmma / conv_ffma without a split
 * keep each tile's statistics (epilogue ConvStoreStats, conv_tile_stats.cuh) in the
 * workspace (two float [ceil(M / 128)][cout]) and conv_stats.cu merges them into stats;
 * the other paths fill stats by one read of out. Otherwise no workspace. */
#include "kernels/cuda/conv_igemm.cuh"
#include "kernels/cuda/gemm.cuh"

namespace swin_cuda {

template <class T> struct Im2colA {
    const T *in;
    int d, h, w, pitch, cin;
    int oh, ow;
    int k, stride, pad;
    /* The output voxel's input corner (o stride - pad on each axis). */
    struct Row {
        int z0, y0, x0;
    };
    /* Column tap cin + ci: tap offsets (kz, ky, kx) and channel ci. */
    struct Col {
        int dz, dy, dx, ci;
    };
    __device__ Row row(int, long long m) const
    {
        return Row{(int)(m / ((long long)ow * oh)) * stride - pad, (int)(m / ow % oh) * stride - pad,
                   (int)(m % ow) * stride - pad};
    }
    __device__ Col col(int kk) const
    {
        const int tap = kk / cin;
        return Col{tap / (k * k), tap / k % k, tap % k, kk - tap * cin};
    }
    __device__ float load(const Row &r, const Col &c) const
    {
        const int iz = r.z0 + c.dz, iy = r.y0 + c.dy, ix = r.x0 + c.dx;
        if (iz < 0 || iz >= d || iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.0f;
        return ldf(in + (((long long)iz * h + iy) * w + ix) * pitch + c.ci);
    }
};

} // namespace swin_cuda

using namespace swin_cuda;

extern "C" size_t swin_cuda_conv3d_ws(void *be, struct swin_vol out, struct swin_vol in, const float *w, int k,
                                      int stride, int pad, bool stats)
{
    (void)w, (void)stride, (void)pad;
    const long long M = (long long)swin_vol_voxels(out);
    const int splits = gemm_splits(M, out.c, k * k * k * in.c);
    if (splits > 1) return SWIN_CUDA_ALIGN + swin_cuda_round((size_t)splits * M * out.c * sizeof(float));
    const size_t tiles = swin_cuda_blocks(M, CONV_BM);
    return stats ? SWIN_CUDA_ALIGN + swin_cuda_round(2 * tiles * out.c * sizeof(float)) : 0;
}

/* The typed half of conv3d (T = the backend's storage type): weights, then the launches. */
template <class T>
static int conv3d_typed(struct swin_cuda_backend *be, struct swin_vol out, void *stats, struct swin_vol in,
                        const float *w, const float *bias, int k, int stride, int pad, void *ws)
{
    const int M = (int)swin_vol_voxels(out), kdim = k * k * k * in.c;
    const T *dw, *db;
    if (!swin_cuda_weight(be, "conv3d", "w", w, (size_t)kdim * out.c, &dw) ||
        !swin_cuda_weight(be, "conv3d", "bias", bias, (size_t)out.c, &db))
        return SWIN_ERR_ARG;
    const int splits = gemm_splits(M, out.c, kdim);
    float *part = (float *)swin_cuda_align_ptr(ws);
    const StoreRows<T> ep = {(T *)out.data, out.pitch, db, false};
    const StorePartial pp = {part, M, out.c};
    /* the tile statistics: tmean then tm2, float [ceil(M / 128)][cout] each */
    float *tmean = stats ? part : nullptr, *tm2 = stats ? part + (size_t)swin_cuda_blocks(M, CONV_BM) * out.c : nullptr;
    const ConvStoreStats<T> es = {(T *)out.data, out.pitch, db, tmean, tm2};
    bool tile_stats = false;
    if (k == 1 && stride == 1 && pad == 0) {
        const RowsA<T> a = {(const T *)in.data, in.pitch};
        if (splits > 1) gemm_launch(be->stream, a, dw, 0, out.c, pp, M, out.c, kdim, 1, splits);
        else gemm_launch(be->stream, a, dw, 0, out.c, ep, M, out.c, kdim, 1);
    } else {
        const ConvGeom<T> g = {(const T *)in.data, in.pitch, in.d, in.h, in.w, in.c, out.h, out.w, k, stride, pad,
                               GEMM_BK / in.c, GEMM_BK % in.c, dw, out.c};
        bool done;
        if (splits > 1) done = conv_igemm_launch(be->stream, g, pp, M, out.c, kdim, splits);
        else if (stats) done = tile_stats = conv_igemm_launch(be->stream, g, es, M, out.c, kdim, 1);
        else done = conv_igemm_launch(be->stream, g, ep, M, out.c, kdim, 1);
        if (!done) {
            const Im2colA<T> a = {(const T *)in.data, in.d, in.h, in.w, in.pitch, in.c, out.h, out.w, k, stride, pad};
            if (splits > 1) gemm_launch(be->stream, a, dw, 0, out.c, pp, M, out.c, kdim, 1, splits);
            else gemm_launch(be->stream, a, dw, 0, out.c, ep, M, out.c, kdim, 1);
        }
    }
    if (splits > 1) swin_cuda_splitk_reduce(be->stream, (T *)out.data, out.pitch, part, splits, M, out.c, db);
    double *st = (double *)swin_cuda_align_ptr(stats);
    if (tile_stats) swin_cuda_stats_of_tiles(be->stream, es.tmean, es.tm2, M, out.c, st);
    else if (stats) swin_cuda_stats_of_volume(be->stream, (const T *)out.data, out.pitch, M, out.c, st);
    return swin_cuda_check_launch(be, "conv3d", "%d->%d k%d s%d p%d on %dx%dx%d", in.c, out.c, k, stride, pad,
                                  in.d, in.h, in.w);
}


extern "C" int swin_cuda_conv3d(void *bev, struct swin_vol out, void *stats, struct swin_vol in, const float *w,
                                const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? conv3d_typed<__half>(be, out, stats, in, w, bias, k, stride, pad, ws)
                                 : conv3d_typed<float>(be, out, stats, in, w, bias, k, stride, pad, ws);
}
