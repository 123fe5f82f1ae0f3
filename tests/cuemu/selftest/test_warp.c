/* Every shuffle and vote variant, with all widths, partial and disjoint masks and a
 * partial last warp, against expectations written from the CUDA Programming Guide's
 * definitions. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_warp.h"

#define FULL 0xFFFFFFFFu

static int rand_int(test_rng *r, int lo, int hi)
{
    return lo + (int)test_rng_uniform(r, 0.0f, (float)(hi - lo + 1) - 0.001f);
}

/* Counts mismatches of one output and reports them under a name. */
static bool expect_all(const char *what, const int *got, const int *want, int n, int stride)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i * stride] != want[i]) {
            if (bad < 3)
                fprintf(stderr, "  %s: thread %d got %d want %d\n", what, i, got[i * stride], want[i]);
            bad++;
        }
    return check_true(what, bad == 0);
}

static bool test_full(test_rng *rng, int width)
{
    enum { T = 64 };
    int v[T], p[T], out[T * KW_FULL_OUTS], want[8][T];
    double dout[T];
    for (int t = 0; t < T; t++) {
        v[t] = rand_int(rng, -100, 100);
        p[t] = rand_int(rng, -40, 40);
    }
    int *dv = emu_upload(v, sizeof v), *dp = emu_upload(p, sizeof p), *dout_i = emu_alloc(sizeof out);
    double *dd = emu_alloc(sizeof dout);
    bool ok = check_true("warp_full launch", kw_full(dv, dp, width, dout_i, dd, T) == cudaSuccess);
    emu_download(out, dout_i, sizeof out);
    emu_download(dout, dd, sizeof dout);
    int dbad = 0;
    for (int t = 0; t < T; t++) {
        int w0 = t / 32 * 32, l = t % 32, seg = l / width * width, d = p[t] & 7;
        int idx = w0 + seg + ((p[t] % width) + width) % width; /* srcLane modulo width */
        want[0][t] = v[idx];
        want[1][t] = l - seg >= d ? v[t - d] : v[t];
        want[2][t] = l - seg + d < width ? v[t + d] : v[t];
        int x = l ^ (p[t] & 31); /* may read an earlier segment, never a later one */
        want[3][t] = x / width <= l / width ? v[w0 + x] : v[t];
        unsigned ballot = 0;
        int any = 0, all_gt = 1, all_odd = 1;
        for (int k = 0; k < 32; k++) {
            int y = v[w0 + k];
            ballot |= (unsigned)(y & 1) << k;
            any |= y > 90;
            all_gt &= y > -1000;
            all_odd &= (y & 1) != 0;
        }
        want[4][t] = (int)ballot;
        want[5][t] = any;
        want[6][t] = all_gt;
        want[7][t] = all_odd;
        dbad += !(dout[t] == 0.5 * v[idx]);
    }
    static const char *names[8] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                   "__shfl_xor_sync", "__ballot_sync", "__any_sync",
                                   "__all_sync (true)", "__all_sync (odd)"};
    fprintf(stderr, "width %d:\n", width);
    for (int k = 0; k < 8; k++)
        ok &= expect_all(names[k], out + k, want[k], T, KW_FULL_OUTS);
    ok &= check_true("__shfl_sync of double", dbad == 0);
    emu_free(dv);
    emu_free(dp);
    emu_free(dout_i);
    emu_free(dd);
    return ok;
}

static bool test_partial(test_rng *rng)
{
    enum { T = 64 };
    int v[T], out[T * KW_PARTIAL_OUTS];
    for (int t = 0; t < T; t++)
        v[t] = rand_int(rng, -100, 100);
    int *dv = emu_upload(v, sizeof v), *dout = emu_alloc(sizeof out);
    bool ok = check_true("warp_partial launch", kw_partial(dv, dout, T) == cudaSuccess);
    emu_download(out, dout, sizeof out);
    int bad[7] = {0};
    for (int t = 0; t < T; t++) {
        int w0 = t / 32 * 32, l = t % 32;
        const int *o = out + t * KW_PARTIAL_OUTS;
        if (l < 20) {
            /* Lanes 16..19 read lanes outside the mask: undefined in CUDA, poison (-1) here. */
            bad[0] += o[0] != (l < 16 ? v[t + 4] : -1);
            unsigned ballot = 0;
            int any = 0, all = 1;
            for (int k = 0; k < 20; k++) {
                ballot |= (unsigned)(v[w0 + k] & 1) << k;
                any |= v[w0 + k] > 50;
                all &= v[w0 + k] >= -100;
            }
            bad[1] += o[1] != (int)ballot;
            bad[2] += o[2] != any;
            bad[3] += o[3] != all;
            bad[4] += o[4] != v[w0 + 19 - l];
        } else {
            /* Lanes outside the mask never wrote: cudaMalloc's 0xFF fill. */
            for (int k = 0; k < 5; k++)
                bad[k] += o[k] != -1;
        }
        int h0 = w0 + l / 16 * 16, sum = 0;
        for (int k = 0; k < 16; k++)
            sum += v[h0 + k];
        bad[5] += o[5] != v[h0 + ((l % 16) ^ 5)];
        bad[6] += o[6] != sum;
    }
    static const char *names[7] = {"partial __shfl_down_sync", "partial __ballot_sync",
                                   "partial __any_sync", "partial __all_sync",
                                   "partial __shfl_sync", "half-warp __shfl_xor_sync width 16",
                                   "half-warp __reduce_add_sync"};
    for (int k = 0; k < 7; k++)
        ok &= check_true(names[k], bad[k] == 0);
    emu_free(dv);
    emu_free(dout);
    return ok;
}

