/* Shared between conv3d.c (entry point, im2col + OpenBLAS path) and the implicit-GEMM
 * kernels conv3d_avx512.c and conv3d_avx2.c: the task and the tap geometry of a tile. */
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

/* This thread's share of the whole convolution, bias included, with AVX-512 FMA (fp32
 * accumulation in the order taps, then input channels); claims work items from *next.
 * zero: >= in.c floats of 0 (the padding row). */
void swin_cpu_conv3d_avx512_run(const struct conv_task *t, atomic_long *next, const float *zero);
/* The same with AVX2 + FMA (4 voxels x 24 channels per tile). */
void swin_cpu_conv3d_avx2_run(const struct conv_task *t, atomic_long *next, const float *zero);
/* The same for one input channel with AVX2 + FMA (conv3d_c1_avx2.c: a line of output voxels
 * per work item; needs no zero row). */
void swin_cpu_conv3d_c1_avx2_run(const struct conv_task *t, atomic_long *next);

/* The whole convolution as one accumulating GEMM per tap (conv3d_taps_avx2.c), AVX2 + FMA,
 * float32 weights; claims chunks of TAPS_CHUNK output channels from *next. pack: this
 * thread's cin TAPS_CHUNK floats (a tap's weights for the chunk, repacked). */
#define TAPS_CHUNK 96
void swin_cpu_conv3d_taps_avx2_run(const struct conv_task *t, atomic_long *next, float *pack);

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
