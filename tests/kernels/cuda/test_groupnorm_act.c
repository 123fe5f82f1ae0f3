/* groupnorm_act: CUDA backend (emulated) against swin_cpu_ops (itself held to float64
 * torch.nn.GroupNorm in tests/kernels/cpu/test_groupnorm_act.c).
 * Tolerance: as instnorm_act's, 2e-5 relative to max(1, max|ref|); half mode 1e-3.
 * Shapes: 12 channels in 3, 4, 1 and 12 groups; 990 voxels (4 reduction parts); c 300 in 2
 * groups (one group wider than the 256-channel block), 3 (spans of 200: a block and a rest)
 * and 60 (cpg 5: spans of 255 and a short last one); pitch > c, the 16-byte vector path and
 * its fallback; the residual group-normalised with its own affine, or added as it is; values
 * in [100, 101] (the merge of the channels' moments). */
#include "tests/kernels/cuda/cuda_op_test.h"

#include "kernels/op_check.h"

enum { RES_NONE, RES_PLAIN, RES_NORM };

static bool gn_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int pitch, int groups,
                    int residual, bool lrelu, float lo, float hi)
{
    const float *g = ct_weight(e, r, (size_t)c, 0.5f, 1.5f), *b = ct_weight(e, r, (size_t)c, -0.5f, 0.5f);
    const bool res_norm = residual == RES_NORM;
    const float *rg = res_norm ? ct_weight(e, r, (size_t)c, -1.5f, 1.5f) : NULL;
    const float *rb = res_norm ? ct_weight(e, r, (size_t)c, -0.5f, 0.5f) : NULL;
    ct_env_upload(e);
    cvol x = cvol_new(d, h, w, c, pitch, r, lo, hi);
    cvol res = cvol_new(d, h, w, c, c + 4, r, res_norm ? lo : -1.0f, res_norm ? hi : 1.0f);
    const struct swin_residual rh = {.v = res.host, .normalize = res_norm, .gamma = rg, .beta = rb},
                               rd = {.v = res.dev, .normalize = res_norm, .gamma = rg, .beta = rb};
    ct_rc(what, swin_op_groupnorm_act(&swin_cpu_ops, e->cpu, x.host, NULL, groups, g, b, residual ? &rh : NULL, lrelu),
          &swin_cpu_ops, e->cpu);
    const struct swin_ops *cuda = swin_cuda_ops_for(ct_dtype());
    ct_rc(what, swin_op_groupnorm_act(cuda, e->gpu, x.dev, NULL, groups, g, b, residual ? &rd : NULL, lrelu), cuda,
          e->gpu);
    bool ok = cvol_compare(what, &x, 0, c, CT_TOL(2e-5, 1e-3));
    cvol_free(&x);
    cvol_free(&res);
    return ok;
}

int main(void)
{
    test_rng r = {515151};
    ct_env e;
    ct_env_init(&e, 4096);
    bool ok = gn_case(&e, &r, "groupnorm 3 groups + lrelu, c 12", 5, 6, 7, 12, 12, 3, RES_NONE, true, -3.0f, 5.0f);
    ok &= gn_case(&e, &r, "groupnorm 4 groups + residual, c 12 pitch 14, 990 voxels", 9, 10, 11, 12, 14, 4, RES_PLAIN,
                  true, -3.0f, 5.0f);
    ok &= gn_case(&e, &r, "groupnorm 1 group + GN(residual), c 12", 4, 5, 7, 12, 12, 1, RES_NORM, true, -3.0f, 5.0f);
    ok &= gn_case(&e, &r, "groupnorm 12 groups (instance norm), c 12", 4, 5, 7, 12, 16, 12, RES_NORM, false, -3.0f,
                  5.0f);
    ok &= gn_case(&e, &r, "groupnorm 2 groups of 150, c 300", 3, 4, 5, 300, 301, 2, RES_NORM, true, -3.0f, 5.0f);
    ok &= gn_case(&e, &r, "groupnorm 3 groups of 100, c 300 (vectors)", 3, 4, 5, 300, 300, 3, RES_NONE, false, -3.0f,
                  5.0f);
    ok &= gn_case(&e, &r, "groupnorm 60 groups of 5, c 300", 3, 4, 5, 300, 304, 60, RES_NORM, true, -3.0f, 5.0f);
    ok &= gn_case(&e, &r, "groupnorm 3 groups, values in [100, 101], 990 voxels", 9, 10, 11, 12, 12, 3, RES_NORM,
                  false, 100.0f, 101.0f);
    ct_env_free(&e);
    return test_exit(ok);
}
