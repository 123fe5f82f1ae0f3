/* bench_cpu_ops' measurements: each function times one CPU op at one shape on random inputs
 * and prints its table row (and JSON row). An op whose name --op does not match is skipped.
 *
 * Per call, wall time (CLOCK_MONOTONIC) and the process's CPU time (CLOCK_PROCESS_CPUTIME_ID):
 * on a shared machine descheduling inflates the wall time but not the CPU time, and GFLOP
 * per CPU-second times the thread count is what the wall rate would be on an idle machine.
 * One untimed call (its error is reported), then b->reps timed calls: medians and minima. */
#ifndef BENCH_CPU_OP_TIMING_H
#define BENCH_CPU_OP_TIMING_H

#include <stdio.h>

#include "kernels/cpu/cpu_backend.h"

struct bench {
    struct swin_cpu_backend *be;
    int threads;                   /* the backend's */
    int reps;                      /* timed calls per op, 1..256 */
    int check;                     /* a NaN/Inf in an output counts as a failure */
    const char *filter;            /* only ops whose name contains it; NULL: every op */
    FILE *json;                    /* rows also go here when not NULL */
    double peak_gflops, fma_gflops;
    int rows, failures;
};

void bench_table_header(void);

/* k^3 stride-s conv (pad k/2 at stride 1, else 0) from L^3 x cin: the direct kernel and, for
 * 3x3x3 stride 1 at a level with Winograd, the Winograd kernel; the row conv3d runs is marked. */
void bench_conv3d(struct bench *b, int L, int cin, int cout, int k, int stride, const char *where);
/* L^3 x cin -> (2L)^3 x cout, into the first cout channels of a 2 cout-channel concat. */
void bench_conv_transpose2(struct bench *b, int L, int cin, int cout, const char *where);
/* In place, leaky ReLU, with an added residual when `residual`. */
void bench_instnorm_act(struct bench *b, int L, int c, int residual, const char *where);
/* In place with gamma and beta when `in_place`, else into another volume without them. */
void bench_layernorm(struct bench *b, int L, int c, int in_place, const char *where);
/* Window 7 (clipped to the grid), shifted when `shifted` (and the grid allows). */
void bench_swin_attention(struct bench *b, int L, int c, int heads, int shifted, const char *where);
void bench_swin_mlp(struct bench *b, int L, int c, const char *where);
/* L^3 x c -> (L/2)^3 x 2c. */
void bench_patch_merge(struct bench *b, int L, int c, const char *where);

#endif
