/* instnorm_act: CUDA backend (emulated) against swin_cpu_ops.
 * Tolerance: 2e-5 relative to max(1, max|ref|). Both take the statistics in double; the
 * kernel applies (x - mean) * scale + shift in fp32 (the CPU in double), which is a few
 * ulp of outputs of magnitude <= ~4 (normalised values times gamma <= 1.5, + residual).
 * Shapes: odd dims, 1 and several reduction parts (990 voxels = 4 parts), c 300 (two
 * channel blocks of 256), pitch > c, residual with its own pitch, affine and plain;
 * the 16-byte vector path and its per-channel fallback; a grid-stride walk that wraps;
 * a mean far from zero relative to the spread (the statistics' cancellation); the residual
 * instance-normalised in the same op (struct swin_residual), with and without its affine,
 * across both channel blocks, with the vector path, and far from zero itself.
 * Half mode: 1e-3, the float16 output rounding (2^-11 relative) plus fp32 noise;
 * measured 3.1e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

/* residual: RES_NONE, RES_PLAIN (added as it is), RES_NORM (instance-normalised first, with
 * its own affine when affine); a normalised residual takes values in [lo, hi] as x. */
enum { RES_NONE, RES_PLAIN, RES_NORM };

static bool in_case_rg(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int pitch,
                       int res_pitch, bool normalize, bool affine, int residual, bool lrelu, float lo, float hi)
{
    const float *g = affine ? ct_weight(e, r, (size_t)c, 0.5f, 1.5f) : NULL;
    const float *b = affine ? ct_weight(e, r, (size_t)c, -0.5f, 0.5f) : NULL;
    const bool res_norm = residual == RES_NORM;
    const float *rg = res_norm && affine ? ct_weight(e, r, (size_t)c, -1.5f, 1.5f) : NULL;
    const float *rb = res_norm && affine ? ct_weight(e, r, (size_t)c, -0.5f, 0.5f) : NULL;
    ct_env_upload(e);
    cvol x = cvol_new(d, h, w, c, pitch, r, lo, hi);
    cvol res = cvol_new(d, h, w, c, res_pitch, r, res_norm ? lo : -1.0f, res_norm ? hi : 1.0f);
    const struct swin_residual rh = {.v = res.host, .normalize = res_norm, .gamma = rg, .beta = rb},
                               rd = {.v = res.dev, .normalize = res_norm, .gamma = rg, .beta = rb};
    ct_rc(what, swin_cpu_ops.instnorm_act(e->cpu, x.host, NULL, normalize, g, b, residual ? &rh : NULL, lrelu),
          &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.instnorm_act(e->gpu, x.dev, NULL, normalize, g, b, residual ? &rd : NULL, lrelu),
          &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &x, 0, c, CT_TOL(2e-5, 1e-3));
    cvol_free(&x);
    cvol_free(&res);
    return ok;
}

static bool in_case_rp(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int pitch,
                       int res_pitch, bool normalize, bool affine, int residual, bool lrelu)
{
    return in_case_rg(e, r, what, d, h, w, c, pitch, res_pitch, normalize, affine, residual, lrelu, -3.0f, 5.0f);
}

static bool in_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int pitch, bool normalize,
                    bool affine, int residual, bool lrelu)
{
    return in_case_rp(e, r, what, d, h, w, c, pitch, c + 2, normalize, affine, residual, lrelu);
}

int main(void)
{
    test_rng r = {424242};
    ct_env e;
    ct_env_init(&e, 4096);
    bool ok = in_case(&e, &r, "instnorm lrelu, c 5", 5, 6, 7, 5, 7, true, false, false, true);
    ok &= in_case(&e, &r, "instnorm affine + residual + lrelu, 990 voxels", 9, 10, 11, 3, 3, true, true, true, true);
    ok &= in_case(&e, &r, "instnorm affine, c 300 (two channel blocks)", 3, 4, 5, 300, 301, true, true, false, false);
    ok &= in_case(&e, &r, "instnorm + residual, c 33", 4, 3, 7, 33, 40, true, false, true, false);
    ok &= in_case(&e, &r, "no normalisation: residual + lrelu, c 33", 4, 3, 7, 33, 40, false, false, true, true);
    ok &= in_case(&e, &r, "no normalisation: affine + lrelu, c 300", 3, 4, 5, 300, 301, false, true, false, true);
    /* The apply kernel's 16-byte path (4 float / 8 half channels per step) needs nc, both
     * pitches and the channel offset in whole vectors; c 44 / pitch 44 is whole in float32
     * only, half mode falls back to one channel at a time. */
    ok &= in_case_rp(&e, &r, "instnorm affine + residual + lrelu, c 48 pitch 56 res pitch 64 (vectors)", 5, 4, 6, 48,
                     56, 64, true, true, true, true);
    ok &= in_case_rp(&e, &r, "instnorm + residual, c 264 pitch 272 (vectors in both channel blocks)", 3, 4, 5, 264,
                     272, 264, true, false, true, false);
    ok &= in_case_rp(&e, &r, "instnorm lrelu, c 44 pitch 44 (half: channel fallback)", 4, 5, 3, 44, 44, 44, true,
                     false, false, true);
    /* More channel steps than the grid's 4096 x 256 threads: the walk wraps. */
    ok &= in_case_rp(&e, &r, "instnorm + residual, c 17, 40x40x41 voxels (grid wraps)", 40, 40, 41, 17, 17, 17, true,
                     false, true, false);
    /* Mean 300 times the standard deviation (values in [100, 101]): a variance taken as
     * E[x^2] - mean^2 in float would lose every digit; 990 voxels = 4 reduction parts. */
    ok &= in_case_rg(&e, &r, "instnorm affine, values in [100, 101], 990 voxels", 9, 10, 11, 6, 6, 6, true, true,
                     false, false, 100.0f, 101.0f);
    /* the residual instance-normalised in the op: with its affine (990 voxels, 4 parts),
     * without, across two channel blocks, the vector path, and x and residual in [100, 101] */
    ok &= in_case(&e, &r, "instnorm affine + IN(residual) affine + lrelu, 990 voxels", 9, 10, 11, 3, 3, true, true,
                  RES_NORM, true);
    ok &= in_case(&e, &r, "instnorm + IN(residual), c 300 (two channel blocks)", 3, 4, 5, 300, 301, true, false,
                  RES_NORM, true);
    ok &= in_case_rp(&e, &r, "instnorm affine + IN(residual) affine, c 48 pitch 56 res pitch 64 (vectors)", 5, 4, 6,
                     48, 56, 64, true, true, RES_NORM, true);
    ok &= in_case_rg(&e, &r, "instnorm + IN(residual) affine, both in [100, 101]", 9, 10, 11, 6, 6, 7, true, true,
                     RES_NORM, false, 100.0f, 101.0f);
    ct_env_free(&e);
    return test_exit(ok);
}
