/* conv_igemm: the implicit-GEMM convolution kernels of conv3d.cu (k^3 taps, stride, pad,
 * channels-last input with a pitch), C (M x N) = A (M x K) . B (K x N) with
 *   M = OD OH OW output voxels, N = cout, K = k^3 cin,
 *   A(m, tap cin + ci) = in(o stride - pad + (kz, ky, kx), ci), zero outside the input,
 *   B = w (k, k, k, cin, cout) row-major (ldb = cout),
 * every result through the epilogue functor `ep.store(blockIdx.z, m, n, acc)` (gemm.cuh),
 * split-K by blockIdx.z (each split a multiple of 16 of K); with the epilogue
 * ConvStoreStats the kernels also keep each tile's instance-norm statistics
 * (conv_tile_stats.cuh).
 *
 * Block: a 128 x BN tile of C (BN = 48 or 96: the f=48 model's couts 48, 96, 192, 384,
 * 768 are multiples, so no column is wasted), k-steps of BK = 16.
 *   conv_wmma (half mode): tensor cores (wmma m16n16k16, fp32 accumulators), warps of
 *     32 x 48 (2 x 3 fragments, 12 HMMA.16816 per k-step): 4 warps (128 threads) for
 *     BN = 48, warp w at rows 32 w; 8 warps for BN = 96, warp w at rows 32 (w % 4),
 *     columns 48 (w / 4).
 *   conv_ffma (float32): thread (tx = tid % TX, ty = tid / TX) owns rows ty + 16 i
 *     (i < 8) and TN = BN / TX columns (ConvFfmaTile): TN = 12 with 16-byte copies (BN 48:
 *     TX 4, 64 threads; BN 96: TX 8, 128 threads), TN = 6 with 4-byte copies (BN 48: 128
 *     threads, BN 96: 256), whose loader holds 4x the rows per thread. Per 4 k it reads
 *     its 8 rows as 8 float4 (a warp's 32 / TX values of ty read consecutive rows, 80 B
 *     apart: distinct banks); per k its B columns as float4s at 4 tx + 4 TX v (v < TN / 4)
 *     and, for TN = 6, a float2 at 4 TX + 2 tx (TX consecutive vectors per warp:
 *     conflict-free). Per k-step of BN 48, TN 12: 1536 FFMA per thread against 32 + 48
 *     shared loads and 8 A + 3 B copies.
 *
 * Loader (the same for both kernels, NT >= 64 threads): every stage is filled with
 * asynchronous copies of VB bytes (cuda_pipeline.h; VB = 16 when cin, the pitch, cout and
 * the base pointers allow, else 4; VE = VB / sizeof(T) elements), copy (row r, column c)
 * of the A tile reading VE consecutive channels of one voxel. A copy never straddles a
 * tap because cin % VE == 0. Thread t owns column c = t % (16 / VE) and rows t / (16 / VE)
 * + i NT / (16 / VE); per tile it computes, once, each row's base pointer in + ((z0 h +
 * y0) w + x0) pitch (z0 = oz stride - pad, ...) and its halo mask (bit tap set when the
 * tap's voxel is inside the input); per k-step it advances its column's (tap, ci) by
 * (16 / cin, 16 % cin) (precomputed on the host: no division in the loop), reads the
 * tap's offset from a 64-entry shared table and issues each row's copy at base + offset,
 * zero-filled (zfill = VB, from the input's first element instead of an address that may
 * lie outside it) for a halo tap, past K or past the split. B rows are VB copies straight
 * from the weight matrix, zero-filled past N or the split (from its first element); with
 * 16-byte copies every thread of conv_ffma issues 3 (BN 48: 192 copies on 64 threads,
 * BN 96: 384 on 128).
 *
 * Pipeline: STAGES shared stages (4 in half, 3 in float32), one barrier per k-step:
 *   prologue: stages 0 .. STAGES - 2 issued, one commit each;
 *   step s: wait for stage s (wait_prior(STAGES - 2)), barrier, issue stage s + STAGES - 1
 *           into the buffer read in step s - 1 (every thread is past that by the barrier),
 *           commit, multiply stage s.
 * The loop is unrolled by STAGES (conv_pipeline), so every shared address is a constant;
 * e.g. f=48 encoder2 (48^3 voxels, 48 -> 48): K = 1296 = 81 k-steps, 864 blocks of 128 x 48.
 * Shared memory (dynamic, one region): per stage A [128][BK + pad] then B [BK][BN + pad]
 * (T elements; pads keep rows 16-byte aligned for the copies and, in half mode, wmma
 * pointers 32-byte aligned), and in half mode the float32 epilogue tile [128][BN + 4]
 * reuses the stages after the loop; after them the tap table (64 ints).
 *   half, BN 48: 4 x (6144 + 1792) = 31744 B stages, 26624 B epilogue, + the table: 32000 B;
 *   half, BN 96: 4 x (6144 + 3328) = 37888 B stages, 51200 B epilogue, + the table: 51456 B;
 *   float32: 3 x (10240 + 64 BN) B stages + the table: BN 48 40192 B, BN 96 49408 B.
 * Over 48 KiB the launch raises the kernel's dynamic shared memory limit. */
