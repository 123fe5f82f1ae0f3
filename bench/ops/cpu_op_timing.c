#include "bench/ops/cpu_op_timing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/winograd/winograd.h"
#include "kernels/ops.h"

#define MAX_REPS 256

struct row {
    const char *op;
    char shape[96];
    double flops;
    const char *formula; /* what `flops` counts */
    double bytes;        /* > 0: memory-bound, a GB/s column */
    size_t ws;           /* workspace bytes */
    int picked;          /* conv3d rows: whether conv3d runs this kernel at this shape; -1 other ops */
    double wall[MAX_REPS], cpu[MAX_REPS];
};

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define TIMED(b, r, call)                                                                              \
    do {                                                                                               \
        if ((call)) {                                                                                  \
            fprintf(stderr, "bench_cpu_ops: %s failed: %s\n", #call, swin_cpu_ops.last_error((b)->be)); \
            (b)->failures++;                                                                           \
            goto done;                                                                                 \
        }                                                                                              \
        for (int r_ = 0; r_ < (b)->reps; r_++) {                                                       \
            double w_ = clock_s(CLOCK_MONOTONIC), c_ = clock_s(CLOCK_PROCESS_CPUTIME_ID);              \
            (void)(call);                                                                              \
            (r)->cpu[r_] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c_;                                     \
            (r)->wall[r_] = clock_s(CLOCK_MONOTONIC) - w_;                                             \
        }                                                                                              \
    } while (0)

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
        fprintf(stderr, "bench_cpu_ops: out of memory (%zu floats)\n", n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = frand(lo, hi);
    return p;
}

/* L^3 x c, random in [-scale, scale] or zero. */
static struct swin_vol vol(int L, int c, float scale)
{
    struct swin_vol v = {NULL, L, L, L, c, c, SWIN_F32};
    size_t n = (size_t)L * L * L * c;
    v.data = scale > 0 ? rnd(n, -scale, scale) : calloc(n ? n : 1, sizeof(float));
    if (!v.data) {
        fprintf(stderr, "bench_cpu_ops: out of memory\n");
        exit(1);
    }
    return v;
}

static size_t vol_floats(struct swin_vol v) { return swin_vol_voxels(v) * (size_t)v.pitch; }

static void *ws_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 256, n ? n : 1)) {
        fprintf(stderr, "bench_cpu_ops: out of memory (workspace %zu bytes)\n", n);
        exit(1);
    }
    memset(p, 0, n ? n : 1);
    return p;
}

static int wanted(const struct bench *b, const char *op) { return !b->filter || strstr(op, b->filter); }

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t; returns the median. */
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static int finite_all(const float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i])) return 0;
    return 1;
}

