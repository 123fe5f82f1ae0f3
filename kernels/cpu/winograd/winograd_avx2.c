/* Winograd F(2x2x2, 3x3x3) weight transform and tile loop with AVX2 + FMA (this file's
 * functions are compiled for avx2,fma only; the backend checks the CPU first). Notation in
 * winograd.h.
 *
 * First U = G w G^T for every (ci, 8 output channels), input channels shared among the
 * threads (swin_cpu_winograd_avx2_weights). Then a thread claims a block of nt consecutive
 * tiles (x fastest) and, per block:
 *   1. input transform: V[p][tile][ci] = (B^T d B)[p] for the 4x4x4 patch of each tile,
 *      8 input channels per vector (V rows padded to cinp with zeros; tiles past the end
 *      are zero rows);
 *   2. per block of cob output channels: for each point p the GEMM
 *      M[tile][p][co] = sum_ci V[p][tile][ci] U[p][ci][co] (4 tiles x 24 channels, 12 ymm
 *      accumulators, as the direct kernel conv3d_avx2.c), then the output transform
 *      Y = A^T M A + bias per tile, stored for the voxels inside the output.
 * Workspace: U (64 cin coutp floats, shared), then per thread V (64 nt cinp floats) and
 * M (64 nt cob floats). */
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/cpu/isa.h"

#include <immintrin.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/bf16.h"


/* G along one axis: 3 values at stride si of g[] -> 4 at stride so of o[]:
 * g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2 (the halving is exact in float32). */
#define G3(g, i0, si, o, o0, so)                                                    \
    {                                                                               \
        const __m256 h = _mm256_set1_ps(0.5f);                                      \
        const __m256 g0 = g[i0], g1 = g[i0 + (si)], g2 = g[i0 + 2 * (si)];          \
        const __m256 s = _mm256_mul_ps(_mm256_add_ps(g0, g2), h), m = _mm256_mul_ps(g1, h); \
        o[o0] = g0;                                                                 \
        o[o0 + (so)] = _mm256_add_ps(s, m);                                         \
        o[o0 + 2 * (so)] = _mm256_sub_ps(s, m);                                     \
        o[o0 + 3 * (so)] = g2;                                                      \
    }

/* n <= 8 bfloat16 values at element `at` of w (which holds bfloat16) as float32 (the bits
 * moved to the top half: exact); lanes past n are 0. */
SWIN_AVX2_INLINE __m256 widen_bf16(const float *w, size_t at, int n)
{
    const swin_bf16 *src = (const swin_bf16 *)(const void *)w + at;
    swin_bf16 part[8] = {0};
    if (n < 8) {
        memcpy(part, src, (size_t)n * sizeof *src);
        src = part;
    }
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)src));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}

SWIN_AVX2 void swin_cpu_winograd_avx2_taps(const struct wino_task *t, int ci, int co0, int n, __m256 *g)
{
    const int cin = t->in.c, cout = t->out.c;
    const __m256i mk = swin_cpu_lanes(n);
    const bool full = n >= 8;
    for (int i = 0; i < 27; i++) {   /* tap i = (kz * 3 + ky) * 3 + kx */
        const size_t at = ((size_t)i * cin + ci) * cout + co0;
        if (t->w_bf16)
            g[i] = widen_bf16(t->w, at, full ? 8 : cout - co0);
        else
            g[i] = full ? _mm256_loadu_ps(t->w + at) : _mm256_maskload_ps(t->w + at, mk);
    }
}

/* U[p][ci][co0, co0 + 8) for one input channel (n: the channels left from co0; lanes past
 * them are stored as the zero padding of coutp). */
SWIN_AVX2 static void weights_ci(const struct wino_task *t, int ci, int co0, int n)
{
    __m256 g[27], a[36], b[48], u[64];
    swin_cpu_winograd_avx2_taps(t, ci, co0, n, g);
    for (int r = 0; r < 9; r++) G3(g, 3 * r, 1, a, 4 * r, 1)             /* along x: a[kz][ky][c] */
    for (int z = 0; z < 3; z++)
        for (int c = 0; c < 4; c++) G3(a, 12 * z + c, 4, b, 16 * z + c, 4) /* along y: b[kz][b][c] */
    for (int r = 0; r < 16; r++) G3(b, r, 16, u, r, 16)                   /* along z: u[a][b][c] */
    /* the points are cin coutp floats apart (swin_cpu_wino_u_at) */
    float *dst = t->u + swin_cpu_wino_u_at(t, 0, ci, co0);
    const size_t pstride = (size_t)t->in.c * t->coutp;
    for (int p = 0; p < 64; p++) _mm256_store_ps(dst + p * pstride, u[p]);
}