#ifndef SWIN_CUDA_CONV_IGEMM_CUH
#define SWIN_CUDA_CONV_IGEMM_CUH

#include <stdint.h>

#include "kernels/cuda/conv_tile_stats.cuh"
#include "kernels/cuda/gemm.cuh"

#ifndef SWIN_EMU
#include <cuda_pipeline.h>
#endif

namespace swin_cuda {

constexpr int CONV_BM = 128, CONV_BK = 16, CONV_TAPS = 64;
static_assert(CONV_BM == SWIN_CUDA_STATS_TILE, "a statistics tile is a conv tile");

/* The convolution as the kernels see it; built on the host (conv_igemm_launch). */
template <class T> struct ConvGeom {
    const T *in;
    long long pitch;
    int d, h, w, cin;
    int oh, ow, k, stride, pad;
    int tap_q, tap_r; /* CONV_BK / cin, CONV_BK % cin */
    const T *b;
    int ldb;
};

/* One asynchronous copy of VB bytes, or VB zeros when !valid. src is then not read but
 * may lie outside its allocation (a halo voxel, a row past K), which compute-sanitizer may
 * flag: the zero-fill copy takes `base` (its tensor's start, aligned to VB) instead. */
template <int VB> __device__ inline void conv_copy(void *dst, const void *src, const void *base, bool valid)
{
    __pipeline_memcpy_async(dst, valid ? src : base, VB, valid ? 0 : VB);
}

/* Shared-memory layout of one instantiation (bytes). */
template <class T, int BN, int STAGES> struct ConvSmem {
    static constexpr int LDA = CONV_BK + (sizeof(T) == 2 ? 8 : 4); /* 24 halves (48 B) / 20 floats (80 B) */
    static constexpr int LDB = BN + (sizeof(T) == 2 ? 8 : 0);
    static constexpr int A_BYTES = CONV_BM * LDA * (int)sizeof(T), B_BYTES = CONV_BK * LDB * (int)sizeof(T);
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int LDC = BN + 4;
    static constexpr int EPI_BYTES = sizeof(T) == 2 ? CONV_BM * LDC * 4 : 0;
    static constexpr int REGION = STAGES * STAGE_BYTES > EPI_BYTES ? STAGES * STAGE_BYTES : EPI_BYTES;
    static constexpr int TOTAL = REGION + CONV_TAPS * 4;
    /* wmma tiles (half) start at multiples of 32 bytes from the 128-byte aligned base:
     * rows of 16 x LDA halves or 16 x LDC floats, columns at multiples of 16 elements. */
    static_assert(sizeof(T) != 2 || (A_BYTES % 32 == 0 && STAGE_BYTES % 32 == 0), "wmma tile alignment");
};

/* The per-thread loader state and its per-k-step issue (see the header comment). */
template <class T, int VB, int BN, int THREADS> struct ConvLoader {
    static constexpr int VE = VB / (int)sizeof(T), CPR = CONV_BK / VE, RPT = CONV_BM * CPR / THREADS,
                         ROW_STEP = THREADS / CPR;
    static constexpr int BCPR = BN / VE, BCHUNKS = CONV_BK * BCPR, BPT = (BCHUNKS + THREADS - 1) / THREADS;
    const T *rowptr[RPT];
    unsigned mask[RPT];
    int row0, col, k, kend, tap, ci;
    const T *bptr[BPT];
    int bk[BPT];
    bool bok[BPT];

    __device__ void init(const ConvGeom<T> &g, int *s_tap, long long m0, int n0, int M, int N, int kbeg, int kend_)
    {
        const int tid = threadIdx.x;
        const int ntaps = g.k * g.k * g.k;
        if (tid < CONV_TAPS) {
            int v = 0;
            if (tid < ntaps) {
                const int kz = tid / (g.k * g.k), ky = tid / g.k % g.k, kx = tid % g.k;
                v = (int)(((long long)(kz * g.h + ky) * g.w + kx) * g.pitch);
            }
            s_tap[tid] = v;
        }
        col = tid % CPR * VE;
        row0 = tid / CPR;
        kend = kend_;
        k = kbeg + col;
        tap = k / g.cin;
        ci = k - tap * g.cin;
#pragma unroll
        for (int i = 0; i < RPT; i++) {
            const long long m = m0 + row0 + i * ROW_STEP;
            rowptr[i] = g.in;
            mask[i] = 0;
            if (m >= M) continue;
            const long long ohw = (long long)g.oh * g.ow;
            const int oz = (int)(m / ohw), rem = (int)(m - oz * ohw), oy = rem / g.ow, ox = rem - oy * g.ow;
            const int z0 = oz * g.stride - g.pad, y0 = oy * g.stride - g.pad, x0 = ox * g.stride - g.pad;
            rowptr[i] = g.in + (((long long)z0 * g.h + y0) * g.w + x0) * g.pitch;
            unsigned msk = 0;
            for (int kz = 0, t = 0; kz < g.k; kz++)
                for (int ky = 0; ky < g.k; ky++)
                    for (int kx = 0; kx < g.k; kx++, t++) {
                        const bool ok = (unsigned)(z0 + kz) < (unsigned)g.d && (unsigned)(y0 + ky) < (unsigned)g.h &&
                                        (unsigned)(x0 + kx) < (unsigned)g.w;
                        msk |= (unsigned)ok << t;
                    }
            mask[i] = msk;
        }
#pragma unroll
        for (int j = 0; j < BPT; j++) {
            const int e = tid + j * THREADS, kb = e / BCPR, cb = e % BCPR * VE;
            bk[j] = kbeg + kb;
            bok[j] = e < BCHUNKS && n0 + cb < N;
            bptr[j] = g.b + (long long)(kbeg + kb) * g.ldb + n0 + cb;
        }
    }

    /* Issues the next k-step into the stage at a (A, [128][LDA]) and b (B, [BK][LDB]). */
    template <int LDA, int LDB> __device__ void issue(const ConvGeom<T> &g, const int *s_tap, T *a, T *b)
    {
        /* >= 0: zero-extended (unsigned) into the rows' 64-bit pointer adds */
        const unsigned toff = (unsigned)(s_tap[tap & (CONV_TAPS - 1)] + ci);
        const unsigned colmask = k < kend ? 1u << (tap & 31) : 0u;
#pragma unroll
        for (int i = 0; i < RPT; i++) {
            conv_copy<VB>(a + (row0 + i * ROW_STEP) * LDA + col, rowptr[i] + toff, g.in,
                          (mask[i] & colmask) != 0);
        }
        k += CONV_BK;
        ci += g.tap_r;
        tap += g.tap_q;
        if (ci >= g.cin) {
            ci -= g.cin;
            tap++;
        }
#pragma unroll
        for (int j = 0; j < BPT; j++) {
            const int e = threadIdx.x + j * THREADS;
            if ((j + 1) * THREADS <= BCHUNKS || e < BCHUNKS)
                conv_copy<VB>(b + e / BCPR * LDB + e % BCPR * VE, bptr[j], g.b, bok[j] && bk[j] < kend);
            bk[j] += CONV_BK;
            bptr[j] += (long long)CONV_BK * g.ldb;
        }
    }
};

constexpr int CONV_WMMA_STAGES = 4, CONV_FFMA_STAGES = 3;

/* Threads of conv_wmma: 4 warps of 32 x 48 for BN = 48, 8 for BN = 96 (see above). */
template <int BN> struct ConvWmmaThreads {
    static constexpr int value = BN == 48 ? 128 : 256;
};

/* The k-step loop (header comment): issue(stage) fills a stage with the next k-step,
 * mma(stage) multiplies one. The loop is unrolled by STAGES so that every stage index,
 * and with it every shared-memory address, is a constant. Stages past the last k-step
 * are issued too (all zero-filled: their k is past kend) and drained by the final wait. */
template <int STAGES, class Issue, class Mma> __device__ inline void conv_pipeline(int nsteps, Issue issue, Mma mma)
{
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        issue(s);
        __pipeline_commit();
    }
    for (int s0 = 0; s0 < nsteps; s0 += STAGES) {
#pragma unroll
        for (int st = 0; st < STAGES; st++) {
            if (s0 + st >= nsteps) break;
            __pipeline_wait_prior(STAGES - 2);
            __syncthreads();
            issue((st + STAGES - 1) % STAGES); /* the stage read in the previous step */
            __pipeline_commit();
            mma(st);
        }
    }
    __pipeline_wait_prior(0);
}

