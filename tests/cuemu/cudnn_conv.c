/* cudnnConvolutionForward for fp32 tensors, and fp16 tensors with fp32 compute (inputs
 * converted exactly, fp32 accumulation, the result rounded to fp16 once at the store), with
 * 1 to 3 spatial dimensions, any strides (NCDHW, NDHWC, ...), groups, padding, stride,
 * dilation, and both convolution modes.
 *
 * For each output row (fixed n, group, and all spatial coordinates but the last), the
 * input patches are gathered into the workspace as a matrix col[r][ow], r running over
 * (input channel of the group, filter offsets), then every output channel is a dot
 * product of its filter with that matrix. The workspace size is that matrix, so it is
 * never zero and a too-small workspace is refused as cuDNN refuses it. */
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/cudnn_internal.h"
#include "tests/cuemu/emu_internal.h"
#include "tests/cuemu/half.h"

/* A convolution problem with spatial dims padded to 3 (missing leading ones are 1). */
struct problem {
    int n, c, k, groups;
    int in[3], f[3], out[3], pad[3], stride[3], dil[3];
    long long xs[5], ys[5]; /* element strides: n, c, d, h, w */
    long long ws[5];        /* filter strides: k, c, d, h, w */
    int flip;
};

static int valid(const void *p)
{
    return p && *(const unsigned *)p == CUDNN_EMU_MAGIC;
}

static size_t elem_bytes(cudnnDataType_t t)
{
    return t == CUDNN_DATA_HALF ? 2 : 4;
}

static float load(const void *p, int half, long long i)
{
    return half ? cuemu_half_to_float(((const unsigned short *)p)[i]) : ((const float *)p)[i];
}

static void store(void *p, int half, long long i, float v)
{
    if (half)
        ((unsigned short *)p)[i] = cuemu_float_to_half(v);
    else
        ((float *)p)[i] = v;
}

