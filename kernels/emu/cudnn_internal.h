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

#endif
