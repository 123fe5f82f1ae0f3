/* Winograd F(4x4x4, 3x3x3) and F(6x6x6, 3x3x3), written once for every level and both tile
 * sizes: the weight transform, the input and output transforms, VW channels per vector.
 * Compiled by winograd4_avx2.c, winograd4_avx512.c, winograd6_avx2.c and winograd6_avx512.c,
 * each after its level's vec_*.h and the tile's one-axis transforms (winograd_f4.h or
 * winograd_f6.h: WINO_M, WINO_G, WINO_BT, WINO_AT), with WINO_KERNELS (the table's name),
 * WINO_GEMM (the level's point GEMM) and WINO_PANEL (U's panel width) defined; the schedule
 * is winograd_driver.c's. Notation in winograd.h.
 *
 * Each output tile of M^3 voxels (M = WINO_M) reads the A^3 patch (A = M + 2) at
 * (M tz - 1, M ty - 1, M tx - 1) and takes A^3 GEMM points: per output and (ci, co) pair,
 * F(4x4x4) 216 / 64 = 3.375 multiplies, F(6x6x6) 512 / 216 = 2.37, against F(2x2x2)'s 8 and
 * the direct conv's 27. */
#include "kernels/cpu/norm/in_stats.h"
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/cpu/winograd/winograd_taps_tmpl.h"

/* Patch side, points of a plane and of a tile. */
#define WA (WINO_M + 2)
#define WA2 (WA * WA)
#define NP (WA2 * WA)
/* Channels per pass of the input and output transforms: one cache line of a voxel. */
#ifndef CHUNK
#define CHUNK 16
#endif
/* How far ahead along x the input transform prefetches, in tiles. Into L2 (_MM_HINT_T1), not
 * L1: a tile's rows, its buffer and its V stores already fill L1, which evicted the lines
 * prefetched there before the next tile read them (bench/results/cpu_speed/zen4, "Prefetch
 * into L2"). */
#define PREFETCH_TILES 1

/* U[p][ci][co0, co0 + VW) for one input channel (n: the channels left from co0; lanes past
 * them are stored as the zero padding of coutp). */
V_FN static void weights_ci(const struct wino_task *t, int ci, int co0, int n)
{
    vf g[27], a[9 * WA], b[3 * WA2], u[NP];
    wino_taps(t, ci, co0, n, g);
    for (int r = 0; r < 9; r++) WINO_G(g, 3 * r, 1, a, WA * r, 1)                 /* along x: a[kz][ky][c] */
    for (int z = 0; z < 3; z++)
        for (int c = 0; c < WA; c++) WINO_G(a, 3 * WA * z + c, WA, b, WA2 * z + c, WA) /* along y: b[kz][b][c] */
    for (int r = 0; r < WA2; r++) WINO_G(b, r, WA2, u, r, WA2)                    /* along z: u[a][b][c] */
    /* the points are cin coutp floats apart (swin_cpu_wino_u_at) */
    float *dst = t->u + swin_cpu_wino_u_at(t, 0, ci, co0);
    const size_t pstride = (size_t)t->in.c * t->coutp;
    for (int p = 0; p < NP; p++) v_store(dst + p * pstride, u[p]);
}

/* One pass of a transform in place: WA vectors at stride s from p, T (WINO_BT or WINO_AT)
 * in registers, the first nout stored back at the same stride. */
#define IN_PLACE(p, s, T, nout)                                                  \
    {                                                                            \
        float *pa_ = (p);                                                        \
        vf ca_[WA];                                                              \
        for (int i_ = 0; i_ < WA; i_++) ca_[i_] = v_load(pa_ + i_ * (s));        \
        T(ca_, 0, 1)                                                             \
        for (int i_ = 0; i_ < (nout); i_++) v_store(pa_ + i_ * (s), ca_[i_]);    \
    }

/* The input prologue on one vector of a voxel: LeakyReLU_0.01((x - mean) scale + shift). */
V_INLINE vf prologue(vf x, vf mean, vf scale, vf shift)
{
    const vf a = v_fmadd(v_sub(x, mean), scale, shift);
    return v_max(a, v_mul(a, v_set1(0.01f)));
}

