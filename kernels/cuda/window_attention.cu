/* window_attention_fused: per window and head, O = softmax((scale Q) K^T + bias + mask) V
 * on a chunk of windows, without materialising the n x n scores in global memory.
 *
 * Input  qkv (wc n, 3C) row-major: the qkv Linear of the chunk's gathered tokens, token
 *        row wl n + t for window w0 + wl; columns [0,C) q, [C,2C) k, [2C,3C) v, head h
 *        owns hd = C / heads columns of each.
 * Output o (wc n, C): head h writes columns [h hd, (h+1) hd).
 * Logit (forward spec 3.4.2): (scale q_i) . k_t + table[(rel_query(i) - rel_key(t)) heads + h]
 *        + (-100 if label(i) != label(t), shifted blocks only); padded tokens (zero rows
 *        before the qkv Linear) take part as keys like every other token.
 *
 * Grid (ceil(n / QT), heads, wc); block QT threads (64, or 32 for large hd), one query
 * per thread. Keys are streamed in tiles of KT = 32 with an online softmax (running max m,
 * running sum l, accumulator rescaled once per tile). Dynamic shared memory, floats:
 *   qs[hd][QT]  the block's scaled queries (column per thread: conflict-free)
 *   acc[hd][QT] the output accumulators
 *   ks[KT][hd], vs[KT][hd]  the key/value tile (read as broadcasts)
 *   sc[KT][QT]  the tile's logits of each query
 * and ints klab[KT], krel[KT] (key labels and relative-index parts):
 *   bytes = 4 (2 hd QT + 2 KT hd + KT QT + 2 KT). */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/window_attention.cuh"

namespace swin_cuda {

constexpr int ATTN_KT = 32;

static size_t attn_smem_bytes(int hd, int qt)
{
    return sizeof(float) * (2 * (size_t)hd * qt + 2 * (size_t)ATTN_KT * hd + (size_t)ATTN_KT * qt + 2 * ATTN_KT);
}

__global__ void window_attention_fused(float *o, const float *qkv, long long w0, WinGeom g, const float *table,
                                       float scale, int hd, int C)
{
    SWIN_DYN_SMEM(float, attn_smem);
    const int qt = blockDim.x, tid = threadIdx.x, h = blockIdx.y;
    float *qs = attn_smem, *acc = qs + hd * qt, *ks = acc + hd * qt, *vs = ks + ATTN_KT * hd;
    float *sc = vs + ATTN_KT * hd;
    int *klab = (int *)(sc + ATTN_KT * qt), *krel = klab + ATTN_KT;

    const int n = g.n, c3 = 3 * C;
    const long long wl = blockIdx.z, window = w0 + wl;
    const float *base = qkv + wl * n * c3;
    const int i = blockIdx.x * qt + tid;
    const bool valid = i < n;
    const int qlab = valid ? token_label(g, window, i) : 0;
    const int qrel = valid ? rel_query(g, i) : 0;
    for (int d = 0; d < hd; d++) {
        qs[d * qt + tid] = valid ? base[(long long)i * c3 + h * hd + d] * scale : 0.0f;
        acc[d * qt + tid] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;

    for (int kt0 = 0; kt0 < n; kt0 += ATTN_KT) {
        const int nk = n - kt0 < ATTN_KT ? n - kt0 : ATTN_KT;
        __syncthreads();  /* the previous tile is no longer read */
        for (int e = tid; e < nk * hd; e += qt) {
            const int key = e / hd, d = e % hd;
            const float *row = base + (long long)(kt0 + key) * c3 + h * hd + d;
            ks[key * hd + d] = row[C];
            vs[key * hd + d] = row[2 * C];
        }
        for (int key = tid; key < nk; key += qt) {
            klab[key] = token_label(g, window, kt0 + key);
            krel[key] = rel_key(g, kt0 + key);
        }
        __syncthreads();
        if (!valid) continue;
        float tmax = -INFINITY;
        for (int key = 0; key < nk; key++) {
            float s = 0.0f;
            for (int d = 0; d < hd; d++) s = fmaf(qs[d * qt + tid], ks[key * hd + d], s);
            s += table[(long long)(qrel - krel[key]) * g.heads + h];
            if (g.masked && klab[key] != qlab) s += -100.0f;
            sc[key * qt + tid] = s;
            tmax = fmaxf(tmax, s);
        }
        const float mn = fmaxf(m, tmax), corr = expf(m - mn);
        l *= corr;
        for (int d = 0; d < hd; d++) acc[d * qt + tid] *= corr;
        for (int key = 0; key < nk; key++) {
            const float p = expf(sc[key * qt + tid] - mn);
            l += p;
            for (int d = 0; d < hd; d++) acc[d * qt + tid] = fmaf(p, vs[key * hd + d], acc[d * qt + tid]);
        }
        m = mn;
    }
    if (!valid) return;
    const float inv = 1.0f / l;
    float *out = o + (wl * n + i) * C + h * hd;
    for (int d = 0; d < hd; d++) out[d] = acc[d * qt + tid] * inv;
}

} // namespace swin_cuda

using namespace swin_cuda;

cudaError_t swin_cuda_window_attention(cudaStream_t s, float *o, const float *qkv, long long w0, int wc,
                                       const WinGeom &g, const float *table, int C)
{
    const int hd = C / g.heads;
    const float scale = (float)(1.0 / sqrt((double)hd));
    int qt = 64;
    if (attn_smem_bytes(hd, qt) > 48 * 1024) qt = 32;
    const size_t smem = attn_smem_bytes(hd, qt);
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(window_attention_fused, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess) return e;
    }
    const dim3 grid(swin_cuda_blocks(g.n, qt), g.heads, wc);
    SWIN_LAUNCH(window_attention_fused, grid, dim3(qt), smem, s)(o, qkv, w0, g, table, scale, hd, C);
    return cudaGetLastError();
}
