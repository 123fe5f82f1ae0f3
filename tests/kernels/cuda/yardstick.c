/* cuDNN and cuBLAS as the reference column of bench_cuda_ops (yardstick.h). */
#include "tests/kernels/cuda/yardstick.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct yard *y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (y->msg && y->msg_len) vsnprintf(y->msg, y->msg_len, fmt, ap);
    va_end(ap);
    return 1;
}

#ifndef YARD_NO_CUDNN
#define DNN(call)                                                                                                \
    do {                                                                                                         \
        cudnnStatus_t s_ = (call);                                                                               \
        if (s_ != CUDNN_STATUS_SUCCESS) return fail(y, "%s: %s", #call, cudnnGetErrorString(s_));               \
    } while (0)
#endif

int yard_init(struct yard *y, cudaStream_t stream, char *msg, size_t msg_len)
{
    memset(y, 0, sizeof *y);
    y->stream = stream;
    y->msg = msg;
    y->msg_len = msg_len;
#ifndef YARD_NO_CUDNN
    DNN(cudnnCreate(&y->dnn));
    DNN(cudnnSetStream(y->dnn, stream));
#endif
    cublasStatus_t b = cublasCreate(&y->blas);
    if (b == CUBLAS_STATUS_SUCCESS) b = cublasSetStream(y->blas, stream);
    if (b != CUBLAS_STATUS_SUCCESS) return fail(y, "cublasCreate/cublasSetStream: status %d", (int)b);
    return 0;
}

void yard_free(struct yard *y)
{
#ifndef YARD_NO_CUDNN
    if (y->dnn) cudnnDestroy(y->dnn);
    y->dnn = NULL;
#endif
    if (y->blas) cublasDestroy(y->blas);
    y->blas = NULL;
}

void yard_describe(char *buf, size_t len)
{
#ifndef YARD_NO_CUDNN
    snprintf(buf, len, "cuDNN %zu, cuBLAS %d (headers)", cudnnGetVersion(), CUBLAS_VERSION);
#else
    snprintf(buf, len, "cuBLAS %d (headers); no cuDNN at build time", CUBLAS_VERSION);
#endif
}

const char *yard_algo_name(int algo)
{
    static const char *const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM",     "DIRECT",
                                        "FFT",           "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED"};
    return (unsigned)algo < sizeof names / sizeof names[0] ? names[algo] : "?";
}

#ifndef YARD_NO_CUDNN
/* swinrun's (kz, ky, kx, cin, cout) weights as cuDNN's NHWC filter (cout, kz, ky, kx, cin),
 * in float32 or half, uploaded to a fresh device buffer. */