template <int BN, int VB, class Epi>
__global__ void __launch_bounds__(ConvWmmaThreads<BN>::value)
    conv_wmma(ConvGeom<__half> g, Epi ep, int M, int N, int K, int k_split)
{
    using namespace nvcuda;
    typedef ConvSmem<__half, BN, CONV_WMMA_STAGES> L;
    constexpr int THREADS = ConvWmmaThreads<BN>::value, WARPS_M = 4, FM = 2, FN = 3;
    SWIN_DYN_SMEM(unsigned char, smem);
    int *s_tap = reinterpret_cast<int *>(smem + L::REGION);
    const int warp = threadIdx.x / 32, wr = 32 * (warp % WARPS_M), wc = 48 * (warp / WARPS_M);
    const long long m0 = (long long)blockIdx.x * CONV_BM;
    const int n0 = blockIdx.y * BN, kbeg = blockIdx.z * k_split;
    const int kend = kbeg + k_split < K ? kbeg + k_split : K;
    const int nsteps = kend > kbeg ? (kend - kbeg + CONV_BK - 1) / CONV_BK : 0;

    ConvLoader<__half, VB, BN, THREADS> ld;
    ld.init(g, s_tap, m0, n0, M, N, kbeg, kend);
    __syncthreads(); /* the tap table */
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    conv_pipeline<CONV_WMMA_STAGES>(
        nsteps,
        [&](int st) {
            unsigned char *base = smem + st * L::STAGE_BYTES;
            ld.template issue<L::LDA, L::LDB>(g, s_tap, reinterpret_cast<__half *>(base),
                                              reinterpret_cast<__half *>(base + L::A_BYTES));
        },
        [&](int st) {
            const __half *as = reinterpret_cast<const __half *>(smem + st * L::STAGE_BYTES),
                         *bs = reinterpret_cast<const __half *>(smem + st * L::STAGE_BYTES + L::A_BYTES);
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
#pragma unroll
            for (int i = 0; i < FM; i++) wmma::load_matrix_sync(fa[i], as + (wr + 16 * i) * L::LDA, L::LDA);
#pragma unroll
            for (int j = 0; j < FN; j++) wmma::load_matrix_sync(fb[j], bs + wc + 16 * j, L::LDB);
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        });
    __syncthreads(); /* every warp is done with the stages: the epilogue tile reuses them */
    float *cs = reinterpret_cast<float *>(smem);
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::store_matrix_sync(cs + (wr + 16 * i) * L::LDC + wc + 16 * j, acc[i][j], L::LDC,
                                    wmma::mem_row_major);
    __syncthreads();
    const int rows = M - m0 < CONV_BM ? (int)(M - m0) : CONV_BM, cols = N - n0 < BN ? N - n0 : BN;
    if constexpr (ConvTileStats<Epi>::value) {
        /* per (row segment, column) of the tile the stored values and their moments
         * (conv_tile_stats.cuh); a warp stores consecutive columns of a row */
        constexpr int PAIRS = TILE_SEGS * BN / THREADS;
        static_assert(PAIRS * THREADS == TILE_SEGS * BN && TileScratch<BN>::bytes <= L::REGION && BN <= THREADS,
                      "tile stats");
        float b[PAIRS]; /* read apart from the stores, so the store code exists once */
#pragma unroll
        for (int j = 0; j < PAIRS; j++) {
            const int col = (threadIdx.x + j * THREADS) % BN;
            b[j] = col < cols ? ep.bias_at(n0 + col) : 0.0f;
        }
        SegMoments sm[PAIRS];
#pragma unroll
        for (int j = 0; j < PAIRS; j++) {
            const int q = threadIdx.x + j * THREADS, seg = q / BN, col = q - seg * BN;
            const int left = rows - TILE_SEG_ROWS * seg,
                      n = col >= cols || left < 0 ? 0 : left < TILE_SEG_ROWS ? left : TILE_SEG_ROWS;
            auto *p = ep.at(m0 + TILE_SEG_ROWS * seg, n0 + col);
            float v[TILE_SEG_ROWS];
#pragma unroll
            for (int i = 0; i < TILE_SEG_ROWS; i++, p += ep.ldc)
                v[i] = ep.put(p, cs[(TILE_SEG_ROWS * seg + i) * L::LDC + col] + b[j], i < n);
            sm[j] = seg_moments(v, n);
        }
        __syncthreads(); /* the scratch overwrites the tile */
#pragma unroll
        for (int j = 0; j < PAIRS; j++) {
            const int q = threadIdx.x + j * THREADS, seg = q / BN;
            tile_put_segment<BN>(cs, seg, q - seg * BN, sm[j]);
        }
        __syncthreads();
        const long long t = (long long)blockIdx.x * N + n0;
        tile_merge_segments<BN>(cs, cols, ep.tmean + t, ep.tm2 + t);
    } else {
        for (int e = threadIdx.x; e < CONV_BM * BN; e += THREADS) {
            const int r = e / BN, c = e - r * BN;
            if (r < rows && c < cols) ep.store(blockIdx.z, m0 + r, n0 + c, cs[r * L::LDC + c]);
        }
    }
}