void bench_table_header(void)
{
    printf("| %-17s | %-44s | %9s | %9s | %9s | %8s | %6s | %6s | %9s | %8s | %-9s | %7s | %s |\n", "op",
           "shape (where)", "GFLOP", "median ms", "min ms", "GFLOP/s", "% est.", "% FMA", "cpu ms", "idle GF/s",
           "memory", "ws MB", "FLOPs counted");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

/* Prints r's row; `out` (n floats) is what --check looks at. */
static void report(struct bench *b, struct row *r, const void *out, size_t n)
{
    const int ok = !b->check || finite_all(out, n);
    const double wall = median(r->wall, b->reps), cpu = median(r->cpu, b->reps);
    const double gf = r->flops / wall * 1e-9, idle = cpu > 0 ? r->flops / cpu * b->threads * 1e-9 : 0.0;
    const double pct_fma = b->fma_gflops > 0 ? 100.0 * gf / b->fma_gflops : 0.0;
    char op[32], gbs[32] = "";
    snprintf(op, sizeof op, "%s%s", r->op, r->picked == 1 ? " *" : "");
    if (r->bytes > 0) snprintf(gbs, sizeof gbs, "%.1f GB/s", r->bytes / wall * 1e-9);
    printf("| %-17s | %-44s | %9.3f | %9.2f | %9.2f | %8.1f | %5.1f%% | %5.1f%% "
           "| %9.2f | %9.1f | %-9s | %7.1f | %s%s |\n",
           op, r->shape, r->flops * 1e-9, wall * 1e3, r->wall[0] * 1e3, gf, 100.0 * gf / b->peak_gflops, pct_fma,
           cpu * 1e3, idle, gbs, r->ws / 1e6, r->formula, ok ? "" : " OUTPUT NOT FINITE");
    fflush(stdout);
    if (!ok) b->failures++;
    if (!b->json) return;
    fprintf(b->json,
            "%s\n  {\"op\": \"%s\", \"shape\": \"%s\", \"gflop\": %.6f, \"median_ms\": %.4f, \"min_ms\": %.4f, "
            "\"gflops\": %.3f, \"pct_of_peak_estimate\": %.2f, \"pct_of_measured_fma\": %.2f, "
            "\"cpu_median_ms\": %.4f, \"cpu_min_ms\": %.4f, \"idle_gflops\": %.3f, \"gbytes_per_s\": %.3f, "
            "\"ws_bytes\": %zu, \"flops\": \"%s\", ",
            b->rows ? "," : "", r->op, r->shape, r->flops * 1e-9, wall * 1e3, r->wall[0] * 1e3, gf,
            100.0 * gf / b->peak_gflops, pct_fma, cpu * 1e3, r->cpu[0] * 1e3, idle,
            r->bytes > 0 ? r->bytes / wall * 1e-9 : 0.0, r->ws, r->formula);
    if (r->picked >= 0) fprintf(b->json, "\"conv3d_runs_it\": %s, ", r->picked ? "true" : "false");
    fprintf(b->json, "\"finite\": %s}", ok ? "true" : "false");
    b->rows++;
}

void bench_conv3d(struct bench *b, int Lin, int cin, int cout, int k, int stride, const char *where)
{
    const int wino = k == 3 && stride == 1 && swin_cpu_winograd_available(b->be);
    const int taps = k > 1 && swin_cpu_winograd_available(b->be); /* the per-tap GEMMs: AVX2 and up */
    if (!wanted(b, "conv3d") &&
        !(wino && (wanted(b, "conv3d_wino2") || wanted(b, "conv3d_wino4") || wanted(b, "conv3d_wino6"))) &&
        !(taps && wanted(b, "conv3d_taps")))
        return;
    const int pad = stride == 1 ? k / 2 : 0, Lout = (Lin + 2 * pad - k) / stride + 1;
    struct swin_vol in = vol(Lin, cin, 1), out = vol(Lout, cout, 0);
    float *w = rnd((size_t)k * k * k * cin * cout, -0.05f, 0.05f), *bias = rnd((size_t)cout, -0.1f, 0.1f);
    void *ws = NULL, *wws = NULL;
    const struct conv_choice picked = swin_cpu_conv3d_choose(b->be, out, in, false, k, stride, pad);
    const int taps_runs = picked.kernel == CONV_TAPS, wino_runs = picked.kernel == CONV_WINOGRAD;
    struct row r = {.op = "conv3d", .formula = "2 k^3 cin cout Vout", .picked = !wino_runs && !taps_runs,
                    .flops = 2.0 * k * k * k * (double)cin * cout * Lout * Lout * Lout};
    snprintf(r.shape, sizeof r.shape, "k%d s%d %d^3 %d->%d %s", k, stride, Lin, cin, cout, where);
    if (wanted(b, r.op)) {
        r.ws = swin_cpu_conv3d_direct_ws(b->be, out, in, k);
        ws = ws_alloc(r.ws);
        const bool implicit = swin_cpu_conv3d_implicit_wins(b->be, out, false, k, stride, pad);
        TIMED(b, &r, swin_cpu_conv3d_direct(b->be, out, in, w, bias, k, stride, pad, implicit, ws));
        report(b, &r, out.data, vol_floats(out));
    }
    r.op = "conv3d_taps";
    if (taps && wanted(b, r.op)) {
        r.formula = "2 k^3 cin cout Vout (as im2col)", r.picked = taps_runs;
        r.ws = swin_cpu_conv3d_taps_ws(b->be, out, in);
        free(wws);
        wws = ws_alloc(r.ws);
        TIMED(b, &r, swin_cpu_conv3d_taps(b->be, out, in, w, bias, k, stride, pad, wws, r.ws));
        report(b, &r, out.data, vol_floats(out));
    }
    for (int tile = 2; wino && tile <= 6; tile += 2) {
        /* the per-call weight transform included; FLOPs counted as for the direct conv; F(6x6x6)
         * is picked by the rule for bfloat16 weights (the same kernel widens them as it reads) */
        r.op = tile == 2 ? "conv3d_wino2" : tile == 4 ? "conv3d_wino4" : "conv3d_wino6";
        if (!wanted(b, r.op)) continue;
        r.formula = "2 k^3 cin cout Vout (equiv.)";
        r.picked = wino_runs && swin_cpu_winograd_tile(b->be, out, in, tile == 6) == tile;
        r.ws = swin_cpu_winograd_ws(b->be, out, in, tile);
        free(wws);
        wws = ws_alloc(r.ws);
        TIMED(b, &r, swin_cpu_conv3d_winograd(b->be, out, NULL, in, w, bias, wws, r.ws, tile, NULL));
        report(b, &r, out.data, vol_floats(out));
    }
done:
    free(w), free(bias), free(ws), free(wws), free(in.data), free(out.data);
}

void bench_conv_transpose2(struct bench *b, int Lin, int cin, int cout, const char *where)
{
    if (!wanted(b, "conv_transpose2")) return;
    struct swin_vol in = vol(Lin, cin, 1), cat = vol(2 * Lin, 2 * cout, 0), out = cat;
    out.c = cout; /* pitch 2 cout */
    float *w = rnd((size_t)8 * cin * cout, -0.05f, 0.05f);
    struct row r = {.op = "conv_transpose2", .formula = "2 8 cin cout Vin", .picked = -1,
                    .flops = 2.0 * 8 * cin * (double)cout * Lin * Lin * Lin};
    snprintf(r.shape, sizeof r.shape, "%d^3 %d->%d into concat %s", Lin, cin, cout, where);
    TIMED(b, &r, swin_cpu_ops.conv_transpose2(b->be, out, in, w));
    report(b, &r, cat.data, vol_floats(cat));
done:
    free(w), free(in.data), free(cat.data);
}

void bench_instnorm_act(struct bench *b, int L, int c, int residual, const char *where)
{
    if (!wanted(b, "instnorm_act")) return;
    struct swin_vol x = vol(L, c, 1), res = vol(L, c, 1);
    const double n = (double)L * L * L * c;
    /* bytes: x read twice (statistics, normalise) and written once, + the residual read */
    struct row r = {.op = "instnorm_act", .formula = "~8/element", .picked = -1, .flops = 8.0 * n,
                    .bytes = (3.0 + residual) * 4.0 * n};
    snprintf(r.shape, sizeof r.shape, "%d^3 C=%d%s %s", L, c, residual ? " +res" : "", where);
    /* in place: repeated calls renormalise normalised data, the same work */
    const struct swin_residual rv = {.v = res};
    TIMED(b, &r, swin_cpu_ops.instnorm_act(b->be, x, NULL, true, NULL, NULL, residual ? &rv : NULL, true));
    report(b, &r, x.data, vol_floats(x));
done:
    free(x.data), free(res.data);
}

void bench_layernorm(struct bench *b, int L, int c, int in_place, const char *where)
{
    if (!wanted(b, "layernorm")) return;
    struct swin_vol x = vol(L, c, 1), y = in_place ? x : vol(L, c, 0);
    float *gamma = in_place ? rnd((size_t)c, 0.5f, 1.5f) : NULL, *beta = in_place ? rnd((size_t)c, -0.5f, 0.5f) : NULL;
    const double n = (double)L * L * L * c;
    struct row r = {.op = "layernorm", .formula = "~8/element", .picked = -1, .flops = 8.0 * n, .bytes = 2 * 4.0 * n};
    snprintf(r.shape, sizeof r.shape, "%d^3 C=%d%s %s", L, c, in_place ? " in place +affine" : "", where);
    TIMED(b, &r, swin_cpu_ops.layernorm(b->be, y, x, gamma, beta));
    report(b, &r, y.data, vol_floats(y));
done:
    free(gamma), free(beta), free(x.data);
    if (!in_place) free(y.data);
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

void bench_swin_attention(struct bench *b, int L, int c, int heads, int shifted, const char *where)
{
    if (!wanted(b, "swin_attention")) return;
    const int win = 7;
    const struct swin_window_geom g = swin_window_geom_make((int[3]){L, L, L}, (int[3]){win, win, win}, heads, shifted);
    struct blockw bw = block_new(c, heads, 4 * c, win);
    struct swin_vol x = vol(L, c, 0.01f); /* a small residual stream */
    const double Np = (double)g.padded[0] * g.padded[1] * g.padded[2], W = (double)g.win[0] * g.win[1] * g.win[2];
    struct row r = {.op = "swin_attention", .formula = "2Np 4C^2 + 4 Np W C", .picked = -1,
                    .flops = 2.0 * Np * 4.0 * c * c + 4.0 * Np * W * c};
    snprintf(r.shape, sizeof r.shape, "%d^3 C=%d h=%d win %d%s %s", L, c, heads, g.win[0],
             g.shift[0] || g.shift[1] || g.shift[2] ? " shifted" : "", where);
    r.ws = swin_cpu_ops.swin_attention_ws(b->be, x, &g);
    void *ws = ws_alloc(r.ws);
    TIMED(b, &r, swin_cpu_ops.swin_attention(b->be, x, &bw.w, &g, ws, r.ws));
    report(b, &r, x.data, vol_floats(x));
done:
    block_free(&bw), free(ws), free(x.data);
}

void bench_swin_mlp(struct bench *b, int L, int c, const char *where)
{
    if (!wanted(b, "swin_mlp")) return;
    const int hid = 4 * c;
    struct blockw bw = block_new(c, 1, hid, 7);
    struct swin_vol x = vol(L, c, 0.01f);
    struct row r = {.op = "swin_mlp", .formula = "4 V C hidden", .picked = -1,
                    .flops = 4.0 * (double)L * L * L * c * hid};
    snprintf(r.shape, sizeof r.shape, "%d^3 C=%d hidden=%d %s", L, c, hid, where);
    r.ws = swin_cpu_ops.swin_mlp_ws(b->be, x, hid);
    void *ws = ws_alloc(r.ws);
    TIMED(b, &r, swin_cpu_ops.swin_mlp(b->be, x, &bw.w, hid, ws, r.ws));
    report(b, &r, x.data, vol_floats(x));
done:
    block_free(&bw), free(ws), free(x.data);
}

void bench_patch_merge(struct bench *b, int Lin, int c, const char *where)
{
    if (!wanted(b, "patch_merge")) return;
    const int Lo = Lin / 2;
    struct swin_vol in = vol(Lin, c, 1), out = vol(Lo, 2 * c, 0);
    float *nw = rnd((size_t)8 * c, 0.5f, 1.5f), *nb = rnd((size_t)8 * c, -0.5f, 0.5f);
    float *rw = rnd((size_t)16 * c * c, -0.05f, 0.05f);
    struct row r = {.op = "patch_merge", .formula = "2 Vout 8C 2C", .picked = -1,
                    .flops = 2.0 * Lo * Lo * Lo * 8.0 * c * 2.0 * c};
    snprintf(r.shape, sizeof r.shape, "%d^3 C=%d -> %d^3 C=%d %s", Lin, c, Lo, 2 * c, where);
    r.ws = swin_cpu_ops.patch_merge_ws(b->be, out, in);
    void *ws = ws_alloc(r.ws);
    TIMED(b, &r, swin_cpu_ops.patch_merge(b->be, out, in, swin_merge_order_v15, nw, nb, rw, ws, r.ws));
    report(b, &r, out.data, vol_floats(out));
done:
    free(nw), free(nb), free(rw), free(ws), free(in.data), free(out.data);
}
