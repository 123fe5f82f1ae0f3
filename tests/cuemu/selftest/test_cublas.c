/* The cuBLAS subset against a naive column-major GEMM written from the definition
 * C = alpha * op(A) * op(B) + beta * C, with awkward sizes and leading dimensions, every
 * transpose pair, batches, fp16/bf16 inputs, and the documented argument errors. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"

/* op(X)(r, c) of a column-major matrix with leading dimension ld. */
static float opx(const float *x, int ld, int trans, int r, int c)
{
    return trans ? x[c + (size_t)r * ld] : x[r + (size_t)c * ld];
}

static void ref_gemm(int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int l = 0; l < k; l++)
                s += (double)opx(a, lda, ta, i, l) * opx(b, ldb, tb, l, j);
            float old = beta == 0.0f ? 0.0f : c[i + (size_t)j * ldc];
            c[i + (size_t)j * ldc] = (float)(alpha * s + beta * (double)old);
        }
}

/* Small integers are exact in fp16 and bf16; their bit patterns from the definitions. */
static unsigned short half_of_int(int v)
{
    if (v == 0)
        return 0;
    unsigned short s = v < 0 ? 0x8000 : 0;
    int a = abs(v), e = 0;
    while ((a >> e) > 1)
        e++;
    return s | (unsigned short)((e + 15) << 10 | ((a << (10 - e)) & 0x3FF));
}
static float float_of_half(unsigned short h)
{
    int e = h >> 10 & 0x1F, m = h & 0x3FF;
    float v = e ? ldexpf(1.0f + m / 1024.0f, e - 15) : ldexpf(m / 1024.0f, -14);
    return h & 0x8000 ? -v : v;
}
static unsigned short bf16_of_float(float f) /* exact for small integers */
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return (unsigned short)(b >> 16);
}

static void fill_ints(test_rng *r, float *x, size_t n, int lo, int hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lo + (int)test_rng_uniform(r, 0.0f, (float)(hi - lo + 1) - 0.001f));
}

/* One fp32 GEMM (optionally batched) with the given transposes and padding. */
static bool sgemm_case(cublasHandle_t h, test_rng *rng, int ta, int tb, int m, int n, int k,
                       int pad, float alpha, float beta, int batches)
{
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    int lda = ar + pad, ldb = br + pad + 1, ldc = m + pad + 2;
    long long sa = (long long)lda * ac + 5, sb = (long long)ldb * bc + 3, sc = (long long)ldc * n + 7;
    size_t na = (size_t)sa * batches, nb = (size_t)sb * batches, nc = (size_t)sc * batches;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *ref = malloc(nc * 4);
    test_fill_uniform(rng, a, na, -1.0f, 1.0f);
    test_fill_uniform(rng, b, nb, -1.0f, 1.0f);
    test_fill_uniform(rng, c, nc, -1.0f, 1.0f);
    memcpy(ref, c, nc * 4);
    float *da = emu_upload(a, na * 4), *db = emu_upload(b, nb * 4), *dc = emu_alloc(nc * 4);
    if (beta != 0.0f) /* with beta == 0, C stays 0xFF-poisoned (NaN): it must not be read */
        cudaMemcpy(dc, c, nc * 4, cudaMemcpyHostToDevice);
    else
        for (size_t i = 0; i < nc; i++)
            ref[i] = NAN; /* untouched padding stays poisoned */
    cublasStatus_t st;
    if (batches == 1)
        st = cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n,
                         k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
    else
        st = cublasSgemmStridedBatched(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                       tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, da, lda,
                                       sa, db, ldb, sb, &beta, dc, ldc, sc, batches);
    bool ok = check_true("sgemm status", st == CUBLAS_STATUS_SUCCESS);
    emu_download(c, dc, nc * 4);
    size_t bad = 0;
    for (int bi = 0; bi < batches; bi++) {
        ref_gemm(ta, tb, m, n, k, alpha, a + bi * sa, lda, b + bi * sb, ldb, beta, ref + bi * sc, ldc);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                size_t x = bi * sc + i + (size_t)j * ldc;
                bad += !(fabsf(c[x] - ref[x]) <= 1e-4f * (1.0f + fabsf(ref[x])));
            }
    }
    if (bad)
        fprintf(stderr, "  sgemm ta=%d tb=%d m=%d n=%d k=%d batches=%d beta=%g: %zu bad\n", ta,
                tb, m, n, k, batches, beta, bad);
    ok &= check_true("sgemm matches the naive GEMM", bad == 0);
    free(a), free(b), free(c), free(ref);
    emu_free(da), emu_free(db), emu_free(dc);
    return ok;
}