/* Thread tile of conv_ffma (header comment): 8 rows x TN columns, TX threads across the
 * BN columns, THREADS = 16 TX. Thread tx owns the columns 4 tx + 4 TX v + c (c < 4, v <
 * TN / 4) and, when TN = 6, 4 TX + 2 tx + c (c < 2); e.g. BN 48, TN 12: TX 4, columns
 * 4 tx + {0..3, 16..19, 32..35}. TN = 12 holds 96 accumulators: up to 255 registers
 * (no spills; 8 warps per SM), so TN = 6 for the 4-byte loader's 4x rows per thread. */
template <int BN, int VB> struct ConvFfmaTile {
    static constexpr int TN = VB == 16 ? 12 : 6, TX = BN / TN, THREADS = CONV_BM / 8 * TX;
    static_assert(TN * TX == BN && THREADS >= CONV_TAPS, "conv_ffma tile");
    /* Column (within the block's BN) of the thread's j-th accumulator column. */
    __device__ static int col(int tx, int j)
    {
        return j < TN / 4 * 4 ? 4 * tx + 4 * TX * (j / 4) + j % 4 : 4 * TX * (TN / 4) + 2 * tx + j % 4;
    }
};

template <int BN, int VB, class Epi>
__global__ void __launch_bounds__(ConvFfmaTile<BN, VB>::THREADS)
    conv_ffma(ConvGeom<float> g, Epi ep, int M, int N, int K, int k_split)
{
    typedef ConvSmem<float, BN, CONV_FFMA_STAGES> L;
    typedef ConvFfmaTile<BN, VB> Tile;
    constexpr int TN = Tile::TN, TX = Tile::TX;
    SWIN_DYN_SMEM(unsigned char, smem);
    int *s_tap = reinterpret_cast<int *>(smem + L::REGION);
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const long long m0 = (long long)blockIdx.x * CONV_BM;
    const int n0 = blockIdx.y * BN, kbeg = blockIdx.z * k_split;
    const int kend = kbeg + k_split < K ? kbeg + k_split : K;
    const int nsteps = kend > kbeg ? (kend - kbeg + CONV_BK - 1) / CONV_BK : 0;

    ConvLoader<float, VB, BN, Tile::THREADS> ld;
    ld.init(g, s_tap, m0, n0, M, N, kbeg, kend);
    __syncthreads(); /* the tap table */
    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    conv_pipeline<CONV_FFMA_STAGES>(
        nsteps,
        [&](int st) {
            unsigned char *base = smem + st * L::STAGE_BYTES;
            ld.template issue<L::LDA, L::LDB>(g, s_tap, reinterpret_cast<float *>(base),
                                              reinterpret_cast<float *>(base + L::A_BYTES));
        },
        [&](int st) {
            const float *as = reinterpret_cast<const float *>(smem + st * L::STAGE_BYTES) + ty * L::LDA,
                        *bs = reinterpret_cast<const float *>(smem + st * L::STAGE_BYTES + L::A_BYTES);
#pragma unroll
            for (int k4 = 0; k4 < CONV_BK; k4 += 4) {
                float4 av[8];
#pragma unroll
                for (int i = 0; i < 8; i++) av[i] = *reinterpret_cast<const float4 *>(as + 16 * i * L::LDA + k4);
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const float *brow = bs + (k4 + q) * L::LDB;
                    float bv[TN];
#pragma unroll
                    for (int v = 0; v < TN / 4; v++) {
                        const float4 b4 = *reinterpret_cast<const float4 *>(brow + 4 * tx + 4 * TX * v);
                        bv[4 * v] = b4.x;
                        bv[4 * v + 1] = b4.y;
                        bv[4 * v + 2] = b4.z;
                        bv[4 * v + 3] = b4.w;
                    }
                    if constexpr (TN % 4 != 0) {
                        const float2 b2 = *reinterpret_cast<const float2 *>(brow + 4 * TX * (TN / 4) + 2 * tx);
                        bv[TN - 2] = b2.x;
                        bv[TN - 1] = b2.y;
                    }
#pragma unroll
                    for (int i = 0; i < 8; i++) {
                        const float a = q == 0 ? av[i].x : q == 1 ? av[i].y : q == 2 ? av[i].z : av[i].w;
#pragma unroll
                        for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a, bv[j], acc[i][j]);
                    }
                }
            }
        });
    /* rows ty + 16 i, i < nrow, and columns below cols are inside C */
    const int rows = M - m0 < CONV_BM ? (int)(M - m0) : CONV_BM, cols = N - n0 < BN ? N - n0 : BN;
    const int nrow = rows <= ty ? 0 : (rows - ty + 15) / 16 < 8 ? (rows - ty + 15) / 16 : 8;
    if constexpr (ConvTileStats<Epi>::value) {
        /* per column the stored values, then the moments of row segment ty (conv_tile_stats.cuh) */
        float b[TN]; /* read apart from the stores, so the store code exists once */
#pragma unroll
        for (int j = 0; j < TN; j++) b[j] = Tile::col(tx, j) < cols ? ep.bias_at(n0 + Tile::col(tx, j)) : 0.0f;
        SegMoments sm[TN];
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int c = Tile::col(tx, j), n = c < cols ? nrow : 0;
            auto *p = ep.at(m0 + ty, n0 + c);
            float v[8];
#pragma unroll
            for (int i = 0; i < 8; i++, p += 16 * ep.ldc) v[i] = ep.put(p, acc[i][j] + b[j], i < n);
            sm[j] = seg_moments(v, n);
        }
        static_assert(TileScratch<BN>::bytes <= L::REGION && BN <= Tile::THREADS, "tile stats");
        float *scratch = reinterpret_cast<float *>(smem);
        __syncthreads(); /* every warp is done with the stages: the scratch reuses them */
