/* Window attention of a chunk of windows: per window and head,
 * O = softmax((scale Q) K^T + bias + mask) V, without materialising the n x n scores in
 * global memory. Half mode with head dim 16 or 32 runs on tensor cores
 * (window_attention_wmma.cuh); every other case runs window_attention_fused, below.
 *
 * Input  qkv (wc n, 3C) row-major: the qkv Linear of the chunk's gathered tokens, token
 *        row wl n + t for window w0 + wl; columns [0,C) q, [C,2C) k, [2C,3C) v, head h
 *        owns hd = C / heads columns of each.
 * Output o (wc n, C): head h writes columns [h hd, (h+1) hd).
 * Logit (forward spec 3.4.2): (scale q_i) . k_t + table[(rel_query(i) - rel_key(t)) heads + h]
 *        + (-100 if label(i) != label(t), shifted blocks only); padded tokens (zero rows
 *        before the qkv Linear) take part as keys like every other token.
 *
 * Grid (ceil(n / QT), heads, wc); block QT threads (64, or 32 when the shared memory of
 * a large head dim would pass 48 KiB), one query per thread. Keys are streamed in tiles
 * of KT = 32 with an online softmax (running max m and sum l; the accumulator is rescaled
 * once per tile); the tile's 32 logits of a query live in registers.
 * Two instantiations of one kernel:
 *   HD > 0 (the head dims of the default configs, f / 3 = 4, 8, 16, 32): the query and
 *     the accumulator are HD registers; shared memory holds only the tile:
 *     ks[KT][HD], vs[KT][HD] (read as broadcasts), klab[KT], krel[KT] (ints);
 *   HD = 0 (any other head dim): the query and accumulator live in shared memory as
 *     columns qs[hd][QT], acc[hd][QT] (conflict-free), plus the same tile.
 * Shared bytes = 4 (2 KT hd + 2 KT) (+ 4 * 2 hd QT for HD = 0).
 * T is the storage type of qkv, o and the table (float, or __half in half mode); tiles,
 * logits and the softmax are float32 in both. */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/window_attention.cuh"
#include "kernels/cuda/window_attention_wmma.cuh"

#include <type_traits>

