/* conv3d: CUDA backend (emulated implicit GEMM) against swin_cpu_ops (im2col + OpenBLAS).
 * Tolerance: 2e-5 relative to max(1, max|ref|): K = k^3 cin <= 1728 fp32 products of
 * |x| <= 1, |w| <= 0.2 (sums ~ sqrt(K) * 0.1), summed in a different order by the two
 * GEMMs; the rounding error bound K u max|x w| ~ 1728 * 6e-8 * 0.2 ~ 2e-5 is reached only
 * by adversarial signs, the observed error is ~1e-6.
 * Shapes: every (k, stride, pad) forward() uses (3/1/1, 1/1/0, 2/2/0) plus 3/2/1, dims not
 * multiples of anything, cin and cout odd, cout > 64 (two GEMM column tiles), K not a
 * multiple of 16, M over one 128-row tile, N on 48- and 64-column tiles, split-K (deep
 * layers: few tiles, long K; workspace from conv3d_ws), output into a channel slice of a
 * wider volume, bias and no bias.
 * Further shapes for the pipelined loader of conv_igemm.cuh: cin 1, 5, 8, 12, 16, 20, 32,
 * 48, 96 (16- and 4-byte copies, the generic loader for float16 with odd cin), cout 14,
 * 16, 24, 48, 88, 96, 144 (48/96-column tiles, partial), stride 2, input pitch > cin.
 * Half mode: 1e-3, the float16 rounding of the output (and, with split-K, of nothing
 * else: partial sums stay fp32); measured 3.2e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

static bool conv_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int cin, int in_pitch, int cout,
                      int out_pitch, int out_c0, int k, int stride, int pad, bool bias)
{
    const float *wt = ct_weight(e, r, (size_t)k * k * k * cin * cout, -0.2f, 0.2f);
    const float *bs = bias ? ct_weight(e, r, (size_t)cout, -1.0f, 1.0f) : NULL;
    ct_env_upload(e);
    const int od = (d + 2 * pad - k) / stride + 1, oh = (h + 2 * pad - k) / stride + 1,
              ow = (w + 2 * pad - k) / stride + 1;
    cvol in = cvol_new(d, h, w, cin, in_pitch, r, -1.0f, 1.0f);
    cvol out = cvol_new(od, oh, ow, out_pitch, out_pitch, r, -1.0f, 1.0f);
    struct swin_vol oh_, od_;
    cvol_slice(&out, out_c0, cout, &oh_, &od_);
    const size_t cws = swin_cpu_ops.conv3d_ws(e->cpu, oh_, in.host, wt, k, stride, pad, false),
                 gws = swin_cuda_ops.conv3d_ws(e->gpu, od_, in.dev, wt, k, stride, pad, false);
    void *hw = ct_host_ws(cws), *dw = ct_dev_ws(gws);
    ct_rc(what, swin_cpu_ops.conv3d(e->cpu, oh_, NULL, in.host, wt, bs, k, stride, pad, hw, cws), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.conv3d(e->gpu, od_, NULL, in.dev, wt, bs, k, stride, pad, dw, gws), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &out, out_c0, cout, CT_TOL(2e-5, 1e-3));
    ct_host_ws_free(hw);
    ct_dev_ws_free(dw);
    cvol_free(&in);
    cvol_free(&out);
    return ok;
}

int main(void)
{
    test_rng r = {31337};
    ct_env e;
    ct_env_init(&e, 1 << 20);
    bool ok =
        conv_case(&e, &r, "conv3d k3 s1 p1, 5x6x7, 3 -> 5 into a slice, bias", 5, 6, 7, 3, 4, 5, 11, 2, 3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 4x5x3, 13 -> 70 (K 351)", 4, 5, 3, 13, 13, 70, 70, 0, 3, 1, 1, false);
    ok &= conv_case(&e, &r, "conv3d k1, 17 -> 3, in pitch 20, bias", 3, 5, 4, 17, 20, 3, 3, 0, 1, 1, 0, true);
    ok &=
        conv_case(&e, &r, "conv3d k2 s2 (patch embed), 6x4x8, 2 -> 12, bias", 6, 4, 8, 2, 2, 12, 12, 0, 2, 2, 0, true);
    ok &= conv_case(&e, &r, "conv3d k3 s2 p1, 7x6x5, 4 -> 9", 7, 6, 5, 4, 4, 9, 9, 0, 3, 2, 1, false);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 5x6x9 (2 row tiles), 6 -> 96 (48-col tiles)", 5, 6, 9, 6, 6, 96, 96, 0, 3,
                    1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1 split-K, 3x3x2, 64 -> 40 (K 1728, 3 splits) into a slice, bias", 3, 3, 2,
                    64, 64, 40, 45, 5, 3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k1 split-K, 2x2x3, 1100 -> 7 (K 1100, 2 splits)", 2, 2, 3, 1100, 1100, 7, 7, 0, 1,
                    1, 0, false);
    /* The pipelined loader (conv_igemm.cuh): 16-byte copies (cin, pitch and cout
     * multiples of 8 halves / 4 floats), 4-byte copies otherwise, the generic loader for
     * float16 with an odd cin; 48- and 96-column tiles; k-steps spanning taps (cin < 16 or
     * not a multiple of 16); halo taps on every face; partial row and column tiles. */
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 6x5x7 (2 row tiles, partial), 16 -> 48", 6, 5, 7, 16, 16, 48, 48, 0, 3,
                    1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 4x6x5, 32 -> 96, in pitch 40", 4, 6, 5, 32, 40, 96, 96, 0, 3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s2 p1, 9x7x8, 48 -> 14", 9, 7, 8, 48, 48, 14, 14, 0, 3, 2, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 5x4x6, 1 -> 48", 5, 4, 6, 1, 1, 48, 48, 0, 3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 3x4x5, 48 -> 96, in pitch 52, into a slice", 3, 4, 5, 48, 52, 96, 100, 4,
                    3, 1, 1, false);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 4x4x4, 12 -> 24 (K 324)", 4, 4, 4, 12, 12, 24, 24, 0, 3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s2 p1, 6x6x6, 8 -> 16", 6, 6, 6, 8, 8, 16, 16, 0, 3, 2, 1, false);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 5x7x4, 5 -> 144 (48 + 96 tiles)", 5, 7, 4, 5, 5, 144, 144, 0, 3, 1, 1,
                    true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1 split-K, 2x3x2, 96 -> 48 (K 2592, 5 splits)", 2, 3, 2, 96, 96, 48, 48, 0,
                    3, 1, 1, true);
    ok &= conv_case(&e, &r, "conv3d k3 s1 p1, 3x5x9 (2 row tiles), 20 -> 88 (one partial 96-col tile)", 3, 5, 9, 20,
                    20, 88, 88, 0, 3, 1, 1, true);
    ct_env_free(&e);
    return test_exit(ok);
}
