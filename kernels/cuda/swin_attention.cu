/* swin_attention, in place on the residual stream x (L1, L2, L3, C), one Swin block's
 * attention half (forward spec 3.4.1-3.4.4, the same math as kernels/cpu/swin_attention.c):
 *   x[q] += proj(WindowAttention(LN1(x) zero-padded, rolled by -shift, partitioned))
 * on chunks of wc whole windows (wc from the backend's chunk budget, cuda_backend.h, and the
 * shapes). Per chunk, on the backend stream:
 *   1. window_gather_ln   tok (wc n, C) = LN1(x[token_voxel(gt)]), 0 for padded tokens
 *                         (warp per token, 8 per block: the shift, padding and partition
 *                         are the gather's index map, window_geom.cuh);
 *   2. gemm_launch        qkv (wc n, 3C) = tok . qkv_w + qkv_b;
 *   3. window_attention_fused   o (wc n, C), stored over tok (window_attention.cu);
 *   4. gemm_launch        x[token_voxel(gt)] += o . proj_w + proj_b for real tokens
 *                         (WindowScatterAdd epilogue: the window reverse, the roll back
 *                         and the crop are the scatter's index map).
 * Windows are disjoint in x, so a chunk's scatter never touches a later chunk's gather.
 * Workspace: tok/o (wc n, C) and qkv (wc n, 3C) in x's storage type and the chunk's
 * token -> voxel map vox (wc n) int32, 256-byte aligned slices. */
#include <limits.h>

#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/ln_row.cuh"
#include "kernels/cuda/window_attention.cuh"

namespace swin_cuda {

/* tok row r = LN1 of the source voxel of global token t0 + r, or zeros (padded token);
 * vox[r] = that voxel index, or -1 (the scatter's map: x has fewer than 2^31 voxels and
 * fewer than 2^31 padded tokens). */
template <class T>
__global__ void __launch_bounds__(256) window_gather_ln(T *tok, int *vox, const T *x, int pitch, long long t0,
                                                        long long rows, WinGeom g, int C, const T *gamma,
                                                        const T *beta)
{
    const long long r = (long long)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    T *dst = tok + r * C;
    const int v = token_voxel(g, (int)(t0 + r));
    if (lane == 0) vox[r] = v;
    if (v < 0) {
        for (int i = lane; i < C; i += 32) stf(dst + i, 0.0f);
        return;
    }
    ln_row_warp(dst, x + (long long)v * pitch, C, gamma, beta, lane);
}

/* x[vox[m] pitch + n] += acc + bias[n] for real tokens (vox[m] >= 0): the token -> voxel
 * map written by window_gather_ln, one load per result instead of the index divisions. */
template <class T> struct WindowScatterAdd {
    T *x;
    int pitch;
    const T *bias;
    const int *vox;
    __device__ void store(int, long long m, int n, float v) const
    {
        const int vm = vox[m];
        if (vm >= 0) {
            T *p = x + (long long)vm * pitch + n;
            stf(p, ldf(p) + (v + ldf(bias + n)));
        }
    }
};

} // namespace swin_cuda

using namespace swin_cuda;

static long long n_windows(const struct swin_window_geom *g)
{
    return (long long)(g->padded[0] / g->win[0]) * (g->padded[1] / g->win[1]) * (g->padded[2] / g->win[2]);
}

/* Windows per chunk: as many as fit the chunk budget (4C elements per token), at least
 * one, at most all and at most 65535 (grid z of the attention kernel). */
static long long chunk_windows(const void *be, const struct swin_window_geom *g, int c, size_t elem)
{
    const long long n = (long long)g->win[0] * g->win[1] * g->win[2];
    long long wc = (long long)(swin_cuda_chunk_bytes(be) / ((size_t)n * 4 * c * elem));
    const long long nw = n_windows(g);
    if (wc < 1) wc = 1;
    if (wc > nw) wc = nw;
    return wc < 65535 ? wc : 65535;
}

extern "C" size_t swin_cuda_swin_attention_ws(void *be, struct swin_vol x, const struct swin_window_geom *g)
{
    const long long n = (long long)g->win[0] * g->win[1] * g->win[2];
    const size_t elem = swin_dtype_bytes(x.dtype);
    const size_t rows = (size_t)(chunk_windows(be, g, x.c, elem) * n);
    return SWIN_CUDA_ALIGN + swin_cuda_round(rows * x.c * elem) + swin_cuda_round(rows * 3 * x.c * elem) +
           swin_cuda_round(rows * sizeof(int));
}