void swin_cpu_wino_phase_tick(struct wino_task *t, int ph, struct timespec *since)
{
    if (!t->timed) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    atomic_fetch_add(&t->phase_ns[ph], (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec));
    *since = now;
}

void swin_cpu_wino_phase_start(const struct wino_task *t, struct timespec *since)
{
    if (t->timed) clock_gettime(CLOCK_MONOTONIC, since);
}

SWIN_AVX2 void swin_cpu_winograd_avx2_weights_all(struct wino_task *t, int claim, swin_wino_weights_fn *one)
{
    const int cin = t->in.c, cout = t->out.c;
    struct timespec since;
    swin_cpu_wino_phase_start(t, &since);
    long b, e;
    while (swin_cpu_claim(&t->next, cin, claim, &b, &e))
        for (long ci = b; ci < e; ci++)
            for (int co0 = 0; co0 < t->coutp; co0 += 8) one(t, (int)ci, co0, cout - co0);
    swin_cpu_wino_phase_tick(t, 0, &since);
}

SWIN_AVX2 void swin_cpu_winograd_avx2_weights(struct wino_task *t)
{
    swin_cpu_winograd_avx2_weights_all(t, 4, weights_ci);
}

/* B^T along one axis: 4 values at stride s of v[] in place. */
#define BT4(v, i0, s)                                                          \
    {                                                                          \
        const __m256 d0 = v[i0], d1 = v[i0 + (s)], d2 = v[i0 + 2 * (s)], d3 = v[i0 + 3 * (s)]; \
        v[i0] = _mm256_sub_ps(d0, d2);                                         \
        v[i0 + (s)] = _mm256_add_ps(d1, d2);                                   \
        v[i0 + 2 * (s)] = _mm256_sub_ps(d2, d1);                               \
        v[i0 + 3 * (s)] = _mm256_sub_ps(d1, d3);                               \
    }

/* Input transform of tile `tile` (global index) for channels [c0, c0 + 8) (mask mk for the
 * last, partial vector; full vectors use plain loads, which AMD CPUs run much faster than
 * masked ones) into V[p][slot][c0 ..]. B^T along z per (y, x) column as the input is read,
 * into d; then per z plane B^T along y and x in registers and the 16 points stored: three
 * passes, two of them without a round trip through memory. */
SWIN_AVX2 static void input_tile_channels(const struct wino_task *t, long tile, int slot, float *v, int c0, int n)
{
    const __m256i mk = swin_cpu_lanes(n);
    const bool full = n >= 8;
    const struct swin_vol in = t->in;
    const long vstride = t->v_pstride;                /* floats between points */
    float *dst = v + (size_t)slot * t->v_tstride + c0;
    if (tile >= t->ntiles) {
        for (int p = 0; p < 64; p++) _mm256_store_ps(dst + p * vstride, _mm256_setzero_ps());
        return;
    }
    const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
    const int z0 = 2 * tz - 1, y0 = 2 * ty - 1, x0 = 2 * tx - 1;
    const float *base = swin_vol_f32(in) + c0;
    const long zstep = (long)in.h * in.w * in.pitch;
    __m256 d[64];                                      /* d[(z' * 4 + y) * 4 + x] */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) {
            const int iy = y0 + y, ix = x0 + x;
            const bool col = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
            const float *src = base + (((long)z0 * in.h + iy) * in.w + ix) * in.pitch;
            __m256 c[4];
            for (int z = 0; z < 4; z++) {
                const bool inside = col && z0 + z >= 0 && z0 + z < in.d;
                c[z] = !inside ? _mm256_setzero_ps()
                       : full  ? _mm256_loadu_ps(src + z * zstep)
                               : _mm256_maskload_ps(src + z * zstep, mk);
            }
            BT4(c, 0, 1)
            for (int z = 0; z < 4; z++) d[z * 16 + y * 4 + x] = c[z];
        }
    for (int z = 0; z < 4; z++) {
        __m256 r[16];
        for (int i = 0; i < 16; i++) r[i] = d[z * 16 + i];
        for (int x = 0; x < 4; x++) BT4(r, x, 4)                        /* along y */
        for (int y = 0; y < 4; y++) BT4(r, 4 * y, 1)                    /* along x */
        for (int i = 0; i < 16; i++) _mm256_store_ps(dst + (z * 16 + i) * vstride, r[i]);
    }
}

/* The same for every input channel, 8 at a time (a tile's 4x4x4 patch, 64 voxels, stays in
 * L1 at the channel counts of the grids F(2x2x2) takes). */
SWIN_AVX2 static void input_tile(const struct wino_task *t, long tile, int slot, float *v)
{
    for (int c0 = 0; c0 < t->cinp; c0 += 8) input_tile_channels(t, tile, slot, v, c0, t->in.c - c0);
}