/* GemmEx / GemmStridedBatchedEx with fp16 or bf16 inputs, integer data (exact). */
static bool ex_case(cublasHandle_t h, test_rng *rng, cudaDataType in, cudaDataType out, int batches)
{
    const int m = 21, n = 13, k = 17, lda = k + 3, ldb = k + 1, ldc = m + 2; /* A^T, B */
    const long long sa = (long long)lda * m, sb = (long long)ldb * n, sc = (long long)ldc * n;
    float a[4 * 20 * 21], b[4 * 18 * 13], ref[4 * 23 * 13];
    unsigned short a16[4 * 20 * 21], b16[4 * 18 * 13], c16[4 * 23 * 13];
    float c32[4 * 23 * 13];
    size_t na = (size_t)sa * batches, nb = (size_t)sb * batches, nc = (size_t)sc * batches;
    fill_ints(rng, a, na, -8, 8);
    fill_ints(rng, b, nb, -8, 8);
    for (size_t i = 0; i < na; i++)
        a16[i] = in == CUDA_R_16F ? half_of_int((int)a[i]) : bf16_of_float(a[i]);
    for (size_t i = 0; i < nb; i++)
        b16[i] = in == CUDA_R_16F ? half_of_int((int)b[i]) : bf16_of_float(b[i]);
    void *da = emu_upload(a16, na * 2), *db = emu_upload(b16, nb * 2);
    size_t cs = out == CUDA_R_32F ? 4 : 2;
    void *dc = emu_alloc(nc * cs);
    float alpha = 2.0f, beta = 0.0f;
    cublasStatus_t st = batches == 1
        ? cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, in, lda, db, in, ldb,
                       &beta, dc, out, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
        : cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, in, lda,
                                     sa, db, in, ldb, sb, &beta, dc, out, ldc, sc, batches,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    bool ok = check_true("gemmEx status", st == CUBLAS_STATUS_SUCCESS);
    if (out == CUDA_R_32F)
        emu_download(c32, dc, nc * 4);
    else
        emu_download(c16, dc, nc * 2);
    size_t bad = 0;
    for (int bi = 0; bi < batches; bi++) {
        ref_gemm(1, 0, m, n, k, alpha, a + bi * sa, lda, b + bi * sb, ldb, 0.0f, ref + bi * sc, ldc);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                size_t x = bi * sc + i + (size_t)j * ldc;
                float got = out == CUDA_R_32F ? c32[x] : float_of_half(c16[x]);
                bad += !(got == ref[x]); /* |values| < 2048: exact in fp16 */
            }
    }
    ok &= check_true(in == CUDA_R_16F ? "gemmEx fp16 inputs" : "gemmEx bf16 inputs", bad == 0);
    emu_free(da), emu_free(db), emu_free(dc);
    return ok;
}

