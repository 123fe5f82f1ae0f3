/* swin_attention: CUDA backend (emulated: gather+LN1, qkv GEMM, fused window attention,
 * proj GEMM with scatter) against swin_cpu_ops on the same residual stream.
 * Tolerance: 1e-4 relative to max(1, max|ref|). The attention output (|y| ~ 1) passes
 * through LN1 (double on the CPU, fp32 here), two GEMMs of K = C and 3C and a softmax
 * whose logits reach ~10 (q, k ~ 3, table in [-1, 1], -100 mask); exp/sum in a different
 * order (online softmax over key tiles of 32) gives ~1e-6 relative per stage.
 * Geometries: sizes not divisible by the window (padding, padded tokens as keys),
 * shifted and unshifted blocks, shrunk windows (L <= window on some axes, with the
 * relative-position shrink quirk), a non-cubic configured window, head dims 4, 8, 16, 32
 * (register instantiations) and 6, 10, 24, 100 (generic; 100 needs more than 48 KiB of
 * shared memory), qkv without bias, x with pitch > C.
 * Half mode: 5e-3 (head dims 16 and 32 on tensor cores, where P is also float16:
 * 2^-11 relative per weight, ~5e-4 of the output). The LN1 output and q, k, v are stored as float16 (2^-11 relative
 * each), and a logit q.k of magnitude ~25 (head dim 100) then moves by ~1e-2, which the
 * softmax turns into ~1 % of one head's output; plus the rounding of x itself. Measured
 * 1.6e-3 (the head-dim-100 case). */
#include "tests/kernels/cuda/cuda_op_test.h"

#include <string.h>

/* chunk_windows > 0: the CUDA backend's chunk budget holds that many windows (4C
 * elements per token, swin_attention.cu), so the windows run over several chunks. */
static bool attn_scaled_case(ct_env *e, test_rng *r, const char *what, const int L[3], const int cfg[3],
                             bool odd_block, int C, int heads, int pitch, bool qkv_bias, long long chunk_windows, float scale)
{
    struct swin_window_geom g = swin_window_geom_make(L, cfg, heads, odd_block);
    g.scale = scale;   /* 0: 1/sqrt(head dim) */
    const size_t T = (size_t)(2 * cfg[0] - 1) * (2 * cfg[1] - 1) * (2 * cfg[2] - 1);
    struct swin_block_w w;
    memset(&w, 0, sizeof w);
    w.norm1_w = ct_weight(e, r, C, 0.5f, 1.5f);
    w.norm1_b = ct_weight(e, r, C, -0.3f, 0.3f);
    w.qkv_w = ct_weight(e, r, (size_t)C * 3 * C, -0.4f, 0.4f);
    w.qkv_b = qkv_bias ? ct_weight(e, r, (size_t)3 * C, -0.5f, 0.5f) : NULL;
    w.bias_table = ct_weight(e, r, T * heads, -1.0f, 1.0f);
    w.proj_w = ct_weight(e, r, (size_t)C * C, -0.3f, 0.3f);
    w.proj_b = ct_weight(e, r, C, -0.2f, 0.2f);
    ct_env_upload(e);
    const long long n = (long long)g.win[0] * g.win[1] * g.win[2],
                    nw = (long long)(g.padded[0] / g.win[0]) * (g.padded[1] / g.win[1]) * (g.padded[2] / g.win[2]);
    if (chunk_windows) ct_set_chunk_bytes(e, (size_t)(chunk_windows * n * 4 * C) * swin_dtype_bytes(ct_dtype()));
    cvol x = cvol_new(L[0], L[1], L[2], C, pitch, r, -2.0f, 2.0f);
    const size_t cws = swin_cpu_ops.swin_attention_ws(e->cpu, x.host, &g);
    const size_t gws = swin_cuda_ops.swin_attention_ws(e->gpu, x.dev, &g);
    void *hw = ct_host_ws(cws), *dw = ct_dev_ws(gws);
    ct_rc(what, swin_cpu_ops.swin_attention(e->cpu, x.host, &w, &g, hw, cws), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.swin_attention(e->gpu, x.dev, &w, &g, dw, gws), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &x, 0, C, CT_TOL(1e-4, 5e-3));
    if (chunk_windows)
        ok &= ct_check_chunks(what, e, SWIN_CUDA_CHUNKED_ATTENTION, (nw + chunk_windows - 1) / chunk_windows);
    ct_host_ws_free(hw);
    ct_dev_ws_free(dw);
    cvol_free(&x);
    return ok;
}

static bool attn_chunked_case(ct_env *e, test_rng *r, const char *what, const int L[3], const int cfg[3],
                              bool odd_block, int C, int heads, int pitch, bool qkv_bias, long long chunk_windows)
{
    return attn_scaled_case(e, r, what, L, cfg, odd_block, C, heads, pitch, qkv_bias, chunk_windows, 0);
}

static bool attn_case(ct_env *e, test_rng *r, const char *what, const int L[3], const int cfg[3], bool odd_block,
                      int C, int heads, int pitch, bool qkv_bias)
{
    return attn_chunked_case(e, r, what, L, cfg, odd_block, C, heads, pitch, qkv_bias, 0);
}

