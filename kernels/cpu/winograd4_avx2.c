/* Winograd F(4x4x4, 3x3x3) with AVX2 + FMA: the weight transform, the input and output
 * transforms and the tile loop (the GEMMs are F(2x2x2)'s, winograd_avx2.c). Notation in
 * winograd.h; compiled for avx2,fma only (the backend checks the CPU first).
 *
 * Interpolation points 0, 1, -1, 2, -1/2 and infinity (a Cook-Toom construction; the
 * pair 2, -1/2 instead of the usual +-2 keeps the constants of A^T between 1/8 and 8 and
 * halves the float32 error of the usual points, bench/ops/winograd_error.py):
 *   B^T = [ 1  3/2   -2  -3/2    1  0 ]      G = [    1     0     0 ]
 *         [ 0   -1 -5/2  -1/2    1  0 ]          [ -1/3  -1/3  -1/3 ]
 *         [ 0    1  1/2  -5/2    1  0 ]          [  1/3  -1/3   1/3 ]
 *         [ 0 -1/2   -1   1/2    1  0 ]          [ 1/15  2/15  4/15 ]
 *         [ 0    2   -1    -2    1  0 ]          [-16/15 8/15 -4/15 ]
 *         [ 0    1  3/2    -2 -3/2  1 ]          [    0     0     1 ]
 *   A^T = [ 1 1  1 1    1 0 ]
 *         [ 0 1 -1 2 -1/2 0 ]
 *         [ 0 1  1 4  1/4 0 ]
 *         [ 0 1 -1 8 -1/8 1 ]
 * B^T and A^T are exact in float32 (dyadic); G's thirds and fifteenths round once per
 * product. Each output tile of 4x4x4 voxels reads the 6x6x6 patch at (4tz - 1, 4ty - 1,
 * 4tx - 1) and takes 216 GEMM points: 3.375 multiplies per output and (ci, co) pair
 * against F(2x2x2)'s 8 and the direct conv's 27. */
#include "kernels/cpu/winograd.h"

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define NP 216

/* G along one axis: 3 values at stride si of g[] -> 6 at stride so of o[]. */
#define G6(g, i0, si, o, o0, so)                                                               \
    {                                                                                          \
        const __m256 g0 = g[i0], g1 = g[i0 + (si)], g2 = g[i0 + 2 * (si)];                     \
        const __m256 s = _mm256_add_ps(g0, g2), third = _mm256_set1_ps(1.0f / 3.0f);           \
        const __m256 fifteenth = _mm256_set1_ps(1.0f / 15.0f);                                 \
        o[o0] = g0;                                                                            \
        o[o0 + (so)] = _mm256_mul_ps(_mm256_add_ps(s, g1), _mm256_set1_ps(-1.0f / 3.0f));      \
        o[o0 + 2 * (so)] = _mm256_mul_ps(_mm256_sub_ps(s, g1), third);                         \
        o[o0 + 3 * (so)] = _mm256_mul_ps(                                                      \
            _mm256_fmadd_ps(_mm256_set1_ps(4.0f), g2, _mm256_fmadd_ps(_mm256_set1_ps(2.0f), g1, g0)), fifteenth); \
        o[o0 + 4 * (so)] = _mm256_mul_ps(                                                      \
            _mm256_fmadd_ps(_mm256_set1_ps(-4.0f), g2,                                        \
                            _mm256_fmadd_ps(_mm256_set1_ps(8.0f), g1, _mm256_mul_ps(_mm256_set1_ps(-16.0f), g0))), \
            fifteenth);                                                                        \
        o[o0 + 5 * (so)] = g2;                                                                 \
    }

/* U[p][ci][co0, co0 + 8) for one input channel (n: the channels left from co0; lanes past
 * them are stored as the zero padding of coutp). */
AVX2 static void weights_ci(const struct wino_task *t, int ci, int co0, int n)
{
    __m256 g[27], a[54], b[108], u[NP];
    swin_cpu_winograd_avx2_taps(t, ci, co0, n, g);
    for (int r = 0; r < 9; r++) G6(g, 3 * r, 1, a, 6 * r, 1)               /* along x: a[kz][ky][c] */
    for (int z = 0; z < 3; z++)
        for (int c = 0; c < 6; c++) G6(a, 18 * z + c, 6, b, 36 * z + c, 6) /* along y: b[kz][b][c] */
    for (int r = 0; r < 36; r++) G6(b, r, 36, u, r, 36)                    /* along z: u[a][b][c] */
    float *dst = t->u + (size_t)ci * t->coutp + co0;
    const size_t pstride = (size_t)t->in.c * t->coutp;
    for (int p = 0; p < NP; p++) _mm256_store_ps(dst + p * pstride, u[p]);
}