static bool test_errors(cublasHandle_t h)
{
    bool ok = true;
    float one = 1.0f, host[64], *d;
    d = emu_alloc(64 * 4);
    const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    ok &= check_true("lda < m", cublasSgemm(h, N, N, 8, 4, 4, &one, d, 7, d, 4, &one, d, 8) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("lda < k (A^T)", cublasSgemm(h, T, N, 8, 4, 4, &one, d, 3, d, 4, &one, d, 8) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("ldb < k", cublasSgemm(h, N, N, 4, 4, 5, &one, d, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("ldb < n (B^T)", cublasSgemm(h, N, T, 4, 5, 4, &one, d, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("ldc < m", cublasSgemm(h, N, N, 4, 4, 4, &one, d, 4, d, 4, &one, d, 3) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("m < 0", cublasSgemm(h, N, N, -1, 4, 4, &one, d, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("bad transpose", cublasSgemm(h, (cublasOperation_t)9, N, 4, 4, 4, &one, d, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_INVALID_VALUE);
    ok &= check_true("NULL handle", cublasSgemm(NULL, N, N, 4, 4, 4, &one, d, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_NOT_INITIALIZED);
    ok &= check_true("host operand", cublasSgemm(h, N, N, 4, 4, 4, &one, host, 4, d, 4, &one, d, 4) == CUBLAS_STATUS_EXECUTION_FAILED);
    ok &= check_true("operand past its allocation", cublasSgemm(h, N, N, 8, 8, 8, &one, d, 9, d, 8, &one, d, 8) == CUBLAS_STATUS_EXECUTION_FAILED);
    ok &= check_true("m = 0 is a no-op", cublasSgemm(h, N, N, 0, 4, 4, &one, d, 1, d, 4, &one, d, 1) == CUBLAS_STATUS_SUCCESS);
    ok &= check_true("unsupported types", cublasGemmEx(h, N, N, 4, 4, 4, &one, d, CUDA_R_16F, 4, d, CUDA_R_32F, 4, &one, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    ok &= check_true("unsupported compute type", cublasGemmEx(h, N, N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d, CUDA_R_32F, 4, &one, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    ok &= check_true("unknown algorithm id", cublasGemmEx(h, N, N, 4, 4, 4, &one, d, CUDA_R_16F, 4, d, CUDA_R_16F, 4, &one, d, CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, (cublasGemmAlgo_t)42) == CUBLAS_STATUS_INVALID_VALUE);
    /* Half operands are 2 bytes: C of 8 x 8 with ldc 16 spans 240 bytes (inside the 256),
     * with ldc 20 it spans 296 (past them). */
    ok &= check_true("fp16 C inside its allocation", cublasGemmEx(h, N, N, 8, 8, 4, &one, d, CUDA_R_16F, 8, d, CUDA_R_16F, 4, &one, d, CUDA_R_16F, 16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) == CUBLAS_STATUS_SUCCESS);
    ok &= check_true("fp16 C past its allocation", cublasGemmEx(h, N, N, 8, 8, 4, &one, d, CUDA_R_16F, 8, d, CUDA_R_16F, 4, &one, d, CUDA_R_16F, 20, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) == CUBLAS_STATUS_EXECUTION_FAILED);
    emu_free(d);
    return ok;
}

/* TF32 math rounds inputs to 10 mantissa bits: the error grows to ~1e-3 relative. */
static bool test_tf32(cublasHandle_t h, test_rng *rng)
{
    enum { M = 33, N = 9, K = 40 };
    float a[M * K], b[K * N], c[M * N], ref[M * N], one = 1.0f, zero = 0.0f;
    test_fill_uniform(rng, a, M * K, -1.0f, 1.0f);
    test_fill_uniform(rng, b, K * N, -1.0f, 1.0f);
    ref_gemm(0, 0, M, N, K, 1.0f, a, M, b, K, 0.0f, ref, M);
    float *da = emu_upload(a, sizeof a), *db = emu_upload(b, sizeof b), *dc = emu_alloc(sizeof c);
    bool ok = check_true("tf32 math mode", cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS);
    ok &= check_true("tf32 sgemm", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, M, db, K, &zero, dc, M) == CUBLAS_STATUS_SUCCESS);
    emu_download(c, dc, sizeof c);
    ok &= check_close_scaled("tf32 sgemm vs fp64 reference", c, ref, M * N, 5e-3);
    double worst = 0.0;
    for (int i = 0; i < M * N; i++)
        worst = fmax(worst, fabs(c[i] - ref[i]));
    ok &= check_true("tf32 rounding is visible (inputs lose bits)", worst > 1e-5);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    emu_free(da), emu_free(db), emu_free(dc);
    return ok;
}

int main(void)
{
    test_rng rng = {0xB1A5};
    cublasHandle_t h;
    cudaStream_t s;
    bool ok = check_true("create", cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    ok &= check_true("stream", cudaStreamCreate(&s) == cudaSuccess && cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            ok &= sgemm_case(h, &rng, ta, tb, 37, 23, 19, 3, 1.5f, 0.0f, 1);
            ok &= sgemm_case(h, &rng, ta, tb, 5, 41, 33, 0, -0.5f, 0.75f, 1);
            ok &= sgemm_case(h, &rng, ta, tb, 17, 6, 7, 2, 1.0f, 1.0f, 3);
        }
    ok &= sgemm_case(h, &rng, 0, 0, 64, 64, 1, 0, 1.0f, 0.0f, 1);
    ok &= ex_case(h, &rng, CUDA_R_16F, CUDA_R_32F, 1);
    ok &= ex_case(h, &rng, CUDA_R_16F, CUDA_R_16F, 1);
    ok &= ex_case(h, &rng, CUDA_R_16BF, CUDA_R_32F, 1);
    ok &= ex_case(h, &rng, CUDA_R_16F, CUDA_R_32F, 3);
    ok &= test_errors(h);
    ok &= test_tf32(h, &rng);
    ok &= check_true("destroy", cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
    cudaStreamDestroy(s);
    ok &= check_true("no device memory left", cuemu_mem_live_allocations() == 0);
    return test_exit(ok);
}
