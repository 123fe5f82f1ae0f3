/* bench_ops: GFLOP/s of swinrun's CPU ops (kernels/ops.h, kernels/cpu/cpu_backend.h) at the
 * shapes of a Swin UNETR with f = 48 on a cube of L^3 (default 96^3), against an estimate of
 * this machine's fp32 peak from /proc/cpuinfo.
 *
 *   bench_ops [--cube L] [--feature-size F] [--threads N] [--reps N] [--op SUBSTR] [--json FILE] [--check]
 *
 * FLOPs counted per call (2 per multiply-add; only the GEMM-like work, written next to each op):
 *   conv3d k^3          2 k^3 cin cout Vout
 *   conv_transpose2     2 * 8 cin cout Vin
 *   swin_attention      2 Np (3C^2 + C^2) + 2 * 2 Np W C   (qkv + proj, QK^T + AV; Np tokens of the
 *                       padded grid, W tokens per window; LN, softmax and bias not counted)
 *   swin_mlp            2 * 2 V C hidden                    (fc1 + fc2; LN, GELU not counted)
 *   patch_merge         2 Vout 8C 2C                        (the reduction; LN not counted)
 *   instnorm_act        ~8 per element (memory-bound: GB/s is the number to read)
 * Times: median and min over --reps calls after one untimed call. The inputs are random; the
 * op tests (tests/kernels/cpu) check correctness, --check here only checks that outputs are finite.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/winograd.h"
#include "kernels/ops.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static struct swin_cpu_backend *be;
static int reps = 3, check = 0, failures = 0;
static const char *filter = NULL;
static FILE *json = NULL;
static int json_first = 1;
static double peak_gflops = 0.0, fma_gflops = 0.0; /* estimate; measured FMA throughput */

/* ---- machine peak estimate ------------------------------------------------------------- */

struct peak {
    int cores;
    double mhz;
    int flops_per_cycle;
    char basis[400];
    char cpu[128];
};

static struct peak estimate_peak(int threads)
{
    struct peak p = {0};
    p.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > 0 && threads < p.cores) p.cores = threads;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int avx512 = 0, avx2 = 0, fma = 0, family = 0, amd = 0;
    strcpy(p.cpu, "?");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "cpu MHz", 7) && p.mhz == 0) p.mhz = atof(strchr(line, ':') + 1);
        else if (!strncmp(line, "cpu family", 10) && !family) family = atoi(strchr(line, ':') + 1);
        else if (!strncmp(line, "vendor_id", 9)) amd = strstr(line, "AuthenticAMD") != NULL;
        else if (!strncmp(line, "model name", 10) && !strcmp(p.cpu, "?")) {
            snprintf(p.cpu, sizeof p.cpu, "%s", strchr(line, ':') + 2);
            p.cpu[strcspn(p.cpu, "\n")] = 0;
        } else if (!strncmp(line, "flags", 5)) {
            avx512 = strstr(line, " avx512f") != NULL;
            avx2 = strstr(line, " avx2") != NULL;
            fma = strstr(line, " fma") != NULL;
            break;
        }
    }
    if (f) fclose(f);
    /* fp32 lanes per FMA instruction by ISA, 2 FMA pipes per core (Intel since Haswell, AMD
     * since Zen 2), 2 FLOPs per FMA. AMD family 25 (Zen 3/4) has 256-bit FMA datapaths: a
     * 512-bit FMA takes both halves, so AVX-512 gives no more lanes per cycle there. */
    int lanes = avx512 ? 16 : (avx2 && fma) ? 8 : 4;
    const char *isa = avx512 ? "avx512f" : (avx2 && fma) ? "avx2+fma" : "sse";
    int pipe_lanes = lanes;
    const char *note = "";
    if (avx512 && amd && family == 25) {
        pipe_lanes = 8;
        note = "; AMD family 25 (Zen 3/4) executes 512-bit FMAs on 256-bit datapaths, so 8 lanes per pipe";
    }
    int fma_mul = (avx2 && fma) || avx512 ? 2 : 1; /* without FMA: separate mul and add, 1 flop each */
    p.flops_per_cycle = 2 /* pipes */ * pipe_lanes * fma_mul;
    snprintf(p.basis, sizeof p.basis,
             "%d cores x %.0f MHz (cpu MHz in /proc/cpuinfo, not the boost clock) x %d FLOP/cycle "
             "(%s: 2 FMA pipes x %d fp32 lanes x 2 FLOP per FMA%s)",
             p.cores, p.mhz, p.flops_per_cycle, isa, pipe_lanes, note);
    return p;
}

