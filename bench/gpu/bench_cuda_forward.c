/* Timing and device memory of the whole forward pass (runtime/forward.c) on the CUDA
 * backend, for a random-weight model built in code (random_model.h: no ONNX file, so a
 * GPU machine needs nothing but the build):
 *
 *   bench_cuda_forward [--f 48] [--cube 96] [--runs 3] [--half]
 *
 * Plans, allocates the arena once, runs one warm-up pass, then `runs` timed passes. A
 * pass is forward() from host float32 input to host float32 logits (the upload, every
 * kernel and the download: unpack_output waits for the stream), timed twice: by the host
 * clock (min/median/max_ms) and by two CUDA events recorded on the backend's stream
 * (swin_cuda_backend_stream) before and after the pass (event_min/median/max_ms: the
 * stream's time from the first upload copy to the end of the last download copy, GPU
 * idle gaps between launches included; nsys gives the kernels alone).
 * Device memory by cudaMemGetInfo: `free_ctx` after the CUDA context exists, `free_run`
 * with weights, scratch and arena allocated; `used_bytes` = their difference, set against
 * the plan (weights + context scratch + arena). `context_bytes` = total - free_ctx: the
 * CUDA context plus whatever else holds memory on the device (other processes).
 * Prints one JSON object on stdout. The emulated build runs it as a smoke test
 * (cuda_bench_forward_smoke, f=12 at 32^3, times meaningless), where the device bytes must
 * equal the plan exactly; the logits are checked by the tests, here only for being finite. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cuda/cuda_backend.h"
#include "runtime/exec.h"
#include "runtime/forward.h"
#include "runtime/plan.h"
#include "tests/common/random_model.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int f = 48, cube = 96, runs = 3;
    enum swin_dtype dtype = SWIN_F32;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--f") && i + 1 < argc) f = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cube") && i + 1 < argc) cube = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--half")) dtype = SWIN_F16;
        else {
            fprintf(stderr, "usage: bench_cuda_forward [--f 48] [--cube 96] [--runs 3] [--half]\n");
            return 2;
        }
    }
    if (f < 12 || f % 12 || cube < 32 || cube % 32 || runs < 1 || runs > 1000) {
        fprintf(stderr, "bench_cuda_forward: f a multiple of 12, cube a multiple of 32, 1 <= runs <= 1000\n");
        return 2;
    }
    struct test_model_builder b = {.cap = test_random_model_cap(f), .rng = {0xf0f0}};
    b.flat = aligned_alloc(256, b.cap);
    struct swin_model m;
    test_random_model(&m, &b, f);
    const int dims[3] = {cube, cube, cube};
    const size_t nin = (size_t)cube * cube * cube, nout = nin * m.cfg.out_channels;
    float *in = malloc(nin * sizeof(float)), *out = malloc(nout * sizeof(float));
    test_rng r = {99};
    test_fill_uniform(&r, in, nin, -1.0f, 1.0f);

    size_t free_ctx = 0, free_run = 0, total = 0;
    if (cudaFree(0) != cudaSuccess || cudaMemGetInfo(&free_ctx, &total) != cudaSuccess) {
        fprintf(stderr, "SKIP no usable CUDA device\n");
        return 77;
    }
    swin_error err = {0};
    struct swin_cuda_backend *be = NULL;
    const swin_status bst = swin_cuda_backend_create(0, &m, dtype, &be, &err);
    if (bst) {
        fprintf(stderr, "%s cuda backend: %s\n", bst == SWIN_ERR_BACKEND ? "SKIP" : "FAIL", err.msg);
        return bst == SWIN_ERR_BACKEND ? 77 : 1;
    }
    const struct swin_ops *ops = swin_cuda_ops_for(dtype);
    struct swin_plan plan;
    swin_plan_init(&plan);
    struct swin_exec e = {.plan = &plan, .planning = true, .ops = ops, .be = be, .err = &err};
    swin_status st = swin_forward(&e, &m, dims, NULL, NULL);
    if (!st) st = swin_plan_solve(&plan, &err);
    void *arena = st ? NULL : swin_cuda_arena_alloc(be, plan.arena_bytes, &err);
    if (!arena) {
        fprintf(stderr, "FAIL plan or arena: %s\n", err.msg);
        return 1;
    }
    cudaMemGetInfo(&free_run, &total);
    double *ms = malloc((size_t)(runs + 1) * sizeof(double)), *ev = malloc((size_t)(runs + 1) * sizeof(double));
    cudaStream_t stream = (cudaStream_t)swin_cuda_backend_stream(be);
    cudaEvent_t ev0, ev1;
    if (cudaEventCreate(&ev0) != cudaSuccess || cudaEventCreate(&ev1) != cudaSuccess) {
        fprintf(stderr, "FAIL cudaEventCreate\n");
        return 1;
    }
    for (int k = 0; k <= runs && !st; k++) {
        swin_plan_rewind(&plan);
        e = (struct swin_exec){.plan = &plan, .arena = arena, .ops = ops, .be = be, .err = &err};
        float evms = -1.0f;
        const double t0 = now_ms();
        cudaEventRecord(ev0, stream);
        st = swin_forward(&e, &m, dims, in, out);
        cudaEventRecord(ev1, stream);
        if (cudaEventSynchronize(ev1) != cudaSuccess || cudaEventElapsedTime(&evms, ev0, ev1) != cudaSuccess) evms = -1.0f;
        ms[k] = now_ms() - t0;  /* [0]: the warm-up pass */
        ev[k] = evms;
    }
    cudaEventDestroy(ev0);
    cudaEventDestroy(ev1);
    if (st) {
        fprintf(stderr, "FAIL forward: %s\n", err.msg);
        return 1;
    }
    size_t finite = 0;
    for (size_t i = 0; i < nout; i++) finite += isfinite(out[i]) != 0;
    qsort(ms + 1, (size_t)runs, sizeof(double), cmp_double);
    qsort(ev + 1, (size_t)runs, sizeof(double), cmp_double);
    const size_t wbytes = swin_cuda_weight_bytes(&m, dtype), cbytes = swin_cuda_context_bytes(NULL);
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("{\"device\": \"%s\", \"cc\": \"%d.%d\", \"f\": %d, \"cube\": %d, \"dtype\": \"%s\", \"runs\": %d, "
           "\"warmup_ms\": %.3f, \"min_ms\": %.3f, \"median_ms\": %.3f, \"max_ms\": %.3f, "
           "\"event_min_ms\": %.3f, \"event_median_ms\": %.3f, \"event_max_ms\": %.3f, "
           "\"weights_bytes\": %zu, \"scratch_bytes\": %zu, \"arena_bytes\": %zu, \"plan_bytes\": %zu, "
           "\"total_bytes\": %zu, \"free_ctx\": %zu, \"free_run\": %zu, \"used_bytes\": %zu, "
           "\"context_bytes\": %zu, \"finite_logits\": %s}\n",
           prop.name, prop.major, prop.minor, f, cube, dtype == SWIN_F16 ? "f16" : "f32", runs, ms[0], ms[1],
           ms[1 + runs / 2], ms[runs], ev[1], ev[1 + runs / 2], ev[runs], wbytes, cbytes, plan.arena_bytes, wbytes + cbytes + plan.arena_bytes, total,
           free_ctx, free_run, free_ctx - free_run, total - free_ctx, finite == nout ? "true" : "false");
    bool ok = finite == nout && ev[1] >= 0.0;
    if (ev[1] < 0.0) fprintf(stderr, "FAIL CUDA event timing\n");
#ifndef CT_REAL_GPU
    /* Emulated, cudaMemGetInfo counts exactly what was allocated: it must be the plan. */
    if (free_ctx - free_run != wbytes + cbytes + plan.arena_bytes) {
        fprintf(stderr, "FAIL emulated device bytes %zu != plan %zu\n", free_ctx - free_run,
                wbytes + cbytes + plan.arena_bytes);
        ok = false;
    }
#endif
    swin_cuda_arena_free(be, arena);
    swin_plan_release(&plan);
    swin_cuda_backend_free(be);
    free(ms);
    free(ev);
    free(in);
    free(out);
    free(b.flat);
    return ok ? 0 : 1;
}