#pragma unroll
        for (int j = 0; j < TN; j++) tile_put_segment<BN>(scratch, ty, Tile::col(tx, j), sm[j]);
        __syncthreads();
        const long long t = (long long)blockIdx.x * N + n0;
        tile_merge_segments<BN>(scratch, cols, ep.tmean + t, ep.tm2 + t);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) {
                const int c = Tile::col(tx, j);
                if (i < nrow && c < cols) ep.store(blockIdx.z, m0 + ty + 16 * i, n0 + c, acc[i][j]);
            }
    }
}

/* Column tile of the conv kernels: 96 unless 48-column tiles waste fewer columns. */
inline int conv_col_tile(int N)
{
    return 48u * swin_cuda_blocks(N, 48) < 96u * swin_cuda_blocks(N, 96) ? 48 : 96;
}

/* Copy width (bytes) the loader can use: 16 when cin, the pitch, N (= ldb) and both base
 * pointers are multiples of 16 bytes; else 4 when they are of 4 bytes; 0: not at all
 * (float16 with an odd channel count, or a tap offset beyond int: the caller falls back). */
template <class T> int conv_copy_bytes(const ConvGeom<T> &g, int N)
{
    const long long span = (((long long)(g.k - 1) * g.h + g.k - 1) * g.w + g.k - 1) * g.pitch;
    if (span + g.cin > 0x7FFFFFFFLL) return 0;
    const long long e16 = 16 / sizeof(T), e4 = 4 / sizeof(T);
    if (g.cin % e16 == 0 && g.pitch % e16 == 0 && N % e16 == 0 && (uintptr_t)g.in % 16 == 0 &&
        (uintptr_t)g.b % 16 == 0)
        return 16;
    if (g.cin % e4 == 0 && g.pitch % e4 == 0 && N % e4 == 0 && (uintptr_t)g.in % 4 == 0 && (uintptr_t)g.b % 4 == 0)
        return 4;
    return 0;
}