int main(void)
{
    test_rng r = {0xa77e};
    ct_env e;
    ct_env_init(&e, 1 << 21);
    const int w7[3] = {7, 7, 7};
    bool ok = true;
    {
        const int L[3] = {9, 10, 11};   /* padded 14^3, 8 windows; hd 4 */
        ok &= attn_case(&e, &r, "attention 9x10x11 win 7 unshifted, C 12 heads 3", L, w7, false, 12, 3, 12, true);
        ok &= attn_case(&e, &r, "attention 9x10x11 win 7 shifted, C 12 heads 3", L, w7, true, 12, 3, 15, true);
    }
    {
        const int L[3] = {5, 8, 6};     /* win (5, 7, 6), shift (0, 3, 0), padded (5, 14, 6); hd 10 */
        ok &= attn_case(&e, &r, "attention 5x8x6 shrunk + shifted H, C 20 heads 2", L, w7, true, 20, 2, 21, true);
    }
    {
        const int L[3] = {4, 4, 4};     /* one shrunk 4^3 window (n 64, quirk bias); hd 16 */
        ok &= attn_case(&e, &r, "attention 4x4x4 shrunk window, C 32 heads 2, no qkv bias", L, w7, false, 32, 2, 32,
                        false);
    }
    {
        const int L[3] = {8, 7, 9};     /* win (7, 7, 7), shift (3, 0, 3), padded (14, 7, 14); hd 24 */
        ok &= attn_case(&e, &r, "attention 8x7x9 shifted, C 48 heads 2", L, w7, true, 48, 2, 48, true);
    }
    {
        const int L[3] = {7, 9, 5}, cw[3] = {3, 4, 5};   /* non-cubic window: win (3, 4, 5), shift (1, 2, 0) */
        ok &= attn_case(&e, &r, "attention 7x9x5 window 3x4x5 shifted, C 18 heads 3", L, cw, true, 18, 3, 18, true);
    }
    {
        const int L[3] = {6, 9, 7};     /* win (6, 7, 7), shift (0, 3, 0), padded (6, 14, 7); hd 8 */
        ok &= attn_case(&e, &r, "attention 6x9x7 shifted, C 16 heads 2", L, w7, true, 16, 2, 17, true);
    }
    {
        const int L[3] = {8, 8, 3};     /* win (7, 7, 3), shift (3, 3, 0), padded (14, 14, 3); hd 32 */
        ok &= attn_case(&e, &r, "attention 8x8x3 shifted, C 64 heads 2", L, w7, true, 64, 2, 64, true);
    }
    {
        const int L[3] = {3, 3, 3};     /* hd 100: dynamic shared memory over 48 KiB */
        ok &= attn_case(&e, &r, "attention 3x3x3, C 100 heads 1 (hd 100)", L, w7, false, 100, 1, 101, true);
    }
    /* Head dims 16 and 32 run on tensor cores in half mode (window_attention_wmma.cuh):
     * n = 343 and 60 (not multiples of the 16-key sub-tile or the 64-key tile), several
     * heads, shifted windows; a configured window of 8 (bias table 15^3 rows, more than
     * the kernel stages) takes the scalar kernel with head dim 16. */
    {
        const int L[3] = {9, 10, 11};   /* padded 14^3, 8 windows of n 343; hd 16 */
        ok &= attn_case(&e, &r, "attention 9x10x11 win 7 shifted, C 48 heads 3", L, w7, true, 48, 3, 50, true);
        ok &= attn_case(&e, &r, "attention 9x10x11 win 7 unshifted, C 48 heads 3", L, w7, false, 48, 3, 48, true);
    }
    {
        const int L[3] = {7, 9, 5}, cw[3] = {3, 4, 5};   /* n 60, shift (1, 2, 0); hd 16 */
        ok &= attn_case(&e, &r, "attention 7x9x5 window 3x4x5 shifted, C 32 heads 2", L, cw, true, 32, 2, 32, true);
        /* a scale the model file stores other than 1/sqrt(head dim) = 0.25 */
        ok &= attn_scaled_case(&e, &r, "attention 7x9x5 window 3x4x5 shifted, C 32 heads 2, scale 0.17", L, cw, true, 32, 2,
                               32, true, 0, 0.17f);
    }
    {
        const int L[3] = {10, 5, 6}, cw[3] = {6, 5, 4};   /* win (6, 5, 4), n 120, shift (3, 0, 2); hd 32 */
        ok &= attn_case(&e, &r, "attention 10x5x6 window 6x5x4 shifted, C 96 heads 3", L, cw, true, 96, 3, 96, false);
    }
    {
        const int L[3] = {4, 5, 4}, w8[3] = {8, 8, 8};   /* one shrunk window, n 80; table 3375 rows */
        ok &= attn_case(&e, &r, "attention 4x5x4 cfg window 8, C 32 heads 2", L, w8, false, 32, 2, 32, true);
    }
    /* Several chunks (the default 32 MiB holds every window of these cases): the second
     * and later chunks' token offset w0 in the gather, the attention and the scatter, and a
     * last chunk with fewer windows. 8 windows of n 343 in chunks of 3 (3, 3, 2); head dim
     * 16 takes the tensor-core kernel in half mode. 9 windows of n 60 in chunks of 4 (4, 4,
     * 1), head dim 6. */
    {
        const int L[3] = {9, 10, 11};
        ok &= attn_chunked_case(&e, &r, "attention 9x10x11 win 7 shifted, C 32 heads 2, 3 windows per chunk", L, w7,
                                true, 32, 2, 34, true, 3);
    }
    {
        const int L[3] = {7, 9, 5}, cw[3] = {3, 4, 5};
        ok &= attn_chunked_case(&e, &r, "attention 7x9x5 window 3x4x5 shifted, C 18 heads 3, 4 windows per chunk", L,
                                cw, true, 18, 3, 18, true, 4);
    }
    ct_env_free(&e);
    return test_exit(ok);
}
