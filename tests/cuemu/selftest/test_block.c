/* Barriers, early exit, barrier reductions, 3D grids and blocks, dynamic shared memory
 * and poison, each against expectations computed here on the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_block.h"

static bool test_block_sum(test_rng *rng)
{
    enum { BLOCKS = 5, N = BLOCKS * 256 - 37 }; /* the last block is partial */
    float in[N], out[BLOCKS], ref[BLOCKS] = {0};
    test_fill_uniform(rng, in, N, -1.0f, 1.0f);
    for (int i = 0; i < N; i++)
        ref[i / 256] += in[i];
    float *d_in = emu_upload(in, sizeof in), *d_out = emu_alloc(sizeof out);
    bool ok = check_true("block_sum launch", kb_block_sum(d_in, d_out, N, BLOCKS) == cudaSuccess);
    emu_download(out, d_out, sizeof out);
    ok &= check_close("block_sum", out, ref, BLOCKS, 1e-5, 1e-5);
    emu_free(d_in);
    emu_free(d_out);
    return ok;
}

static bool test_early_exit(test_rng *rng)
{
    enum { N = 77 };
    float in[N], out, ref = 0.0f;
    test_fill_uniform(rng, in, N, 0.0f, 1.0f);
    for (int i = 0; i < N; i++)
        ref += in[i];
    float *d_in = emu_upload(in, sizeof in), *d_out = emu_alloc(sizeof out);
    bool ok = check_true("early exit launch", kb_early_exit_sum(d_in, d_out, N) == cudaSuccess);
    emu_download(&out, d_out, sizeof out);
    ok &= check_close("early exit sum", &out, &ref, 1, 1e-5, 1e-5);
    emu_free(d_in);
    emu_free(d_out);
    return ok;
}

static bool test_bar_reduce(void)
{
    bool ok = true;
    enum { T = 200 };
    int pred[T], out[3 * T];
    /* Three predicate patterns: mixed, all true, all false. */
    for (int pattern = 0; pattern < 3; pattern++) {
        int count = 0;
        for (int t = 0; t < T; t++) {
            pred[t] = pattern == 0 ? (t % 3 == 0) * (t + 1) : pattern == 1 ? 7 : 0;
            count += pred[t] != 0;
        }
        int *d_pred = emu_upload(pred, sizeof pred), *d_out = emu_alloc(sizeof out);
        ok &= check_true("bar_reduce launch", kb_bar_reduce(d_pred, d_out, T) == cudaSuccess);
        emu_download(out, d_out, sizeof out);
        int bad[3] = {0};
        for (int t = 0; t < T; t++) {
            bad[0] += out[3 * t] != count;
            bad[1] += out[3 * t + 1] != (count == T);
            bad[2] += out[3 * t + 2] != (count > 0);
        }
        ok &= check_true("__syncthreads_count", !bad[0]);
        ok &= check_true("__syncthreads_and", !bad[1]);
        ok &= check_true("__syncthreads_or", !bad[2]);
        emu_free(d_pred);
        emu_free(d_out);
    }
    return ok;
}

static bool test_index3d(dim3 g, dim3 b)
{
    size_t nthr = (size_t)b.x * b.y * b.z, total = (size_t)g.x * g.y * g.z * nthr;
    unsigned *out = malloc(6 * total * sizeof *out), dims[6];
    unsigned *d_out = emu_alloc(6 * total * sizeof *out), *d_dims = emu_alloc(sizeof dims);
    bool ok = check_true("index3d launch", kb_index3d(d_out, d_dims, g, b) == cudaSuccess);
    emu_download(out, d_out, 6 * total * sizeof *out);
    emu_download(dims, d_dims, sizeof dims);
    unsigned want_dims[6] = {b.x, b.y, b.z, g.x, g.y, g.z};
    ok &= check_true("index3d dims", memcmp(dims, want_dims, sizeof dims) == 0);
    size_t bad = 0;
    for (unsigned bz = 0; bz < g.z; bz++)
        for (unsigned by = 0; by < g.y; by++)
            for (unsigned bx = 0; bx < g.x; bx++)
                for (unsigned tz = 0; tz < b.z; tz++)
                    for (unsigned ty = 0; ty < b.y; ty++)
                        for (unsigned tx = 0; tx < b.x; tx++) {
                            size_t blk = bx + g.x * (by + (size_t)g.y * bz);
                            size_t thr = tx + b.x * (ty + (size_t)b.y * tz);
                            const unsigned *o = out + 6 * (blk * nthr + thr);
                            unsigned want[6] = {tx, ty, tz, bx, by, bz};
                            bad += memcmp(o, want, sizeof want) != 0;
                        }
    if (bad)
        fprintf(stderr, "index3d: %zu threads wrote wrong indices\n", bad);
    ok &= check_true("index3d indices", bad == 0);
    free(out);
    emu_free(d_out);
    emu_free(d_dims);
    return ok;
}

static bool test_reverse_dyn(test_rng *rng)
{
    enum { N = 96, BLOCKS = 3 };
    float in[N * BLOCKS], out[N * BLOCKS], ref[N * BLOCKS];
    test_fill_uniform(rng, in, N * BLOCKS, -5.0f, 5.0f);
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < N; t++)
            ref[b * N + t] = in[b * N + N - 1 - t];
    float *d_in = emu_upload(in, sizeof in), *d_out = emu_alloc(sizeof out);
    bool ok = check_true("reverse_dyn launch", kb_reverse_dyn(d_in, d_out, N, BLOCKS) == cudaSuccess);
    emu_download(out, d_out, sizeof out);
    ok &= check_close("reverse via dynamic smem", out, ref, N * BLOCKS, 0.0, 0.0);
    emu_free(d_in);
    emu_free(d_out);
    return ok;
}

/* Unwritten shared memory reads as 0xFF bytes (NaN for floats, -1 for integers). ASan
 * builds keep static shared arrays out of the poisoned section (cuemu.h). Never inlined:
 * emu_valgrind_uninit_smem finds valgrind's report by this frame's name in every build type. */
static __attribute__((noinline)) bool test_poison(void)
{
    unsigned out[64];
    unsigned *d_out = emu_alloc(sizeof out);
    bool ok = check_true("read_uninit launch", kb_read_uninit(d_out) == cudaSuccess);
    emu_download(out, d_out, sizeof out);
#if defined(__SANITIZE_ADDRESS__)
    int first = 32;
#else
    int first = 0;
#endif
    int bad[2] = {0};
    for (int i = first; i < 64; i++)
        bad[i >= 32] += out[i] != 0xFFFFFFFFu;
    ok &= check_true("static shared poison (not in ASan builds)", !bad[0]);
    ok &= check_true("dynamic shared poison", !bad[1]);
    emu_free(d_out);
    return ok;
}

int main(void)
{
    test_rng rng = {0x5EED};
    bool ok = true;
    ok &= test_block_sum(&rng);
    ok &= test_early_exit(&rng);
    ok &= test_bar_reduce();
    ok &= test_index3d((dim3){3, 2, 2}, (dim3){4, 3, 5});
    ok &= test_index3d((dim3){1, 1, 1}, (dim3){8, 8, 16});
    ok &= test_index3d((dim3){2, 3, 1}, (dim3){33, 1, 1});
    ok &= test_reverse_dyn(&rng);
    ok &= test_poison();
    return test_exit(ok);
}
