/* Times the CPU ops at Swin UNETR f=48, 96^3 shapes and prints GFLOP/s (2 flops per MAC).
 * Not a test (no naive check; the op tests do that):
 *   bench_cpu_ops [threads] [reps] [conv|convt|norm|swin|merge] [avx512|avx2|baseline] */
#include "tests/kernels/cpu/op_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The box is shared, so besides wall time the bench reports process CPU time, which
 * descheduling does not inflate: GFLOP per CPU-second times the thread count is what the
 * wall rate would be on an idle machine. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
struct timing {
    double wall, cpu;
};
#define TIME_BEST(best, stmt)                                                  \
    do {                                                                       \
        (best).wall = (best).cpu = 1e30;                                       \
        for (int rep_ = 0; rep_ < reps; rep_++) {                              \
            double w0_ = now(), c0_ = cpu_now();                               \
            stmt;                                                              \
            double w_ = now() - w0_, c_ = cpu_now() - c0_;                     \
            if (w_ < (best).wall) (best).wall = w_;                            \
            if (c_ < (best).cpu) (best).cpu = c_;                              \
        }                                                                      \
    } while (0)
static int nthreads;

static struct swin_cpu_backend *be;
static int reps = 3;

static void report(const char *what, double flops, struct timing t)
{
    printf("%-46s %8.1f ms wall %7.1f GFLOP/s | cpu %8.1f ms, x%d threads: %7.1f GFLOP/s\n", what, t.wall * 1e3,
           flops / t.wall * 1e-9, t.cpu * 1e3, nthreads, flops / t.cpu * nthreads * 1e-9);
    fflush(stdout);
}

static void bench_conv(int L, int cin, int cout, int k)
{
    test_rng r = {1};
    tvol in = tvol_new(L, L, L, cin, cin), out = tvol_new(L, L, L, cout, cout);
    tvol_fill(&in, &r, -1, 1);
    float *w = test_rand(&r, (size_t)k * k * k * cin * cout, -0.1f, 0.1f);
    size_t wsb = swin_cpu_ops.conv3d_ws(be, out.v, in.v, k, false);
    void *ws = ws_new(wsb);
    struct timing best;
    TIME_BEST(best, if (swin_cpu_ops.conv3d(be, out.v, NULL, in.v, w, NULL, k, 1, k / 2, ws, wsb)) printf("conv3d failed\n"));
    char name[96];
    snprintf(name, sizeof name, "conv3d k%d %d^3 %d->%d (ws %.1f MB)", k, L, cin, cout, wsb / 1e6);
    report(name, 2.0 * L * L * L * (double)k * k * k * cin * cout, best);
    free(w);
    ws_free(ws);
    tvol_free(&in);
    tvol_free(&out);
}

static void bench_convt(int L, int cin, int cout)
{
    test_rng r = {2};
    tvol in = tvol_new(L, L, L, cin, cin), out = tvol_new(2 * L, 2 * L, 2 * L, 2 * cout, 2 * cout);
    tvol_fill(&in, &r, -1, 1);
    float *w = test_rand(&r, (size_t)8 * cin * cout, -0.1f, 0.1f);
    struct timing best;
    TIME_BEST(best, swin_cpu_ops.conv_transpose2(be, tvol_slice(&out, 0, cout), in.v, w));
    char name[96];
    snprintf(name, sizeof name, "conv_transpose2 %d^3 %d->%d (into concat)", L, cin, cout);
    report(name, 2.0 * 8 * L * L * L * (double)cin * cout, best);
    free(w);
    tvol_free(&in);
    tvol_free(&out);
}

static void bench_norms(int L, int c)
{
    test_rng r = {3};
    tvol x = tvol_new(L, L, L, c, c), res = tvol_new(L, L, L, c, c);
    tvol_fill(&x, &r, -1, 1);
    tvol_fill(&res, &r, -1, 1);
    float *g = test_rand(&r, (size_t)c, 0.5f, 1.5f), *b = test_rand(&r, (size_t)c, -1, 1);
    struct timing bi, bl;
    TIME_BEST(bi, swin_cpu_ops.instnorm_act(be, x.v, NULL, true, NULL, NULL, &res.v, true));
    TIME_BEST(bl, swin_cpu_ops.layernorm(be, x.v, x.v, g, b));
    double gb = (double)L * L * L * c * 4 * 1e-9;
    printf("%-46s %8.1f ms wall %7.1f GB/s (x read 2x, res 1x, x written)\n", "instnorm_act+res+lrelu 96^3 C 48",
           bi.wall * 1e3, 4 * gb / bi.wall);
    printf("%-46s %8.1f ms wall %7.1f GB/s (read + write)\n", "layernorm in place 96^3 C 48", bl.wall * 1e3,
           2 * gb / bl.wall);
    free(g);
    free(b);
    tvol_free(&x);
    tvol_free(&res);
}

