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
 * before the product (float32 error grows accordingly; tests/ops/test_winograd.c).
 *
 * U (the transformed weights) is made once per layer at load: U[p][ci][co], co padded
 * to a multiple of 8 with zeros (swin_cpu_winograd_u_floats).
 * The backend keeps the U of every conv layer the shape rule picks (winograd_model.c,
 * swin_cpu_backend_winograd);
 * conv3d (conv3d.c) runs Winograd where the rule holds and the weights have a U. */
#ifndef SWIN_CPU_WINOGRAD_H
#define SWIN_CPU_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu/cpu_internal.h"
#include "core/model.h"

/* Floats of the transformed weights of a (3,3,3,cin,cout) kernel: 64 cin round8(cout). */
size_t swin_cpu_winograd_u_floats(int cin, int cout);
/* u = the transform of w (3,3,3,cin,cout), layout above (float64 arithmetic, rounded once). */
void swin_cpu_winograd_transform(float *u, const float *w, int cin, int cout);

/* The shape rule: true where Winograd is measured to beat the direct kernel of the
 * backend's SIMD level for a 3x3x3 stride-1 pad-1 conv from `in` to `out`. */
bool swin_cpu_winograd_wins(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in);
/* Whether the backend has a Winograd kernel at its SIMD level (AVX2 + FMA). */
bool swin_cpu_winograd_available(const struct swin_cpu_backend *be);

/* Workspace of swin_cpu_conv3d_winograd for these shapes and the backend's threads. */
size_t swin_cpu_winograd_ws(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in);
/* out = conv3d(in, w) + bias for k 3, stride 1, pad 1, with u = transform(w); out dims = in
 * dims. SWIN_ERR_ARG where the backend has no Winograd kernel (swin_cpu_winograd_available). */
int swin_cpu_conv3d_winograd(struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, const float *u,
                             const float *bias, void *ws, size_t ws_bytes);

/* The backend's table of transformed weights, keyed by the weight pointer. */
struct swin_cpu_wino_entry {
    const float *w;
    int cin, cout;
    float *u;
};
struct swin_cpu_wino_table {
    struct swin_cpu_wino_entry *e;
    int n, cap;
    size_t bytes;   /* sum of the U buffers */
};

/* Transforms w (3,3,3,cin,cout) and keeps it in the backend's table (once per w). */
swin_status swin_cpu_winograd_register(struct swin_cpu_backend *be, const float *w, int cin, int cout,
                                       swin_error *err);
/* The U registered for w with these channels, or NULL. */
const float *swin_cpu_winograd_lookup(const struct swin_cpu_backend *be, const float *w, int cin, int cout);
/* Frees the table (backend teardown). */
void swin_cpu_winograd_table_free(struct swin_cpu_backend *be);

/* The AVX2 + FMA kernel (winograd_avx2.c): this thread's share of the tile blocks. */
struct wino_task {
    struct swin_vol out, in;
    const float *u, *bias;
    int cinp, coutp;           /* channels rounded up to 8 */
    int cob;                   /* output channels per block (multiple of 8) */
    int nt;                    /* tiles per block (multiple of 4) */
    int tz, ty, tx;            /* tiles per axis */
    long ntiles;
    char *ws;                  /* aligned; thread t owns [t*slice, (t+1)*slice) */
    size_t slice, v_bytes;     /* V = 64 nt cinp floats, then M = 64 nt cob floats */
    atomic_long next;
};
void swin_cpu_winograd_avx2_run(struct wino_task *t, int tid);

#endif