/* ---- measured FMA throughput: independent FMA chains in registers, every thread ---------- */

#include <immintrin.h>
#include <pthread.h>

#define FMA_ITERS 100000000L /* ~0.15 s per thread at 3 GHz */

/* Ten independent accumulators in named registers (an array may stay in memory at -O2). */
#define FMA10(fma)                                                                                  \
    do {                                                                                            \
        a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);             \
        a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);             \
        a8 = fma(a8, m, c), a9 = fma(a9, m, c);                                                     \
    } while (0)

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(long iters)
{
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2), a3 = _mm256_set1_ps(3),
           a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5), a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7),
           a8 = _mm256_set1_ps(8), a9 = _mm256_set1_ps(9);
    for (long n = 0; n < iters; n++) FMA10(_mm256_fmadd_ps);
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9))));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx512f"))) static float fma_loop_avx512(long iters)
{
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3),
           a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7),
           a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9);
    for (long n = 0; n < iters; n++) FMA10(_mm512_fmadd_ps);
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(_mm512_add_ps(a6, a7), _mm512_add_ps(a8, a9))));
    return _mm512_reduce_add_ps(s);
}

struct fma_arg {
    int avx512;
    long iters;
    float sink;
};

static void *fma_thread(void *p)
{
    struct fma_arg *a = p;
    a->sink = a->avx512 ? fma_loop_avx512(a->iters) : fma_loop_avx2(a->iters);
    return NULL;
}