cudnnStatus_t cuemu_cudnn_types(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                const struct cudnnConvolutionStruct *conv, const struct cudnnTensorStruct *y)
{
    cudnnDataType_t t = x->type;
    if ((t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_HALF) || w->type != t || (y && y->type != t))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return conv->compute == CUDNN_DATA_FLOAT ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

int cuemu_cudnn_algo_emulated(cudnnConvolutionFwdAlgo_t algo)
{
    return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
}

static int out_size(int in, int pad, int f, int dil, int stride)
{
    int span = (f - 1) * dil + 1;
    return in + 2 * pad < span ? 0 : 1 + (in + 2 * pad - span) / stride;
}

/* Fills p from the descriptors; returns CUDNN_STATUS_SUCCESS or the reason. */
static cudnnStatus_t describe(struct problem *p, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                              cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y)
{
    if (!valid(x) || !valid(w) || !valid(conv) || !x->set || !w->set || !conv->set)
        return CUDNN_STATUS_BAD_PARAM;
    int sd = x->nb - 2;
    if (w->nb != x->nb || conv->n != sd)
        return CUDNN_STATUS_BAD_PARAM;
    if (sd > 3)
        return CUDNN_STATUS_NOT_SUPPORTED;
    memset(p, 0, sizeof *p);
    p->n = x->dim[0];
    p->c = x->dim[1];
    p->k = w->dim[0];
    p->groups = conv->groups;
    if (w->dim[1] * p->groups != p->c || p->k % p->groups != 0)
        return CUDNN_STATUS_BAD_PARAM;
    p->flip = conv->mode == CUDNN_CONVOLUTION;
    p->xs[0] = x->stride[0];
    p->xs[1] = x->stride[1];
    for (int i = 0; i < 3; i++) { /* leading missing spatial dims: size 1 */
        int j = i - (3 - sd);
        p->in[i] = j < 0 ? 1 : x->dim[2 + j];
        p->f[i] = j < 0 ? 1 : w->dim[2 + j];
        p->pad[i] = j < 0 ? 0 : conv->pad[j];
        p->stride[i] = j < 0 ? 1 : conv->stride[j];
        p->dil[i] = j < 0 ? 1 : conv->dil[j];
        p->xs[2 + i] = j < 0 ? 0 : x->stride[2 + j];
        p->out[i] = out_size(p->in[i], p->pad[i], p->f[i], p->dil[i], p->stride[i]);
    }
    /* Filter: packed, KCDHW (NCHW format) or KDHWC (NHWC format). */
    int cg = w->dim[1];
    long long fsz = (long long)p->f[0] * p->f[1] * p->f[2];
    int nhwc = w->format == CUDNN_TENSOR_NHWC;
    p->ws[0] = cg * fsz;
    p->ws[1] = nhwc ? 1 : fsz;
    p->ws[4] = nhwc ? cg : 1;
    p->ws[3] = p->ws[4] * p->f[2];
    p->ws[2] = p->ws[3] * p->f[1];
    if (y) {
        if (!valid(y) || !y->set || y->nb != x->nb || y->dim[0] != p->n || y->dim[1] != p->k)
            return CUDNN_STATUS_BAD_PARAM;
        for (int i = 0; i < sd; i++)
            if (y->dim[2 + i] != p->out[3 - sd + i])
                return CUDNN_STATUS_BAD_PARAM;
        p->ys[0] = y->stride[0];
        p->ys[1] = y->stride[1];
        for (int i = 0; i < 3; i++) {
            int j = i - (3 - sd);
            p->ys[2 + i] = j < 0 ? 0 : y->stride[2 + j];
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(cudnnConvolutionDescriptor_t conv,
                                                    cudnnTensorDescriptor_t x,
                                                    cudnnFilterDescriptor_t w, int nb, int out[])
{
    struct problem p;
    cudnnStatus_t st = describe(&p, x, w, conv, NULL);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!out || nb != x->nb)
        return CUDNN_STATUS_BAD_PARAM;
    out[0] = p.n;
    out[1] = p.k;
    for (int i = 0; i < nb - 2; i++)
        out[2 + i] = p.out[3 - (nb - 2) + i];
    return CUDNN_STATUS_SUCCESS;
}

static size_t workspace_bytes(const struct problem *p)
{
    return (size_t)(p->c / p->groups) * p->f[0] * p->f[1] * p->f[2] * p->out[2] * sizeof(float);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                      cudnnFilterDescriptor_t w,
                                                      cudnnConvolutionDescriptor_t conv,
                                                      cudnnTensorDescriptor_t y,
                                                      cudnnConvolutionFwdAlgo_t algo, size_t *size)
{
    struct problem p;
    if (!valid(h) || !size || (unsigned)algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = describe(&p, x, w, conv, y);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cuemu_cudnn_types(x, w, conv, y);
    if (st == CUDNN_STATUS_SUCCESS && !cuemu_cudnn_algo_emulated(algo))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st == CUDNN_STATUS_SUCCESS)
        *size = workspace_bytes(&p);
    return st;
}

/* Bytes spanned by a strided tensor: the largest offset plus one element. */
static size_t span(const struct cudnnTensorStruct *t)
{
    size_t last = 0;
    for (int i = 0; i < t->nb; i++)
        last += (size_t)(t->dim[i] - 1) * (size_t)t->stride[i];
    return (last + 1) * elem_bytes(t->type);
}

/* One output row: n, group g, output (od, oh), all ow. */
static void conv_row(const struct problem *p, const void *x, const void *w, void *y, int half, float *col,
                     float *acc, int n, int g, int od, int oh, float alpha, float beta)
{
    int cg = p->c / p->groups, kg = p->k / p->groups, ow_n = p->out[2];
    int fd = p->f[0], fh = p->f[1], fw = p->f[2];
    float *cp = col;
    for (int c = 0; c < cg; c++)
        for (int a = 0; a < fd; a++)
            for (int b = 0; b < fh; b++)
                for (int e = 0; e < fw; e++, cp += ow_n) {
                    int id = od * p->stride[0] - p->pad[0] + a * p->dil[0];
                    int ih = oh * p->stride[1] - p->pad[1] + b * p->dil[1];
                    long long xb = n * p->xs[0] + (long long)(g * cg + c) * p->xs[1] + id * p->xs[2] +
                                   ih * p->xs[3];
                    int inside = id >= 0 && id < p->in[0] && ih >= 0 && ih < p->in[1];
                    for (int ow = 0; ow < ow_n; ow++) {
                        int iw = ow * p->stride[2] - p->pad[2] + e * p->dil[2];
                        cp[ow] = inside && iw >= 0 && iw < p->in[2] ? load(x, half, xb + iw * p->xs[4]) : 0.0f;
                    }
                }
    for (int kk = 0; kk < kg; kk++) {
        int k = g * kg + kk;
        memset(acc, 0, (size_t)ow_n * sizeof *acc);
        cp = col;
        for (int c = 0; c < cg; c++)
            for (int a = 0; a < fd; a++)
                for (int b = 0; b < fh; b++)
                    for (int e = 0; e < fw; e++, cp += ow_n) {
                        /* CUDNN_CONVOLUTION flips the filter; cross-correlation does not. */
                        int fa = p->flip ? fd - 1 - a : a, fb = p->flip ? fh - 1 - b : b;
                        int fe = p->flip ? fw - 1 - e : e;
                        float wv = load(w, half, k * p->ws[0] + c * p->ws[1] + fa * p->ws[2] + fb * p->ws[3] +
                                                     fe * p->ws[4]);
                        for (int ow = 0; ow < ow_n; ow++)
                            acc[ow] += wv * cp[ow];
                    }
        long long yb = n * p->ys[0] + (long long)k * p->ys[1] + od * p->ys[2] + oh * p->ys[3];
        for (int ow = 0; ow < ow_n; ow++) {
            float v = alpha * acc[ow];
            if (beta != 0.0f) /* beta == 0: y is not read */
                v += beta * load(y, half, yb + ow * p->ys[4]);
            store(y, half, yb + ow * p->ys[4], v);
        }
    }
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd,
                                      const void *x, cudnnFilterDescriptor_t wd, const void *w,
                                      cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo,
                                      void *ws, size_t ws_bytes, const void *beta,
                                      cudnnTensorDescriptor_t yd, void *y)
{
    struct problem p;
    if (!valid(h) || !alpha || !beta || !x || !w || !y || (unsigned)algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
        return CUDNN_STATUS_BAD_PARAM;
    cuemu_stream_work(h->stream, "cudnnConvolutionForward");
    cudnnStatus_t st = describe(&p, xd, wd, conv, yd);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cuemu_cudnn_types(xd, wd, conv, yd);
    if (st == CUDNN_STATUS_SUCCESS && !cuemu_cudnn_algo_emulated(algo))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const int half = xd->type == CUDNN_DATA_HALF;
    size_t need = workspace_bytes(&p);
    if (ws_bytes < need || (need && !ws)) {
        cuemu_report(CUEMU_DET_MEMORY_RANGE, "cudnnConvolutionForward: workspace of %zu bytes at %p, "
                     "%zu needed (cudnnGetConvolutionForwardWorkspaceSize)", ws_bytes, ws, need);
        return CUDNN_STATUS_BAD_PARAM;
    }
    size_t wbytes = (size_t)p.k * p.ws[0] * elem_bytes(wd->type);
    if (!cuemu_mem_is_device_range(x, span(xd)) || !cuemu_mem_is_device_range(w, wbytes) ||
        !cuemu_mem_is_device_range(y, span(yd)) || (need && !cuemu_mem_is_device_range(ws, need))) {
        cuemu_report(CUEMU_DET_MEMORY_RANGE, "cudnnConvolutionForward: x, w, y or the workspace is "
                     "not inside device memory");
        return CUDNN_STATUS_EXECUTION_FAILED;
    }
    float *acc = malloc((size_t)p.out[2] * sizeof *acc + 1);
    if (!acc)
        return CUDNN_STATUS_ALLOC_FAILED;
    float al = *(const float *)alpha, be = *(const float *)beta;
    for (int n = 0; n < p.n; n++)
        for (int g = 0; g < p.groups; g++)
            for (int od = 0; od < p.out[0]; od++)
                for (int oh = 0; oh < p.out[1]; oh++)
                    conv_row(&p, x, w, y, half, ws, acc, n, g, od, oh, al, be);
    free(acc);
    return CUDNN_STATUS_SUCCESS;
}
