/* Winograd F(2x2x2, 3x3x3) for the 3x3x3 stride-1 pad-1 convolutions of the CPU backend.
 *
 * The output is cut into 2x2x2 tiles; each reads a 4x4x4 input patch starting at
 * (2tz - 1, 2ty - 1, 2tx - 1) (zeros outside the input). With the Lavin-Gray matrices
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 * applied along z, y and x, one tile's output is
 *   Y = A^T [ sum_ci (G w G^T)[ci] (.) (B^T d B)[ci] ] A,
 * i.e. for each of the 64 transformed points p = (a*4 + b)*4 + c a GEMM
 *   M[p] (tiles x cout) = V[p] (tiles x cin) . U[p] (cin x cout),
 * 64 multiplies per 8 outputs instead of 8 * 27 (3.375x fewer), paid for by the
 * transforms and by rounding: the transforms add and subtract up to 4^3 input values
 * before the product (float32 error grows accordingly; tests/kernels/cpu/test_winograd.c).
 *
 * U (the transformed weights, U[p][ci][co] with co padded to a multiple of 8 with zeros, stored
 * in panels of output channels: swin_cpu_wino_u_at) is
 * made by every call into the conv's workspace, by all threads, before the tile loop: about
 * 185 flops per (ci, co) pair (G along x, y, z: 9 + 12 + 16 three-to-four transforms of
 * 5 flops), against 54 Vout of the direct conv: 1.6 % at the rule's smallest grid, 6^3, and 5.4 % of
 * Winograd's own 2 * 64 * tiles GEMM flops there (27 tiles); at 4^3 (8 tiles) 18 % of
 * those, and the 64 cin cout weights written and read once per 8 tiles: there it loses.
 * Nothing is kept between calls, so Winograd costs no memory beyond the planned workspace.
 * With bfloat16 weights (precision BF16) the transform widens them exactly to float32 and
 * the rest runs as in float32: the input is not rounded to bfloat16, unlike the direct path.
 * The larger tiles, F(4x4x4) and F(6x6x6) (6^3 and 8^3 patches; F(6x6x6) for bfloat16 weights on
 * large grids), share one template (winograd_tmpl.h; their one-axis transforms: winograd_f4.h,
 * winograd_f6.h). conv3d (conv3d.c) runs Winograd where the shape rule holds. */
#ifndef SWIN_CPU_WINOGRAD_H
#define SWIN_CPU_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"

/* The tile the shape rule picks for a 3x3x3 stride-1 pad-1 conv from `in` to `out` with
 * bfloat16 weights (w_bf16) or float32 ones: 6 for F(6x6x6, 3x3x3) (bfloat16 weights only),
 * 4 for F(4x4x4, 3x3x3), 2 for F(2x2x2, 3x3x3), 0 where the backend's direct kernel is
 * measured faster (or the backend has no Winograd kernel). */
int swin_cpu_winograd_tile(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, bool w_bf16);
/* Whether the backend has a Winograd kernel at its SIMD level (AVX2 + FMA). */
bool swin_cpu_winograd_available(const struct swin_cpu_backend *be);

/* Whether swin_cpu_conv3d_winograd with this tile (2, 4 or 6) runs the wide schedule (winograd.c). */
bool swin_cpu_winograd_wide(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile);
/* Workspace of swin_cpu_conv3d_winograd with this tile (2, 4 or 6) for these shapes and the
 * backend's threads: the transformed weights ((tile + 2)^3 cin round8(cout) floats) and each
 * thread's tile buffers (the wide schedule: one block's, shared). */
size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile);
/* Whether swin_cpu_conv3d_winograd stores this output past the caches: the blocked F(4x4x4)
 * and F(6x6x6) schedule and swin_cpu_out_streams. */
bool swin_cpu_winograd_streams(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int tile);
/* An input prologue: the conv reads LeakyReLU_0.01(IN(in) * gamma + beta) (instnorm_act's
 * norm; stats: what conv3d kept for in, or NULL) instead of in, applied as the input
 * transform loads a voxel; the zero padding outside the input stays zero. */
struct swin_cpu_wino_pre {
    const void *stats;
    const float *gamma, *beta;
};
/* out = conv3d(in, w) + bias for w (3,3,3,cin,cout), stride 1, pad 1; out dims = in dims;
 * output tiles of tile^3 (2, 4 or 6) voxels. stats: NULL, or swin_cpu_in_stats_bytes(out) bytes
 * that receive out's instance-norm statistics (tiles 4 and 6; tile 2 marks them as not kept).
 * pre: NULL, or an input prologue (tiles 4 and 6). SWIN_ERR_ARG where the backend has no
 * Winograd kernel (swin_cpu_winograd_available) or the tile is none of those. */
int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, void *stats, struct swin_vol in,
                             const float *w, const float *bias, void *ws, size_t ws_bytes, int tile,
                             const struct swin_cpu_wino_pre *pre);