/* M rows [r0, r0 + 4) of one point: C (4 x 8NV) = A (4 x K, lda) . B (K x 8NV, ldb).
 * Per k: NV loads of B, then row by row one broadcast of A and its NV FMAs, so that the
 * 4 x 3 accumulators, 3 B vectors and one broadcast fill the 16 ymm registers. Written with
 * the four broadcasts first, gcc 12 kept them all live and folded the B loads into every
 * FMA: 16 loads per 12 FMAs, load-bound at 2 loads per cycle (about 20 % slower on the
 * 96^3 and 24^3 convs). */
SWIN_AVX2_INLINE void gemm4(const float *a, int lda, const float *b, int ldb, int K, float *c, int ldc, const int NV)
{
    __m256 acc[4][3];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 3; j++) acc[r][j] = _mm256_setzero_ps();
    const float *ar[4] = {a, a + lda, a + 2 * lda, a + 3 * lda};
    for (int k = 0; k < K; k++, b += ldb) {
        __m256 bv[3];
        for (int j = 0; j < NV; j++) bv[j] = _mm256_loadu_ps(b + 8 * j);
        for (int r = 0; r < 4; r++) {
            const __m256 x = _mm256_broadcast_ss(ar[r] + k);
            for (int j = 0; j < NV; j++) acc[r][j] = _mm256_fmadd_ps(x, bv[j], acc[r][j]);
        }
    }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < NV; j++) _mm256_store_ps(c + (size_t)r * ldc + 8 * j, acc[r][j]);
}

/* M[tile][p][j0, j1) for every tile of a block at point p, U columns [co0 + j0, co0 + j1).
 * M is tile-major so that the output transform reads a tile's points from one contiguous
 * np cob run; point-major, its loads 4 KiB or more apart stalled on L2 and L3 misses the
 * prefetchers did not cover. */
SWIN_AVX2 void swin_cpu_winograd_avx2_gemm_point(const struct wino_task *t, const float *v, float *m, int p, int co0,
                                            int j0, int j1)
{
    const int cin = t->in.c, nt = t->nt, np = t->np;
    const float *vp = v + (size_t)p * t->v_pstride;
    float *mp = m + (size_t)p * t->cob;
    const int lda = (int)t->v_tstride, ldc = np * t->cob;
    for (int j = j0; j < j1; j += WINO_PANEL) {
        const float *up = t->u + swin_cpu_wino_u_at(t, p, 0, co0 + j);
        const int ldb = swin_cpu_wino_panel_width(t, co0 + j), nv = ldb / 8;
        for (int r = 0; r < nt; r += 4) {
            const float *a = vp + (size_t)r * t->v_tstride;
            float *c = mp + (size_t)r * ldc + j;
            if (nv == 3) gemm4(a, lda, up, ldb, cin, c, ldc, 3);
            else if (nv == 2) gemm4(a, lda, up, ldb, cin, c, ldc, 2);
            else gemm4(a, lda, up, ldb, cin, c, ldc, 1);
        }
    }
}

SWIN_AVX2 void swin_cpu_winograd_avx2_gemms(const struct wino_task *t, const float *v, float *m, int co0, int nco)
{
    for (int p = 0; p < t->np; p++) swin_cpu_winograd_avx2_gemm_point(t, v, m, p, co0, 0, nco);
}

/* A^T along one axis: 4 values at stride s of v[] -> 2 values at i0 and i0 + s. */
#define AT4(v, i0, s)                                                                           \
    {                                                                                           \
        const __m256 m0 = v[i0], m1 = v[i0 + (s)], m2 = v[i0 + 2 * (s)], m3 = v[i0 + 3 * (s)];  \
        v[i0] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);                                       \
        v[i0 + (s)] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);                                 \
    }

