/* The cuDNN subset against a direct convolution written from the definition
 *   y[n,k,o] = alpha * sum_{c,f} x[n, g*C/G + c, o*stride - pad + f*dil] * w[k, c, f'] + beta * y
 * (f' = f for cross-correlation, flipped for convolution), on NCDHW and NDHWC layouts
 * with awkward sizes, padding, stride, dilation and groups; plus the workspace and
 * descriptor checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"

struct conv_case {
    const char *what;
    int n, c, k, groups;
    int in[3], f[3], pad[3], stride[3], dil[3];
    int channels_last, flip;
    float alpha, beta;
};

static int osz(int in, int pad, int f, int dil, int stride)
{
    return (in + 2 * pad - (f - 1) * dil - 1) / stride + 1;
}

/* Element offset of (n, c, d, h, w) in a packed tensor of dims (N, C, D, H, W). */
static size_t at(int cl, const int *dims, int n, int c, int d, int h, int w)
{
    int C = dims[1], D = dims[2], H = dims[3], W = dims[4];
    return cl ? ((((size_t)n * D + d) * H + h) * W + w) * C + c
              : ((((size_t)n * C + c) * D + d) * H + h) * W + w;
}

static void reference(const struct conv_case *t, const float *x, const float *w, float *y, const int *xd,
                      const int *yd)
{
    int cg = t->c / t->groups, kg = t->k / t->groups;
    for (int n = 0; n < t->n; n++)
        for (int k = 0; k < t->k; k++)
            for (int od = 0; od < yd[2]; od++)
                for (int oh = 0; oh < yd[3]; oh++)
                    for (int ow = 0; ow < yd[4]; ow++) {
                        double s = 0.0;
                        int g = k / kg;
                        for (int c = 0; c < cg; c++)
                            for (int a = 0; a < t->f[0]; a++)
                                for (int b = 0; b < t->f[1]; b++)
                                    for (int e = 0; e < t->f[2]; e++) {
                                        int id = od * t->stride[0] - t->pad[0] + a * t->dil[0];
                                        int ih = oh * t->stride[1] - t->pad[1] + b * t->dil[1];
                                        int iw = ow * t->stride[2] - t->pad[2] + e * t->dil[2];
                                        if (id < 0 || id >= t->in[0] || ih < 0 || ih >= t->in[1] || iw < 0 || iw >= t->in[2])
                                            continue;
                                        int fa = t->flip ? t->f[0] - 1 - a : a, fb = t->flip ? t->f[1] - 1 - b : b;
                                        int fe = t->flip ? t->f[2] - 1 - e : e;
                                        int wd[5] = {t->k, cg, t->f[0], t->f[1], t->f[2]};
                                        s += (double)x[at(t->channels_last, xd, n, g * cg + c, id, ih, iw)] *
                                             w[at(t->channels_last, wd, k, c, fa, fb, fe)];
                                    }
                        size_t yi = at(t->channels_last, yd, n, k, od, oh, ow);
                        y[yi] = (float)(t->alpha * s + (t->beta != 0.0f ? t->beta * (double)y[yi] : 0.0));
                    }
}

