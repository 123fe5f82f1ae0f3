/* Forward-algorithm selection: cudnnGetConvolutionForwardAlgorithmMaxCount, the heuristic
 * cudnnGetConvolutionForwardAlgorithm_v7 and the measuring
 * cudnnFindConvolutionForwardAlgorithmEx, with cuDNN's result contract: one
 * cudnnConvolutionFwdAlgoPerf_t per algorithm, those that can run (status SUCCESS) first,
 * then the rest with their reason (NOT_SUPPORTED; ALLOC_FAILED in Find when the workspace
 * given is smaller than the algorithm needs).
 *
 * Emulated times are the host wall clock of the emulated run (Find) or -1 (heuristic):
 * they order the list but say nothing about a GPU. Find runs each algorithm through
 * cudnnConvolutionForward with alpha 1 and beta 0, so y holds a valid result afterwards
 * (cuDNN leaves y unspecified; a caller must not rely on either). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/cuemu/cudnn_internal.h"
#include "tests/cuemu/emu_internal.h"

static int valid(const void *p)
{
    return p && *(const unsigned *)p == CUDNN_EMU_MAGIC;
}

/* The emulated algorithms in the heuristic's order of preference. */
static const cudnnConvolutionFwdAlgo_t preference[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM,                  CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
    CUDNN_CONVOLUTION_FWD_ALGO_FFT,                   CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,
    CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,              CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
};

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t h, int *count)
{
    if (!valid(h) || !count)
        return CUDNN_STATUS_BAD_PARAM;
    *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}

/* The common checks of both queries; fills *ws_need with the emulated workspace. */
static cudnnStatus_t query_checks(cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                  cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested,
                                  int *returned, cudnnConvolutionFwdAlgoPerf_t *perf, size_t *ws_need)
{
    if (!valid(h) || requested < 1 || !returned || !perf)
        return CUDNN_STATUS_BAD_PARAM;
    /* Shapes, descriptors and types: the workspace query of the first emulated algorithm
     * checks them all (BAD_PARAM for a malformed problem, NOT_SUPPORTED for the types). */
    return cudnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y, preference[0], ws_need);
}

static cudnnConvolutionFwdAlgoPerf_t entry(cudnnConvolutionFwdAlgo_t algo, cudnnStatus_t st, float ms,
                                           size_t memory, cudnnMathType_t math)
{
    cudnnConvolutionFwdAlgoPerf_t e;
    memset(&e, 0, sizeof e);
    e.algo = algo;
    e.status = st;
    e.time = ms;
    e.memory = memory;
    e.determinism = CUDNN_DETERMINISTIC;
    e.mathType = math;
    return e;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t conv,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    size_t need = 0;
    cudnnStatus_t st = query_checks(h, x, w, conv, y, requested, returned, perf, &need);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    int n = 0;
    for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && n < requested; i++) {
        int ok = cuemu_cudnn_algo_emulated(preference[i]);
        perf[n++] = entry(preference[i], ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED, -1.0f,
                          ok ? need : 0, conv->math);
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Successful entries first, by time; then the others in the order they were tried. */
static int by_status_then_time(const void *a, const void *b)
{
    const cudnnConvolutionFwdAlgoPerf_t *p = a, *q = b;
    int pf = p->status != CUDNN_STATUS_SUCCESS, qf = q->status != CUDNN_STATUS_SUCCESS;
    if (pf != qf)
        return pf - qf;
    if (pf)
        return (int)p->algo - (int)q->algo;
    return (p->time > q->time) - (p->time < q->time);
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h, const cudnnTensorDescriptor_t xd,
                                                     const void *x, const cudnnFilterDescriptor_t wd,
                                                     const void *w, const cudnnConvolutionDescriptor_t conv,
                                                     const cudnnTensorDescriptor_t yd, void *y,
                                                     const int requested, int *returned,
                                                     cudnnConvolutionFwdAlgoPerf_t *perf, void *ws,
                                                     size_t ws_bytes)
{
    size_t need = 0;
    cudnnStatus_t st = query_checks(h, xd, wd, conv, yd, requested, returned, perf, &need);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!x || !w || !y || (ws_bytes && !ws))
        return CUDNN_STATUS_BAD_PARAM;
    cudnnConvolutionFwdAlgoPerf_t all[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; i++) {
        cudnnConvolutionFwdAlgo_t algo = (cudnnConvolutionFwdAlgo_t)i;
        if (!cuemu_cudnn_algo_emulated(algo)) {
            all[i] = entry(algo, CUDNN_STATUS_NOT_SUPPORTED, -1.0f, 0, conv->math);
            continue;
        }
        if (ws_bytes < need) { /* not run: cuDNN reports the algorithm without a time */
            all[i] = entry(algo, CUDNN_STATUS_ALLOC_FAILED, -1.0f, need, conv->math);
            continue;
        }
        double t0 = now_ms();
        cudnnStatus_t r = cudnnConvolutionForward(h, &one, xd, x, wd, w, conv, algo, ws, ws_bytes, &zero, yd, y);
        if (r == CUDNN_STATUS_EXECUTION_FAILED) /* x, w, y or the workspace outside device memory */
            return r;
        all[i] = entry(algo, r, r == CUDNN_STATUS_SUCCESS ? (float)(now_ms() - t0) : -1.0f, need, conv->math);
    }
    qsort(all, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, sizeof all[0], by_status_then_time);
    int n = requested < CUDNN_CONVOLUTION_FWD_ALGO_COUNT ? requested : CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    memcpy(perf, all, (size_t)n * sizeof *perf);
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}
