/* patch_merge: CUDA backend (emulated: gather of the 8 sub-grids, LN over 8C, reduction
 * GEMM) against swin_cpu_ops, for the three merge orders of core/model.h.
 * Tolerance: 2e-5 relative to max(1, max|ref|): one fp32 GEMM of K = 8C <= 192 with
 * normalised inputs (|a| <= ~4) and |w| <= 0.2 in a different order (~192 * 6e-8 * 0.8),
 * LN over 8C in fp32 vs double.
 * Shapes: odd C, dims where one output axis is 1, out written into a channel slice; the
 * gather's 16-byte units and their fallback (C 40 pitch 44: units in float32 only).
 * Half mode: 1.5e-3, float16 roundings of the normalised concat and of the output;
 * measured 4.1e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

/* chunk_rows > 0: the CUDA backend's chunk budget holds that many output rows (8C
 * elements each, patch_merge.cu; at least 64), so they run over several chunks. */
static bool merge_chunked_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int C, int in_pitch,
                               const swin_merge_order order, long long chunk_rows)
{
    const float *nw = ct_weight(e, r, (size_t)8 * C, 0.5f, 1.5f);
    const float *nb = ct_weight(e, r, (size_t)8 * C, -0.3f, 0.3f);
    const float *rw = ct_weight(e, r, (size_t)8 * C * 2 * C, -0.2f, 0.2f);
    ct_env_upload(e);
    if (chunk_rows) ct_set_chunk_bytes(e, (size_t)(chunk_rows * 8 * C) * swin_dtype_bytes(ct_dtype()));
    cvol in = cvol_new(d, h, w, C, in_pitch, r, -2.0f, 2.0f);
    cvol out = cvol_new(d / 2, h / 2, w / 2, 2 * C + 3, 2 * C + 3, r, -1.0f, 1.0f);
    struct swin_vol oh, od;
    cvol_slice(&out, 1, 2 * C, &oh, &od);
    const size_t cws = swin_cpu_ops.patch_merge_ws(e->cpu, oh, in.host);
    const size_t gws = swin_cuda_ops.patch_merge_ws(e->gpu, od, in.dev);
    void *hw = ct_host_ws(cws), *dw = ct_dev_ws(gws);
    ct_rc(what, swin_cpu_ops.patch_merge(e->cpu, oh, in.host, order, nw, nb, rw, hw, cws), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.patch_merge(e->gpu, od, in.dev, order, nw, nb, rw, dw, gws), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &out, 1, 2 * C, CT_TOL(2e-5, 1.5e-3));
    const long long nout = (long long)(d / 2) * (h / 2) * (w / 2);
    if (chunk_rows) ok &= ct_check_chunks(what, e, SWIN_CUDA_CHUNKED_MERGE, (nout + chunk_rows - 1) / chunk_rows);
    ct_host_ws_free(hw);
    ct_dev_ws_free(dw);
    cvol_free(&in);
    cvol_free(&out);
    return ok;
}

static bool merge_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int C, int in_pitch,
                       const swin_merge_order order)
{
    return merge_chunked_case(e, r, what, d, h, w, C, in_pitch, order, 0);
}

int main(void)
{
    test_rng r = {0x5eed};
    ct_env e;
    ct_env_init(&e, 1 << 18);
    bool ok = merge_case(&e, &r, "patch_merge v1.5 order, 4x6x2, C 5", 4, 6, 2, 5, 7, swin_merge_order_v15);
    ok &= merge_case(&e, &r, "patch_merge pre-1.5 order, 6x2x4, C 5", 6, 2, 4, 5, 5, swin_merge_order_pre15);
    ok &= merge_case(&e, &r, "patch_merge v2 order, 4x4x6, C 24", 4, 4, 6, 24, 24, swin_merge_order_v2);
    /* The gather's 16-byte path (C and the pitch whole 16-byte units) and its fallback:
     * C 40 pitch 44 is whole in float32 only; C 48 over 48 output rows (6 blocks of warps). */
    ok &= merge_case(&e, &r, "patch_merge v1.5 order, 4x6x6, C 40 pitch 44", 4, 6, 6, 40, 44, swin_merge_order_v15);
    ok &= merge_case(&e, &r, "patch_merge v2 order, 6x8x8, C 48", 6, 8, 8, 48, 48, swin_merge_order_v2);
    /* Several chunks (the default holds every row): 150 output rows in chunks of 64 (64,
     * 64, 22), the second and later chunks' voxel offset in the gather and the output
     * rows, with the 16-byte gather (C 8) and the element one (C 6). */
    ok &= merge_chunked_case(&e, &r, "patch_merge v1.5 order, 10x10x12, C 8, 64 rows per chunk", 10, 10, 12, 8, 8,
                             swin_merge_order_v15, 64);
    ok &= merge_chunked_case(&e, &r, "patch_merge v2 order, 10x10x12, C 6 pitch 7, 64 rows per chunk", 10, 10, 12, 6,
                             7, swin_merge_order_v2, 64);
    ct_env_free(&e);
    return test_exit(ok);
}