static bool run_case(cudnnHandle_t h, test_rng *rng, const struct conv_case *t)
{
    int xd[5] = {t->n, t->c, t->in[0], t->in[1], t->in[2]}, wd[5] = {t->k, t->c / t->groups, t->f[0], t->f[1], t->f[2]};
    int yd[5] = {t->n, t->k, 0, 0, 0};
    for (int i = 0; i < 3; i++)
        yd[2 + i] = osz(t->in[i], t->pad[i], t->f[i], t->dil[i], t->stride[i]);
    size_t nx = (size_t)xd[0] * xd[1] * xd[2] * xd[3] * xd[4], nw = (size_t)wd[0] * wd[1] * wd[2] * wd[3] * wd[4];
    size_t ny = (size_t)yd[0] * yd[1] * yd[2] * yd[3] * yd[4];
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4), *ref = malloc(ny * 4);
    test_fill_uniform(rng, x, nx, -1.0f, 1.0f);
    test_fill_uniform(rng, w, nw, -1.0f, 1.0f);
    test_fill_uniform(rng, ref, ny, -1.0f, 1.0f);
    float *dx = emu_upload(x, nx * 4), *dw = emu_upload(w, nw * 4), *dy = emu_alloc(ny * 4);
    if (t->beta != 0.0f) /* with beta == 0, y keeps cudaMalloc's NaN poison: it must not be read */
        cudaMemcpy(dy, ref, ny * 4, cudaMemcpyHostToDevice);
    reference(t, x, w, ref, xd, yd);

    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t cdesc;
    cudnnTensorFormat_t fmt = t->channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    bool ok = true;
    ok &= check_true("descriptors", cudnnCreateTensorDescriptor(&xdesc) == CUDNN_STATUS_SUCCESS &&
                     cudnnCreateTensorDescriptor(&ydesc) == CUDNN_STATUS_SUCCESS &&
                     cudnnCreateFilterDescriptor(&wdesc) == CUDNN_STATUS_SUCCESS &&
                     cudnnCreateConvolutionDescriptor(&cdesc) == CUDNN_STATUS_SUCCESS);
    ok &= check_true("set x", cudnnSetTensorNdDescriptorEx(xdesc, fmt, CUDNN_DATA_FLOAT, 5, xd) == CUDNN_STATUS_SUCCESS);
    ok &= check_true("set w", cudnnSetFilterNdDescriptor(wdesc, CUDNN_DATA_FLOAT, fmt, 5, wd) == CUDNN_STATUS_SUCCESS);
    ok &= check_true("set conv", cudnnSetConvolutionNdDescriptor(cdesc, 3, t->pad, t->stride, t->dil,
                     t->flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS);
    ok &= check_true("groups", cudnnSetConvolutionGroupCount(cdesc, t->groups) == CUDNN_STATUS_SUCCESS);
    int od[5];
    ok &= check_true("output dim", cudnnGetConvolutionNdForwardOutputDim(cdesc, xdesc, wdesc, 5, od) == CUDNN_STATUS_SUCCESS &&
                     !memcmp(od, yd, sizeof od));
    ok &= check_true("set y", cudnnSetTensorNdDescriptorEx(ydesc, fmt, CUDNN_DATA_FLOAT, 5, yd) == CUDNN_STATUS_SUCCESS);
    size_t wsb = 0;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    ok &= check_true("workspace size", cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, algo, &wsb) == CUDNN_STATUS_SUCCESS && wsb > 0);
    void *ws = emu_alloc(wsb);
    ok &= check_true("too small a workspace is refused",
                     cudnnConvolutionForward(h, &t->alpha, xdesc, dx, wdesc, dw, cdesc, algo, ws, wsb - 4,
                                             &t->beta, ydesc, dy) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("no workspace is refused",
                     cudnnConvolutionForward(h, &t->alpha, xdesc, dx, wdesc, dw, cdesc, algo, NULL, 0,
                                             &t->beta, ydesc, dy) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("forward", cudnnConvolutionForward(h, &t->alpha, xdesc, dx, wdesc, dw, cdesc, algo, ws, wsb,
                                                        &t->beta, ydesc, dy) == CUDNN_STATUS_SUCCESS);
    emu_download(y, dy, ny * 4);
    ok &= check_close(t->what, y, ref, ny, 1e-5, 1e-4);
    cudnnDestroyTensorDescriptor(xdesc);
    cudnnDestroyTensorDescriptor(ydesc);
    cudnnDestroyFilterDescriptor(wdesc);
    cudnnDestroyConvolutionDescriptor(cdesc);
    emu_free(ws), emu_free(dx), emu_free(dw), emu_free(dy);
    free(x), free(w), free(y), free(ref);
    return ok;
}

/* Descriptor mistakes the library rejects. */
static bool test_errors(cudnnHandle_t h)
{
    bool ok = true;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t c;
    cudnnCreateTensorDescriptor(&x);
    cudnnCreateTensorDescriptor(&y);
    cudnnCreateFilterDescriptor(&w);
    cudnnCreateConvolutionDescriptor(&c);
    int xd[5] = {1, 4, 5, 5, 5}, wd[5] = {3, 4, 3, 3, 3}, bad_yd[5] = {1, 3, 5, 5, 4}, zero[5] = {1, 0, 5, 5, 5};
    int pad[3] = {1, 1, 1}, one[3] = {1, 1, 1}, neg[3] = {1, -1, 1};
    ok &= check_true("zero dim refused", cudnnSetTensorNdDescriptorEx(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, zero) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("negative pad refused", cudnnSetConvolutionNdDescriptor(c, 3, neg, one, one, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) == CUDNN_STATUS_BAD_PARAM);
    cudnnSetTensorNdDescriptorEx(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, xd);
    cudnnSetFilterNdDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, wd);
    cudnnSetConvolutionNdDescriptor(c, 3, pad, one, one, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetTensorNdDescriptorEx(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, bad_yd);
    size_t wsb;
    ok &= check_true("wrong output dims refused",
                     cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &wsb) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("bad algo refused",
                     cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, (cudnnConvolutionFwdAlgo_t)99, &wsb) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("groups must divide channels", cudnnSetConvolutionGroupCount(c, 3) == CUDNN_STATUS_SUCCESS &&
                     cudnnGetConvolutionNdForwardOutputDim(c, x, w, 5, bad_yd) == CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(c);
    return ok;
}

static float round_half(float v)
{
    return (float)(_Float16)v;
}

/* fp16 tensors with fp32 compute (PSEUDO_HALF_CONFIG), NDHWC as bench_cuda_ops calls it:
 * against the float64 reference on the half-rounded inputs, the output rounded once. */
static bool test_half(cudnnHandle_t h, test_rng *rng)
{
    const struct conv_case t = {"fp16 3x3x3 pad 1, NDHWC, beta 0.5", 1, 12, 10, 1, {5, 6, 4}, {3, 3, 3}, {1, 1, 1},
                                {1, 1, 1}, {1, 1, 1}, 1, 0, 1.0f, 0.5f};
    int xd[5] = {1, 12, 5, 6, 4}, wd[5] = {10, 12, 3, 3, 3}, yd[5] = {1, 10, 5, 6, 4};
    size_t nx = 12 * 120, nw = 10 * 12 * 27, ny = 10 * 120;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *ref = malloc(ny * 4), *got = malloc(ny * 4);
    _Float16 *hx = malloc(nx * 2), *hw = malloc(nw * 2), *hy = malloc(ny * 2);
    test_fill_uniform(rng, x, nx, -1.0f, 1.0f);
    test_fill_uniform(rng, w, nw, -1.0f, 1.0f);
    test_fill_uniform(rng, ref, ny, -1.0f, 1.0f);
    for (size_t i = 0; i < nx; i++) hx[i] = (_Float16)x[i], x[i] = round_half(x[i]);
    for (size_t i = 0; i < nw; i++) hw[i] = (_Float16)w[i], w[i] = round_half(w[i]);
    for (size_t i = 0; i < ny; i++) hy[i] = (_Float16)ref[i], ref[i] = round_half(ref[i]);
    void *dx = emu_upload(hx, nx * 2), *dw = emu_upload(hw, nw * 2), *dy = emu_upload(hy, ny * 2);
    reference(&t, x, w, ref, xd, yd);
    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t cdesc;
    cudnnCreateTensorDescriptor(&xdesc), cudnnCreateTensorDescriptor(&ydesc);
    cudnnCreateFilterDescriptor(&wdesc), cudnnCreateConvolutionDescriptor(&cdesc);
    cudnnSetTensorNdDescriptorEx(xdesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 5, xd);
    cudnnSetTensorNdDescriptorEx(ydesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 5, yd);
    cudnnSetFilterNdDescriptor(wdesc, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 5, wd);
    cudnnSetConvolutionNdDescriptor(cdesc, 3, t.pad, t.stride, t.dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(cdesc, CUDNN_TENSOR_OP_MATH);
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t wsb = 0;
    bool ok = check_true("fp16 workspace size", cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, algo, &wsb) == CUDNN_STATUS_SUCCESS);
    void *ws = emu_alloc(wsb);
    ok &= check_true("fp16 forward", cudnnConvolutionForward(h, &t.alpha, xdesc, dx, wdesc, dw, cdesc, algo, ws, wsb,
                                                             &t.beta, ydesc, dy) == CUDNN_STATUS_SUCCESS);
    emu_download(hy, dy, ny * 2);
    for (size_t i = 0; i < ny; i++) got[i] = (float)hy[i];
    ok &= check_close(t.what, got, ref, ny, 2e-3, 1e-3);
    /* Half compute, and tensors of different types, are outside the emulated subset. */
    cudnnSetConvolutionNdDescriptor(cdesc, 3, t.pad, t.stride, t.dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_HALF);
    ok &= check_true("fp16 compute: not supported", cudnnConvolutionForward(h, &t.alpha, xdesc, dx, wdesc, dw, cdesc, algo, ws, wsb,
                                                                           &t.beta, ydesc, dy) == CUDNN_STATUS_NOT_SUPPORTED);
    cudnnSetConvolutionNdDescriptor(cdesc, 3, t.pad, t.stride, t.dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetFilterNdDescriptor(wdesc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, wd);
    ok &= check_true("mixed types: not supported", cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, algo, &wsb) == CUDNN_STATUS_NOT_SUPPORTED);
    cudnnDestroyTensorDescriptor(xdesc), cudnnDestroyTensorDescriptor(ydesc);
    cudnnDestroyFilterDescriptor(wdesc), cudnnDestroyConvolutionDescriptor(cdesc);
    emu_free(ws), emu_free(dx), emu_free(dw), emu_free(dy);
    free(x), free(w), free(ref), free(got), free(hx), free(hw), free(hy);
    return ok;
}

static int count_status(const cudnnConvolutionFwdAlgoPerf_t *p, int n, cudnnStatus_t st)
{
    int c = 0;
    for (int i = 0; i < n; i++) c += p[i].status == st;
    return c;
}

/* Algorithm selection: the heuristic list, FindEx's measured list (successful entries
 * first, y then holding the result), and its refusals. */
static bool test_find(cudnnHandle_t h, test_rng *rng)
{
    const struct conv_case t = {"FindEx result", 1, 7, 6, 1, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0, 1.0f, 0.0f};
    int xd[5] = {1, 7, 4, 5, 6}, wd[5] = {6, 7, 3, 3, 3}, yd[5] = {1, 6, 4, 5, 6};
    size_t nx = 7 * 120, nw = 6 * 7 * 27, ny = 6 * 120;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *ref = malloc(ny * 4), *got = malloc(ny * 4), host_y[4];
    test_fill_uniform(rng, x, nx, -1.0f, 1.0f);
    test_fill_uniform(rng, w, nw, -1.0f, 1.0f);
    reference(&t, x, w, ref, xd, yd);
    float *dx = emu_upload(x, nx * 4), *dw = emu_upload(w, nw * 4), *dy = emu_alloc(ny * 4);
    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t cdesc;
    cudnnCreateTensorDescriptor(&xdesc), cudnnCreateTensorDescriptor(&ydesc);
    cudnnCreateFilterDescriptor(&wdesc), cudnnCreateConvolutionDescriptor(&cdesc);
    cudnnSetTensorNdDescriptorEx(xdesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 5, xd);
    cudnnSetTensorNdDescriptorEx(ydesc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 5, yd);
    cudnnSetFilterNdDescriptor(wdesc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, wd);
    cudnnSetConvolutionNdDescriptor(cdesc, 3, t.pad, t.stride, t.dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(cdesc, CUDNN_FMA_MATH);
    int max = 0, n = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    bool ok = check_true("max count", cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max) == CUDNN_STATUS_SUCCESS &&
                                          max == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    ok &= check_true("get_v7", cudnnGetConvolutionForwardAlgorithm_v7(h, xdesc, wdesc, cdesc, ydesc, max, &n, perf) == CUDNN_STATUS_SUCCESS &&
                     n == max && perf[0].status == CUDNN_STATUS_SUCCESS && count_status(perf, n, CUDNN_STATUS_SUCCESS) == 3 &&
                     perf[0].mathType == CUDNN_FMA_MATH);
    size_t wsb = 0;
    cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, perf[0].algo, &wsb);
    ok &= check_true("get_v7 memory = workspace size", perf[0].memory == wsb && wsb > 0);
    ok &= check_true("unsupported algorithm refused", cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc,
                     CUDNN_CONVOLUTION_FWD_ALGO_FFT, &wsb) == CUDNN_STATUS_NOT_SUPPORTED);
    cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, wdesc, cdesc, ydesc, perf[0].algo, &wsb);
    void *ws = emu_alloc(wsb);
    ok &= check_true("FindEx", cudnnFindConvolutionForwardAlgorithmEx(h, xdesc, dx, wdesc, dw, cdesc, ydesc, dy, max, &n, perf,
                                                                       ws, wsb) == CUDNN_STATUS_SUCCESS &&
                     n == max && count_status(perf, 3, CUDNN_STATUS_SUCCESS) == 3 &&
                     count_status(perf + 3, n - 3, CUDNN_STATUS_NOT_SUPPORTED) == n - 3 && perf[0].time <= perf[1].time);
    emu_download(got, dy, ny * 4);
    ok &= check_close(t.what, got, ref, ny, 1e-5, 1e-4);
    cuemu_clear_detector();
    ok &= check_true("FindEx, workspace too small: nothing runs", cudnnFindConvolutionForwardAlgorithmEx(h, xdesc, dx, wdesc, dw, cdesc,
                     ydesc, dy, 2, &n, perf, ws, wsb - 4) == CUDNN_STATUS_SUCCESS && n == 2 &&
                     perf[0].status == CUDNN_STATUS_ALLOC_FAILED && perf[0].memory == wsb && cuemu_detector_hits() == 0);
    ok &= check_true("FindEx, no results asked", cudnnFindConvolutionForwardAlgorithmEx(h, xdesc, dx, wdesc, dw, cdesc, ydesc, dy, 0,
                     &n, perf, ws, wsb) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("FindEx, NULL workspace of nonzero size", cudnnFindConvolutionForwardAlgorithmEx(h, xdesc, dx, wdesc, dw, cdesc,
                     ydesc, dy, max, &n, perf, NULL, wsb) == CUDNN_STATUS_BAD_PARAM);
    ok &= check_true("FindEx, y in host memory", cudnnFindConvolutionForwardAlgorithmEx(h, xdesc, dx, wdesc, dw, cdesc, ydesc, host_y,
                     max, &n, perf, ws, wsb) == CUDNN_STATUS_EXECUTION_FAILED && cuemu_detector_hits() == 1);
    cuemu_clear_detector();
    const float one = 1.0f, zero = 0.0f;
    ok &= check_true("forward with an algorithm not emulated", cudnnConvolutionForward(h, &one, xdesc, dx, wdesc, dw, cdesc,
                     CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, ws, wsb, &zero, ydesc, dy) == CUDNN_STATUS_NOT_SUPPORTED);
    cudnnDestroyTensorDescriptor(xdesc), cudnnDestroyTensorDescriptor(ydesc);
    cudnnDestroyFilterDescriptor(wdesc), cudnnDestroyConvolutionDescriptor(cdesc);
    emu_free(ws), emu_free(dx), emu_free(dw), emu_free(dy);
    free(x), free(w), free(ref), free(got);
    return ok;
}

int main(void)
{
    test_rng rng = {0xD00D};
    cudnnHandle_t h;
    bool ok = check_true("create", cudnnCreate(&h) == CUDNN_STATUS_SUCCESS);
    const struct conv_case cases[] = {
        {"3x3x3 pad 1, NCDHW", 2, 5, 7, 1, {6, 5, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0, 0, 1.0f, 0.0f},
        {"3x3x3 pad 1, NDHWC", 1, 3, 4, 1, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, 0, 1.0f, 0.0f},
        {"2x2x2 stride 2, odd input", 1, 6, 3, 1, {7, 5, 9}, {2, 2, 2}, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}, 0, 0, 1.0f, 0.0f},
        {"1x1x1, alpha/beta", 2, 9, 5, 1, {3, 4, 5}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0, 0, 0.5f, 1.5f},
        {"dilated, convolution mode", 1, 2, 3, 1, {9, 8, 7}, {3, 2, 3}, {2, 1, 0}, {1, 2, 1}, {2, 1, 2}, 0, 1, 1.0f, 0.0f},
        {"groups, NDHWC", 1, 6, 4, 2, {4, 5, 3}, {3, 1, 3}, {1, 0, 1}, {1, 1, 2}, {1, 1, 1}, 1, 0, -1.0f, 0.25f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ok &= run_case(h, &rng, &cases[i]);
    ok &= test_errors(h);
    ok &= test_half(h, &rng);
    ok &= test_find(h, &rng);
    ok &= check_true("destroy", cudnnDestroy(h) == CUDNN_STATUS_SUCCESS);
    ok &= check_true("no device memory left", cuemu_mem_live_allocations() == 0);
    return test_exit(ok);
}