/* c[0..WA) = one input row's vector at channel k of its WA voxels (src: the first voxel's, at
 * k) where the row crosses the input's x edges or the vector is the channels' last, partial
 * one (plain false: masked by tail): voxels outside [xlo, xhi) are the zero padding, the
 * others loaded and put through the prologue (t->pre). Out of line, so that the interior
 * rows keep their WA vectors in registers (inlined, the variable bounds put c on the stack
 * for every row). */
V_FN __attribute__((noinline)) static void edge_row(const struct wino_task *t, const float *src, int k, int xlo, int xhi,
                                                     bool plain, vmask tail, vf *c)
{
    const int pitch = t->in.pitch, cinp = t->cinp;
    const float *pc = t->pre ? t->pre + k : NULL;
    for (int x = 0; x < WA; x++) {
        if (x < xlo || x >= xhi) {
            c[x] = v_zero();
            continue;
        }
        c[x] = plain ? v_loadu(src + x * pitch) : v_maskload(src + x * pitch, tail);
        if (pc) c[x] = prologue(c[x], v_load(pc), v_load(pc + cinp), v_load(pc + 2 * cinp));
    }
}

/* Input transform of tile `tile` (global index), all channels, into V[slot][p][..] (point p's
 * cinp values at v + slot * v_tstride + p * v_pstride), CHUNK channels at a time through a
 * buffer on the stack that stays in L1, in three passes of WA vectors in registers:
 *   1. B^T along x for each of the WA^2 input rows (z, y): WA voxels contiguous in memory,
 *      each of their lines in the chunk read once;
 *   2. B^T along y, in place;
 *   3. B^T along z, stored to V.
 * Reading the F(4x4x4) patch a column at a time per 8 channels instead touched 216 lines per
 * group, 18 of them in each of 12 L1 sets (the input's planes are a multiple of 4 KiB apart),
 * each line fetched again for the next group; and a 6x6 plane transformed at once does not fit
 * the 16 ymm registers, so the compiler ran it through memory. Tiles past the end are zero
 * rows. */
V_FN static void input_tile(const struct wino_task *t, long tile, int slot, float *v)
{
    const struct swin_vol in = t->in;
    const int cin = in.c, cinp = t->cinp;
    const long ps = t->v_pstride;                     /* floats between points */
    float *vt = v + (size_t)slot * t->v_tstride;
    const vf zero = v_zero();
    if (tile >= t->ntiles) {
        for (int p = 0; p < NP; p++)
            for (int c0 = 0; c0 < cinp; c0 += VW) v_store(vt + p * ps + c0, zero);
        return;
    }
    const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
    const int z0 = WINO_M * tz - 1, y0 = WINO_M * ty - 1, x0 = WINO_M * tx - 1;
    int xlo = 0, xhi = WA;                            /* the row's voxels inside the input */
    while (x0 + xlo < 0) xlo++;
    while (x0 + xhi > in.w) xhi--;
    const bool inner = xlo == 0 && xhi == WA;
    /* the voxels of each row the tile PREFETCH_TILES ahead along x reads first */
    const int pf0 = WINO_M * PREFETCH_TILES + 2, pf1 = x0 + pf0 + WINO_M <= in.w ? pf0 + WINO_M : in.w - x0;
    const vmask tail = v_mask(cin % VW ? cin % VW : VW);
    const int cfull = cin / VW * VW;                    /* channels loaded with plain loads */
    _Alignas(VALIGN) float buf[NP * CHUNK];               /* buf[((z * WA + y) * WA + x) * CHUNK + c] */
    for (int k0 = 0; k0 < cinp; k0 += CHUNK) {
        const int kn = cinp - k0 < CHUNK ? cinp - k0 : CHUNK;
        for (int z = 0; z < WA; z++)
            for (int y = 0; y < WA; y++) {
                float *row = buf + (z * WA + y) * WA * CHUNK;
                const int iz = z0 + z, iy = y0 + y;
                if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h) {
                    for (int i = 0; i < WA * CHUNK; i += VW) v_store(row + i, zero);
                    continue;
                }
                const float *src = swin_vol_f32(in) + (((long)iz * in.h + iy) * in.w + x0) * in.pitch + k0;
                for (int x = pf0; x < pf1; x++) _mm_prefetch((const char *)(src + x * in.pitch), _MM_HINT_T1);
                for (int g = 0; g < kn; g += VW) {
                    vf c[WA];
                    if (inner && k0 + g < cfull) {
                        for (int x = 0; x < WA; x++) c[x] = v_loadu(src + x * in.pitch + g);
                        if (t->pre) {
                            const float *pc = t->pre + k0 + g;
                            const vf mean = v_load(pc), scale = v_load(pc + cinp), shift = v_load(pc + 2 * cinp);
                            for (int x = 0; x < WA; x++) c[x] = prologue(c[x], mean, scale, shift);
                        }
                    } else {
                        edge_row(t, src + g, k0 + g, xlo, xhi, k0 + g < cfull, tail, c);
                    }
                    WINO_BT(c, 0, 1)
                    for (int x = 0; x < WA; x++) v_store(row + x * CHUNK + g, c[x]);
                }
            }
        /* along y, in place: buf stride WA CHUNK between y */
        for (int z = 0; z < WA; z++)
            for (int x = 0; x < WA; x++)
                for (int g = 0; g < kn; g += VW) IN_PLACE(buf + (z * WA2 + x) * CHUNK + g, WA * CHUNK, WINO_BT, WA)
        /* along z, into V */
        for (int i = 0; i < WA2; i++)
            for (int g = 0; g < kn; g += VW) {
                vf c[WA];
                for (int z = 0; z < WA; z++) c[z] = v_load(buf + (z * WA2 + i) * CHUNK + g);
                WINO_BT(c, 0, 1)
                float *dst = vt + i * ps + k0 + g;
                for (int z = 0; z < WA; z++) v_store(dst + (size_t)z * WA2 * ps, c[z]);
            }
    }
}

