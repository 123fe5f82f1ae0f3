/* conv3d as one accumulating GEMM per tap (conv3d_taps_tmpl.h): its workspace and the call,
 * at the AVX2 and AVX-512 levels. */
#include "kernels/cpu/conv/conv3d_internal.h"

size_t swin_cpu_conv3d_taps_ws(void *bev, struct swin_vol out, struct swin_vol in)
{
    (void)out;
    struct swin_cpu_backend *be = bev;
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * swin_cpu_round((size_t)in.c * TAPS_CHUNK * sizeof(float));
}

static void taps_run(void *p, int tid, int nth)
{
    (void)nth;
    struct conv_task *t = p;
    float *pack = (float *)(t->ws + (size_t)tid * t->slice);
    if (t->simd >= SWIN_CPU_SIMD_AVX512) swin_cpu_conv3d_taps_avx512_run(t, &t->next, pack);
    else swin_cpu_conv3d_taps_avx2_run(t, &t->next, pack);
}

int swin_cpu_conv3d_taps(void *bev, struct swin_vol out, struct swin_vol in, const float *w, const float *bias, int k,
                         int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    if (be->simd == SWIN_CPU_SIMD_BASELINE)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (per-tap GEMMs): needs AVX2 + FMA");
    const size_t need = swin_cpu_conv3d_taps_ws(be, out, in);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (per-tap GEMMs): workspace %zu bytes, need %zu",
                             ws ? ws_bytes : 0, need);
    struct conv_task t = {.out = out,
                          .in = in,
                          .w = w,
                          .bias = bias,
                          .k = k,
                          .stride = stride,
                          .pad = pad,
                          .simd = be->simd,
                          .gemm = swin_cpu_wgemm_of(be, w)};
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = swin_cpu_round((size_t)in.c * TAPS_CHUNK * sizeof(float));
    atomic_init(&t.next, 0);
    swin_cpu_run(be, taps_run, &t);
    return 0;
}