/* GFLOP/s of nthreads threads each running independent FMA chains (0 if no AVX2+FMA). */
static double measure_fma(int nthreads, int avx512, double *seconds)
{
    __builtin_cpu_init();
    if (avx512 ? !__builtin_cpu_supports("avx512f") : !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
        return 0.0;
    pthread_t th[256];
    struct fma_arg args[256];
    if (nthreads > 256) nthreads = 256;
    long iters = FMA_ITERS / (avx512 ? 2 : 1);
    double t0 = now();
    for (int i = 0; i < nthreads; i++) {
        args[i] = (struct fma_arg){avx512, iters, 0};
        pthread_create(&th[i], NULL, fma_thread, &args[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double t = now() - t0;
    *seconds = t;
    double lanes = avx512 ? 16 : 8;
    return (double)nthreads * iters * 10 * lanes * 2 / t * 1e-9;
}

/* ---- helpers --------------------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static float frand(float lo, float hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)((rng_state >> 40) * (1.0 / 16777216.0));
}

static float *rnd(size_t n, float lo, float hi)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench_ops: out of memory (%zu floats)\n", n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = frand(lo, hi);
    return p;
}

static struct swin_vol vol(int L, int c, int fill)
{
    struct swin_vol v = {NULL, L, L, L, c, c, SWIN_F32};
    size_t n = (size_t)L * L * L * c;
    v.data = fill ? rnd(n, -1, 1) : calloc(n ? n : 1, sizeof(float));
    if (!v.data) {
        fprintf(stderr, "bench_ops: out of memory\n");
        exit(1);
    }
    return v;
}

static void *ws_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 256, n ? n : 1)) {
        fprintf(stderr, "bench_ops: out of memory (workspace %zu bytes)\n", n);
        exit(1);
    }
    memset(p, 0, n ? n : 1);
    return p;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int finite_all(const float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i])) return 0;
    return 1;
}

static int wanted(const char *name) { return !filter || strstr(name, filter); }

/* Prints one row; bytes > 0 adds a GB/s column (memory-bound ops). */
static void report(const char *op, const char *shape, double flops, const char *flop_formula, double bytes,
                   double *t, int n, int ok)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), mn = t[0];
    double gf = flops / med * 1e-9;
    char gbs[32] = "";
    if (bytes > 0) snprintf(gbs, sizeof gbs, "%.1f GB/s", bytes / med * 1e-9);
    printf("| %-15s | %-44s | %9.3f | %9.2f | %9.2f | %8.1f | %5.1f%% | %5.1f%% | %-9s | %s%s |\n", op, shape,
           flops * 1e-9, med * 1e3, mn * 1e3, gf, 100.0 * gf / peak_gflops, fma_gflops > 0 ? 100.0 * gf / fma_gflops : 0.0,
           gbs, flop_formula, ok ? "" : " OUTPUT NOT FINITE");
    fflush(stdout);
    if (!ok) failures++;
    if (json) {
        fprintf(json, "%s\n  {\"op\": \"%s\", \"shape\": \"%s\", \"gflop\": %.6f, \"median_ms\": %.4f, \"min_ms\": %.4f, "
                      "\"gflops\": %.3f, \"pct_of_peak_estimate\": %.2f, \"pct_of_measured_fma\": %.2f, \"gbytes_per_s\": %.3f, "
                      "\"flops\": \"%s\", \"finite\": %s}",
                json_first ? "" : ",", op, shape, flops * 1e-9, med * 1e3, mn * 1e3, gf, 100.0 * gf / peak_gflops,
                fma_gflops > 0 ? 100.0 * gf / fma_gflops : 0.0,
                bytes > 0 ? bytes / med * 1e-9 : 0.0, flop_formula, ok ? "true" : "false");
        json_first = 0;
    }
}

#define TIMED(call)                                                                                   \
    do {                                                                                              \
        if ((call)) {                                                                                 \
            fprintf(stderr, "bench_ops: %s failed: %s\n", #call, swin_cpu_ops.last_error(be));        \
            failures++;                                                                               \
            goto done;                                                                                \
        }                                                                                             \
        for (int r_ = 0; r_ < reps; r_++) {                                                           \
            double t0_ = now();                                                                       \
            (void)(call);                                                                             \
            t[r_] = now() - t0_;                                                                      \
        }                                                                                             \
    } while (0)

/* ---- ops --------------------------------------------------------------------------------- */

static void bench_conv(int Lin, int cin, int cout, int k, int stride, const char *where)
{
    char shape[96];
    snprintf(shape, sizeof shape, "k%d s%d %d^3 %d->%d %s", k, stride, Lin, cin, cout, where);
    if (!wanted("conv3d")) return;
    int pad = stride == 1 ? k / 2 : 0;
    int Lout = (Lin + 2 * pad - k) / stride + 1;
    struct swin_vol in = vol(Lin, cin, 1), out = vol(Lout, cout, 0);
    float *w = rnd((size_t)k * k * k * cin * cout, -0.05f, 0.05f), *b = rnd((size_t)cout, -0.1f, 0.1f);
    /* the direct kernel here, Winograd below, whichever the shape rule picks in conv3d */
    size_t wsb = swin_cpu_conv3d_direct_ws(be, out, in, k);
    void *ws = ws_alloc(wsb);
    double t[256];
    TIMED(swin_cpu_conv3d_direct(be, out, in, w, b, k, stride, pad, ws, wsb));
    report("conv3d", shape, 2.0 * k * k * k * (double)cin * cout * Lout * Lout * Lout, "2 k^3 cin cout Vout", 0, t, reps,
           !check || finite_all(out.data, (size_t)Lout * Lout * Lout * cout));
    if (k == 3 && stride == 1 && swin_cpu_winograd_available(be)) {
        /* the same conv as Winograd F(2x2x2, 3x3x3), whatever the shape rule says, the
         * weight transform included (it runs per call); FLOPs counted as for the direct conv
         * (GFLOP/s-equivalent) */
        size_t wwsb = swin_cpu_winograd_ws(be, out, in);
        void *wws = ws_alloc(wwsb);
        TIMED(swin_cpu_conv3d_winograd(be, out, in, w, b, wws, wwsb));
        report("conv3d_wino", shape, 2.0 * 27 * (double)cin * cout * Lout * Lout * Lout, "2 k^3 cin cout Vout (equiv.)",
               0, t, reps, !check || finite_all(out.data, (size_t)Lout * Lout * Lout * cout));
        free(wws);
    }
done:
    free(w), free(b), free(ws), free(in.data), free(out.data);
}

static void bench_convt(int Lin, int cin, int cout, const char *where)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%d^3 %d->%d %s", Lin, cin, cout, where);
    if (!wanted("conv_transpose2")) return;
    struct swin_vol in = vol(Lin, cin, 1), out = vol(2 * Lin, cout, 0);
    float *w = rnd((size_t)8 * cin * cout, -0.05f, 0.05f);
    double t[256];
    TIMED(swin_cpu_ops.conv_transpose2(be, out, in, w));
    report("conv_transpose2", shape, 2.0 * 8 * cin * (double)cout * Lin * Lin * Lin, "2 8 cin cout Vin", 0, t, reps,
           !check || finite_all(out.data, (size_t)8 * Lin * Lin * Lin * cout));
done:
    free(w), free(in.data), free(out.data);
}

static void bench_instnorm(int L, int c, int residual, const char *where)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%d^3 C=%d%s %s", L, c, residual ? " +res" : "", where);
    if (!wanted("instnorm_act")) return;
    struct swin_vol x = vol(L, c, 1), res = vol(L, c, 1);
    double t[256];
    double n = (double)L * L * L * c;
    /* in place; repeated calls renormalise normalised data, same work */
    TIMED(swin_cpu_ops.instnorm_act(be, x, NULL, true, NULL, NULL, residual ? &res : NULL, true));
    /* bytes: x read twice (statistics, normalise) and written once, + residual read */
    report("instnorm_act", shape, 8.0 * n, "~8/element", (3.0 + residual) * 4.0 * n, t, reps,
           !check || finite_all(x.data, (size_t)n));
done:
    free(x.data), free(res.data);
}

struct blockw {
    struct swin_block_w w;
    float *p[13];
};

static struct blockw block_new(int c, int heads, int hid, int win)
{
    struct blockw b;
    int rows = (2 * win - 1) * (2 * win - 1) * (2 * win - 1);
    b.w.norm1_w = b.p[0] = rnd(c, 0.5f, 1.5f);
    b.w.norm1_b = b.p[1] = rnd(c, -0.5f, 0.5f);
    b.w.qkv_w = b.p[2] = rnd((size_t)3 * c * c, -0.1f, 0.1f);
    b.w.qkv_b = b.p[3] = rnd((size_t)3 * c, -0.5f, 0.5f);
    b.w.bias_table = b.p[4] = rnd((size_t)rows * heads, -1, 1);
    b.w.proj_w = b.p[5] = rnd((size_t)c * c, -0.1f, 0.1f);
    b.w.proj_b = b.p[6] = rnd(c, -0.5f, 0.5f);
    b.w.norm2_w = b.p[7] = rnd(c, 0.5f, 1.5f);
    b.w.norm2_b = b.p[8] = rnd(c, -0.5f, 0.5f);
    b.w.fc1_w = b.p[9] = rnd((size_t)c * hid, -0.1f, 0.1f);
    b.w.fc1_b = b.p[10] = rnd(hid, -0.5f, 0.5f);
    b.w.fc2_w = b.p[11] = rnd((size_t)hid * c, -0.1f, 0.1f);
    b.w.fc2_b = b.p[12] = rnd(c, -0.5f, 0.5f);
    return b;
}

static void block_free(struct blockw *b)
{
    for (int i = 0; i < 13; i++) free(b->p[i]);
}

static void bench_attention(int L, int c, int heads, int shifted, const char *where)
{
    char shape[96];
    const int win = 7;
    const struct swin_window_geom g = swin_window_geom_make((int[3]){L, L, L}, (int[3]){win, win, win}, heads, shifted);
    int w0 = g.win[0], sh = g.shift[0] || g.shift[1] || g.shift[2];
    snprintf(shape, sizeof shape, "%d^3 C=%d h=%d win %d%s %s", L, c, heads, w0, sh ? " shifted" : "", where);
    if (!wanted("swin_attention")) return;
    struct blockw b = block_new(c, heads, 4 * c, win);
    struct swin_vol x = vol(L, c, 1);
    for (size_t i = 0; i < (size_t)L * L * L * c; i++) swin_vol_f32(x)[i] *= 0.01f; /* keep the residual stream small */
    size_t wsb = swin_cpu_ops.swin_attention_ws(be, x, &g);
    void *ws = ws_alloc(wsb);
    double Np = (double)g.padded[0] * g.padded[1] * g.padded[2];
    double W = (double)g.win[0] * g.win[1] * g.win[2];
    double t[256];
    TIMED(swin_cpu_ops.swin_attention(be, x, &b.w, &g, ws, wsb));
    report("swin_attention", shape, 2.0 * Np * 4.0 * c * c + 4.0 * Np * W * c, "2Np 4C^2 + 4 Np W C", 0, t, reps,
           !check || finite_all(x.data, (size_t)L * L * L * c));
done:
    block_free(&b), free(ws), free(x.data);
}

static void bench_mlp(int L, int c, const char *where)
{
    char shape[96];
    int hid = 4 * c;
    snprintf(shape, sizeof shape, "%d^3 C=%d hidden=%d %s", L, c, hid, where);
    if (!wanted("swin_mlp")) return;
    struct blockw b = block_new(c, 1, hid, 7);
    struct swin_vol x = vol(L, c, 1);
    for (size_t i = 0; i < (size_t)L * L * L * c; i++) swin_vol_f32(x)[i] *= 0.01f;
    size_t wsb = swin_cpu_ops.swin_mlp_ws(be, x, hid);
    void *ws = ws_alloc(wsb);
    double t[256];
    TIMED(swin_cpu_ops.swin_mlp(be, x, &b.w, hid, ws, wsb));
    report("swin_mlp", shape, 4.0 * (double)L * L * L * c * hid, "4 V C hidden", 0, t, reps,
           !check || finite_all(x.data, (size_t)L * L * L * c));
done:
    block_free(&b), free(ws), free(x.data);
}

static void bench_merge(int Lin, int c, const char *where)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%d^3 C=%d -> %d^3 C=%d %s", Lin, c, Lin / 2, 2 * c, where);
    if (!wanted("patch_merge")) return;
    int Lo = Lin / 2;
    struct swin_vol in = vol(Lin, c, 1), out = vol(Lo, 2 * c, 0);
    float *nw = rnd((size_t)8 * c, 0.5f, 1.5f), *nb = rnd((size_t)8 * c, -0.5f, 0.5f);
    float *rw = rnd((size_t)16 * c * c, -0.05f, 0.05f);
    size_t wsb = swin_cpu_ops.patch_merge_ws(be, out, in);
    void *ws = ws_alloc(wsb);
    double t[256];
    TIMED(swin_cpu_ops.patch_merge(be, out, in, swin_merge_order_v15, nw, nb, rw, ws, wsb));
    report("patch_merge", shape, 2.0 * Lo * Lo * Lo * 8.0 * c * 2.0 * c, "2 Vout 8C 2C", 0, t, reps,
           !check || finite_all(out.data, (size_t)Lo * Lo * Lo * 2 * c));
done:
    free(nw), free(nb), free(rw), free(ws), free(in.data), free(out.data);
}

