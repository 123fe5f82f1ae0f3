/* window_attention_wmma: the half-mode window attention on tensor cores, for head dims
 * HD = 16 and 32 (MONAI's default f = 48 has C / heads = 16 at every stage). Same contract as
 * window_attention_fused (window_attention.cu): per window w0 + wl of the chunk and head h,
 *   O = softmax(scale Q K^T + bias + mask) V
 * with Q, K, V the (n, HD) column slices [h HD, (h+1) HD) of the q, k, v thirds of
 * qkv (wc n, 3C) float16, and O stored into columns [h HD, (h+1) HD) of o (wc n, C).
 *
 * Block: 128 threads = 4 warps, 64 queries (warp w: queries 16 w .. 16 w + 15 of the
 * block's tile); grid (ceil(n / 64), heads, wc). Once per block the head's bias column
 * table[R heads + h] (R < (2 cw0 - 1)(2 cw1 - 1)(2 cw2 - 1) <= 13^3) is staged as float32,
 * and Q (64 x HD, zero rows past n) is read into wmma fragments. Keys are streamed in
 * tiles of KT = 64 with an online softmax (running row max m and sum l):
 *   1. the block stages the tile's K and V rows (KT x HD float16, 16-byte copies; rows
 *      past n are zeros) and per key -rel_key and its region label (KeyWalk: the
 *      key's digits advance by KT per tile, no division);
 *   2. each warp: S (16 x KT, float32) = Q K^T with wmma m16n16k16 (K^T read as a
 *      col_major matrix_b from the row-major K tile; sub-tiles past n skipped), to
 *      shared memory; in the last tile S = -inf for keys past n;
 *   3. lane pair (2r, 2r + 1) owns query row r, 32 keys each: logit = scale S + bias
 *      + (-100 across shifted-window regions); max and sum over the pair by one shuffle;
 *      P = exp(logit - m) as float16 written over the start of S's own row (after
 *      __syncwarp: the partner's columns alias);
 *   4. the pair rescales its row of the warp's O (16 x HD float32, shared) by
 *      exp(m_old - m_new); the warp loads O as accumulators, adds P V (wmma), stores O.
 * At the end O / l goes to o in float16. Query rows past n are computed on zero rows with
 * query 0's relative index (a valid table row) and never stored.
 * Shared memory (static, 32-byte aligned fragments, leading dims multiples of 16 bytes):
 *   ks, vs: 64 x (HD + 8) float16; krel_neg, klab: KT ints each; tab_s: 13^3 floats;
 *   ss: 4 warps x 16 x (KT + 4) float32 (P aliases each row as float16 with leading dim
 *   2 (KT + 4); Q is staged there too before the first tile);
 *   os: 4 warps x 16 x (HD + 4) float32.   HD 16: 36.8 KiB, HD 32: 44.8 KiB.
 * Rounding: Q, K, V and P are float16 (P in [0, 1], 2^-11 relative), products exact
 * in float32, sums and the softmax float32; exp is __expf (ex2.approx, 2 ulp). */
#ifndef SWIN_CUDA_WINDOW_ATTENTION_WMMA_CUH
#define SWIN_CUDA_WINDOW_ATTENTION_WMMA_CUH

#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/window_geom.cuh"

#ifndef SWIN_EMU
#include <mma.h>
#endif