/* One Winograd convolution as its kernels see it. */
struct wino_task {
    struct swin_vol out, in;
    const struct wino_kernels *k; /* the level's kernels for this tile size */
    int m, np;                 /* output tile side (2, 4 or 6), transformed points (m + 2)^3 */
    const float *w, *bias;     /* w (3,3,3,cin,cout) */
    bool w_bf16;               /* w holds bfloat16 (precision BF16), widened exactly as it is read */
    float *u;                  /* U in the workspace (aligned), np cin coutp floats */
    int cinp, coutp;           /* channels rounded up to k->lanes */
    int panel;                 /* U's panel width (k->panel) */
    int cob;                   /* output channels per block (multiple of k->lanes); M's row: cob floats */
    int nt;                    /* tiles per block (multiple of 4) */
    bool wide;                 /* the wide schedule (winograd.c): blocks of nt tiles shared by all
                                  threads, transformed in, multiplied point by point, transformed out */
    int phase;                 /* wide: the phase the threads run (WINO_WIDE_INPUT ...) */
    long block0;               /* wide: the block's first tile */
    int tz, ty, tx;            /* tiles per axis */
    long ntiles;
    char *ws;                  /* aligned; thread t owns [t*slice, (t+1)*slice) (wide: one slice, shared) */
    size_t slice, v_bytes;     /* V = np nt cinp floats, then M = np nt cob floats */
    long v_pstride, v_tstride; /* floats between V's points and between its tiles: F(2x2x2)
                                  point-major (nt cinp, cinp), F(4x4x4) and F(6x6x6) tile-major
                                  (cinp, np cinp) */
    atomic_long next;          /* work claimed: input channels, then tile blocks */
    const float *pre;          /* NULL, or the input prologue in the workspace: mean, scale, shift,
                                  cinp floats each (zero in the padding lanes) */
    void *stats;               /* NULL, or the instance-norm statistics the output transform keeps
                                  (kernels/cpu/norm/in_stats.h; F(4x4x4) and F(6x6x6)) */
    bool stream;               /* the output transform's full vectors are non-temporal stores
                                  (swin_cpu_winograd_streams), fenced before it returns */
    bool timed;                /* add each phase's nanoseconds to phase_ns (backend's wino_phases set) */
    atomic_long phase_ns[4];   /* weights, input transform, GEMMs, output transform; all threads */
};

/* What a tile size at an ISA level supplies to the shared schedule (winograd_driver.c):
 *   weights  U[p][ci][co0, co0 + lanes) for every point p of input channel ci (n: the channels
 *            left from co0; lanes past them are stored as the zero padding of coutp);
 *   input    one tile's input transform, every input channel, into V at `slot`;
 *   gemm     M[tile][p][j0, j1) = sum_ci V[p][tile][ci] U[p][ci][co0 + j0 ..] for every tile of
 *            a block at point p (j1 - j0 a multiple of lanes);
 *   output   the output transform of tiles [tile0, tile0 + ntile) for channels [co0, co0 + nco)
 *            from M, + bias, stored for the voxels inside the output. */
typedef void swin_wino_weights_fn(const struct wino_task *t, int ci, int co0, int n);
typedef void swin_wino_input_fn(const struct wino_task *t, long tile, int slot, float *v);
typedef void swin_wino_gemm_fn(const struct wino_task *t, const float *v, float *m, int p, int co0, int j0, int j1);
typedef void swin_wino_output_fn(const struct wino_task *t, long tile0, int ntile, const float *m, int co0, int nco);
struct wino_kernels {
    int lanes;                 /* floats per vector: cinp and coutp are multiples */
    int panel;                 /* U's panel width, a multiple of lanes */
    swin_wino_weights_fn *weights;
    int weights_claim;         /* input channels a thread claims at a time */
    swin_wino_input_fn *input;
    swin_wino_gemm_fn *gemm;
    swin_wino_output_fn *output;
};
/* F(2x2x2), F(4x4x4) and F(6x6x6) at the AVX2 level (winograd2_avx2.c, winograd4_avx2.c,
 * winograd6_avx2.c) and the AVX-512 level (winograd2_avx512.c, winograd4_avx512.c,
 * winograd6_avx512.c). */
extern const struct wino_kernels swin_cpu_wino2_avx2, swin_cpu_wino4_avx2, swin_cpu_wino6_avx2;
extern const struct wino_kernels swin_cpu_wino2_avx512, swin_cpu_wino4_avx512, swin_cpu_wino6_avx512;

/* U's layout: per point p (cin coutp floats apart), the output channels in panels of t->panel
 * (the last one coutp mod panel wide when that is not 0), each panel (cin, width) row-major, so
 * that the GEMM's pass over a panel (4 tiles x one panel, every input channel) reads one
 * contiguous run instead of a few vectors of every cin row. The width (row stride) of the
 * panel holding channel co0, and the offset of U[p][ci][co0 ..] (co0 a multiple of lanes). */
static inline int swin_cpu_wino_panel_width(const struct wino_task *t, int co0)
{
    const int left = t->coutp - co0 / t->panel * t->panel;
    return left < t->panel ? left : t->panel;
}
static inline size_t swin_cpu_wino_u_at(const struct wino_task *t, int p, int ci, int co0)
{
    const int panel0 = co0 / t->panel * t->panel;
    return (size_t)p * t->in.c * t->coutp + (size_t)panel0 * t->in.c + (size_t)ci * swin_cpu_wino_panel_width(t, co0) +
           (size_t)(co0 - panel0);
}

/* The schedule (winograd_driver.c). This thread's share of U = transform(w): input channels
 * claimed from t->next. */
void swin_cpu_winograd_weights(struct wino_task *t);
/* This thread's share of the tiles (U complete): blocks of nt tiles claimed from t->next,
 * or, when t->wide, its share of phase t->phase of the block at t->block0. */
enum { WINO_WIDE_INPUT = 1, WINO_WIDE_GEMM, WINO_WIDE_OUTPUT };
void swin_cpu_winograd_tiles(struct wino_task *t, int tid);

/* The point GEMM of each level (swin_wino_gemm_fn), shared by both tile sizes:
 * winograd_gemm_avx2.c, winograd_gemm_avx512.c. */
void swin_cpu_winograd_avx2_gemm_point(const struct wino_task *t, const float *v, float *m, int p, int co0, int j0,
                                       int j1);
void swin_cpu_winograd_avx512_gemm_point(const struct wino_task *t, const float *v, float *m, int p, int co0, int j0,
                                         int j1);

#endif