/* Output transform of tiles [tile0, tile0 + ntile) (M from m) for channels [co0, co0 + nco). */
SWIN_AVX2 static void output_tiles(const struct wino_task *t, long tile0, int ntile, const float *m, int co0, int nco)
{
    const struct swin_vol out = t->out;
    for (int slot = 0; slot < ntile && tile0 + slot < t->ntiles; slot++) {
        const long tile = tile0 + slot;
        const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
        const int nz = out.d - 2 * tz < 2 ? 1 : 2, ny = out.h - 2 * ty < 2 ? 1 : 2, nx = out.w - 2 * tx < 2 ? 1 : 2;
        for (int j = 0; j < nco; j += 8) {
            const __m256i mk = swin_cpu_lanes(nco - j);
            const float *src = m + (size_t)slot * 64 * t->cob + j;
            __m256 d[64];
            for (int p = 0; p < 64; p++) d[p] = _mm256_load_ps(src + (size_t)p * t->cob);
            for (int r = 0; r < 16; r++) AT4(d, 4 * r, 1)               /* along x: x in {0, 1} */
            for (int z = 0; z < 4; z++)
                for (int x = 0; x < 2; x++) AT4(d, 16 * z + x, 4)       /* along y */
            for (int y = 0; y < 2; y++)
                for (int x = 0; x < 2; x++) AT4(d, 4 * y + x, 16)       /* along z */
            const __m256 b = t->bias ? _mm256_maskload_ps(t->bias + co0 + j, mk) : _mm256_setzero_ps();
            for (int z = 0; z < nz; z++)
                for (int y = 0; y < ny; y++)
                    for (int x = 0; x < nx; x++) {
                        const long vox = ((long)(2 * tz + z) * out.h + 2 * ty + y) * out.w + 2 * tx + x;
                        float *dst = swin_vol_f32(out) + vox * out.pitch + co0 + j;
                        const __m256 yv = _mm256_add_ps(d[16 * z + 4 * y + x], b);
                        if (nco - j >= 8) _mm256_storeu_ps(dst, yv);
                        else _mm256_maskstore_ps(dst, mk, yv);
                    }
        }
    }
}

SWIN_AVX2 void swin_cpu_winograd_avx2_blocks(struct wino_task *t, int tid, swin_wino_input_fn *input,
                                        swin_wino_output_fn *output)
{
    float *v = (float *)(t->ws + (size_t)tid * t->slice);
    float *m = (float *)(t->ws + (size_t)tid * t->slice + t->v_bytes);
    const long nblocks = (t->ntiles + t->nt - 1) / t->nt;
    const int cout = t->out.c;
    struct timespec since;
    swin_cpu_wino_phase_start(t, &since);
    long b, e;
    while (swin_cpu_claim(&t->next, nblocks, 1, &b, &e)) {
        const long tile0 = b * t->nt;
        /* tile by tile, all channels of a voxel while its lines are in L1 (channel groups
         * outermost re-read the block's patches from L2 or L3 once per 8 channels) */
        for (int slot = 0; slot < t->nt; slot++) input(t, tile0 + slot, slot, v);
        swin_cpu_wino_phase_tick(t, 1, &since);
        for (int co0 = 0; co0 < cout; co0 += t->cob) {
            const int nco = cout - co0 < t->cob ? cout - co0 : t->cob;
            swin_cpu_winograd_avx2_gemms(t, v, m, co0, (nco + 7) / 8 * 8);
            swin_cpu_wino_phase_tick(t, 2, &since);
            output(t, tile0, t->nt, m, co0, nco);
            swin_cpu_wino_phase_tick(t, 3, &since);
        }
    }
}

/* One phase of the wide schedule on the block at t->block0: V (point-major, np nt cinp)
 * and M (tile-major, nt np coutp) are shared by all threads at the start of the workspace. */
SWIN_AVX2 void swin_cpu_winograd_avx2_wide(struct wino_task *t, swin_wino_input_fn *input, swin_wino_output_fn *output)
{
    float *v = (float *)t->ws, *m = (float *)(t->ws + t->v_bytes);
    const int cout = t->out.c, nj = (t->coutp + 23) / 24;
    struct timespec since;
    swin_cpu_wino_phase_start(t, &since);
    long b, e;
    switch (t->phase) {
    case WINO_WIDE_INPUT:
        while (swin_cpu_claim(&t->next, t->nt, 1, &b, &e))
            input(t, t->block0 + b, (int)b, v);
        swin_cpu_wino_phase_tick(t, 1, &since);
        break;
    case WINO_WIDE_GEMM:   /* items: (point, 24 output channels) */
        while (swin_cpu_claim(&t->next, (long)t->np * nj, 1, &b, &e)) {
            const int j0 = (int)(b % nj) * 24, j1 = j0 + 24 < t->coutp ? j0 + 24 : t->coutp;
            swin_cpu_winograd_avx2_gemm_point(t, v, m, (int)(b / nj), 0, j0, j1);
        }
        swin_cpu_wino_phase_tick(t, 2, &since);
        break;
    case WINO_WIDE_OUTPUT:
        while (swin_cpu_claim(&t->next, t->nt, 4, &b, &e))
            output(t, t->block0 + b, (int)(e - b), m + (size_t)b * t->np * t->cob, 0, cout);
        swin_cpu_wino_phase_tick(t, 3, &since);
        break;
    }
}

SWIN_AVX2 void swin_cpu_winograd_avx2_run(struct wino_task *t, int tid)
{
    if (t->wide) swin_cpu_winograd_avx2_wide(t, input_tile, output_tiles);
    else swin_cpu_winograd_avx2_blocks(t, tid, input_tile, output_tiles);
}
