/* wmma GEMMs (fp16, bf16, tf32) against a naive GEMM, with the identity and scrambled
 * fragment layouts; a kernel that assumes a layout must break under scrambling. Inputs
 * are multiples of 1/4 below 8, exact in every input type, so results are exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_wmma.h"

enum { M = 48, N = 32, K = 64 };

static void fill_quarters(test_rng *r, float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)((int)test_rng_uniform(r, 0.0f, 63.999f) - 32) / 4.0f;
}

/* C (row-major, or column-major if col) = alpha * A (row-major) * B (column-major). */
static void ref_gemm(const float *a, const float *b, float *c, int m, int n, int k, float alpha, int col)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int l = 0; l < k; l++)
                s += (double)a[i * k + l] * b[j * k + l];
            c[col ? j * m + i : i * n + j] = (float)(alpha * s);
        }
}

static bool test_gemms(test_rng *rng, const char *layout)
{
    float a[M * K], b[K * N], c[M * N], ref[M * N];
    fill_quarters(rng, a, M * K);
    fill_quarters(rng, b, K * N);
    float *da = emu_upload(a, sizeof a), *db = emu_upload(b, sizeof b), *dc = emu_alloc(sizeof c);
    void *a16 = emu_alloc(M * K * 2), *b16 = emu_alloc(K * N * 2);
    bool ok = true;
    char what[96];

    ok &= check_true("to half", kwm_to_half(da, a16, M * K) == cudaSuccess && kwm_to_half(db, b16, K * N) == cudaSuccess);
    ok &= check_true("gemm f16", kwm_gemm_f16(a16, b16, dc, M, N, K, 0.5f) == cudaSuccess);
    emu_download(c, dc, sizeof c);
    ref_gemm(a, b, ref, M, N, K, 0.5f, 0);
    snprintf(what, sizeof what, "wmma m16n16k16 f16->f32 (%s layout)", layout);
    ok &= check_close(what, c, ref, M * N, 0.0, 0.0);

    ok &= check_true("to bf16", kwm_to_bf16(da, a16, M * K) == cudaSuccess && kwm_to_bf16(db, b16, K * N) == cudaSuccess);
    ok &= check_true("gemm bf16", kwm_gemm_bf16(a16, b16, dc, M, N, K, -2.0f) == cudaSuccess);
    emu_download(c, dc, sizeof c);
    ref_gemm(a, b, ref, M, N, K, -2.0f, 0);
    snprintf(what, sizeof what, "wmma m16n16k16 bf16->f32 (%s layout)", layout);
    ok &= check_close(what, c, ref, M * N, 0.0, 0.0);

    ok &= check_true("gemm tf32", kwm_gemm_tf32(da, db, dc, M, N, K) == cudaSuccess);
    emu_download(c, dc, sizeof c);
    ref_gemm(a, b, ref, M, N, K, 1.0f, 1);
    snprintf(what, sizeof what, "wmma m16n16k8 tf32->f32, column-major store (%s layout)", layout);
    ok &= check_close(what, c, ref, M * N, 0.0, 0.0);

    emu_free(da), emu_free(db), emu_free(dc), emu_free(a16), emu_free(b16);
    return ok;
}

/* Returns how many of the 256 tile elements the layout-assuming kernel put elsewhere. */
static int misplaced_by_layout_assumption(void)
{
    float in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (float)i;
    float *din = emu_upload(in, sizeof in), *dout = emu_alloc(sizeof out);
    if (kwm_assume_layout(din, dout) != cudaSuccess)
        return -1;
    emu_download(out, dout, sizeof out);
    int bad = 0;
    for (int i = 0; i < 256; i++)
        bad += out[i] != in[i];
    emu_free(din), emu_free(dout);
    return bad;
}

int main(void)
{
    test_rng rng = {0x3A3A};
    bool ok = true;
    cuemu_set_wmma_layout(0);
    ok &= test_gemms(&rng, "identity");
    ok &= check_true("the layout assumption happens to hold for the identity layout",
                     misplaced_by_layout_assumption() == 0);
    for (unsigned long long seed = 1; seed <= 3; seed++) {
        cuemu_set_wmma_layout(seed * 7919);
        ok &= test_gemms(&rng, "scrambled");
        int bad = misplaced_by_layout_assumption();
        fprintf(stderr, "scrambled:%llu: the layout-assuming kernel misplaced %d of 256 elements\n",
                seed * 7919, bad);
        ok &= check_true("a scrambled layout breaks the layout assumption", bad > 200);
    }
    ok &= check_true("no device memory left", cuemu_mem_live_allocations() == 0);
    return test_exit(ok);
}