namespace swin_cuda {

constexpr int WA_QT = 64, WA_KT = 64, WA_THREADS = 128, WA_LDS = WA_KT + 4;
/* Bias table rows staged in shared memory: (2 cw - 1)^3 for a configured window up to 7^3. */
constexpr int WA_TABLE_MAX = 13 * 13 * 13;

/* Bias table rows (2 cw0 - 1)(2 cw1 - 1)(2 cw2 - 1) of geometry g. */
__host__ __device__ inline int attention_table_rows(const WinGeom &g)
{
    return (2 * g.cw[0] - 1) * (2 * g.cw[1] - 1) * (2 * g.cw[2] - 1);
}

/* Token t of a window as digits in two mixed radices, advanced by a fixed step without
 * division: w[] by the window (win0, win1, win2) for the region label, c[] by the
 * configured window cw for the relative-position index (the shrink quirk). */
struct KeyWalk {
    int w[3], c[3], dw[3], dc[3];
    __device__ static void digits(int t, const int r[3], int d[3])
    {
        d[0] = t / (r[1] * r[2]);
        d[1] = t / r[2] % r[1];
        d[2] = t % r[2];
    }
    __device__ KeyWalk(const WinGeom &g, int t, int step)
    {
        digits(t, g.win, w);
        digits(t, g.cw, c);
        digits(step, g.win, dw);
        digits(step, g.cw, dc);
    }
    __device__ static void add(int d[3], const int s[3], const int r[3])
    {
        d[2] += s[2];
        const int k2 = d[2] >= r[2];
        d[2] -= k2 * r[2];
        d[1] += s[1] + k2;
        const int k1 = d[1] >= r[1];
        d[1] -= k1 * r[1];
        d[0] += s[0] + k1;
    }
    __device__ void next(const WinGeom &g)
    {
        add(w, dw, g.win);
        add(c, dc, g.cw);
    }
    /* rel_key(g, t) and token_label_at(g, o, t). */
    __device__ int rel(const WinGeom &g) const
    {
        const int s2 = 2 * g.cw[2] - 1, s1 = (2 * g.cw[1] - 1) * s2;
        return c[0] * s1 + c[1] * s2 + c[2];
    }
    __device__ int label(const WinGeom &g, const WinOrigin &o) const
    {
        int lab = 0;
        for (int k = 0; k < 3; k++) lab = lab * 3 + win_region(o.p[k] + w[k], g.padded[k], g.win[k], g.shift[k]);
        return lab;
    }
};

template <int HD>
__global__ void __launch_bounds__(WA_THREADS)
    window_attention_wmma(__half *o, const __half *qkv, long long w0, WinGeom g, const __half *table, float scale,
                          int C)
{
    using namespace nvcuda;
    static_assert(HD % 16 == 0, "wmma head dims are multiples of 16");
    constexpr int LDH = HD + 8, LDO = HD + 4, CHUNKS = HD / 8;   /* 16-byte chunks per row */
    __shared__ __align__(32) __half ks[WA_KT * LDH];
    __shared__ __align__(32) __half vs[WA_KT * LDH];
    __shared__ __align__(32) float ss[4][16 * WA_LDS];
    __shared__ __align__(32) float os[4][16 * LDO];
    __shared__ float tab_s[WA_TABLE_MAX];
    __shared__ __align__(16) int krel_neg[WA_KT];   /* -rel_key of each key of the tile */
    __shared__ __align__(16) int klab[WA_KT];       /* its region label */
    /* Q is staged over ss: it is read into fragments before the first S store. */
    static_assert(WA_QT * LDH * sizeof(__half) <= sizeof(ss), "qs fits in ss");
    __half *qs = reinterpret_cast<__half *>(&ss[0][0]);

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, h = blockIdx.y;
    const int n = g.n, c3 = 3 * C;
    const long long wl = blockIdx.z, window = w0 + wl;
    const __half *base = qkv + wl * n * c3 + h * HD;
    const int q0 = blockIdx.x * WA_QT;
    const int g_table_rows = attention_table_rows(g);

    for (int e = tid; e < WA_QT * CHUNKS; e += WA_THREADS) {
        const int row = e / CHUNKS, ch = e % CHUNKS;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (q0 + row < n) v = *reinterpret_cast<const uint4 *>(base + (long long)(q0 + row) * c3 + 8 * ch);
        *reinterpret_cast<uint4 *>(qs + row * LDH + 8 * ch) = v;
    }
    /* This lane's row r of the warp's 16 and its half of each key tile / of O's columns. */
    const int r = lane / 2, half_ = lane % 2, i = q0 + 16 * warp + r;
    const bool qvalid = i < n;
    const WinOrigin wo = window_origin(g, window);
    const int qlab = qvalid ? token_label_at(g, wo, i) : 0;
    const int qrel = rel_query(g, qvalid ? i : 0);   /* a valid table row for every key */
    for (int e = tid; e < g_table_rows; e += WA_THREADS) tab_s[e] = ldf(table + (long long)e * g.heads + h);
    float *s_w = ss[warp], *o_w = os[warp];
    __half *p_w = reinterpret_cast<__half *>(s_w);   /* P row r at p_w + r * 2 WA_LDS */
    for (int d = half_ * (HD / 2); d < (half_ + 1) * (HD / 2); d++) o_w[r * LDO + d] = 0.0f;
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qa[HD / 16];
#pragma unroll
    for (int dc = 0; dc < HD / 16; dc++) wmma::load_matrix_sync(qa[dc], qs + 16 * warp * LDH + 16 * dc, LDH);

    /* K/V staging: thread tid copies 16 bytes at column stage_col of keys
     * stage_key0 + it (WA_THREADS / CHUNKS) of each tile; stage_src follows the tile. */
    constexpr int STAGE_ITERS = WA_KT * CHUNKS / WA_THREADS;
    static_assert(STAGE_ITERS * WA_THREADS == WA_KT * CHUNKS, "whole staging rounds");
    const int stage_key0 = tid / CHUNKS, stage_col = 8 * (tid % CHUNKS);
    const __half *stage_src = base + (long long)stage_key0 * c3 + stage_col;
    KeyWalk kw(g, tid, WA_KT);   /* key kt0 + tid of each tile (threads tid < KT) */
    float m = -INFINITY, l = 0.0f;   /* running max and sum of row r */
    for (int kt0 = 0; kt0 < n; kt0 += WA_KT) {
        const int nk = n - kt0 < WA_KT ? n - kt0 : WA_KT;
        __syncthreads();   /* the previous tile's ks, vs, krel_neg, klab are no longer read */
#pragma unroll
        for (int it = 0; it < STAGE_ITERS; it++) {
            const int key = stage_key0 + it * (WA_THREADS / CHUNKS);
            uint4 kv = make_uint4(0, 0, 0, 0), vv = kv;
            if (key < nk) {
                const __half *row = stage_src + (long long)it * (WA_THREADS / CHUNKS) * c3;
                kv = *reinterpret_cast<const uint4 *>(row + C);
                vv = *reinterpret_cast<const uint4 *>(row + 2 * C);
            }
            *reinterpret_cast<uint4 *>(ks + key * LDH + stage_col) = kv;
            *reinterpret_cast<uint4 *>(vs + key * LDH + stage_col) = vv;
        }
        stage_src += (long long)WA_KT * c3;
        static_assert(WA_KT <= WA_THREADS, "one key per thread");
        if (tid < WA_KT) {   /* keys past n: any valid table row (their S is -inf) */
            krel_neg[tid] = tid < nk ? -kw.rel(g) : 0;
            klab[tid] = tid < nk ? kw.label(g, wo) : 0;
            kw.next(g);
        }
        __syncthreads();

        const int jt = (nk + 15) / 16;   /* 16-key sub-tiles holding keys */
#pragma unroll
        for (int j = 0; j < WA_KT / 16; j++) {
            if (j >= jt) break;
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
            wmma::fill_fragment(sf, 0.0f);
#pragma unroll
            for (int dc = 0; dc < HD / 16; dc++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kb;
                wmma::load_matrix_sync(kb, ks + 16 * j * LDH + 16 * dc, LDH);
                wmma::mma_sync(sf, qa[dc], kb, sf);
            }
            wmma::store_matrix_sync(s_w + 16 * j, sf, WA_LDS, wmma::mem_row_major);
        }
        __syncwarp();

        /* Logits of row r, keys c0 .. c0 + 31 of the tile. Keys past n (last tile only)
         * get S = -inf, which no bias or mask changes. */
        const int c0 = 32 * half_;
        if (nk < WA_KT) {
#pragma unroll 1
            for (int c = nk - c0 > 0 ? nk - c0 : 0; c < 32; c++) s_w[r * WA_LDS + c0 + c] = -INFINITY;
        }
        const bool masked = g.masked;
        float s[32], tmax = -INFINITY;
        /* 16-byte shared loads: S row r (ld WA_LDS = 68, a multiple of 4), krel_neg, klab. */
        const float4 *srow = reinterpret_cast<const float4 *>(s_w + r * WA_LDS + c0);
        const int4 *krow = reinterpret_cast<const int4 *>(krel_neg + c0), *lrow = reinterpret_cast<const int4 *>(klab + c0);
#pragma unroll
        for (int c4 = 0; c4 < 8; c4++) {
            const float4 sv = srow[c4];
            const int4 kr = krow[c4], kl = lrow[c4];
            const float sx[4] = {sv.x, sv.y, sv.z, sv.w};
            const int krx[4] = {kr.x, kr.y, kr.z, kr.w}, klx[4] = {kl.x, kl.y, kl.z, kl.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                float b = tab_s[qrel + krx[k]];
                if (masked && klx[k] != qlab) b += -100.0f;
                const float v = fmaf(sx[k], scale, b);
                s[4 * c4 + k] = v;
                tmax = fmaxf(tmax, v);
            }
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        /* mn is finite (key kt0 < n); __expf: one ex2.approx of (x log2 e), 2 ulp. */
        const float mn = fmaxf(m, tmax), corr = __expf(m - mn);
        __syncwarp();   /* both lanes of the pair have read S row r before P overwrites it */
        float psum = 0.0f;
        __half2 *prow = reinterpret_cast<__half2 *>(p_w + r * 2 * WA_LDS + c0);
#pragma unroll
        for (int c = 0; c < 32; c += 2) {
            const float p0 = __expf(s[c] - mn), p1 = __expf(s[c + 1] - mn);
            psum += p0 + p1;
            prow[c / 2] = __floats2half2_rn(p0, p1);
        }
        psum += __shfl_xor_sync(0xffffffffu, psum, 1);
        l = l * corr + psum;
        m = mn;
        for (int d = half_ * (HD / 2); d < (half_ + 1) * (HD / 2); d++) o_w[r * LDO + d] *= corr;
        __syncwarp();

#pragma unroll
        for (int dc = 0; dc < HD / 16; dc++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
            wmma::load_matrix_sync(of, o_w + 16 * dc, LDO, wmma::mem_row_major);
#pragma unroll
            for (int j = 0; j < WA_KT / 16; j++) {
                if (j >= jt) break;
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> pa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> vb;
                wmma::load_matrix_sync(pa, p_w + 16 * j, 2 * WA_LDS);
                wmma::load_matrix_sync(vb, vs + 16 * j * LDH + 16 * dc, LDH);
                wmma::mma_sync(of, pa, vb, of);
            }
            wmma::store_matrix_sync(o_w + 16 * dc, of, LDO, wmma::mem_row_major);
        }
        __syncwarp();   /* O and P are read and written by other lanes next tile */
    }
    if (!qvalid) return;
    const float inv = 1.0f / l;
    __half *out = o + (wl * n + i) * C + h * HD;
    for (int d = half_ * (HD / 2); d < (half_ + 1) * (HD / 2); d++) out[d] = __float2half_rn(o_w[r * LDO + d] * inv);
}

/* Launches the HD = 16 or 32 instantiation on the chunk. */
template <int HD>
static cudaError_t launch_attention_wmma(cudaStream_t s, __half *o, const __half *qkv, long long w0, int wc,
                                         const WinGeom &g, const __half *table, float scale, int C)
{
    const dim3 grid(swin_cuda_blocks(g.n, WA_QT), g.heads, wc);
    SWIN_LAUNCH(window_attention_wmma<HD>, grid, dim3(WA_THREADS), 0, s)(o, qkv, w0, g, table, scale, C);
    return cudaGetLastError();
}

} // namespace swin_cuda

#endif
