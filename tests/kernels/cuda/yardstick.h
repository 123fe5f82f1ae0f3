/* The yardstick: cuDNN's convolution and cuBLAS's GEMM on the shapes swinrun's CUDA kernels
 * run, in swinrun's layouts, so that bench_cuda_ops can time the vendor libraries beside
 * the hand-written kernels (and check they compute the same thing).
 *
 *   struct yard y;
 *   yard_init(&y, stream, msg, sizeof msg);                 // cuDNN + cuBLAS handles on `stream`
 *   struct yard_conv c;
 *   yard_conv_setup(&y, &c, half, D, H, W, cin, cout, k, stride, pad, w_host, x_dev, y_dev, msg, n);
 *   yard_conv_run(&y, &c);                                   // y_dev = conv(x_dev), async on stream
 *   yard_conv_free(&c);
 *   yard_gemm(&y, half, M, N, K, X, Wt, Y);                  // Y = X . Wt, async on stream
 *   yard_free(&y);
 *
 * Layouts, as swinrun's ops take them (N = 1):
 *   conv x  (D, H, W, cin) channels-last, dense; y (OD, OH, OW, cout) dense: cuDNN NDHWC
 *        (cudnnSetTensorNdDescriptorEx with CUDNN_TENSOR_NHWC);
 *   conv w  host float32 (kz, ky, kx, cin, cout) as swinrun's conv3d takes it; uploaded
 *        transposed to cuDNN's NHWC filter (cout, kz, ky, kx, cin), in half when `half`;
 *   gemm    row-major X (M x K), Wt (K x N), Y (M x N), the Swin linear layers' token-major
 *        layout: column-major cuBLAS computes Y^T = Wt^T X^T with no transposes.
 * Types: float32 data with float32 arithmetic (cuDNN CUDNN_FMA_MATH, cuBLAS
 * CUBLAS_COMPUTE_32F: no TF32, the same arithmetic as swinrun's float32 kernels), or half
 * data with float32 accumulation on tensor cores (cuDNN PSEUDO_HALF_CONFIG with
 * CUDNN_TENSOR_OP_MATH, cuBLAS CUDA_R_16F with CUBLAS_COMPUTE_32F and
 * CUBLAS_GEMM_DEFAULT_TENSOR_OP), as swinrun's half mode.
 * The convolution algorithm is cuDNN's fastest by cudnnFindConvolutionForwardAlgorithmEx
 * (every algorithm run once on the real buffers), with a workspace of at most
 * YARD_WS_LIMIT bytes. Every function returns 0, or nonzero with the library's error in
 * msg. Built with YARD_NO_CUDNN (a GPU machine without cuDNN), the cuBLAS half stands
 * alone and yard_conv_setup fails with that reason. */
#ifndef TESTS_CUDA_YARDSTICK_H
#define TESTS_CUDA_YARDSTICK_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stddef.h>
#ifndef YARD_NO_CUDNN
#include <cudnn.h>
#endif

#define YARD_WS_LIMIT ((size_t)1 << 30)

struct yard {
#ifndef YARD_NO_CUDNN
    cudnnHandle_t dnn;
#endif
    cublasHandle_t blas;
    cudaStream_t stream;
    char *msg;
    size_t msg_len;
};

struct yard_conv {
#ifndef YARD_NO_CUDNN
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
#endif
    int algo;                     /* a cudnnConvolutionFwdAlgo_t */
    const void *x_dev;
    void *y_dev, *w_dev, *ws;
    size_t ws_bytes;
    int algos_tried; /* entries cudnnFindConvolutionForwardAlgorithmEx returned */
};

int yard_init(struct yard *y, cudaStream_t stream, char *msg, size_t msg_len);
void yard_free(struct yard *y);

/* Output sides: (in + 2 pad - k) / stride + 1. */
int yard_conv_setup(struct yard *y, struct yard_conv *c, int half, int D, int H, int W, int cin, int cout, int k,
                    int stride, int pad, const float *w_host, const void *x_dev, void *y_dev);
int yard_conv_run(struct yard *y, struct yard_conv *c);
void yard_conv_free(struct yard_conv *c);
/* The algorithm's cuDNN enum name without the CUDNN_CONVOLUTION_FWD_ALGO_ prefix. */
const char *yard_algo_name(int algo);
/* "cuDNN <runtime version>, cuBLAS <header version>", or what is missing. */
void yard_describe(char *buf, size_t len);

int yard_gemm(struct yard *y, int half, int M, int N, int K, const void *X, const void *Wt, void *Y);

#endif
