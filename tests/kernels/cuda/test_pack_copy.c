/* pack_input, unpack_output and copy: CUDA backend (emulated) against swin_cpu_ops.
 * Pure data movement, so the comparison is exact (tolerance 0): any difference is a
 * wrong index (also in half mode, whose inputs are float16 values). Shapes: odd dims and
 * channels, pitch > c, copies into channel slices with 16-byte units and element
 * by element, and a volume larger than the staging
 * buffer (three chunks up through the two pinned buffers, the first refilled). */
#include "tests/kernels/cuda/cuda_op_test.h"

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

/* in (d, h, w, c, in_pitch) into channels [c0, c0 + c) of out (oc channels = pitch). */
static bool copy_case(ct_env *e, test_rng *r, const char *what, int d, int h, int w, int c, int in_pitch, int c0,
                      int oc)
{
    cvol in = cvol_new(d, h, w, c, in_pitch, r, -1.0f, 1.0f);
    cvol out = cvol_new(d, h, w, oc, oc, r, -1.0f, 1.0f);
    struct swin_vol oh, od;
    cvol_slice(&out, c0, c, &oh, &od);
    ct_rc(what, swin_cpu_ops.copy(e->cpu, oh, in.host), &swin_cpu_ops, e->cpu);
    ct_rc(what, swin_cuda_ops.copy(e->gpu, od, in.dev), &swin_cuda_ops, e->gpu);
    bool ok = cvol_compare(what, &out, c0, c, 0.0);
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
    ok &= pack_case(&e, &r, 40, 40, 41, 33, 33);   /* 2.16 M floats: three upload chunks, two back down */
    ok &= copy_case(&e, &r, "copy into a channel slice (element copies)", 3, 5, 7, 3, 4, 2, 9);
    /* 16-byte units: c 16, pitches 24 and 32, slice at channel 8 (32 / 16 bytes in). */
    ok &= copy_case(&e, &r, "copy c 16 into a channel slice (16-byte copies)", 3, 5, 7, 16, 24, 8, 32);
    /* c 12: 16-byte units in float32 only (12 halves are 24 bytes); in half mode the
     * element copies outnumber the grid's 4096 x 256 threads, so the walk wraps. */
    ok &= copy_case(&e, &r, "copy c 12, 40x40x57 voxels (grid wraps)", 40, 40, 57, 12, 12, 0, 12);
    ct_env_free(&e);
    return test_exit(ok);
}