static void *upload_filter(const float *w, int taps, int cin, int cout, int half)
{
    const size_t n = (size_t)taps * cin * cout, eb = half ? 2 : 4;
    char *host = malloc(n * eb);
    void *dev = NULL;
    if (!host) return NULL;
    for (int o = 0; o < cout; o++)
        for (int t = 0; t < taps; t++)
            for (int c = 0; c < cin; c++) {
                const float v = w[((size_t)t * cin + c) * cout + o];
                const size_t i = ((size_t)o * taps + t) * cin + c;
                if (half) ((_Float16 *)host)[i] = (_Float16)v;
                else ((float *)host)[i] = v;
            }
    /* synchronised: the pageable copy may return before it lands, and y->stream may be
     * non-blocking (the backend's) */
    if (cudaMalloc(&dev, n * eb) != cudaSuccess || cudaMemcpy(dev, host, n * eb, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        cudaFree(dev);
        dev = NULL;
    }
    free(host);
    return dev;
}

int yard_conv_setup(struct yard *y, struct yard_conv *c, int half, int D, int H, int W, int cin, int cout, int k,
                    int stride, int pad, const float *w_host, const void *x_dev, void *y_dev)
{
    memset(c, 0, sizeof *c);
    c->x_dev = x_dev;
    c->y_dev = y_dev;
    const cudnnDataType_t t = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const int xd[5] = {1, cin, D, H, W}, wd[5] = {cout, cin, k, k, k};
    const int pads[3] = {pad, pad, pad}, strides[3] = {stride, stride, stride}, dil[3] = {1, 1, 1};
    int yd[5];
    DNN(cudnnCreateTensorDescriptor(&c->x));
    DNN(cudnnCreateTensorDescriptor(&c->y));
    DNN(cudnnCreateFilterDescriptor(&c->w));
    DNN(cudnnCreateConvolutionDescriptor(&c->conv));
    DNN(cudnnSetTensorNdDescriptorEx(c->x, CUDNN_TENSOR_NHWC, t, 5, xd));
    DNN(cudnnSetFilterNdDescriptor(c->w, t, CUDNN_TENSOR_NHWC, 5, wd));
    /* torch.nn.Conv3d (and swinrun) compute a cross-correlation; float32 accumulation. */
    DNN(cudnnSetConvolutionNdDescriptor(c->conv, 3, pads, strides, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionMathType(c->conv, half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    DNN(cudnnGetConvolutionNdForwardOutputDim(c->conv, c->x, c->w, 5, yd));
    DNN(cudnnSetTensorNdDescriptorEx(c->y, CUDNN_TENSOR_NHWC, t, 5, yd));
    if (!(c->w_dev = upload_filter(w_host, k * k * k, cin, cout, half)))
        return fail(y, "no device memory for a %dx%d^3x%d filter", cout, k, cin);

    /* The workspace: the largest any algorithm asks for, up to YARD_WS_LIMIT. */
    for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a++) {
        size_t b = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(y->dnn, c->x, c->w, c->conv, c->y, (cudnnConvolutionFwdAlgo_t)a,
                                                    &b) == CUDNN_STATUS_SUCCESS &&
            b <= YARD_WS_LIMIT && b > c->ws_bytes)
            c->ws_bytes = b;
    }
    if (c->ws_bytes && cudaMalloc(&c->ws, c->ws_bytes) != cudaSuccess)
        return fail(y, "no device memory for a %zu-byte cuDNN workspace", c->ws_bytes);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    DNN(cudnnFindConvolutionForwardAlgorithmEx(y->dnn, c->x, x_dev, c->w, c->w_dev, c->conv, c->y, y_dev,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &c->algos_tried, perf, c->ws,
                                               c->ws_bytes));
    /* Find sorts the successful entries first, fastest first. */
    if (c->algos_tried < 1 || perf[0].status != CUDNN_STATUS_SUCCESS)
        return fail(y, "cuDNN has no forward algorithm for %d^3 x %d -> %d, k %d (first status %s)", D, cin, cout,
                    k, c->algos_tried ? cudnnGetErrorString(perf[0].status) : "none");
    c->algo = (int)perf[0].algo;
    return 0;
}

int yard_conv_run(struct yard *y, struct yard_conv *c)
{
    const float one = 1.0f, zero = 0.0f;
    DNN(cudnnConvolutionForward(y->dnn, &one, c->x, c->x_dev, c->w, c->w_dev, c->conv,
                                (cudnnConvolutionFwdAlgo_t)c->algo, c->ws, c->ws_bytes, &zero, c->y, c->y_dev));
    return 0;
}

void yard_conv_free(struct yard_conv *c)
{
    if (c->x) cudnnDestroyTensorDescriptor(c->x);
    if (c->y) cudnnDestroyTensorDescriptor(c->y);
    if (c->w) cudnnDestroyFilterDescriptor(c->w);
    if (c->conv) cudnnDestroyConvolutionDescriptor(c->conv);
    cudaFree(c->w_dev);
    cudaFree(c->ws);
    memset(c, 0, sizeof *c);
}
#else
int yard_conv_setup(struct yard *y, struct yard_conv *c, int half, int D, int H, int W, int cin, int cout, int k,
                    int stride, int pad, const float *w_host, const void *x_dev, void *y_dev)
{
    (void)half, (void)D, (void)H, (void)W, (void)cin, (void)cout, (void)k, (void)stride, (void)pad, (void)w_host;
    (void)x_dev, (void)y_dev;
    memset(c, 0, sizeof *c);
    return fail(y, "built without cuDNN (no cudnn.h/libcudnn found: set CUDNN_ROOT)");
}

int yard_conv_run(struct yard *y, struct yard_conv *c)
{
    (void)c;
    return fail(y, "built without cuDNN");
}

void yard_conv_free(struct yard_conv *c)
{
    memset(c, 0, sizeof *c);
}
#endif

int yard_gemm(struct yard *y, int half, int M, int N, int K, const void *X, const void *Wt, void *Y)
{
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType t = half ? CUDA_R_16F : CUDA_R_32F;
    /* Column-major view: Y^T (N x M, ld N) = Wt^T (N x K, ld N) . X^T (K x M, ld K). */
    cublasStatus_t s = cublasGemmEx(y->blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, Wt, t, N, X, t, K, &zero, Y, t,
                                    N, CUBLAS_COMPUTE_32F, half ? CUBLAS_GEMM_DEFAULT_TENSOR_OP : CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fail(y, "cublasGemmEx (M %d N %d K %d, %s): status %d", M, N, K, half ? "half" : "float32", (int)s);
    return 0;
}
