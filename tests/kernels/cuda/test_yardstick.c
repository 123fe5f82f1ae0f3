/* The yardstick (yardstick.h) is right: cuDNN's convolution and cuBLAS's GEMM, called as
 * bench_cuda_ops calls them (channels-last tensors, swinrun's weight layout transposed to
 * cuDNN's NHWC filter, row-major token GEMMs), against naive float64 loops written from
 * the definitions, in float32 and in half (inputs rounded to half first, on both sides).
 * Under the emulator (tests/cuemu/cudnn_*.c, cublas.c) this proves the reference column's
 * arithmetic and layouts; its times mean nothing here and are not looked at. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/kernels/cuda/yardstick.h"

static test_rng rng = {0x7a5d};

/* Random values, rounded through half when `half` (what the device will hold). */
static float *random_host(size_t n, int half)
{
    float *x = malloc(n * sizeof *x);
    test_fill_uniform(&rng, x, n, -1.0f, 1.0f);
    if (half)
        for (size_t i = 0; i < n; i++) x[i] = (float)(_Float16)x[i];
    return x;
}

static void *upload(const float *x, size_t n, int half)
{
    void *d = NULL;
    const size_t eb = half ? 2 : 4;
    void *h = malloc(n * eb);
    for (size_t i = 0; i < n; i++) {
        if (half) ((_Float16 *)h)[i] = (_Float16)x[i];
        else ((float *)h)[i] = x[i];
    }
    /* synchronised: the pageable copy may return before it lands, and the stream is
     * non-blocking */
    if (cudaMalloc(&d, n * eb) != cudaSuccess || cudaMemcpy(d, h, n * eb, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "device allocation of %zu elements failed\n", n);
        exit(1);
    }
    free(h);
    return d;
}

static float *download(const void *d, size_t n, int half)
{
    const size_t eb = half ? 2 : 4;
    void *h = malloc(n * eb);
    float *x = malloc(n * sizeof *x);
    cudaMemcpy(h, d, n * eb, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++) x[i] = half ? (float)((_Float16 *)h)[i] : ((float *)h)[i];
    free(h);
    return x;
}

/* Tolerances: float32 accumulation in an order the library picks (up to 324 terms of
 * magnitude <= 1 here: far below 1e-4); in half, one rounding of the output to half
 * (relative 2^-11) on top. A wrong layout or transposition errs by O(1). */
static bool compare(const char *what, const float *got, const float *ref, size_t n, int half)
{
    return half ? check_close(what, got, ref, n, 2e-3, 1e-3) : check_close(what, got, ref, n, 1e-4, 1e-4);
}

#ifndef YARD_NO_CUDNN
struct conv_case {
    int d, h, w, cin, cout, k, stride, pad;
};