static bool test_misc(test_rng *rng, int threads)
{
    int *v = malloc(threads * sizeof *v), *out = malloc(threads * KW_MISC_OUTS * sizeof *out);
    for (int t = 0; t < threads; t++)
        v[t] = rand_int(rng, -100, 100);
    int *dv = emu_upload(v, threads * sizeof *v), *dout = emu_alloc(threads * KW_MISC_OUTS * sizeof *out);
    bool ok = check_true("warp_misc launch", kw_misc(dv, dout, threads) == cudaSuccess);
    emu_download(out, dout, threads * KW_MISC_OUTS * sizeof *out);
    int bad[KW_MISC_OUTS] = {0};
    for (int t = 0; t < threads; t++) {
        int w0 = t / 32 * 32, n = threads - w0 < 32 ? threads - w0 : 32;
        int sum = 0, mn = v[w0], mx = v[w0];
        unsigned and_ = ~0u, or_ = 0, xor_ = 0, umin = (unsigned)v[w0], same = 0;
        for (int k = 0; k < n; k++) {
            int y = v[w0 + k];
            sum += y;
            mn = y < mn ? y : mn;
            mx = y > mx ? y : mx;
            and_ &= (unsigned)y;
            or_ |= (unsigned)y;
            xor_ ^= (unsigned)y;
            umin = (unsigned)y < umin ? (unsigned)y : umin;
            same |= (unsigned)(y % 4 == v[t] % 4) << k;
        }
        unsigned lanes = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;
        int all_same = same == lanes;
        const int *o = out + t * KW_MISC_OUTS;
        int want[KW_MISC_OUTS] = {sum, mn, mx, (int)and_, (int)or_, (int)xor_, (int)umin, (int)same,
                                  all_same ? (int)lanes : 0, all_same, (int)lanes, 1, o[12]};
        if (t == w0)
            want[12] = sum; /* only lane 0's tree reduction result is defined */
        for (int k = 0; k < KW_MISC_OUTS; k++)
            bad[k] += o[k] != want[k];
    }
    static const char *names[KW_MISC_OUTS] = {
        "__reduce_add_sync", "__reduce_min_sync (int)", "__reduce_max_sync (int)",
        "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
        "__reduce_min_sync (unsigned)", "__match_any_sync", "__match_all_sync (mixed)",
        "__match_all_sync pred (mixed)", "__match_all_sync (equal)", "__match_all_sync pred (equal)",
        "__shfl_down_sync tree reduction"};
    fprintf(stderr, "%d threads:\n", threads);
    for (int k = 0; k < KW_MISC_OUTS; k++)
        ok &= check_true(names[k], bad[k] == 0);
    free(v);
    free(out);
    emu_free(dv);
    emu_free(dout);
    return ok;
}

static bool test_syncwarp(test_rng *rng)
{
    enum { T = 96 };
    int v[T], out[T], want[T];
    for (int t = 0; t < T; t++) {
        v[t] = rand_int(rng, -100, 100);
        want[t] = 2 * v[t];
    }
    int *dv = emu_upload(v, sizeof v), *dout = emu_alloc(sizeof out);
    bool ok = check_true("warp_syncwarp launch", kw_syncwarp(dv, dout, T) == cudaSuccess);
    emu_download(out, dout, sizeof out);
    ok &= expect_all("__syncwarp exchange", out, want, T, 1);
    emu_free(dv);
    emu_free(dout);
    return ok;
}

int main(void)
{
    test_rng rng = {0xC0FFEE};
    bool ok = true;
    for (int width = 32; width >= 1; width /= 2)
        ok &= test_full(&rng, width);
    ok &= test_partial(&rng);
    ok &= test_misc(&rng, 64);
    ok &= test_misc(&rng, 48); /* the second warp has 16 lanes */
    ok &= test_misc(&rng, 7);
    ok &= test_syncwarp(&rng);
    return test_exit(ok);
}
