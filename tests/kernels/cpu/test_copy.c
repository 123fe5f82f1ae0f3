/* copy against element-by-element indexing: pitch > c on either side, into a channel slice
 * of a concat, dense to dense; exact (it is a copy). */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/op_check.h"

#include <stdio.h>
#include <stdlib.h>

static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int c, int in_pitch, int concat_c, int c0)
{
    char name[128];
    snprintf(name, sizeof name, "copy %dx%dx%d C %d pitch %d -> slice %d@%d", d, h, w, c, in_pitch, c0, concat_c);
    test_rng r = {808ULL + (uint64_t)c};
    tvol in = tvol_new(d, h, w, c, in_pitch), out = tvol_new(d, h, w, concat_c, concat_c);
    tvol_fill(&in, &r, -5.0f, 5.0f);
    struct swin_vol ov = tvol_slice(&out, c0, c);
    bool ok = check_true(name, swin_cpu_ops.copy(be, ov, in.v) == 0);
    size_t n = swin_vol_voxels(in.v) * c;
    float *ref = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    size_t i = 0;
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < c; ch++, i++) {
                    ref[i] = *vol_at(in.v, z, y, x, ch);
                    got[i] = *vol_at(ov, z, y, x, ch);
                }
    ok &= check_close(name, got, ref, n, 0.0, 0.0);   /* a copy is exact */
    ok &= tvol_guard_ok(name, &out, c0, c);
    free(ref);
    free(got);
    tvol_free(&in);
    tvol_free(&out);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    ok &= run_case(be, 5, 9, 13, 12, 12, 24, 12);   /* into the skip half of a concat */
    ok &= run_case(be, 3, 1, 7, 5, 8, 5, 0);        /* pitched to dense */
    ok &= run_case(be, 4, 4, 4, 3, 3, 3, 0);        /* dense to dense */
    int bad = swin_op_copy(&swin_cpu_ops, be, (struct swin_vol){NULL, 1, 1, 1, 1, 1, SWIN_F32}, (struct swin_vol){NULL, 1, 1, 1, 1, 1, SWIN_F32});
    ok &= check_true("copy with NULL data fails with SWIN_ERR_ARG", bad == SWIN_ERR_ARG);
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
