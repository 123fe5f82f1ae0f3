/* layernorm: CUDA backend (emulated) against swin_cpu_ops.
 * Tolerance: 2e-5 relative to max(1, max|ref|). The CPU op takes mean and variance in
 * double, the kernel in fp32 over a warp butterfly; for c <= 200 inputs in [-2, 2] the
 * fp32 rounding of mean/variance stays below 1e-6 relative, times gamma <= 1.5, + beta.
 * Half mode (cuda_layernorm_half): 1e-3, two float16 roundings (2^-11 relative each) of
 * the output; measured 3.3e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

static bool ln_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int pitch, bool affine,
                    bool in_place)
{
    const float *g = affine ? ct_weight(e, r, (size_t)c, 0.5f, 1.5f) : NULL;
    const float *b = affine ? ct_weight(e, r, (size_t)c, -0.5f, 0.5f) : NULL;
    ct_env_upload(e);
    cvol in = cvol_new(d, h, w, c, pitch, r, -2.0f, 2.0f);
    cvol out = in_place ? in : cvol_new(d, h, w, c, pitch + 3, r, -1.0f, 1.0f);
    ct_rc(what, swin_cpu_ops.layernorm(e->cpu, out.host, in.host, g, b), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.layernorm(e->gpu, out.dev, in.dev, g, b), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &out, 0, c, CT_TOL(2e-5, 1e-3));
    if (!in_place) {
        ok &= cvol_compare("layernorm input untouched", &in, 0, c, 0.0);
        cvol_free(&out);
    }
    cvol_free(&in);
    return ok;
}

int main(void)
{
    test_rng r = {12345};
    ct_env e;
    ct_env_init(&e, 4096);
    bool ok = ln_case(&e, &r, "layernorm affine, c 37, pitch 40", 3, 5, 7, 37, 40, true, false);
    ok &= ln_case(&e, &r, "layernorm no affine, c 5", 2, 3, 5, 5, 5, false, false);
    ok &= ln_case(&e, &r, "layernorm affine in place, c 200", 3, 3, 2, 200, 203, true, true);
    ok &= ln_case(&e, &r, "layernorm no affine in place, c 1", 2, 2, 3, 1, 2, false, true);
    ct_env_free(&e);
    return test_exit(ok);
}
