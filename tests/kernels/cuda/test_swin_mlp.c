/* swin_mlp: CUDA backend (emulated: LN2 rows, fc1 GEMM with GELU epilogue, fc2 GEMM adding
 * into x) against swin_cpu_ops.
 * Tolerance: 2e-5 relative to max(1, max|ref|): two fp32 GEMMs of K = C and K = hidden
 * (<= 100) of values <= ~3 x 0.2 in different summation orders, erff identical formula;
 * bound ~ 100 * 6e-8 * 0.6 per GEMM, plus LN in fp32 vs double (~1e-6).
 * Shapes: odd C and hidden (not multiples of the 64 tile or 16 k-step), x with pitch > C.
 * Half mode: 1.5e-3, float16 roundings of LN2's output, of the hidden activations and
 * of x; measured 3.5e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

#include <string.h>

/* chunk_rows > 0: the CUDA backend's chunk budget holds that many rows (C + hidden
 * elements each, swin_mlp.cu; at least 64), so the voxels run over several chunks. */
static bool mlp_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int C, int pitch, int hidden,
                     long long chunk_rows)
{
    struct swin_block_w b;
    memset(&b, 0, sizeof b);
    b.norm2_w = ct_weight(e, r, C, 0.5f, 1.5f);
    b.norm2_b = ct_weight(e, r, C, -0.3f, 0.3f);
    b.fc1_w = ct_weight(e, r, (size_t)C * hidden, -0.2f, 0.2f);
    b.fc1_b = ct_weight(e, r, hidden, -0.5f, 0.5f);
    b.fc2_w = ct_weight(e, r, (size_t)hidden * C, -0.2f, 0.2f);
    b.fc2_b = ct_weight(e, r, C, -0.5f, 0.5f);
    ct_env_upload(e);
    if (chunk_rows) ct_set_chunk_bytes(e, (size_t)(chunk_rows * (C + hidden)) * swin_dtype_bytes(ct_dtype()));
    cvol x = cvol_new(d, h, w, C, pitch, r, -2.0f, 2.0f);
    const size_t cws = swin_cpu_ops.swin_mlp_ws(e->cpu, x.host, hidden);
    const size_t gws = swin_cuda_ops.swin_mlp_ws(e->gpu, x.dev, hidden);
    void *hw = ct_host_ws(cws), *dw = ct_dev_ws(gws);
    ct_rc(what, swin_cpu_ops.swin_mlp(e->cpu, x.host, &b, hidden, hw, cws), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.swin_mlp(e->gpu, x.dev, &b, hidden, dw, gws), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &x, 0, C, CT_TOL(2e-5, 1.5e-3));
    const long long nvox = (long long)d * h * w;
    if (chunk_rows) ok &= ct_check_chunks(what, e, SWIN_CUDA_CHUNKED_MLP, (nvox + chunk_rows - 1) / chunk_rows);
    ct_host_ws_free(hw);
    ct_dev_ws_free(dw);
    cvol_free(&x);
    return ok;
}

int main(void)
{
    test_rng r = {0x31f};
    ct_env e;
    ct_env_init(&e, 1 << 18);
    bool ok = mlp_case(&e, &r, "swin_mlp 5x6x7, C 12, hidden 48", 5, 6, 7, 12, 12, 48, 0);
    ok &= mlp_case(&e, &r, "swin_mlp 3x5x4, C 37 pitch 40, hidden 100", 3, 5, 4, 37, 40, 100, 0);
    /* Several chunks (the default holds every row): 210 rows in chunks of 80 (80, 80, 50),
     * the second and later chunks' row offset into x with its pitch. */
    ok &= mlp_case(&e, &r, "swin_mlp 5x6x7, C 20 pitch 23, hidden 80, 80 rows per chunk", 5, 6, 7, 20, 23, 80, 80);
    ct_env_free(&e);
    return test_exit(ok);
}
