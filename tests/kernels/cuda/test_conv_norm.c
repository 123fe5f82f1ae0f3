/* conv3d with statistics, then instnorm_act reading them (the forward's conv -> instance
 * norm pairs): CUDA backend (emulated) against swin_cpu_ops' conv3d and instnorm_act,
 * whose statistics come from a read of the conv's output (an independent path).
 * Both results are compared: the conv output (the statistics epilogue stores it itself)
 * and the normalised output.
 * Paths: the implicit-GEMM kernels' tile statistics (conv_tile_stats.cuh) merged into
 * voxel parts (conv_stats.cu) with 1 tile per part and with 2 (over 256 tiles), a last
 * tile and a last part cut short, 48- and 96-column tiles, partial column tiles, a second
 * column tile (n0 > 0), 16- and 4-byte loaders, stride 2; and the paths that fill the
 * statistics by a read of the output: split-K, the 1x1 row GEMM, float16 with an odd cin.
 * Outputs into a channel slice; affine, residual (as it is, and instance-normalised in the same
 * op: its statistics by a read while x's come from the conv) and LeakyReLU.
 * A mean far from zero relative to the spread (bias 6-9, conv outputs ~0.3) in float32,
 * so a statistic that is off shows after the normalisation magnifies it ~25x; in half
 * mode that output would be dominated by its own float16 rounding (2^-11 of 9 against
 * a spread of 0.3), so the bias stays in [-1, 1] there.
 * Tolerances: conv as tests/kernels/cuda/test_conv3d.c (2e-5 / 1e-3); normalised output, relative
 * to max(1, max|ref|) (~5): 1e-5 in float32 (the magnified rounding differences of the
 * conv outputs; measured 1.2e-6), 3e-3 in half (the float16 rounding of the stored conv
 * output, ~2^-11 of it, over a spread of ~0.3; measured 6e-4). */
#include <stdio.h>

#include "tests/kernels/cuda/cuda_op_test.h"

struct conv_shape {
    int d, h, w, cin, in_pitch, cout, out_pitch, out_c0, k, stride, pad;
};

/* residual: 0 none, 1 added as it is, 2 instance-normalised in the op (with its affine when affine) */
static bool conv_norm_case(ct_env *e, test_rng *r, const char *what, struct conv_shape s, bool affine, int residual)
{
    const bool half = ct_dtype() == SWIN_F16;
    const float *wt = ct_weight(e, r, (size_t)s.k * s.k * s.k * s.cin * s.cout, -0.2f, 0.2f);
    const float *bs = ct_weight(e, r, (size_t)s.cout, half ? -1.0f : 6.0f, half ? 1.0f : 9.0f);
    const float *g = affine ? ct_weight(e, r, (size_t)s.cout, 0.5f, 1.5f) : NULL;
    const float *b = affine ? ct_weight(e, r, (size_t)s.cout, -0.5f, 0.5f) : NULL;
    const float *rg = residual == 2 && affine ? ct_weight(e, r, (size_t)s.cout, 0.5f, 1.5f) : NULL;
    const float *rb = residual == 2 && affine ? ct_weight(e, r, (size_t)s.cout, -0.5f, 0.5f) : NULL;
    ct_env_upload(e);
    const int od = (s.d + 2 * s.pad - s.k) / s.stride + 1, oh = (s.h + 2 * s.pad - s.k) / s.stride + 1,
              ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
    cvol in = cvol_new(s.d, s.h, s.w, s.cin, s.in_pitch, r, -1.0f, 1.0f);
    cvol out = cvol_new(od, oh, ow, s.out_pitch, s.out_pitch, r, -1.0f, 1.0f);
    cvol res = cvol_new(od, oh, ow, s.cout, s.cout, r, -1.0f, 1.0f);
    struct swin_vol ov_h, ov_d;
    cvol_slice(&out, s.out_c0, s.cout, &ov_h, &ov_d);
    const size_t cws = swin_cpu_ops.conv3d_ws(e->cpu, ov_h, in.host, wt, s.k, s.stride, s.pad, false),
                 gws = swin_cuda_ops.conv3d_ws(e->gpu, ov_d, in.dev, wt, s.k, s.stride, s.pad, true),
                 sb = swin_cuda_ops.conv3d_stats_bytes(e->gpu, ov_d);
    void *hw = ct_host_ws(cws), *dw = ct_dev_ws(gws), *stats = ct_dev_ws(sb);
    ct_rc(what, swin_cpu_ops.conv3d(e->cpu, ov_h, NULL, in.host, wt, bs, s.k, s.stride, s.pad, hw, cws), &swin_cpu_ops,
          e->cpu);
    ct_rc(what, swin_cuda_ops.conv3d(e->gpu, ov_d, stats, in.dev, wt, bs, s.k, s.stride, s.pad, dw, gws),
          &swin_cuda_ops, e->gpu);
    char name[200];
    snprintf(name, sizeof name, "%s: conv", what);
    bool ok = cvol_compare(name, &out, s.out_c0, s.cout, CT_TOL(2e-5, 1e-3));
    const struct swin_residual rh = {.v = res.host, .normalize = residual == 2, .gamma = rg, .beta = rb},
                               rd = {.v = res.dev, .normalize = residual == 2, .gamma = rg, .beta = rb};
    ct_rc(what, swin_cpu_ops.instnorm_act(e->cpu, ov_h, NULL, true, g, b, residual ? &rh : NULL, true),
          &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.instnorm_act(e->gpu, ov_d, stats, true, g, b, residual ? &rd : NULL, true),
          &swin_cuda_ops, e->gpu);
    snprintf(name, sizeof name, "%s: instance norm", what);
    ok &= cvol_compare(name, &out, s.out_c0, s.cout, CT_TOL(1e-5, 3e-3));
    ct_host_ws_free(hw);
    ct_dev_ws_free(dw);
    ct_dev_ws_free(stats);
    cvol_free(&in);
    cvol_free(&out);
    cvol_free(&res);
    return ok;
}