static void bench_swin(int L, int c, int heads, int win)
{
    test_rng r = {4};
    const int hid = 4 * c, rows = (2 * win - 1) * (2 * win - 1) * (2 * win - 1);
    tvol x = tvol_new(L, L, L, c, c);
    tvol_fill(&x, &r, -1, 1);
    float *p[13];
    struct swin_block_w blk = {
        .norm1_w = p[0] = test_rand(&r, c, 0.5f, 1.5f), .norm1_b = p[1] = test_rand(&r, c, -.5f, .5f),
        .qkv_w = p[2] = test_rand(&r, (size_t)3 * c * c, -.1f, .1f), .qkv_b = p[3] = test_rand(&r, 3 * c, -.5f, .5f),
        .bias_table = p[4] = test_rand(&r, (size_t)rows * heads, -1, 1),
        .proj_w = p[5] = test_rand(&r, (size_t)c * c, -.1f, .1f), .proj_b = p[6] = test_rand(&r, c, -.5f, .5f),
        .norm2_w = p[7] = test_rand(&r, c, 0.5f, 1.5f), .norm2_b = p[8] = test_rand(&r, c, -.5f, .5f),
        .fc1_w = p[9] = test_rand(&r, (size_t)c * hid, -.1f, .1f), .fc1_b = p[10] = test_rand(&r, hid, -.5f, .5f),
        .fc2_w = p[11] = test_rand(&r, (size_t)hid * c, -.1f, .1f), .fc2_b = p[12] = test_rand(&r, c, -.5f, .5f)};
    const struct swin_window_geom g = swin_window_geom_make((int[3]){L, L, L}, (int[3]){win, win, win}, heads, true);
    size_t wa = swin_cpu_ops.swin_attention_ws(be, x.v, &g), wm = swin_cpu_ops.swin_mlp_ws(be, x.v, hid);
    void *ws = ws_new(wa > wm ? wa : wm);
    struct timing ba, bm;
    TIME_BEST(ba, swin_cpu_ops.swin_attention(be, x.v, &blk, &g, ws, wa));
    TIME_BEST(bm, swin_cpu_ops.swin_mlp(be, x.v, &blk, hid, ws, wm));
    const double n = (double)g.win[0] * g.win[1] * g.win[2];
    const double nw = (double)(g.padded[0] / g.win[0]) * (g.padded[1] / g.win[1]) * (g.padded[2] / g.win[2]);
    const double fa = nw * (2 * n * c * 3 * c + 2 * 2 * n * n * c + 2 * n * c * c);
    char name[96];
    snprintf(name, sizeof name, "swin_attention %d^3 C %d heads %d (ws %.1f MB)", L, c, heads, wa / 1e6);
    report(name, fa, ba);
    snprintf(name, sizeof name, "swin_mlp %d^3 C %d hidden %d (ws %.1f MB)", L, c, hid, wm / 1e6);
    report(name, 2.0 * L * L * L * 2 * (double)c * hid, bm);
    for (int i = 0; i < 13; i++) free(p[i]);
    ws_free(ws);
    tvol_free(&x);
}

static void bench_merge(int L, int c)
{
    test_rng r = {5};
    tvol in = tvol_new(L, L, L, c, c), out = tvol_new(L / 2, L / 2, L / 2, 2 * c, 2 * c);
    tvol_fill(&in, &r, -1, 1);
    float *g = test_rand(&r, (size_t)8 * c, 0.5f, 1.5f), *b = test_rand(&r, (size_t)8 * c, -1, 1);
    float *w = test_rand(&r, (size_t)16 * c * c, -0.1f, 0.1f);
    size_t wsb = swin_cpu_ops.patch_merge_ws(be, out.v, in.v);
    void *ws = ws_new(wsb);
    struct timing best;
    TIME_BEST(best, swin_cpu_ops.patch_merge(be, out.v, in.v, swin_merge_order_v15, g, b, w, ws, wsb));
    char name[96];
    snprintf(name, sizeof name, "patch_merge %d^3 C %d", L, c);
    report(name, 2.0 * (L / 2) * (L / 2) * (L / 2) * 8.0 * c * 2 * c, best);
    free(g); free(b); free(w);
    ws_free(ws);
    tvol_free(&in);
    tvol_free(&out);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *f = argc > 3 ? argv[3] : "";
    if (!(be = test_backend(threads))) return 1;
    nthreads = swin_cpu_backend_threads(be);
    enum swin_cpu_simd want = SWIN_CPU_SIMD_AVX512;
    if (argc > 4) want = !strcmp(argv[4], "baseline") ? SWIN_CPU_SIMD_BASELINE
                         : !strcmp(argv[4], "avx2")   ? SWIN_CPU_SIMD_AVX2
                                                      : SWIN_CPU_SIMD_AVX512;
    const enum swin_cpu_simd simd = swin_cpu_backend_set_simd(be, want);
    printf("threads %d, best of %d, kernels %d (0 baseline, 1 avx2, 2 avx512)\n", nthreads, reps, (int)simd);
    if (strstr("conv", f) || !*f) {
        bench_conv(48, 48, 48, 3);
        bench_conv(96, 96, 48, 3);
        bench_conv(96, 48, 48, 3);
        bench_conv(96, 96, 48, 1);
        bench_conv(96, 1, 48, 3);
    }
    if (strstr("convt", f) || !*f) bench_convt(48, 48, 48);
    if (strstr("norm", f) || !*f) bench_norms(96, 48);
    if (strstr("swin", f) || !*f) {
        bench_swin(48, 48, 3, 7);
        bench_swin(24, 96, 6, 7);
        bench_swin(6, 384, 12, 7);
    }
    if (strstr("merge", f) || !*f) bench_merge(48, 48);
    swin_cpu_backend_free(be);
    return 0;
}
