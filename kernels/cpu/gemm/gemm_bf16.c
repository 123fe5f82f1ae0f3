/* Weight GEMM dispatch and the baseline bfloat16 GEMM (kernels/cpu/gemm_bf16.h). */
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/gemm/gemm_f32.h"

#include <cblas.h>
#include <string.h>

/* Baseline: row by row, k outermost so the row of C stays in cache; float32 sums. */
static void gemm_bf16_baseline(int m, int n, int k, const float *a, int lda, const swin_bf16 *w, int ldw,
                               bool accumulate, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * ldc;
        if (!accumulate)
            for (int j = 0; j < n; j++) ci[j] = 0.0f;
        for (int p = 0; p < k; p++) {
            const float av = swin_bf16_round(a[(size_t)i * lda + p]);
            const swin_bf16 *wp = w + (size_t)p * ldw;
            for (int j = 0; j < n; j++) ci[j] += av * swin_bf16_to_f32(wp[j]);
        }
    }
}

/* The kernels without a bias of their own: C = bias (or C += bias with accumulate) first, then
 * they accumulate. */
static void add_bias(int m, int n, const float *bias, bool accumulate, float *c, int ldc)
{
    for (int i = 0; i < m; i++) {
        float *ci = c + (size_t)i * ldc;
        if (accumulate)
            for (int j = 0; j < n; j++) ci[j] += bias[j];
        else memcpy(ci, bias, (size_t)n * sizeof(float));
    }
}

void swin_cpu_gemm_bf16(enum swin_cpu_simd simd, int m, int n, int k, const float *a, int lda, const swin_bf16 *w,
                        int ldw, const float *bias, bool accumulate, float *c, int ldc)
{
    if (m <= 0 || n <= 0) return;
    if (simd >= SWIN_CPU_SIMD_AVX512_BF16) {
        swin_cpu_gemm_bf16_avx512bf16(m, n, k, a, lda, w, ldw, bias, accumulate, c, ldc);
        return;
    }
    if (bias) add_bias(m, n, bias, accumulate, c, ldc);
    accumulate = accumulate || bias;
    if (simd >= SWIN_CPU_SIMD_AVX2) swin_cpu_gemm_bf16_avx2(m, n, k, a, lda, w, ldw, accumulate, c, ldc);
    else gemm_bf16_baseline(m, n, k, a, lda, w, ldw, accumulate, c, ldc);
}

void swin_cpu_wgemm_run(struct swin_cpu_wgemm g, int m, int n, int k, const float *a, int lda, const float *w,
                        int ldw, const float *bias, bool accumulate, float *c, int ldc)
{
    if (g.bf16) {
        swin_cpu_gemm_bf16(g.simd, m, n, k, a, lda, (const swin_bf16 *)(const void *)w, ldw, bias, accumulate, c, ldc);
        return;
    }
    if (g.simd >= SWIN_CPU_SIMD_AVX512) {
        swin_cpu_sgemm_avx512(m, n, k, a, lda, w, ldw, bias, accumulate, c, ldc);
        return;
    }
    if (g.simd == SWIN_CPU_SIMD_AVX2) {
        swin_cpu_sgemm_avx2(m, n, k, a, lda, w, ldw, bias, accumulate, c, ldc);
        return;
    }
    if (m <= 0 || n <= 0) return;
    if (bias) add_bias(m, n, bias, accumulate, c, ldc);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, w, ldw,
                accumulate || bias ? 1.0f : 0.0f, c, ldc);
}