namespace swin_cuda {

template <int HD, class T>
__global__ void window_attention_fused(T *o, const T *qkv, long long w0, WinGeom g, const T *table, float scale,
                                       int hd_arg, int C)
{
    constexpr int QREG = HD > 0 ? HD : 1;
    const int hd = HD > 0 ? HD : hd_arg;
    SWIN_DYN_SMEM(float, attn_smem);
    const int qt = blockDim.x, tid = threadIdx.x, h = blockIdx.y;
    float *ks = attn_smem, *vs = ks + ATTN_KT * hd;
    int *klab = (int *)(vs + ATTN_KT * hd), *krel = klab + ATTN_KT;
    float *qs = (float *)(krel + ATTN_KT), *acc_s = qs + hd * qt;   /* HD = 0 only */

    const int n = g.n, c3 = 3 * C;
    const long long wl = blockIdx.z, window = w0 + wl;
    const T *base = qkv + wl * n * c3;
    const int i = blockIdx.x * qt + tid;
    const bool valid = i < n;
    const int qlab = valid ? token_label(g, window, i) : 0;
    const int qrel = valid ? rel_query(g, i) : 0;
    float q[QREG], acc[QREG];
    if constexpr (HD > 0) {
#pragma unroll
        for (int d = 0; d < HD; d++) {
            q[d] = valid ? ldf(base + (long long)i * c3 + h * HD + d) * scale : 0.0f;
            acc[d] = 0.0f;
        }
    } else {
        for (int d = 0; d < hd; d++) {
            qs[d * qt + tid] = valid ? ldf(base + (long long)i * c3 + h * hd + d) * scale : 0.0f;
            acc_s[d * qt + tid] = 0.0f;
        }
    }
    float m = -INFINITY, l = 0.0f;

    for (int kt0 = 0; kt0 < n; kt0 += ATTN_KT) {
        const int nk = n - kt0 < ATTN_KT ? n - kt0 : ATTN_KT;
        __syncthreads();  /* the previous tile is no longer read */
        for (int e = tid; e < nk * hd; e += qt) {
            const int key = e / hd, d = e % hd;
            const T *row = base + (long long)(kt0 + key) * c3 + h * hd + d;
            ks[key * hd + d] = ldf(row + C);
            vs[key * hd + d] = ldf(row + 2 * C);
        }
        for (int key = tid; key < nk; key += qt) {
            klab[key] = token_label(g, window, kt0 + key);
            krel[key] = rel_key(g, kt0 + key);
        }
        __syncthreads();
        if (!valid) continue;
        float s[ATTN_KT], tmax = -INFINITY;
#pragma unroll
        for (int key = 0; key < ATTN_KT; key++) {
            if (key >= nk) break;
            float dot = 0.0f;
            if constexpr (HD > 0) {
#pragma unroll
                for (int d = 0; d < HD; d++) dot = fmaf(q[d], ks[key * HD + d], dot);
            } else {
                for (int d = 0; d < hd; d++) dot = fmaf(qs[d * qt + tid], ks[key * hd + d], dot);
            }
            dot += ldf(table + (long long)(qrel - krel[key]) * g.heads + h);
            if (g.masked && klab[key] != qlab) dot += -100.0f;
            s[key] = dot;
            tmax = fmaxf(tmax, dot);
        }
        const float mn = fmaxf(m, tmax), corr = expf(m - mn);
        l *= corr;
        if constexpr (HD > 0) {
#pragma unroll
            for (int d = 0; d < HD; d++) acc[d] *= corr;
        } else {
            for (int d = 0; d < hd; d++) acc_s[d * qt + tid] *= corr;
        }
#pragma unroll
        for (int key = 0; key < ATTN_KT; key++) {
            if (key >= nk) break;
            const float p = expf(s[key] - mn);
            l += p;
            if constexpr (HD > 0) {
#pragma unroll
                for (int d = 0; d < HD; d++) acc[d] = fmaf(p, vs[key * HD + d], acc[d]);
            } else {
                for (int d = 0; d < hd; d++) acc_s[d * qt + tid] = fmaf(p, vs[key * hd + d], acc_s[d * qt + tid]);
            }
        }
        m = mn;
    }
    if (!valid) return;
    const float inv = 1.0f / l;
    T *out = o + (wl * n + i) * C + h * hd;
    if constexpr (HD > 0) {
#pragma unroll
        for (int d = 0; d < HD; d++) stf(out + d, acc[d] * inv);
    } else {
        for (int d = 0; d < hd; d++) stf(out + d, acc_s[d * qt + tid] * inv);
    }
}

/* Launches the HD instantiation with attn_block_queries queries per block; above 48 KiB of
 * shared memory, opts in to the device's larger limit. */
template <int HD, class T>
static cudaError_t launch_attention(cudaStream_t s, T *o, const T *qkv, long long w0, int wc, const WinGeom &g,
                                    const T *table, float scale, int hd, int C)
{
    const int qt = attn_block_queries(hd, HD > 0);
    const size_t smem = attn_smem_bytes(hd, qt, HD > 0);
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(window_attention_fused<HD, T>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return e;
    }
    const dim3 grid(swin_cuda_blocks(g.n, qt), g.heads, wc);
    SWIN_LAUNCH((window_attention_fused<HD, T>), grid, dim3(qt), smem, s)(o, qkv, w0, g, table, scale, hd, C);
    return cudaGetLastError();
}

} // namespace swin_cuda

using namespace swin_cuda;

template <class T>
cudaError_t swin_cuda_window_attention(cudaStream_t s, T *o, const T *qkv, long long w0, int wc, const WinGeom &g,
                                       const T *table, int C)
{
    const int hd = C / g.heads;
    const float scale = g.scale > 0 ? g.scale : (float)(1.0 / sqrt((double)hd));
    /* Tensor cores: half storage, head dim 16 or 32, the bias column fits shared memory. */
    if constexpr (std::is_same<T, __half>::value) {
        if (attention_table_rows(g) <= WA_TABLE_MAX) {
            if (hd == 16) return launch_attention_wmma<16>(s, o, qkv, w0, wc, g, table, scale, C);
            if (hd == 32) return launch_attention_wmma<32>(s, o, qkv, w0, wc, g, table, scale, C);
        }
    }
    switch (hd) {
    case 4: return launch_attention<4>(s, o, qkv, w0, wc, g, table, scale, hd, C);
    case 8: return launch_attention<8>(s, o, qkv, w0, wc, g, table, scale, hd, C);
    case 16: return launch_attention<16>(s, o, qkv, w0, wc, g, table, scale, hd, C);
    case 32: return launch_attention<32>(s, o, qkv, w0, wc, g, table, scale, hd, C);
    default: return launch_attention<0>(s, o, qkv, w0, wc, g, table, scale, hd, C);
    }
}
template cudaError_t swin_cuda_window_attention<float>(cudaStream_t, float *, const float *, long long, int,
                                                       const WinGeom &, const float *, int);
template cudaError_t swin_cuda_window_attention<__half>(cudaStream_t, __half *, const __half *, long long, int,
                                                        const WinGeom &, const __half *, int);