int main(void)
{
    test_rng r = {20261125};
    ct_env e;
    ct_env_init(&e, 1 << 20);
    /* tile statistics: 990 voxels = 8 tiles (the last 94 rows), 8 parts of one tile */
    bool ok = conv_norm_case(&e, &r, "k3, 9x10x11, 16 -> 48, affine + residual",
                             (struct conv_shape){9, 10, 11, 16, 16, 48, 48, 0, 3, 1, 1}, true, true);
    /* 33^3 = 35937 voxels: 281 tiles, 2 per part, 141 parts (the last one tile, cut short) */
    ok &= conv_norm_case(&e, &r, "k3, 33^3, 4 -> 12 (2 tiles per part)",
                         (struct conv_shape){33, 33, 33, 4, 4, 12, 12, 0, 3, 1, 1}, false, false);
    ok &= conv_norm_case(&e, &r, "k3, 5x6x9, 12 -> 88 into a slice (one partial 96-column tile), in pitch 20",
                         (struct conv_shape){5, 6, 9, 12, 20, 88, 92, 2, 3, 1, 1}, true, false);
    ok &= conv_norm_case(&e, &r, "k3, 4x5x7, 8 -> 144 (a 48- and a 96-column tile)",
                         (struct conv_shape){4, 5, 7, 8, 8, 144, 144, 0, 3, 1, 1}, false, true);
    ok &= conv_norm_case(&e, &r, "k3, 9x10x11, 16 -> 48, affine + IN(residual) affine",
                         (struct conv_shape){9, 10, 11, 16, 16, 48, 48, 0, 3, 1, 1}, true, 2);
    ok &= conv_norm_case(&e, &r, "k3 s2 p1, 9x7x8, 6 -> 14 (4-byte loader)",
                         (struct conv_shape){9, 7, 8, 6, 6, 14, 14, 0, 3, 2, 1}, true, false);
    /* statistics by a read of the output */
    ok &= conv_norm_case(&e, &r, "k3 split-K, 3x3x2, 64 -> 40 (K 1728) into a slice",
                         (struct conv_shape){3, 3, 2, 64, 64, 40, 45, 5, 3, 1, 1}, true, true);
    ok &= conv_norm_case(&e, &r, "k1, 5x6x7, 17 -> 24, in pitch 20 (row GEMM)",
                         (struct conv_shape){5, 6, 7, 17, 20, 24, 24, 0, 1, 1, 0}, false, false);
    ok &= conv_norm_case(&e, &r, "k3, 5x4x6, 1 -> 48 (odd cin: the generic loader in half)",
                         (struct conv_shape){5, 4, 6, 1, 1, 48, 48, 0, 3, 1, 1}, true, false);
    ct_env_free(&e);
    return test_exit(ok);
}
