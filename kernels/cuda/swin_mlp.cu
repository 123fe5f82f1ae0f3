/* swin_mlp, in place on the residual stream x (L1, L2, L3, C):
 *   x += fc2(GELU_erf(fc1(LN2(x))))      fc1_w (C, hidden), fc2_w (hidden, C)
 * on chunks of R consecutive voxels (R from the backend's chunk budget, cuda_backend.h, and
 * the shapes), three launches per chunk on the backend stream:
 *   layernorm_rows  a (R, C) = LN2 of the chunk's rows (warp per row)
 *   gemm_launch     h (R, hidden) = GELU_erf(a . fc1_w + fc1_b)   (StoreRows epilogue)
 *   gemm_launch     x rows += h . fc2_w + fc2_b                   (AddRows epilogue, pitch)
 * Workspace: a (R, C) and h (R, hidden) in x's storage type, 256-byte aligned slices. */
#include "kernels/cuda/gemm.cuh"

using namespace swin_cuda;

static long long mlp_rows(const void *be, long long nvox, int c, int hidden, size_t elem)
{
    long long r = (long long)(swin_cuda_chunk_bytes(be) / ((size_t)(c + hidden) * elem));
    if (r < 64) r = 64;
    return r < nvox ? r : nvox;
}

extern "C" size_t swin_cuda_swin_mlp_ws(void *be, struct swin_vol x, int hidden)
{
    const size_t elem = swin_dtype_bytes(x.dtype);
    const size_t r = (size_t)mlp_rows(be, (long long)swin_vol_voxels(x), x.c, hidden, elem);
    return SWIN_CUDA_ALIGN + swin_cuda_round(r * x.c * elem) + swin_cuda_round(r * hidden * elem);
}

template <class T>
static int swin_mlp_typed(struct swin_cuda_backend *be, struct swin_vol x, const struct swin_block_w *blk, int hidden,
                          void *ws)
{
    const int C = x.c;
    const T *n2w, *n2b, *w1, *b1, *w2, *b2;
    if (!swin_cuda_weight(be, "swin_mlp", "norm2_w", blk->norm2_w, C, &n2w) ||
        !swin_cuda_weight(be, "swin_mlp", "norm2_b", blk->norm2_b, C, &n2b) ||
        !swin_cuda_weight(be, "swin_mlp", "fc1_w", blk->fc1_w, (size_t)C * hidden, &w1) ||
        !swin_cuda_weight(be, "swin_mlp", "fc1_b", blk->fc1_b, hidden, &b1) ||
        !swin_cuda_weight(be, "swin_mlp", "fc2_w", blk->fc2_w, (size_t)hidden * C, &w2) ||
        !swin_cuda_weight(be, "swin_mlp", "fc2_b", blk->fc2_b, C, &b2))
        return SWIN_ERR_ARG;
    const long long nvox = (long long)swin_vol_voxels(x), rmax = mlp_rows(be, nvox, C, hidden, sizeof(T));
    T *a = (T *)swin_cuda_align_ptr(ws);
    T *h = (T *)((char *)a + swin_cuda_round((size_t)rmax * C * sizeof(T)));
    long long chunks = 0;
    for (long long b = 0; b < nvox; b += rmax, chunks++) {
        const int m = (int)(nvox - b < rmax ? nvox - b : rmax);
        T *xr = (T *)x.data + b * x.pitch;
        swin_cuda_ln_rows(be->stream, a, C, (const T *)xr, x.pitch, m, C, n2w, n2b);
        gemm_launch(be->stream, RowsA<T>{a, C}, w1, 0, hidden, StoreRows<T>{h, hidden, b1, true}, m, hidden, C, 1);
        gemm_launch(be->stream, RowsA<T>{h, hidden}, w2, 0, C, AddRows<T>{xr, x.pitch, b2}, m, C, hidden, 1);
        int rc = swin_cuda_check_launch(be, "swin_mlp", "c%d hidden %d on %dx%dx%d, rows %lld+%d", C, hidden, x.d,
                                        x.h, x.w, b, m);
        if (rc) return rc;
    }
    swin_cuda_count_chunks(be, SWIN_CUDA_CHUNKED_MLP, chunks);
    return 0;
}

extern "C" int swin_cuda_swin_mlp(void *bev, struct swin_vol x, const struct swin_block_w *blk, int hidden, void *ws,
                                  size_t ws_bytes)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? swin_mlp_typed<__half>(be, x, blk, hidden, ws)
                                 : swin_mlp_typed<float>(be, x, blk, hidden, ws);
}