template <class T, int BN, int VB, class Epi>
void conv_igemm_go(cudaStream_t s, const ConvGeom<T> &g, Epi ep, int M, int N, int K, int splits, int k_split)
{
    const dim3 grid(swin_cuda_blocks(M, CONV_BM), swin_cuda_blocks(N, BN), (unsigned)splits);
    if constexpr (std::is_same<T, __half>::value) {
        constexpr int bytes = ConvSmem<T, BN, CONV_WMMA_STAGES>::TOTAL;
        cudaFuncSetAttribute(conv_wmma<BN, VB, Epi>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        SWIN_LAUNCH((conv_wmma<BN, VB, Epi>), grid, dim3(ConvWmmaThreads<BN>::value), bytes, s)(g, ep, M, N, K,
                                                                                                 k_split);
    } else {
        constexpr int bytes = ConvSmem<T, BN, CONV_FFMA_STAGES>::TOTAL;
        cudaFuncSetAttribute(conv_ffma<BN, VB, Epi>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        SWIN_LAUNCH((conv_ffma<BN, VB, Epi>), grid, dim3(ConvFfmaTile<BN, VB>::THREADS), bytes, s)(g, ep, M, N, K,
                                                                                               k_split);
    }
}

/* Launches the convolution on stream s with `splits` K ranges (epilogue StorePartial
 * when splits > 1). Returns false, launching nothing, when the loader cannot read this
 * input (conv_copy_bytes 0). */
template <class T, class Epi>
bool conv_igemm_launch(cudaStream_t s, const ConvGeom<T> &g, Epi ep, int M, int N, int K, int splits)
{
    const int vb = conv_copy_bytes(g, N);
    if (!vb) return false;
    /* Splits start on k-step boundaries: the loader's (tap, ci) walk starts there. */
    const int k_split = ((K + splits - 1) / splits + CONV_BK - 1) / CONV_BK * CONV_BK;
    const bool wide = conv_col_tile(N) == 96;
    if (vb == 16) {
        if (wide) conv_igemm_go<T, 96, 16>(s, g, ep, M, N, K, splits, k_split);
        else conv_igemm_go<T, 48, 16>(s, g, ep, M, N, K, splits, k_split);
    } else {
        if (wide) conv_igemm_go<T, 96, 4>(s, g, ep, M, N, K, splits, k_split);
        else conv_igemm_go<T, 48, 4>(s, g, ep, M, N, K, splits, k_split);
    }
    return true;
}

} // namespace swin_cuda

#endif