AVX2 void swin_cpu_winograd4_avx2_weights(struct wino_task *t)
{
    swin_cpu_winograd_avx2_weights_all(t, 2, weights_ci);
}

/* B^T along one axis: 6 values at stride s of v[] in place. */
#define BT6(v, i0, s)                                                                             \
    {                                                                                             \
        const __m256 d0 = v[i0], d1 = v[i0 + (s)], d2 = v[i0 + 2 * (s)], d3 = v[i0 + 3 * (s)];    \
        const __m256 d4 = v[i0 + 4 * (s)], d5 = v[i0 + 5 * (s)];                                  \
        const __m256 h = _mm256_set1_ps(0.5f), mh = _mm256_set1_ps(-0.5f);                        \
        const __m256 c15 = _mm256_set1_ps(1.5f), m2 = _mm256_set1_ps(-2.0f), m25 = _mm256_set1_ps(-2.5f); \
        const __m256 t13 = _mm256_sub_ps(d1, d3), e = _mm256_sub_ps(d4, d2);                      \
        v[i0] = _mm256_fmadd_ps(c15, t13, _mm256_fmadd_ps(m2, d2, _mm256_add_ps(d0, d4)));        \
        v[i0 + (s)] = _mm256_fmadd_ps(m25, d2, _mm256_fmadd_ps(mh, d3, _mm256_sub_ps(d4, d1)));   \
        v[i0 + 2 * (s)] = _mm256_fmadd_ps(h, d2, _mm256_fmadd_ps(m25, d3, _mm256_add_ps(d4, d1))); \
        v[i0 + 3 * (s)] = _mm256_fmadd_ps(mh, t13, e);                                            \
        v[i0 + 4 * (s)] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), t13, e);                          \
        v[i0 + 5 * (s)] = _mm256_fmadd_ps(c15, _mm256_sub_ps(d2, d4), _mm256_fmadd_ps(m2, d3, _mm256_add_ps(d5, d1))); \
    }

/* Input transform of tile `tile` (global index) for channels [c0, c0 + 8) into
 * V[p][slot][c0 ..]: B^T along z per (y, x) column as it is read, then per z plane along
 * y and x. Tiles past the end are zero rows. */
AVX2 static void input_tile(const struct wino_task *t, long tile, int slot, float *v, int c0, int n)
{
    const __m256i mk = swin_cpu_lanes(n);
    const bool full = n >= 8;
    const struct swin_vol in = t->in;
    const long vstride = t->v_pstride;                /* floats between points */
    float *dst = v + (size_t)slot * t->v_tstride + c0;
    if (tile >= t->ntiles) {
        for (int p = 0; p < NP; p++) _mm256_store_ps(dst + p * vstride, _mm256_setzero_ps());
        return;
    }
    const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
    const int z0 = 4 * tz - 1, y0 = 4 * ty - 1, x0 = 4 * tx - 1;
    const float *base = swin_vol_f32(in) + c0;
    const long zstep = (long)in.h * in.w * in.pitch;
    __m256 d[NP];                                      /* d[(z' * 6 + y) * 6 + x] */
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 6; x++) {
            const int iy = y0 + y, ix = x0 + x;
            const bool col = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
            const float *src = base + (((long)z0 * in.h + iy) * in.w + ix) * in.pitch;
            /* the same point of the tile two ahead along x, one line per 16 channels */
            const bool ahead = col && ix + 8 < in.w && (c0 & 8) == 0;
            __m256 c[6];
            for (int z = 0; z < 6; z++) {
                const bool inside = col && z0 + z >= 0 && z0 + z < in.d;
                if (inside && ahead) _mm_prefetch((const char *)(src + z * zstep + 8 * in.pitch), _MM_HINT_T0);
                c[z] = !inside ? _mm256_setzero_ps()
                       : full  ? _mm256_loadu_ps(src + z * zstep)
                               : _mm256_maskload_ps(src + z * zstep, mk);
            }
            BT6(c, 0, 1)
            for (int z = 0; z < 6; z++) d[z * 36 + y * 6 + x] = c[z];
        }
    for (int z = 0; z < 6; z++) {
        __m256 *r = d + 36 * z;
        for (int x = 0; x < 6; x++) BT6(r, x, 6)                       /* along y */
        for (int y = 0; y < 6; y++) BT6(r, 6 * y, 1)                   /* along x */
        for (int i = 0; i < 36; i++) _mm256_store_ps(dst + (z * 36 + i) * vstride, r[i]);
    }
}

