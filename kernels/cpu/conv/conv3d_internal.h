/* Shared by the conv3d files: the kernel choice (conv3d.c), the task the kernels run and the
 * tap geometry of a tile. */
#ifndef SWIN_CPU_CONV3D_INTERNAL_H
#define SWIN_CPU_CONV3D_INTERNAL_H

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"

struct conv_task {
    struct swin_vol out, in;
    const float *w, *bias;      /* w (k, k, k, cin, cout) */
    int k, stride, pad;
    long rows, kdim;            /* slab rows, k^3 cin */
    enum swin_cpu_simd simd;    /* which implicit-GEMM kernel runs the task */
    bool rows_are_a;            /* k 1, stride 1, pad 0: the input rows are the GEMM's A, no im2col */
    bool implicit;              /* the implicit-GEMM kernel, else im2col (or k 1 rows) + GEMM */
    struct swin_cpu_wgemm gemm; /* bfloat16 weights: im2col + swin_cpu_gemm_bf16 at every level */
    int col_block;              /* output channels per GEMM work item (im2col path) */
    char *ws;                   /* aligned; thread t owns [t*slice, (t+1)*slice) */
    size_t slice;
    atomic_long next;
};

/* Which kernel a convolution runs (conv3d.c), the workspace it needs and its name. */
enum conv_kernel { CONV_TAPS, CONV_WINOGRAD, CONV_IMPLICIT, CONV_GEMM };
struct conv_choice {
    enum conv_kernel kernel;
    int tile;                   /* CONV_WINOGRAD: 2 or 4 */
    bool rounds_input;          /* bfloat16 weights: the input rounded to bfloat16 too (a bfloat16 GEMM);
                                   else it stays float32 and the weights are widened */
    size_t ws;
    const char *name;
};
struct conv_choice swin_cpu_conv3d_choose(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in,
                                          bool w_bf16, int k, int stride, int pad);

/* Whether the implicit GEMM beats im2col + GEMM for a conv that is neither per-tap nor Winograd. */
bool swin_cpu_conv3d_implicit_wins(const struct swin_cpu_backend *be, struct swin_vol out, bool w_bf16, int k,
                                   int stride, int pad);
/* The implicit-GEMM kernels (implicit) or im2col + weight GEMM (conv3d_direct.c); ws holds
 * swin_cpu_conv3d_direct_ws bytes. */
int swin_cpu_conv3d_direct(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *w,
                           const float *bias, int k, int stride, int pad, bool implicit, void *ws);

/* This thread's share of the whole convolution, bias included, with AVX-512 FMA (fp32
 * accumulation in the order taps, then input channels); claims work items from *next.
 * zero: >= in.c floats of 0 (the padding row). */
void swin_cpu_conv3d_avx512_run(const struct conv_task *t, atomic_long *next, const float *zero);
/* The same with AVX2 + FMA (4 voxels x 24 channels per tile). */
void swin_cpu_conv3d_avx2_run(const struct conv_task *t, atomic_long *next, const float *zero);
/* The same for one input channel with AVX2 + FMA (conv3d_c1_avx2.c: a line of output voxels
 * per work item; needs no zero row). */
void swin_cpu_conv3d_c1_avx2_run(const struct conv_task *t, atomic_long *next);
/* The same at the AVX-512 level (conv3d_c1_avx512.c: 4 voxels x 48 channels per tile). */
void swin_cpu_conv3d_c1_avx512_run(const struct conv_task *t, atomic_long *next);

/* The whole convolution as one accumulating GEMM per tap (conv3d_taps_tmpl.h) at the AVX2 and
 * the AVX-512 level; claims chunks of TAPS_CHUNK output channels from *next. pack: this
 * thread's cin TAPS_CHUNK floats (a tap's weights for the chunk, repacked as float32). */
#define TAPS_CHUNK 96
void swin_cpu_conv3d_taps_avx2_run(const struct conv_task *t, atomic_long *next, float *pack);
void swin_cpu_conv3d_taps_avx512_run(const struct conv_task *t, atomic_long *next, float *pack);

/* A tile is up to CONV_TILE_MAX consecutive output voxels. Where they start in the input:
 * (z, y, x) of tap (0, 0, 0), computed once per tile. */
#define CONV_TILE_MAX 8
struct conv_tile_origin {
    int z[CONV_TILE_MAX], y[CONV_TILE_MAX], x[CONV_TILE_MAX];
};

static inline void conv_tile_origin(const struct conv_task *t, long v0, int m, struct conv_tile_origin *o)
{
    const struct swin_vol out = t->out;
    for (int i = 0; i < m; i++) {
        const long v = v0 + i;
        o->x[i] = (int)(v % out.w) * t->stride - t->pad;
        o->y[i] = (int)(v / out.w % out.h) * t->stride - t->pad;
        o->z[i] = (int)(v / ((long)out.w * out.h)) * t->stride - t->pad;
    }
}

/* Input row pointers of the tile's voxels [0, m) for tap (kz, ky, kx): the voxel's channels,
 * or `zero` where the tap falls in the padding; rows [m, mr) (past the end of the volume)
 * point at `zero` too: computed, never stored. */
static inline void conv_tap_rows(const struct conv_task *t, const struct conv_tile_origin *o, int m, int mr,
                                 int kz, int ky, int kx, const float *zero, const float **rows)
{
    const struct swin_vol in = t->in;
    for (int i = 0; i < m; i++) {
        const int iz = o->z[i] + kz, iy = o->y[i] + ky, ix = o->x[i] + kx;
        const bool inside = iz >= 0 && iz < in.d && iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
        rows[i] = inside ? swin_vol_f32(in) + (((int64_t)iz * in.h + iy) * in.w + ix) * in.pitch : zero;
    }
    for (int i = m; i < mr; i++) rows[i] = zero;
}

#endif