static bool conv_case(struct yard *y, const struct conv_case *t, int half)
{
    const int od = (t->d + 2 * t->pad - t->k) / t->stride + 1, oh = (t->h + 2 * t->pad - t->k) / t->stride + 1;
    const int ow = (t->w + 2 * t->pad - t->k) / t->stride + 1, k = t->k;
    const size_t nx = (size_t)t->d * t->h * t->w * t->cin, ny = (size_t)od * oh * ow * t->cout;
    float *x = random_host(nx, half), *w = random_host((size_t)k * k * k * t->cin * t->cout, half);
    float *ref = malloc(ny * sizeof *ref);
    /* ref[z, y, x, o] = sum over taps (a, b, e) inside the input and ci of
     * in[z*s - p + a, y*s - p + b, x*s - p + e, ci] * w[a, b, e, ci, o]  (swinrun's layouts). */
    for (int z = 0; z < od; z++)
        for (int yy = 0; yy < oh; yy++)
            for (int xx = 0; xx < ow; xx++)
                for (int o = 0; o < t->cout; o++) {
                    double s = 0.0;
                    for (int a = 0; a < k; a++)
                        for (int b = 0; b < k; b++)
                            for (int e = 0; e < k; e++) {
                                const int iz = z * t->stride - t->pad + a, iy = yy * t->stride - t->pad + b;
                                const int ix = xx * t->stride - t->pad + e;
                                if (iz < 0 || iz >= t->d || iy < 0 || iy >= t->h || ix < 0 || ix >= t->w) continue;
                                for (int c = 0; c < t->cin; c++)
                                    s += (double)x[(((size_t)iz * t->h + iy) * t->w + ix) * t->cin + c] *
                                         w[((((size_t)a * k + b) * k + e) * t->cin + c) * t->cout + o];
                            }
                    ref[(((size_t)z * oh + yy) * ow + xx) * t->cout + o] = (float)s;
                }
    void *dx = upload(x, nx, half), *dy = NULL;
    cudaMalloc(&dy, ny * (half ? 2 : 4));
    struct yard_conv c;
    char what[160];
    snprintf(what, sizeof what, "cuDNN conv %dx%dx%d x %d -> %d, k %d s %d p %d, %s", t->d, t->h, t->w, t->cin,
             t->cout, k, t->stride, t->pad, half ? "half" : "float32");
    bool ok = check_true(what, !yard_conv_setup(y, &c, half, t->d, t->h, t->w, t->cin, t->cout, k, t->stride,
                                                t->pad, w, dx, dy));
    if (!ok) fprintf(stderr, "  %s\n", y->msg);
    ok &= check_true("every algorithm reported", c.algos_tried == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    /* Find leaves y unspecified: clear it so that the result below is the run's own. */
    cudaMemsetAsync(dy, 0, ny * (half ? 2 : 4), y->stream);
    ok &= check_true("conv run", !yard_conv_run(y, &c));
    cudaStreamSynchronize(y->stream);
    float *got = download(dy, ny, half);
    ok &= compare(what, got, ref, ny, half);
    yard_conv_free(&c);
    cudaFree(dx), cudaFree(dy);
    free(x), free(w), free(ref), free(got);
    return ok;
}

#endif

static bool gemm_case(struct yard *y, int M, int N, int K, int half)
{
    float *x = random_host((size_t)M * K, half), *w = random_host((size_t)K * N, half);
    float *ref = malloc((size_t)M * N * sizeof *ref);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int l = 0; l < K; l++) s += (double)x[(size_t)i * K + l] * w[(size_t)l * N + j];
            ref[(size_t)i * N + j] = (float)s;
        }
    void *dx = upload(x, (size_t)M * K, half), *dw = upload(w, (size_t)K * N, half), *dy = NULL;
    cudaMalloc(&dy, (size_t)M * N * (half ? 2 : 4));
    char what[96];
    snprintf(what, sizeof what, "cuBLAS GEMM M %d N %d K %d, %s", M, N, K, half ? "half" : "float32");
    bool ok = check_true(what, !yard_gemm(y, half, M, N, K, dx, dw, dy));
    cudaStreamSynchronize(y->stream);
    float *got = download(dy, (size_t)M * N, half);
    ok &= compare(what, got, ref, (size_t)M * N, half);
    cudaFree(dx), cudaFree(dw), cudaFree(dy);
    free(x), free(w), free(ref), free(got);
    return ok;
}

int main(void)
{
    char msg[256] = "";
    struct yard y;
    cudaStream_t s;
    /* non-blocking, as the backend's stream that bench_cuda_ops hands the yardstick */
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) { /* nvcc build: no usable device */
        fprintf(stderr, "SKIP no usable CUDA device\n");
        return 77;
    }
    bool ok = check_true("yard_init", !yard_init(&y, s, msg, sizeof msg));
    if (!ok) {
        fprintf(stderr, "%s\n", msg);
        return test_exit(false);
    }
    /* The forward's kinds of convolution on small, uneven volumes: 3x3x3 pad 1 (a channel
     * count that is no multiple of 8, and cin = 1 as encoder1's first), 1x1x1, and the
     * patch embedding's 2x2x2 stride 2 (odd sides: the last plane is dropped). */
#ifndef YARD_NO_CUDNN
    const struct conv_case convs[] = {
        {5, 6, 7, 12, 10, 3, 1, 1}, {4, 5, 3, 1, 8, 3, 1, 1}, {6, 5, 4, 9, 5, 1, 1, 0}, {7, 6, 5, 3, 8, 2, 2, 0},
    };
#endif
    for (int half = 0; half <= 1; half++) {
#ifndef YARD_NO_CUDNN
        for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) ok &= conv_case(&y, &convs[i], half);
#else
        if (!half) fprintf(stderr, "built without cuDNN: the convolution cases are not run\n");
#endif
        /* qkv-, fc2- and odd-shaped token GEMMs. */
        ok &= gemm_case(&y, 70, 36, 12, half);
        ok &= gemm_case(&y, 33, 12, 48, half);
        ok &= gemm_case(&y, 37, 29, 19, half);
    }
    /* A problem cuBLAS refuses comes back as an error with the call in the message. */
    msg[0] = 0;
    ok &= check_true("bad GEMM refused", yard_gemm(&y, 0, -1, 4, 4, NULL, NULL, NULL) != 0 &&
                                             strstr(msg, "cublasGemmEx") != NULL);
    yard_free(&y);
    cudaStreamDestroy(s);
    return test_exit(ok);
}