static void usage(FILE *o)
{
    fprintf(o,
            "bench_ops: GFLOP/s of swinrun's CPU ops at Swin UNETR stage shapes vs an estimated fp32 peak\n"
            "\n"
            "Usage: bench_ops [--cube L] [--feature-size F] [--threads N] [--reps N] [--op SUBSTR] [--json FILE] [--check]\n"
            "  --cube L          input cube L^3 (multiple of 32; default 96: stages at 48, 24, 12, 6)\n"
            "  --feature-size F  f (default 48): stage channels f, 2f, 4f, 8f\n"
            "  --threads N       CPU backend threads (default 0 = every core)\n"
            "  --reps N          timed calls per op after one untimed call (default 3, at most 256)\n"
            "  --op SUBSTR       only ops whose name contains SUBSTR (conv3d, conv_transpose2, instnorm_act,\n"
            "                    swin_attention, swin_mlp, patch_merge)\n"
            "  --json FILE       also write the rows as JSON\n"
            "  --check           fail (exit 1) when an output holds NaN/Inf\n"
            "FLOP counts are printed next to each op; the peak is an estimate (cores x MHz x FLOP/cycle\n"
            "from /proc/cpuinfo flags), not a measurement. Exit: 0 ok, 1 an op failed, 2 bad arguments.\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    int L = 96, f = 48, threads = 0;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int need = !strcmp(o, "--cube") || !strcmp(o, "--feature-size") || !strcmp(o, "--threads") ||
                   !strcmp(o, "--reps") || !strcmp(o, "--op") || !strcmp(o, "--json");
        if (need && i + 1 >= argc) {
            fprintf(stderr, "bench_ops: error: %s needs a value (try --help)\n", o);
            return 2;
        }
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--cube")) {
            if (parse_int(argv[++i], 32, 512, &L) || L % 32) {
                fprintf(stderr, "bench_ops: error: --cube takes a multiple of 32 in 32..512, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(o, "--feature-size")) {
            if (parse_int(argv[++i], 1, 1024, &f)) {
                fprintf(stderr, "bench_ops: error: --feature-size takes an integer 1..1024, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(o, "--threads")) {
            if (parse_int(argv[++i], 0, 4096, &threads)) {
                fprintf(stderr, "bench_ops: error: --threads takes an integer 0..4096, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(o, "--reps")) {
            if (parse_int(argv[++i], 1, 256, &reps)) {
                fprintf(stderr, "bench_ops: error: --reps takes an integer 1..256, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(o, "--op")) {
            filter = argv[++i];
        } else if (!strcmp(o, "--json")) {
            json_path = argv[++i];
        } else if (!strcmp(o, "--check")) {
            check = 1;
        } else {
            fprintf(stderr, "bench_ops: error: unknown argument '%s' (try --help)\n", o);
            return 2;
        }
    }
    swin_error err = {0};
    if (swin_cpu_backend_create(threads, &be, &err)) {
        fprintf(stderr, "bench_ops: error: cannot create the CPU backend: %s\n", err.msg);
        return 1;
    }
    int nthreads = swin_cpu_backend_threads(be);
    struct peak pk = estimate_peak(nthreads);
    peak_gflops = pk.cores * pk.mhz * 1e-3 * pk.flops_per_cycle;
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(stderr, "bench_ops: error: cannot write %s\n", json_path);
        return 2;
    }
    printf("bench_ops: swinrun CPU ops, Swin UNETR f=%d on %d^3, %d thread(s), median of %d call(s)\n", f, L, nthreads, reps);
    printf("CPU: %s\n", pk.cpu);
    printf("Peak ESTIMATE %.0f GFLOP/s fp32 = %s\n", peak_gflops, pk.basis);
    double t2 = 0, t5 = 0;
    double m2 = 0, m5 = 0; /* best of 3 trials each */
    for (int trial = 0; trial < 3; trial++) {
        double v2 = measure_fma(nthreads, 0, &t2), v5 = measure_fma(nthreads, 1, &t5);
        m2 = v2 > m2 ? v2 : m2;
        m5 = v5 > m5 ? v5 : m5;
    }
    printf("Measured FMA throughput (best of 3), %d thread(s) of register-only FMA chains: AVX2 %.0f GFLOP/s, AVX-512 %.0f GFLOP/s "
           "(0 = not supported; a check of the estimate at the real clock, lowered by whatever else runs)\n",
           nthreads, m2, m5);
    fma_gflops = m2 > m5 ? m2 : m5;
    if (fma_gflops > 0)
        printf("Implied clock at the estimate's %d FLOP/cycle: %.0f MHz (vs %.0f MHz in /proc/cpuinfo)\n", pk.flops_per_cycle,
               fma_gflops * 1e3 / (pk.cores * pk.flops_per_cycle), pk.mhz);
    printf("Columns: %% est. = GFLOP/s / the estimate; %% FMA = GFLOP/s / the better measured FMA throughput\n\n");
    printf("| %-15s | %-44s | %9s | %9s | %9s | %8s | %6s | %6s | %-9s | %s |\n", "op", "shape (where)", "GFLOP",
           "median ms", "min ms", "GFLOP/s", "% est.", "% FMA", "memory", "FLOPs counted");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    if (json)
        fprintf(json, "{\"cube\": %d, \"feature_size\": %d, \"threads\": %d, \"reps\": %d, \"cpu\": \"%s\", "
                      "\"peak_gflops_estimate\": %.1f, \"peak_basis\": \"%s\", \"measured_fma_gflops_avx2\": %.1f, "
                      "\"measured_fma_gflops_avx512\": %.1f, \"ops\": [",
                L, f, nthreads, reps, pk.cpu, peak_gflops, pk.basis, m2, m5);

    int s0 = L / 2, s1 = L / 4, s2 = L / 8, s3 = L / 16, s4 = L / 32;
    /* convolutions of the encoders/decoders (UnetResBlock 3x3x3), patch embedding k2 s2 */
    bench_conv(L, 1, f, 2, 2, "(patch embed)");
    bench_conv(L, 1, f, 3, 1, "(encoder1 conv1)");
    bench_conv(L, f, f, 3, 1, "(encoder1 conv2, decoder1 conv2)");
    bench_conv(L, 2 * f, f, 3, 1, "(decoder1 conv1)");
    bench_conv(s0, f, f, 3, 1, "(encoder2, decoder2 conv2)");
    bench_conv(s0, 2 * f, f, 3, 1, "(decoder2 conv1)");
    bench_conv(s1, 2 * f, 2 * f, 3, 1, "(encoder3, decoder3 conv2)");
    bench_conv(s1, 4 * f, 2 * f, 3, 1, "(decoder3 conv1)");
    bench_conv(s2, 4 * f, 4 * f, 3, 1, "(encoder4, decoder4 conv2)");
    bench_conv(s2, 8 * f, 4 * f, 3, 1, "(decoder4 conv1)");
    bench_conv(s3, 16 * f, 8 * f, 3, 1, "(decoder5 conv1)");
    bench_conv(s3, 8 * f, 8 * f, 3, 1, "(decoder5 conv2)");
    bench_conv(s4, 16 * f, 16 * f, 3, 1, "(encoder10)");
    bench_convt(s1, 2 * f, f, "(decoder2 up)");
    bench_instnorm(L, f, 1, "(decoder1)");
    bench_instnorm(s0, f, 0, "(encoder2)");
    /* Swin stages: window 7, heads 3/6/12/24 (MONAI defaults) */
    bench_attention(s0, f, 3, 0, "(stage 0 block 0)");
    bench_attention(s0, f, 3, 1, "(stage 0 block 1)");
    bench_attention(s1, 2 * f, 6, 1, "(stage 1 block 1)");
    bench_attention(s2, 4 * f, 12, 1, "(stage 2 block 1)");
    bench_attention(s3, 8 * f, 24, 1, "(stage 3 block 1)");
    bench_mlp(s0, f, "(stage 0)");
    bench_mlp(s1, 2 * f, "(stage 1)");
    bench_mlp(s2, 4 * f, "(stage 2)");
    bench_mlp(s3, 8 * f, "(stage 3)");
    bench_merge(s0, f, "(stage 0 -> 1)");
    bench_merge(s1, 2 * f, "(stage 1 -> 2)");

    if (json) {
        fprintf(json, "\n]}\n");
        fclose(json);
    }
    swin_cpu_backend_free(be);
    if (failures) fprintf(stderr, "bench_ops: %d op(s) failed or gave non-finite output\n", failures);
    return failures ? 1 : 0;
}
