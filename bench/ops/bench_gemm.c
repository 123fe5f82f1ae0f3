/* bench_gemm: the CPU backend's weight GEMMs against OpenBLAS's cblas_sgemm, one thread each,
 * on the weight GEMM shapes of Swin UNETR f=48 (m rows of activations, W k x n): the float32
 * kernels of gemm_f32.h (AVX2, AVX-512) and the bfloat16 one of AVX512_BF16 (gemm_bf16.h, W
 * in bfloat16), where this CPU has them. GFLOP/s of each (2 m n k per call), best of 7
 * alternating rounds, and each kernel's speed relative to OpenBLAS. A markdown table on
 * stdout. Exit: 0 ok, 1 this CPU has no AVX2 + FMA. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/gemm/gemm_f32.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct shape {
    int m, n, k, ldc;
    bool acc;
    const char *what;
};

int main(void)
{
    if (swin_cpu_simd_of_cpu() < SWIN_CPU_SIMD_AVX2) {
        fprintf(stderr, "bench_gemm: this CPU has no AVX2 + FMA\n");
        return 1;
    }
    openblas_set_num_threads(1);
    const struct shape shapes[] = {
        {48, 48, 48, 96, false, "conv_transpose2 96^3 48->48, one line and tap"},
        {512, 48, 96, 48, false, "1x1 conv 96->48 (decoder1 residual)"},
        {512, 14, 48, 14, true, "1x1 conv 48->14 (output)"},
        {512, 48, 1, 48, true, "1x1 conv 1->48 (encoder1 residual)"},
        {256, 192, 48, 192, true, "MLP fc1, stage 0"},
        {256, 48, 192, 48, true, "MLP fc2, stage 0"},
        {343, 144, 48, 144, true, "attention qkv, stage 0"},
        {343, 48, 48, 48, true, "attention proj, stage 0"},
        {256, 384, 96, 384, true, "MLP fc1, stage 1"},
        {256, 96, 384, 96, true, "MLP fc2, stage 1"},
        {343, 288, 96, 288, true, "attention qkv, stage 1"},
        {512, 96, 384, 96, false, "patch merge 48^3 -> 24^3"},
        {256, 768, 192, 768, true, "MLP fc1, stage 2"},
        {256, 192, 768, 192, true, "MLP fc2, stage 2"},
        {216, 1536, 384, 1536, true, "MLP fc1, stage 3"},
        {216, 384, 1536, 384, true, "MLP fc2, stage 3"},
        {216, 1152, 384, 1152, true, "attention qkv, stage 3"},
        {216, 384, 3072, 768, false, "patch merge 6^3 -> 3^3 (m 27 in the model)"},
        {6, 384, 768, 768, false, "conv_transpose2 6^3 768->384, one line and tap"},
        {512, 96, 192, 96, false, "1x1 conv 192->96 (decoder3 residual)"},
    };
    const bool avx512 = swin_cpu_simd_of_cpu() >= SWIN_CPU_SIMD_AVX512;
    const bool bf16 = swin_cpu_simd_of_cpu() >= SWIN_CPU_SIMD_AVX512_BF16;
    printf("| shape | m x n x k | OpenBLAS GFLOP/s | AVX2 GFLOP/s | AVX2 / OpenBLAS | AVX-512 GFLOP/s | AVX-512 / "
           "OpenBLAS | bf16 AVX512_BF16 GFLOP/s | bf16 / OpenBLAS |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const struct shape sh = shapes[s];
        float *a = malloc(sizeof(float) * (size_t)sh.m * sh.k), *w = malloc(sizeof(float) * (size_t)sh.k * sh.n);
        float *c = malloc(sizeof(float) * (size_t)sh.m * sh.ldc);
        for (size_t i = 0; i < (size_t)sh.m * sh.k; i++) a[i] = (float)(i % 17) * 0.01f - 0.08f;
        for (size_t i = 0; i < (size_t)sh.k * sh.n; i++) w[i] = (float)(i % 13) * 0.01f - 0.06f;
        for (size_t i = 0; i < (size_t)sh.m * sh.ldc; i++) c[i] = 0.0f;
        swin_bf16 *wb = malloc(sizeof(swin_bf16) * (size_t)sh.k * sh.n);
        for (size_t i = 0; i < (size_t)sh.k * sh.n; i++) wb[i] = swin_bf16_from_f32(w[i]);
        const double flop = 2.0 * sh.m * sh.n * sh.k;
        const long calls = (long)(2e8 / flop) + 1;
        double best[4] = {1e9, 1e9, 1e9, 1e9};
        for (int round = 0; round < 7; round++)
            for (int v = 0; v < (bf16 ? 4 : avx512 ? 3 : 2); v++) {
                const double t0 = now();
                for (long q = 0; q < calls; q++) {
                    if (v == 3)
                        swin_cpu_gemm_bf16_avx512bf16(sh.m, sh.n, sh.k, a, sh.k, wb, sh.n, NULL, sh.acc, c, sh.ldc);
                    else if (v == 2) swin_cpu_sgemm_avx512(sh.m, sh.n, sh.k, a, sh.k, w, sh.n, NULL, sh.acc, c, sh.ldc);
                    else if (v == 1) swin_cpu_sgemm_avx2(sh.m, sh.n, sh.k, a, sh.k, w, sh.n, NULL, sh.acc, c, sh.ldc);
                    else
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sh.m, sh.n, sh.k, 1.0f, a, sh.k, w, sh.n,
                                    sh.acc ? 1.0f : 0.0f, c, sh.ldc);
                }
                const double t = (now() - t0) / (double)calls;
                if (t < best[v]) best[v] = t;
            }
        printf("| %s | %d x %d x %d | %.1f | %.1f | %.2fx |", sh.what, sh.m, sh.n, sh.k, flop / best[0] * 1e-9,
               flop / best[1] * 1e-9, best[0] / best[1]);
        if (avx512) printf(" %.1f | %.2fx |", flop / best[2] * 1e-9, best[0] / best[2]);
        else printf(" - | - |");
        if (bf16) printf(" %.1f | %.2fx |\n", flop / best[3] * 1e-9, best[0] / best[3]);
        else printf(" - | - |\n");
        free(a), free(w), free(c), free(wb);
    }
    return 0;
}
