/* The cuDNN objects of the emulated subset (cudnn_desc.c, cudnn_conv.c). */
#ifndef CUEMU_CUDNN_INTERNAL_H
#define CUEMU_CUDNN_INTERNAL_H

#include <cudnn.h>

#define CUDNN_EMU_MAGIC 0x43444E4Eu /* "CDNN" */

struct cudnnContext {
    unsigned magic;
    cudaStream_t stream;
};

struct cudnnTensorStruct {
    unsigned magic;
    int set;
    cudnnDataType_t type;
    int nb;
    int dim[CUDNN_DIM_MAX], stride[CUDNN_DIM_MAX]; /* in elements */
};

struct cudnnFilterStruct {
    unsigned magic;
    int set;
    cudnnDataType_t type;
    cudnnTensorFormat_t format; /* NCHW: K, C, spatial packed; NHWC: K, spatial, C */
    int nb;
    int dim[CUDNN_DIM_MAX];     /* K, C, spatial... */
};

struct cudnnConvolutionStruct {
    unsigned magic;
    int set;
    int n; /* spatial dimensions */
    int pad[CUDNN_DIM_MAX], stride[CUDNN_DIM_MAX], dil[CUDNN_DIM_MAX];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
    int groups;
};

/* The element types the emulated convolution reads and writes: x, w and y all FLOAT, or
 * all HALF, with FLOAT compute (cudnnSetConvolutionNdDescriptor's computeType), as
 * cuDNN's FLOAT_CONFIG and PSEUDO_HALF_CONFIG. Others: CUDNN_STATUS_NOT_SUPPORTED. */
cudnnStatus_t cuemu_cudnn_types(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                                const struct cudnnConvolutionStruct *conv, const struct cudnnTensorStruct *y);

/* The forward algorithms the emulator runs (the implicit-GEMM pair and GEMM; all of them
 * need the im2col workspace of cudnnGetConvolutionForwardWorkspaceSize). The others
 * (DIRECT, FFT, WINOGRAD...) are CUDNN_STATUS_NOT_SUPPORTED, as cuDNN answers for shapes
 * those algorithms do not cover. */
int cuemu_cudnn_algo_emulated(cudnnConvolutionFwdAlgo_t algo);

#endif