/* Output transform of tiles [tile0, tile0 + ntile) for channels [co0, co0 + nco): Y = A^T M A + bias,
 * stored for the voxels inside the output. Per tile, CHUNK channels at a time through a
 * buffer on the stack, as the input transform: A^T along x for each of M's WA^2 rows (z, y)
 * (WA points contiguous in M), then along y, then along z with the bias and the stores,
 * each pass WA vectors in registers; a voxel's CHUNK channels are stored together.
 * With t->stats the stored values' instance-norm sums go into slot tile0 / 4 (in_stats.h;
 * tile0 is a multiple of 4 in both schedules): its shift is the first tile's first voxel,
 * each tile's sums of d and d^2 (at most 216 voxels) run in float in registers, then are
 * added in double. */
V_FN static void output_tiles(const struct wino_task *t, long tile0, int ntile, const float *m, int co0, int nco)
{
    const struct swin_vol out = t->out;
    const int ncop = (nco + VW - 1) / VW * VW;
    const vmask tail = v_mask(nco % VW ? nco % VW : VW);
    _Alignas(VALIGN) float buf[WA2 * WINO_M * CHUNK];  /* buf[((z * WA + y) * WINO_M + x) * CHUNK + c] */
    double *sl = t->stats ? swin_cpu_in_slot(t->stats, tile0 / 4, out.c) : NULL;
    for (int slot = 0; slot < ntile && tile0 + slot < t->ntiles; slot++) {
        const long tile = tile0 + slot;
        const int tx = (int)(tile % t->tx), ty = (int)(tile / t->tx % t->ty), tz = (int)(tile / ((long)t->tx * t->ty));
        const int nz = out.d - WINO_M * tz < WINO_M ? out.d - WINO_M * tz : WINO_M;
        const int ny = out.h - WINO_M * ty < WINO_M ? out.h - WINO_M * ty : WINO_M;
        const int nx = out.w - WINO_M * tx < WINO_M ? out.w - WINO_M * tx : WINO_M;
        const float *mt = m + (size_t)slot * NP * t->cob;
        if (sl && co0 == 0) sl[0] += nz * ny * nx;
        for (int k0 = 0; k0 < ncop; k0 += CHUNK) {
            const int kn = ncop - k0 < CHUNK ? ncop - k0 : CHUNK;
            /* this chunk's lanes that are channels, its shift and its sums (with t->stats) */
            const int nreal = nco - k0 < CHUNK ? nco - k0 : CHUNK;
            _Alignas(VALIGN) float kf[CHUNK] = {0}, f1[CHUNK], f2[CHUNK];
            vf kv[CHUNK / VW], s1v[CHUNK / VW], s2v[CHUNK / VW];
            for (int j = 0; sl && slot > 0 && j < nreal; j++) kf[j] = (float)sl[1 + co0 + k0 + j];
            for (int g = 0; g < CHUNK; g += VW) {
                kv[g / VW] = v_load(kf + g);
                s1v[g / VW] = s2v[g / VW] = v_zero();
            }
            for (int r = 0; r < WA2; r++)                                 /* along x */
                for (int g = 0; g < kn; g += VW) {
                    const float *src = mt + (size_t)r * WA * t->cob + k0 + g;
                    vf c[WA];
                    for (int x = 0; x < WA; x++) c[x] = v_load(src + (size_t)x * t->cob);
                    WINO_AT(c, 0, 1)
                    for (int x = 0; x < WINO_M; x++) v_store(buf + (r * WINO_M + x) * CHUNK + g, c[x]);
                }
            for (int z = 0; z < WA; z++)                                  /* along y */
                for (int x = 0; x < WINO_M; x++)
                    for (int g = 0; g < kn; g += VW)
                        IN_PLACE(buf + (z * WA * WINO_M + x) * CHUNK + g, WINO_M * CHUNK, WINO_AT, WINO_M)
            for (int y = 0; y < ny; y++)                                  /* along z, + bias, out */
                for (int x = 0; x < nx; x++)
                    /* a constant trip count, unrolled: the statistics' accumulators stay in
                     * registers (indexed by constants) */
                    _Pragma("GCC unroll 4") for (int gi = 0; gi < CHUNK / VW; gi++) {
                        const int g = gi * VW;
                        if (g >= kn) break;
                        const int j = k0 + g;
                        const bool full = nco - j >= VW;
                        const vf b = !t->bias ? v_zero()
                                         : full   ? v_loadu(t->bias + co0 + j)
                                                  : v_maskload(t->bias + co0 + j, tail);
                        vf c[WA];
                        for (int z = 0; z < WA; z++) c[z] = v_load(buf + ((z * WA + y) * WINO_M + x) * CHUNK + g);
                        WINO_AT(c, 0, 1)
                        float *dst = swin_vol_f32(out) +
                                     (((long)(WINO_M * tz) * out.h + WINO_M * ty + y) * out.w + WINO_M * tx + x) * out.pitch +
                                     co0 + j;
                        const long zstep = (long)out.h * out.w * out.pitch;
                        for (int z = 0; z < nz; z++) {
                            const vf yv = v_add(c[z], b);
                            if (!full) v_maskstore(dst + z * zstep, tail, yv);
                            else if (t->stream) v_stream(dst + z * zstep, yv);
                            else v_storeu(dst + z * zstep, yv);
                            if (!sl) continue;
                            if (slot == 0 && y == 0 && x == 0 && z == 0) kv[gi] = yv;
                            const vf d = v_sub(yv, kv[gi]);
                            s1v[gi] = v_add(s1v[gi], d);
                            s2v[gi] = v_fmadd(d, d, s2v[gi]);
                        }
                    }
            if (!sl) continue;
            double *k = sl + 1 + co0 + k0, *s1 = k + out.c, *s2 = s1 + out.c;
            for (int g = 0; g < kn; g += VW) {
                v_store(kf + g, kv[g / VW]);
                v_store(f1 + g, s1v[g / VW]);
                v_store(f2 + g, s2v[g / VW]);
            }
            for (int j = 0; j < nreal; j++) {
                if (slot == 0) k[j] = kf[j], s1[j] = 0.0, s2[j] = 0.0;
                s1[j] += f1[j];
                s2[j] += f2[j];
            }
        }
    }
    if (t->stream) _mm_sfence(); /* the streamed stores reach memory before the conv returns */
}

const struct wino_kernels WINO_KERNELS = {
    .lanes = VW, .panel = WINO_PANEL, .weights = weights_ci, .weights_claim = 2, .input = input_tile,
    .gemm = WINO_GEMM, .output = output_tiles,
};
