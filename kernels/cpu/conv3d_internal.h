/* Shared between conv3d.c (entry point, im2col + OpenBLAS path) and conv3d_avx512.c (the
 * implicit-GEMM kernel used where the CPU has AVX-512). */
#ifndef SWIN_CPU_CONV3D_INTERNAL_H
#define SWIN_CPU_CONV3D_INTERNAL_H

#include "kernels/cpu/cpu_internal.h"

struct conv_task {
    struct swin_vol out, in;
    const float *w, *bias;      /* w (k, k, k, cin, cout) */
    int k, stride, pad;
    long rows, kdim;            /* slab rows, k^3 cin */
    bool avx512;                /* use swin_cpu_conv3d_avx512_slab */
    char *ws;                   /* aligned; thread t owns [t*slice, (t+1)*slice) */
    size_t slice;
    atomic_long next;
};

/* True when the running CPU has AVX-512F (checked once at backend creation). */
bool swin_cpu_have_avx512(void);
/* This thread's share of the whole convolution, bias included, with AVX-512 FMA (fp32
 * accumulation in the order taps, then input channels); claims work items from *next.
 * zero: >= in.c floats of 0 (the padding row). */
void swin_cpu_conv3d_avx512_run(const struct conv_task *t, atomic_long *next, const float *zero);

#endif
