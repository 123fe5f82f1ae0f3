/* Winograd F(2x2x2, 3x3x3), written once for every level: the weight transform U = G w G^T per
 * (ci, VW output channels), the input transform V = B^T d B of a tile's 4x4x4 patch (VW input
 * channels per vector; V rows padded to cinp with zeros, tiles past the end zero rows) and the
 * output transform Y = A^T M A + bias, stored for the voxels inside the output. Compiled by
 * winograd2_avx2.c and winograd2_avx512.c, each after its level's vec_*.h and with
 * WINO_KERNELS, WINO_GEMM and WINO_PANEL defined (as winograd4_tmpl.h); the schedule is
 * winograd_driver.c's. Notation in winograd.h. */
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/cpu/winograd/winograd_taps_tmpl.h"

/* G along one axis: 3 values at stride si of g[] -> 4 at stride so of o[]:
 * g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2 (the halving is exact in float32). */
#define G3(g, i0, si, o, o0, so)                                                    \
    {                                                                               \
        const vf h = v_set1(0.5f);                                      \
        const vf g0 = g[i0], g1 = g[i0 + (si)], g2 = g[i0 + 2 * (si)];          \
        const vf s = v_mul(v_add(g0, g2), h), m = v_mul(g1, h); \
        o[o0] = g0;                                                                 \
        o[o0 + (so)] = v_add(s, m);                                         \
        o[o0 + 2 * (so)] = v_sub(s, m);                                     \
        o[o0 + 3 * (so)] = g2;                                                      \
    }

/* U[p][ci][co0, co0 + VW) for one input channel (n: the channels left from co0; lanes past
 * them are stored as the zero padding of coutp). */
V_FN static void weights_ci(const struct wino_task *t, int ci, int co0, int n)
{
    vf g[27], a[36], b[48], u[64];
    wino_taps(t, ci, co0, n, g);
    for (int r = 0; r < 9; r++) G3(g, 3 * r, 1, a, 4 * r, 1)             /* along x: a[kz][ky][c] */
    for (int z = 0; z < 3; z++)
        for (int c = 0; c < 4; c++) G3(a, 12 * z + c, 4, b, 16 * z + c, 4) /* along y: b[kz][b][c] */
    for (int r = 0; r < 16; r++) G3(b, r, 16, u, r, 16)                   /* along z: u[a][b][c] */
    /* the points are cin coutp floats apart (swin_cpu_wino_u_at) */
    float *dst = t->u + swin_cpu_wino_u_at(t, 0, ci, co0);
    const size_t pstride = (size_t)t->in.c * t->coutp;
    for (int p = 0; p < 64; p++) v_store(dst + p * pstride, u[p]);
}

/* B^T along one axis: 4 values at stride s of v[] in place. */
#define BT4(v, i0, s)                                                          \
    {                                                                          \
        const vf d0 = v[i0], d1 = v[i0 + (s)], d2 = v[i0 + 2 * (s)], d3 = v[i0 + 3 * (s)]; \
        v[i0] = v_sub(d0, d2);                                         \
        v[i0 + (s)] = v_add(d1, d2);                                   \
        v[i0 + 2 * (s)] = v_sub(d2, d1);                               \
        v[i0 + 3 * (s)] = v_sub(d1, d3);                               \
    }

/* Input transform of tile `tile` (global index) for channels [c0, c0 + VW) (mask mk for the
 * last, partial vector; full vectors use plain loads, which AMD CPUs run much faster than
 * masked ones) into V[p][slot][c0 ..]. B^T along z per (y, x) column as the input is read,
 * into d; then per z plane B^T along y and x in registers and the 16 points stored: three
 * passes, two of them without a round trip through memory. */
