/* pack_input, unpack_output and copy: CUDA backend (emulated) against swin_cpu_ops.
 * Pure data movement, so the comparison is exact (tolerance 0): any difference is a
 * wrong index (also in half mode, whose inputs are float16 values). Shapes: odd dims and
 * channels, pitch > c, a copy into a channel slice, and a volume larger than the staging
 * buffer (two chunks). */
#include "tests/cuda/cuda_op_test.h"

#include <stdlib.h>
#include <string.h>

static bool pack_case(ct_env *e, test_rng *r, int d, int h, int w, int c, int pitch)
{
    const size_t n = (size_t)c * d * h * w;
    float *host = malloc(n * sizeof(float));
    test_fill_uniform(r, host, n, -1.0f, 1.0f);
    ct_round(host, n);   /* half mode: values the device stores exactly */
    cvol v = cvol_new(d, h, w, c, pitch, r, 0.0f, 0.0f);
    ct_rc("pack_input", swin_cpu_ops.pack_input(e->cpu, v.host, host), &swin_cpu_ops, e->cpu);
    ct_rc("pack_input", swin_cuda_ops.pack_input(e->gpu, v.dev, host), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare("pack_input", &v, 0, c, 0.0);

    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    memset(a, 0, n * sizeof(float));
    memset(b, 0xff, n * sizeof(float));
    ct_rc("unpack_output", swin_cpu_ops.unpack_output(e->cpu, a, v.host), &swin_cpu_ops, e->cpu);
    ct_rc("unpack_output", swin_cuda_ops.unpack_output(e->gpu, b, v.dev), &swin_cuda_ops, e->gpu);
    ok &= check_close("unpack_output", b, a, n, 0.0, 0.0);
    ok &= check_close("unpack_output round trip", b, host, n, 0.0, 0.0);
    free(a);
    free(b);
    free(host);
    cvol_free(&v);
    return ok;
}

static bool copy_case(ct_env *e, test_rng *r)
{
    /* in (3, 5, 7, c 3, pitch 4) into channels [2, 5) of out (pitch 9) */
    cvol in = cvol_new(3, 5, 7, 3, 4, r, -1.0f, 1.0f);
    cvol out = cvol_new(3, 5, 7, 9, 9, r, -1.0f, 1.0f);
    struct swin_vol oh, od;
    cvol_slice(&out, 2, 3, &oh, &od);
    ct_rc("copy", swin_cpu_ops.copy(e->cpu, oh, in.host), &swin_cpu_ops, e->cpu);
    ct_rc("copy", swin_cuda_ops.copy(e->gpu, od, in.dev), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare("copy into a channel slice", &out, 2, 3, 0.0);
    cvol_free(&in);
    cvol_free(&out);
    return ok;
}

int main(void)
{
    test_rng r = {0x9e3779b97f4a7c15ULL};
    ct_env e;
    ct_env_init(&e, 64);
    ct_env_upload(&e);   /* no weights: pack and copy use none */
    bool ok = pack_case(&e, &r, 3, 5, 7, 1, 1);
    ok &= pack_case(&e, &r, 5, 4, 3, 3, 5);
    ok &= pack_case(&e, &r, 40, 40, 41, 33, 33);   /* 2.16 M floats: two staging chunks */
    ok &= copy_case(&e, &r);
    ct_env_free(&e);
    return test_exit(ok);
}
