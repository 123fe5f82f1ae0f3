/* conv_transpose2: CUDA backend (emulated, 8 tap GEMMs in one launch) against swin_cpu_ops.
 * Tolerance: 2e-5 relative to max(1, max|ref|): K = cin <= 70 fp32 products of |x| <= 1,
 * |w| <= 0.2 in a different summation order (bound ~ 70 * 6e-8 * 0.2).
 * Shapes: odd dims, output into the upsampled half of a concat (pitch 2 cout), cout > 64
 * (two column tiles), in pitch > cin.
 * Half mode: 1e-3, the float16 rounding of the output; measured 2.1e-4. */
#include "tests/kernels/cuda/cuda_op_test.h"

static bool convt_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int cin, int in_pitch, int cout,
                       int out_pitch)
{
    const float *wt = ct_weight(e, r, (size_t)8 * cin * cout, -0.2f, 0.2f);
    ct_env_upload(e);
    cvol in = cvol_new(d, h, w, cin, in_pitch, r, -1.0f, 1.0f);
    cvol out = cvol_new(2 * d, 2 * h, 2 * w, out_pitch, out_pitch, r, -1.0f, 1.0f);
    struct swin_vol oh, od;
    cvol_slice(&out, 0, cout, &oh, &od);
    ct_rc(what, swin_cpu_ops.conv_transpose2(e->cpu, oh, in.host, wt), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.conv_transpose2(e->gpu, od, in.dev, wt), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &out, 0, cout, CT_TOL(2e-5, 1e-3));
    cvol_free(&in);
    cvol_free(&out);
    return ok;
}

int main(void)
{
    test_rng r = {2718};
    ct_env e;
    ct_env_init(&e, 1 << 18);
    bool ok = convt_case(&e, &r, "conv_transpose2 3x4x5, 7 -> 6 into a concat half", 3, 4, 5, 7, 9, 6, 12);
    ok &= convt_case(&e, &r, "conv_transpose2 2x3x1, 70 -> 65", 2, 3, 1, 70, 70, 65, 65);
    ct_env_free(&e);
    return test_exit(ok);
}
