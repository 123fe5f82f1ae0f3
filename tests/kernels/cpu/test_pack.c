/* pack_input / unpack_output against direct indexing: exact copies, pitch > c, odd dims. */
#include "tests/kernels/cpu/op_test.h"

#include <stdlib.h>
#include <string.h>

static bool run_case(struct swin_cpu_backend *be, int c, int d, int h, int w, int pitch)
{
    test_rng r = {0x9e3779b97f4a7c15ULL + (uint64_t)c * 131 + (uint64_t)pitch};
    size_t n = (size_t)c * d * h * w;
    float *host = test_rand(&r, n, -3.0f, 3.0f), *back = calloc(n, sizeof(float)), *ref = malloc(n * sizeof(float));
    tvol v = tvol_new(d, h, w, c, pitch);
    bool ok = swin_cpu_ops.pack_input(be, v.v, host) == 0;
    /* naive: vol(z, y, x, ch) == host[ch][z][y][x] */
    float *got = malloc(n * sizeof(float));
    for (int ch = 0; ch < c; ch++)
        for (int z = 0; z < d; z++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    size_t i = (((size_t)ch * d + z) * h + y) * w + x;
                    got[i] = *vol_at(v.v, z, y, x, ch);
                    ref[i] = host[i];
                }
    /* tolerance 0: packing is a copy */
    ok &= check_close("pack_input", got, ref, n, 0.0, 0.0);
    ok &= tvol_guard_ok("pack_input", &v, 0, c);
    ok &= swin_cpu_ops.unpack_output(be, back, v.v) == 0;
    ok &= check_close("unpack_output round trip", back, host, n, 0.0, 0.0);
    free(host); free(back); free(ref); free(got);
    tvol_free(&v);
    return ok;
}

int main(void)
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    ok &= run_case(be, 3, 5, 9, 13, 7);
    ok &= run_case(be, 1, 1, 1, 7, 1);
    ok &= run_case(be, 14, 4, 3, 2, 14);
    /* planes of 128 and 130 voxels: whole blocks of 64, then a block of 2 */
    ok &= run_case(be, 14, 3, 8, 16, 17);
    ok &= run_case(be, 5, 2, 10, 13, 5);
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