template <class T>
static int swin_attention_typed(struct swin_cuda_backend *be, struct swin_vol x, const struct swin_block_w *blk,
                                const struct swin_window_geom *g, void *ws)
{
    const int C = x.c;
    const size_t table_rows =
        (size_t)(2 * g->cfg_window[0] - 1) * (2 * g->cfg_window[1] - 1) * (2 * g->cfg_window[2] - 1);
    const T *n1w, *n1b, *qw, *qb, *tab, *pw, *pb;
    if (!swin_cuda_weight(be, "swin_attention", "norm1_w", blk->norm1_w, C, &n1w) ||
        !swin_cuda_weight(be, "swin_attention", "norm1_b", blk->norm1_b, C, &n1b) ||
        !swin_cuda_weight(be, "swin_attention", "qkv_w", blk->qkv_w, (size_t)C * 3 * C, &qw) ||
        !swin_cuda_weight(be, "swin_attention", "qkv_b", blk->qkv_b, (size_t)3 * C, &qb) ||
        !swin_cuda_weight(be, "swin_attention", "bias_table", blk->bias_table, table_rows * g->heads, &tab) ||
        !swin_cuda_weight(be, "swin_attention", "proj_w", blk->proj_w, (size_t)C * C, &pw) ||
        !swin_cuda_weight(be, "swin_attention", "proj_b", blk->proj_b, C, &pb))
        return SWIN_ERR_ARG;

    const WinGeom wg = win_geom(g);
    const long long nw = n_windows(g), wc_max = chunk_windows(be, g, C, sizeof(T)), n = wg.n;
    T *xd = (T *)x.data;
    T *tok = (T *)swin_cuda_align_ptr(ws);
    T *qkv = (T *)((char *)tok + swin_cuda_round((size_t)(wc_max * n) * C * sizeof(T)));
    int *vox = (int *)((char *)qkv + swin_cuda_round((size_t)(wc_max * n) * 3 * C * sizeof(T)));
    if ((long long)x.d * x.h * x.w > INT_MAX || nw * n > INT_MAX)
        return swin_cuda_fail(be, SWIN_ERR_SHAPE,
                              "swin_attention: %dx%dx%d voxels (%lld padded tokens) exceed the 2^31 of the int32 "
                              "token map; split the volume into tiles",
                              x.d, x.h, x.w, nw * n);
    long long chunks = 0;
    for (long long w0 = 0; w0 < nw; w0 += wc_max, chunks++) {
        const long long wc = nw - w0 < wc_max ? nw - w0 : wc_max, rows = wc * n, t0 = w0 * n;
        SWIN_LAUNCH(window_gather_ln<T>, dim3(swin_cuda_blocks(rows, 8)), dim3(256), 0, be->stream)(
            tok, vox, xd, x.pitch, t0, rows, wg, C, n1w, n1b);
        gemm_launch(be->stream, RowsA<T>{tok, C}, qw, 0, 3 * C, StoreRows<T>{qkv, 3 * C, qb, false}, (int)rows, 3 * C,
                    C, 1);
        cudaError_t e = swin_cuda_window_attention(be->stream, tok, qkv, w0, (int)wc, wg, tab, C);
        if (e != cudaSuccess)
            return swin_cuda_fail(be, SWIN_ERR_BACKEND,
                                  "swin_attention c%d heads %d on %dx%dx%d: window attention launch failed (head dim "
                                  "%d): %s (%s); a fault of an earlier kernel also surfaces here: rerun with "
                                  "SWIN_CUDA_SYNC_CHECK=1 to name the op that failed",
                                  C, g->heads, x.d, x.h, x.w, C / g->heads, cudaGetErrorName(e), cudaGetErrorString(e));
        gemm_launch(be->stream, RowsA<T>{tok, C}, pw, 0, C, WindowScatterAdd<T>{xd, x.pitch, pb, vox}, (int)rows,
                    C, C, 1);
        int rc = swin_cuda_check_launch(be, "swin_attention", "c%d heads %d on %dx%dx%d, windows %lld+%lld", C,
                                        g->heads, x.d, x.h, x.w, w0, wc);
        if (rc) return rc;
    }
    swin_cuda_count_chunks(be, SWIN_CUDA_CHUNKED_ATTENTION, chunks);
    return 0;
}

extern "C" int swin_cuda_swin_attention(void *bev, struct swin_vol x, const struct swin_block_w *blk,
                                        const struct swin_window_geom *g, void *ws, size_t ws_bytes)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? swin_attention_typed<__half>(be, x, blk, g, ws)
                                 : swin_attention_typed<float>(be, x, blk, g, ws);
}
