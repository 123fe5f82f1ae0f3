/* The cuBLAS calls of the yardstick (tests/kernels/cuda/yardstick.c: the vendor GEMM that
 * bench_cuda_ops sets beside swinrun's own kernels), so that the yardstick and its tests run
 * emulated; the CUDA backend itself calls no cuBLAS. The library's argument semantics: column-
 * major operands, op(A) = A or A^T, lda/ldb/ldc validated (CUBLAS_STATUS_INVALID_VALUE),
 * beta == 0 never reads C, fp32 accumulation, fp16/bf16 inputs converted exactly, tf32
 * rounding of inputs when the compute type or math mode asks for it. Operands must lie
 * in device memory. A plain CPU GEMM over packed, contiguous copies of op(A) and op(B). */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"
#include "tests/cuemu/half.h"

#define HANDLE_MAGIC 0x43424C53u /* "CBLS" */

struct cublasContext {
    unsigned magic;
    cudaStream_t stream;
    cublasMath_t math;
};

static int handle_ok(cublasHandle_t h)
{
    return h && h->magic == HANDLE_MAGIC;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    if (!h)
        return CUBLAS_STATUS_INVALID_VALUE;
    *h = calloc(1, sizeof **h);
    if (!*h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    (*h)->magic = HANDLE_MAGIC;
    (*h)->math = CUBLAS_DEFAULT_MATH;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    if (!handle_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    if (!handle_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!cuemu_stream_valid(s))
        return CUBLAS_STATUS_INVALID_VALUE;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s)
{
    if (!handle_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!s)
        return CUBLAS_STATUS_INVALID_VALUE;
    *s = h->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    if (!handle_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

/* --- operands --- */

struct operand {
    const void *p;
    cudaDataType type;
    int ld;
    long long stride;  /* elements between batches */
    int rows, cols;    /* as stored (before op) */
    int trans;
};

static size_t type_size(cudaDataType t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

static float load(const void *p, cudaDataType t, size_t i)
{
    switch (t) {
    case CUDA_R_16F: return cuemu_half_to_float(((const unsigned short *)p)[i]);
    case CUDA_R_16BF: return cuemu_bf16_to_float(((const unsigned short *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static void store(void *p, cudaDataType t, size_t i, float v)
{
    if (t == CUDA_R_16F)
        ((unsigned short *)p)[i] = cuemu_float_to_half(v);
    else if (t == CUDA_R_16BF) {
        uint32_t b; /* round to nearest even on the dropped 16 bits (NaN kept quiet) */
        memcpy(&b, &v, 4);
        b = v != v ? (b | 0x400000u) : b + 0x7FFFu + (b >> 16 & 1u);
        ((unsigned short *)p)[i] = (unsigned short)(b >> 16);
    } else
        ((float *)p)[i] = v;
}

/* Rounds to tf32 (10 mantissa bits), nearest even, as tensor cores see fp32 inputs. */
static float tf32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7F800000u) != 0x7F800000u)
        b = (b + 0xFFFu + (b >> 13 & 1u)) & ~0x1FFFu;
    memcpy(&f, &b, 4);
    return f;
}

/* Whether every element the call touches lies in one device allocation. */
static int in_device(const struct operand *o, int batches)
{
    if (o->rows == 0 || o->cols == 0 || batches == 0)
        return 1;
    long long last = (long long)(o->cols - 1) * o->ld + o->rows; /* elements of one matrix */
    long long lo = 0, hi = last;
    if (o->stride < 0)
        lo = o->stride * (batches - 1);
    else
        hi += o->stride * (batches - 1);
    const char *p = (const char *)o->p + lo * (long long)type_size(o->type);
    return cuemu_mem_is_device_range(p, (size_t)(hi - lo) * type_size(o->type));
}

/* Copies op(X) of batch b as `outer` contiguous runs of `inner` floats:
 * out[u * inner + v] = op(X)(u, v) when by_rows, op(X)(v, u) otherwise. */
static void pack(float *out, const struct operand *o, long long b, int by_rows, int round)
{
    int orows = o->trans ? o->cols : o->rows, ocols = o->trans ? o->rows : o->cols;
    int outer = by_rows ? orows : ocols, inner = by_rows ? ocols : orows;
    const char *base = (const char *)o->p + b * o->stride * (long long)type_size(o->type);
    for (int u = 0; u < outer; u++)
        for (int v = 0; v < inner; v++) {
            int r = by_rows ? u : v, c = by_rows ? v : u; /* (r, c) of op(X) */
            size_t idx = o->trans ? (size_t)r * o->ld + c : (size_t)c * o->ld + r;
            float x = load(base, o->type, idx);
            out[(size_t)u * inner + v] = round ? tf32(x) : x;
        }
}

#define TILE 32

/* C(i, j) = alpha * sum_l op(A)(i, l) op(B)(l, j) + beta * C(i, j), for every batch. */
static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const float *alpha, struct operand a, struct operand b,
                           const float *beta, void *c, cudaDataType ctype, int ldc,
                           long long stride_c, int batches, int round_tf32)
{
    if (!handle_ok(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cuemu_stream_work(h->stream, "a cuBLAS GEMM");
    if (m < 0 || n < 0 || k < 0 || batches < 0 || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T && ta != CUBLAS_OP_C) ||
        (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T && tb != CUBLAS_OP_C))
        return CUBLAS_STATUS_INVALID_VALUE;
    a.trans = ta != CUBLAS_OP_N;
    b.trans = tb != CUBLAS_OP_N;
    a.rows = a.trans ? k : m;
    a.cols = a.trans ? m : k;
    b.rows = b.trans ? n : k;
    b.cols = b.trans ? k : n;
    if (a.ld < (a.rows > 1 ? a.rows : 1) || b.ld < (b.rows > 1 ? b.rows : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0 || batches == 0)
        return CUBLAS_STATUS_SUCCESS;
    struct operand co = {c, ctype, ldc, stride_c, m, n, 0};
    int touch_ab = k > 0 && *alpha != 0.0f;
    if ((touch_ab && (!in_device(&a, batches) || !in_device(&b, batches))) || !in_device(&co, batches)) {
        cuemu_report(CUEMU_DET_MEMORY_RANGE, "cuBLAS GEMM (m=%d n=%d k=%d, lda=%d ldb=%d ldc=%d, "
                     "batches=%d): an operand is not inside device memory", m, n, k, a.ld, b.ld, ldc, batches);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    float al = *alpha, be = *beta;
    float *ap = malloc((size_t)m * k * sizeof *ap + 1), *bp = malloc((size_t)n * k * sizeof *bp + 1);
    if (!ap || !bp) {
        free(ap);
        free(bp);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    size_t cs = type_size(ctype);
    for (long long bi = 0; bi < batches; bi++) {
        if (touch_ab) {
            pack(ap, &a, bi, 1, round_tf32); /* ap[i * k + l] = op(A)(i, l) */
            pack(bp, &b, bi, 0, round_tf32); /* bp[j * k + l] = op(B)(l, j) */
        }
        char *cb = (char *)c + bi * stride_c * (long long)cs;
        for (int i0 = 0; i0 < m; i0 += TILE)
            for (int j0 = 0; j0 < n; j0 += TILE)
                for (int j = j0; j < n && j < j0 + TILE; j++)
                    for (int i = i0; i < m && i < i0 + TILE; i++) {
                        float acc = 0.0f;
                        if (touch_ab)
                            for (int l = 0; l < k; l++)
                                acc += ap[(size_t)i * k + l] * bp[(size_t)j * k + l];
                        size_t ci = (size_t)j * ldc + i;
                        float v = al * acc;
                        if (be != 0.0f) /* beta == 0: C is not read (it may be NaN) */
                            v += be * load(cb, ctype, ci);
                        store(cb, ctype, ci, v);
                    }
    }
    free(ap);
    free(bp);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta, float *C, int ldc)
{
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C,
                                     ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long sa, const float *B, int ldb, long long sb,
                                         const float *beta, float *C, int ldc, long long sc,
                                         int batches)
{
    struct operand a = {A, CUDA_R_32F, lda, sa, 0, 0, 0}, b = {B, CUDA_R_32F, ldb, sb, 0, 0, 0};
    int round = handle_ok(h) && (h->math & 0xF) == CUBLAS_TF32_TENSOR_OP_MATH;
    return gemm(h, ta, tb, m, n, k, alpha, a, b, beta, C, CUDA_R_32F, ldc, sc, batches, round);
}

/* Supported: fp32 compute with A/B in fp32, fp16 or bf16 and C in fp32 or A's type. */
static int ex_supported(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t comp)
{
    if (comp != CUBLAS_COMPUTE_32F && comp != CUBLAS_COMPUTE_32F_PEDANTIC &&
        comp != CUBLAS_COMPUTE_32F_FAST_TF32)
        return 0;
    if (at != bt || (at != CUDA_R_32F && at != CUDA_R_16F && at != CUDA_R_16BF))
        return 0;
    return ct == CUDA_R_32F || ct == at;
}

/* The algorithm ids cublasGemmEx accepts: the defaults and the numbered ones (all of them
 * compute the same product here; on a GPU the choice is a speed hint). */
static int algo_valid(cublasGemmAlgo_t algo)
{
    return algo == CUBLAS_GEMM_DEFAULT || algo == CUBLAS_GEMM_DEFAULT_TENSOR_OP ||
           (algo >= CUBLAS_GEMM_ALGO0 && algo <= CUBLAS_GEMM_ALGO23) ||
           (algo >= CUBLAS_GEMM_ALGO0_TENSOR_OP && algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType at,
                                          int lda, long long sa, const void *B,
                                          cudaDataType bt, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType ct, int ldc,
                                          long long sc, int batches, cublasComputeType_t comp,
                                          cublasGemmAlgo_t algo)
{
    if (handle_ok(h) && !ex_supported(at, bt, ct, comp))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (handle_ok(h) && !algo_valid(algo))
        return CUBLAS_STATUS_INVALID_VALUE;
    struct operand a = {A, at, lda, sa, 0, 0, 0}, b = {B, bt, ldb, sb, 0, 0, 0};
    int round = at == CUDA_R_32F && comp == CUBLAS_COMPUTE_32F_FAST_TF32;
    return gemm(h, ta, tb, m, n, k, alpha, a, b, beta, C, ct, ldc, sc, batches, round);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType at,
                            int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
                            void *C, cudaDataType ct, int ldc, cublasComputeType_t comp,
                            cublasGemmAlgo_t algo)
{
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0,
                                      beta, C, ct, ldc, 0, 1, comp, algo);
}