V_FN static void input_tile_channels(const struct wino_task *t, long tile, int slot, float *v, int c0, int n)
{
    const vmask mk = v_mask(n);
    const bool full = n >= VW;
    const struct swin_vol in = t->in;
    const long vstride = t->v_pstride;                /* floats between points */
    float *dst = v + (size_t)slot * t->v_tstride + c0;
    if (tile >= t->ntiles) {
        for (int p = 0; p < 64; p++) v_store(dst + p * vstride, v_zero());
        return;
    }
    const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
    const int z0 = 2 * tz - 1, y0 = 2 * ty - 1, x0 = 2 * tx - 1;
    const float *base = swin_vol_f32(in) + c0;
    const long zstep = (long)in.h * in.w * in.pitch;
    vf d[64];                                      /* d[(z' * 4 + y) * 4 + x] */
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) {
            const int iy = y0 + y, ix = x0 + x;
            const bool col = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
            const float *src = base + (((long)z0 * in.h + iy) * in.w + ix) * in.pitch;
            vf c[4];
            for (int z = 0; z < 4; z++) {
                const bool inside = col && z0 + z >= 0 && z0 + z < in.d;
                c[z] = !inside ? v_zero()
                       : full  ? v_loadu(src + z * zstep)
                               : v_maskload(src + z * zstep, mk);
            }
            BT4(c, 0, 1)
            for (int z = 0; z < 4; z++) d[z * 16 + y * 4 + x] = c[z];
        }
    for (int z = 0; z < 4; z++) {
        vf r[16];
        for (int i = 0; i < 16; i++) r[i] = d[z * 16 + i];
        for (int x = 0; x < 4; x++) BT4(r, x, 4)                        /* along y */
        for (int y = 0; y < 4; y++) BT4(r, 4 * y, 1)                    /* along x */
        for (int i = 0; i < 16; i++) v_store(dst + (z * 16 + i) * vstride, r[i]);
    }
}

/* The same for every input channel, VW at a time (a tile's 4x4x4 patch, 64 voxels, stays in
 * L1 at the channel counts of the grids F(2x2x2) takes). */
V_FN static void input_tile(const struct wino_task *t, long tile, int slot, float *v)
{
    for (int c0 = 0; c0 < t->cinp; c0 += VW) input_tile_channels(t, tile, slot, v, c0, t->in.c - c0);
}

/* A^T along one axis: 4 values at stride s of v[] -> 2 values at i0 and i0 + s. */
#define AT4(v, i0, s)                                                                           \
    {                                                                                           \
        const vf m0 = v[i0], m1 = v[i0 + (s)], m2 = v[i0 + 2 * (s)], m3 = v[i0 + 3 * (s)];  \
        v[i0] = v_add(v_add(m0, m1), m2);                                       \
        v[i0 + (s)] = v_sub(v_sub(m1, m2), m3);                                 \
    }

/* Output transform of tiles [tile0, tile0 + ntile) (M from m) for channels [co0, co0 + nco). */
V_FN static void output_tiles(const struct wino_task *t, long tile0, int ntile, const float *m, int co0, int nco)
{
    const struct swin_vol out = t->out;
    for (int slot = 0; slot < ntile && tile0 + slot < t->ntiles; slot++) {
        const long tile = tile0 + slot;
        const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
        const int nz = out.d - 2 * tz < 2 ? 1 : 2, ny = out.h - 2 * ty < 2 ? 1 : 2, nx = out.w - 2 * tx < 2 ? 1 : 2;
        for (int j = 0; j < nco; j += VW) {
            const vmask mk = v_mask(nco - j);
            const float *src = m + (size_t)slot * 64 * t->cob + j;
            vf d[64];
            for (int p = 0; p < 64; p++) d[p] = v_load(src + (size_t)p * t->cob);
            for (int r = 0; r < 16; r++) AT4(d, 4 * r, 1)               /* along x: x in {0, 1} */
            for (int z = 0; z < 4; z++)
                for (int x = 0; x < 2; x++) AT4(d, 16 * z + x, 4)       /* along y */
            for (int y = 0; y < 2; y++)
                for (int x = 0; x < 2; x++) AT4(d, 4 * y + x, 16)       /* along z */
            const vf b = t->bias ? v_maskload(t->bias + co0 + j, mk) : v_zero();
            for (int z = 0; z < nz; z++)
                for (int y = 0; y < ny; y++)
                    for (int x = 0; x < nx; x++) {
                        const long vox = ((long)(2 * tz + z) * out.h + 2 * ty + y) * out.w + 2 * tx + x;
                        float *dst = swin_vol_f32(out) + vox * out.pitch + co0 + j;
                        const vf yv = v_add(d[16 * z + 4 * y + x], b);
                        if (nco - j >= VW) v_storeu(dst, yv);
                        else v_maskstore(dst, mk, yv);
                    }
        }
    }
}

const struct wino_kernels WINO_KERNELS = {
    .lanes = VW, .panel = WINO_PANEL, .weights = weights_ci, .weights_claim = 4, .input = input_tile,
    .gemm = WINO_GEMM, .output = output_tiles,
};