/* A^T along one axis: 6 values at stride s of v[] -> 4 at i0, i0 + s, i0 + 2s, i0 + 3s. */
#define AT6(v, i0, s)                                                                            \
    {                                                                                            \
        const __m256 m0 = v[i0], m1 = v[i0 + (s)], m2 = v[i0 + 2 * (s)], m3 = v[i0 + 3 * (s)];   \
        const __m256 m4 = v[i0 + 4 * (s)], m5 = v[i0 + 5 * (s)];                                 \
        const __m256 sp = _mm256_add_ps(m1, m2), sm = _mm256_sub_ps(m1, m2);                     \
        v[i0] = _mm256_add_ps(_mm256_add_ps(m0, sp), _mm256_add_ps(m3, m4));                     \
        v[i0 + (s)] = _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), m4, _mm256_fmadd_ps(_mm256_set1_ps(2.0f), m3, sm)); \
        v[i0 + 2 * (s)] = _mm256_fmadd_ps(_mm256_set1_ps(0.25f), m4, _mm256_fmadd_ps(_mm256_set1_ps(4.0f), m3, sp)); \
        v[i0 + 3 * (s)] = _mm256_add_ps(                                                         \
            _mm256_fmadd_ps(_mm256_set1_ps(-0.125f), m4, _mm256_fmadd_ps(_mm256_set1_ps(8.0f), m3, sm)), m5); \
    }

/* Output transform of tiles [tile0, tile0 + ntile) for channels [co0, co0 + nco): Y = A^T M A + bias,
 * stored for the voxels inside the output. */
AVX2 static void output_tiles(const struct wino_task *t, long tile0, int ntile, const float *m, int co0, int nco)
{
    const struct swin_vol out = t->out;
    for (int slot = 0; slot < ntile && tile0 + slot < t->ntiles; slot++) {
        const long tile = tile0 + slot;
        const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
        const int nz = out.d - 4 * tz < 4 ? out.d - 4 * tz : 4, ny = out.h - 4 * ty < 4 ? out.h - 4 * ty : 4;
        const int nx = out.w - 4 * tx < 4 ? out.w - 4 * tx : 4;
        for (int j = 0; j < nco; j += 8) {
            const __m256i mk = swin_cpu_lanes(nco - j);
            const float *src = m + (size_t)slot * NP * t->cob + j;
            __m256 d[NP];
            for (int p = 0; p < NP; p++) d[p] = _mm256_load_ps(src + (size_t)p * t->cob);
            for (int r = 0; r < 36; r++) AT6(d, 6 * r, 1)              /* along x: x in [0, 4) */
            for (int z = 0; z < 6; z++)
                for (int x = 0; x < 4; x++) AT6(d, 36 * z + x, 6)      /* along y */
            for (int y = 0; y < 4; y++)
                for (int x = 0; x < 4; x++) AT6(d, 6 * y + x, 36)      /* along z */
            const __m256 b = t->bias ? _mm256_maskload_ps(t->bias + co0 + j, mk) : _mm256_setzero_ps();
            for (int z = 0; z < nz; z++)
                for (int y = 0; y < ny; y++)
                    for (int x = 0; x < nx; x++) {
                        const long vox = ((long)(4 * tz + z) * out.h + 4 * ty + y) * out.w + 4 * tx + x;
                        float *dst = swin_vol_f32(out) + vox * out.pitch + co0 + j;
                        const __m256 yv = _mm256_add_ps(d[36 * z + 6 * y + x], b);
                        if (nco - j >= 8) _mm256_storeu_ps(dst, yv);
                        else _mm256_maskstore_ps(dst, mk, yv);
                    }
        }
    }
}

AVX2 void swin_cpu_winograd4_avx2_run(struct wino_task *t, int tid)
{
    if (t->wide) swin_cpu_winograd_avx2_wide(t, input_tile, output_tiles);
    else swin_cpu_winograd_avx2_blocks(t, tid, input_tile, output_tiles);
}
