/* cuDNN handle and the tensor, filter and convolution descriptors (legacy Nd API). */
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/cudnn_internal.h"
#include "tests/cuemu/emu_internal.h"

#define CREATE(type, ptr)                                                                       \
    do {                                                                                        \
        if (!(ptr))                                                                             \
            return CUDNN_STATUS_BAD_PARAM;                                                      \
        *(ptr) = calloc(1, sizeof(type));                                                       \
        if (!*(ptr))                                                                            \
            return CUDNN_STATUS_ALLOC_FAILED;                                                   \
        (*(ptr))->magic = CUDNN_EMU_MAGIC;                                                      \
    } while (0)

#define DESTROY(p)                                                                              \
    do {                                                                                        \
        if ((p) && (p)->magic != CUDNN_EMU_MAGIC)                                               \
            return CUDNN_STATUS_BAD_PARAM;                                                      \
        if (p)                                                                                  \
            (p)->magic = 0;                                                                     \
        free(p);                                                                                \
        return CUDNN_STATUS_SUCCESS;                                                            \
    } while (0)

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) { CREATE(struct cudnnContext, h); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) { DESTROY(h); }

cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    if (!h || h->magic != CUDNN_EMU_MAGIC)
        return CUDNN_STATUS_BAD_PARAM;
    if (!cuemu_stream_valid(s))
        return CUDNN_STATUS_BAD_PARAM;
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN (not emulated)";
    }
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) { CREATE(struct cudnnTensorStruct, d); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { DESTROY(d); }
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) { CREATE(struct cudnnFilterStruct, d); return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { DESTROY(d); }
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
    CREATE(struct cudnnConvolutionStruct, d);
    (*d)->groups = 1;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { DESTROY(d); }

static int dims_ok(int nb, const int *dim)
{
    if (nb < 3 || nb > CUDNN_DIM_MAX || !dim)
        return 0;
    for (int i = 0; i < nb; i++)
        if (dim[i] <= 0)
            return 0;
    return 1;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type, int nb,
                                         const int dim[], const int stride[])
{
    if (!d || d->magic != CUDNN_EMU_MAGIC || !dims_ok(nb, dim) || !stride)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nb; i++)
        if (stride[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    d->type = type;
    d->nb = nb;
    memcpy(d->dim, dim, (size_t)nb * sizeof *dim);
    memcpy(d->stride, stride, (size_t)nb * sizeof *stride);
    d->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* Packed strides for dims (N, C, spatial...): NCHW is row-major; NHWC puts C innermost. */
cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                           cudnnDataType_t type, int nb, const int dim[])
{
    if (!dims_ok(nb, dim) || (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC))
        return CUDNN_STATUS_BAD_PARAM;
    int stride[CUDNN_DIM_MAX], s = 1;
    if (format == CUDNN_TENSOR_NCHW) {
        for (int i = nb - 1; i >= 0; i--) {
            stride[i] = s;
            s *= dim[i];
        }
    } else {
        stride[1] = 1;
        s = dim[1];
        for (int i = nb - 1; i >= 2; i--) {
            stride[i] = s;
            s *= dim[i];
        }
        stride[0] = s;
    }
    return cudnnSetTensorNdDescriptor(d, type, nb, dim, stride);
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int nb, const int dim[])
{
    if (!d || d->magic != CUDNN_EMU_MAGIC || !dims_ok(nb, dim) ||
        (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC))
        return CUDNN_STATUS_BAD_PARAM;
    d->type = type;
    d->format = format;
    d->nb = nb;
    memcpy(d->dim, dim, (size_t)nb * sizeof *dim);
    d->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n, const int pad[],
                                              const int stride[], const int dil[],
                                              cudnnConvolutionMode_t mode, cudnnDataType_t compute)
{
    if (!d || d->magic != CUDNN_EMU_MAGIC || n < 1 || n > CUDNN_DIM_MAX - 2 || !pad || !stride || !dil)
        return CUDNN_STATUS_BAD_PARAM;
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < n; i++)
        if (pad[i] < 0 || stride[i] <= 0 || dil[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    d->n = n;
    memcpy(d->pad, pad, (size_t)n * sizeof *pad);
    memcpy(d->stride, stride, (size_t)n * sizeof *stride);
    memcpy(d->dil, dil, (size_t)n * sizeof *dil);
    d->mode = mode;
    d->compute = compute;
    d->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math)
{
    if (!d || d->magic != CUDNN_EMU_MAGIC)
        return CUDNN_STATUS_BAD_PARAM;
    d->math = math;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups)
{
    if (!d || d->magic != CUDNN_EMU_MAGIC || groups < 1)
        return CUDNN_STATUS_BAD_PARAM;
    d->groups = groups;
    return CUDNN_STATUS_SUCCESS;
}
