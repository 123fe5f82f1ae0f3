/* profile_cpu_forward: where one forward pass of the CPU backend spends its time, op by op,
 * against this machine's measured FMA throughput and memory bandwidth.
 *
 *   profile_cpu_forward --model PATH [--cube D H W] [--threads N] [--isa LEVEL] [--precision fp32|bf16]
 *                       [--runs N] [--md FILE] [--json FILE]
 *
 * The model runs through the library's own forward() and planner (runtime/forward.h) on the
 * CPU backend, whose op table is wrapped here: every call is timed (CLOCK_MONOTONIC around
 * the op, which returns when all its threads are done) and added to a row keyed by op,
 * shape and the kernel the backend picks. One untimed pass, then --runs timed passes; the
 * table gives per-window means. The Winograd convs are also split by phase (thread-seconds
 * in the weight transform, the input transform, the GEMMs and the output transform).
 *
 * FLOPs per call (2 per multiply-add; only the GEMM-like work):
 *   conv3d k^3           2 k^3 cin cout Vout (the direct conv's count, whatever the kernel:
 *                        Winograd rows are "effective" GFLOP/s)
 *   conv_transpose2      2 * 8 cin cout Vin
 *   swin_attention       2 Np 4C^2 + 4 Np W C  (qkv + proj, QK^T + AV; Np padded tokens, W per window)
 *   swin_mlp             4 V C hidden
 *   patch_merge          2 Vout 8C 2C
 * Each row's products run on one unit (cpu_peak.h): vdpbf16ps where its weights are bfloat16
 * at the AVX512_BF16 level and its kernel multiplies them as they are, else the level's FMA
 * (512- or 256-bit); the attention's QK^T and PV products and the convs that widen bfloat16
 * weights (Winograd, per-tap GEMMs) stay float32 FMA. "of peak" divides a row's GFLOP/s by its unit's peak on all
 * threads; the floor of the pass adds each row's executed FLOPs (Winograd: its GEMMs' (m + 2)^3
 * products per m^3 outputs, not the direct count) over its unit's peak.
 * Bytes per call (the memory-bound ops, float32): instnorm_act reads x twice (statistics,
 * then the pass) and writes it, plus the residual; layernorm, copy, pack and unpack read
 * and write once. Peaks: cpu_peak.h (instruction chains in registers; 128 MiB streams). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/ops/cpu_peak.h"
#include "core/big_alloc.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/model_bf16.h"
#include "runtime/exec.h"
#include "runtime/forward.h"
#include "pipeline/swinrun.h"

#define MAX_ROWS 256

struct prof_row {
    char op[32], shape[64];
    const char *kernel;
    enum cpu_unit unit;           /* what its GEMM products run on */
    long calls;
    double seconds, flops, bytes; /* totals over the timed runs */
    double exec[CPU_UNITS];       /* FLOPs executed on each unit, totals */
};

static struct {
    struct swin_cpu_backend *be;
    enum swin_cpu_simd level;
    int timing;                   /* 0 during the untimed pass and the plan */
    struct prof_row rows[MAX_ROWS];
    int n;
} prof;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The unit of a GEMM whose weights are w (NULL: float32 products). */
static enum cpu_unit unit_of(const float *w)
{
    if (w && swin_cpu_wgemm_of(prof.be, w).bf16 && prof.level >= SWIN_CPU_SIMD_AVX512_BF16) return CPU_DPBF16;
    return prof.level >= SWIN_CPU_SIMD_AVX512 ? CPU_FMA512 : CPU_FMA256;
}

/* The products a conv kernel executes per product of the direct conv: Winograd F(m x m x m,
 * 3x3x3) takes (m + 2)^3 per m^3 outputs instead of 27 (grids that are multiples of m); 1 for
 * the other kernels. */
static double winograd_products(const char *kernel)
{
    int m = 0;
    if (sscanf(kernel, "Winograd F(%d", &m) != 1 || m < 2) return 1.0;
    return (double)(m + 2) * (m + 2) * (m + 2) / (27.0 * m * m * m);
}

/* exec: FLOPs executed per unit by this call. */
static void record(const char *op, const char *shape, const char *kernel, enum cpu_unit unit, double t0, double flops,
                   const double exec[CPU_UNITS], double bytes)
{
    if (!prof.timing) return;
    const double dt = now_s() - t0;
    struct prof_row *r = NULL;
    for (int i = 0; i < prof.n && !r; i++)
        if (!strcmp(prof.rows[i].op, op) && !strcmp(prof.rows[i].shape, shape) && prof.rows[i].kernel == kernel)
            r = &prof.rows[i];
    if (!r) {
        if (prof.n == MAX_ROWS) return;
        r = &prof.rows[prof.n++];
        snprintf(r->op, sizeof r->op, "%s", op);
        snprintf(r->shape, sizeof r->shape, "%s", shape);
        r->kernel = kernel;
        r->unit = unit;
    }
    r->calls++;
    r->seconds += dt;
    r->flops += flops;
    r->bytes += bytes;
    for (int u = 0; exec && u < CPU_UNITS; u++) r->exec[u] += exec[u];
}

static double vox(struct swin_vol v) { return (double)swin_vol_voxels(v); }

static void grid(char *s, size_t n, struct swin_vol v)
{
    if (v.d == v.h && v.h == v.w) snprintf(s, n, "%d^3", v.d);
    else snprintf(s, n, "%dx%dx%d", v.d, v.h, v.w);
}

static int p_pack_input(void *be, struct swin_vol out, const float *host)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.pack_input(be, out, host);
    char s[64];
    grid(s, sizeof s, out);
    record("pack_input", s, "", CPU_FMA256, t0, 0, NULL, 8.0 * vox(out) * out.c);
    return rc;
}

static int p_unpack_output(void *be, float *host, struct swin_vol in)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.unpack_output(be, host, in);
    char s[64];
    grid(s, sizeof s, in);
    record("unpack_output", s, "", CPU_FMA256, t0, 0, NULL, 8.0 * vox(in) * in.c);
    return rc;
}

static int p_copy(void *be, struct swin_vol out, struct swin_vol in)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.copy(be, out, in);
    char s[64], g[32];
    grid(g, sizeof g, in);
    snprintf(s, sizeof s, "%s x %d", g, in.c);
    record("copy", s, "", CPU_FMA256, t0, 0, NULL, 8.0 * vox(in) * in.c);
    return rc;
}

/* One conv3d row: `prefix` names a norm folded into the conv's reads ("" for none). */
static void conv_row(double t0, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride, int pad,
                     const char *prefix)
{
    const char *kernel = swin_cpu_conv3d_kernel(prof.be, out, in, w, k, stride, pad);
    /* only the GEMM kernels multiply bfloat16 weights as they are; Winograd and the per-tap
     * GEMMs widen them to float32 (winograd.h, conv3d_taps_tmpl.h) */
    const enum cpu_unit unit = strstr(kernel, "bf16 GEMM") ? unit_of(w) : unit_of(NULL);
    char s[64], g[32];
    grid(g, sizeof g, out);
    snprintf(s, sizeof s, "%s%s %d->%d k%d s%d", prefix, g, in.c, out.c, k, stride);
    const double flops = 2.0 * k * k * k * in.c * out.c * vox(out);
    double exec[CPU_UNITS] = {0};
    exec[unit] = flops * winograd_products(kernel);
    record("conv3d", s, kernel, unit, t0, flops, exec, 0);
}

static int p_conv3d(void *be, struct swin_vol out, void *stats, struct swin_vol in, const float *w, const float *bias,
                    int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.conv3d(be, out, stats, in, w, bias, k, stride, pad, ws, ws_bytes);
    conv_row(t0, out, in, w, k, stride, pad, "");
    return rc;
}

static int p_conv3d_normed_input(void *be, struct swin_vol out, void *stats, struct swin_vol in, const void *in_stats,
                                 const float *gamma, const float *beta, const float *w, const float *bias, void *ws,
                                 size_t ws_bytes)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.conv3d_normed_input(be, out, stats, in, in_stats, gamma, beta, w, bias, ws, ws_bytes);
    conv_row(t0, out, in, w, 3, 1, 1, "IN+act, ");
    return rc;
}

static int p_conv_transpose2(void *be, struct swin_vol out, struct swin_vol in, const float *w)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.conv_transpose2(be, out, in, w);
    char s[64], g[32];
    grid(g, sizeof g, out);
    snprintf(s, sizeof s, "%s %d->%d", g, in.c, out.c);
    double exec[CPU_UNITS] = {0};
    exec[unit_of(w)] = 16.0 * in.c * out.c * vox(in);
    record("conv_transpose2", s, "", unit_of(w), t0, exec[unit_of(w)], exec, 0);
    return rc;
}

static int p_instnorm_act(void *be, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                          const float *beta, const struct swin_residual *residual, bool lrelu)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.instnorm_act(be, x, stats, normalize, gamma, beta, residual, lrelu);
    char s[64], g[32];
    grid(g, sizeof g, x);
    snprintf(s, sizeof s, "%s x %d%s%s", g, x.c, !residual ? "" : residual->normalize ? " +IN(res)" : " +res",
             normalize ? "" : " (no norm)");
    const double passes = (normalize ? 3.0 : 2.0) + (!residual ? 0.0 : residual->normalize ? 2.0 : 1.0);
    record("instnorm_act", s, "", CPU_FMA256, t0, 0, NULL, 4.0 * passes * vox(x) * x.c);
    return rc;
}

static int p_instnorm_act_narrow_shortcut(void *be, struct swin_vol x, const void *stats, const float *gamma,
                                          const float *beta, struct swin_vol src, const float *w,
                                          const float *res_gamma, const float *res_beta)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.instnorm_act_narrow_shortcut(be, x, stats, gamma, beta, src, w, res_gamma, res_beta);
    char s[80], g[32];
    grid(g, sizeof g, x);
    snprintf(s, sizeof s, "%s x %d +IN(1x1 conv of %d)", g, x.c, src.c);
    record("instnorm_act_narrow_shortcut", s, "", CPU_FMA256, t0, 0, NULL, 4.0 * (3.0 * x.c + 2.0 * src.c) * vox(x));
    return rc;
}

static int p_instnorm_act_conv1x1(void *be, struct swin_vol out, struct swin_vol x, const void *stats, bool normalize,
                                  const float *gamma, const float *beta, const struct swin_residual *residual,
                                  bool lrelu, const float *w, const float *bias)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.instnorm_act_conv1x1(be, out, x, stats, normalize, gamma, beta, residual, lrelu, w, bias);
    char s[80], g[32];
    grid(g, sizeof g, x);
    snprintf(s, sizeof s, "%s x %d%s -> 1x1 conv to %d", g, x.c,
             !residual ? "" : residual->normalize ? " +IN(res)" : " +res", out.c);
    double exec[CPU_UNITS] = {0};
    exec[unit_of(w)] = 2.0 * x.c * out.c * vox(x);
    /* bytes: x and the residual read, their statistics read once more where not kept, out written */
    const double reads = 1.0 + (normalize && !stats ? 1.0 : 0.0) + (!residual ? 0.0 : residual->normalize ? 2.0 : 1.0);
    record("instnorm_act_conv1x1", s, "", unit_of(w), t0, exec[unit_of(w)], exec,
           4.0 * vox(x) * (reads * x.c + out.c));
    return rc;
}

static int p_layernorm(void *be, struct swin_vol out, struct swin_vol in, const float *gamma, const float *beta)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.layernorm(be, out, in, gamma, beta);
    char s[64], g[32];
    grid(g, sizeof g, in);
    snprintf(s, sizeof s, "%s x %d", g, in.c);
    record("layernorm", s, "", CPU_FMA256, t0, 0, NULL, 8.0 * vox(in) * in.c);
    return rc;
}

static int p_swin_attention(void *be, struct swin_vol x, const struct swin_block_w *blk,
                            const struct swin_window_geom *g, void *ws, size_t ws_bytes)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.swin_attention(be, x, blk, g, ws, ws_bytes);
    char s[64], gs[32];
    grid(gs, sizeof gs, x);
    const bool shifted = g->shift[0] || g->shift[1] || g->shift[2];
    snprintf(s, sizeof s, "%s x %d, %d heads%s", gs, x.c, g->heads, shifted ? ", shifted" : "");
    const double np = (double)g->padded[0] * g->padded[1] * g->padded[2];
    const double wt = (double)g->win[0] * g->win[1] * g->win[2], c = x.c;
    double exec[CPU_UNITS] = {0};
    exec[unit_of(blk->qkv_w)] += 8.0 * np * c * c; /* qkv and proj */
    exec[unit_of(NULL)] += 4.0 * np * wt * c;        /* QK^T and PV, float32 */
    record("swin_attention", s, "", unit_of(blk->qkv_w), t0, 8.0 * np * c * c + 4.0 * np * wt * c, exec, 0);
    return rc;
}

static int p_swin_mlp(void *be, struct swin_vol x, const struct swin_block_w *blk, int hidden, void *ws,
                      size_t ws_bytes)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.swin_mlp(be, x, blk, hidden, ws, ws_bytes);
    char s[64], g[32];
    grid(g, sizeof g, x);
    snprintf(s, sizeof s, "%s x %d, hidden %d", g, x.c, hidden);
    double exec[CPU_UNITS] = {0};
    exec[unit_of(blk->fc1_w)] = 4.0 * vox(x) * x.c * hidden;
    record("swin_mlp", s, "", unit_of(blk->fc1_w), t0, exec[unit_of(blk->fc1_w)], exec, 0);
    return rc;
}

static int p_patch_merge(void *be, struct swin_vol out, struct swin_vol in, const swin_merge_order order,
                         const float *norm_w, const float *norm_b, const float *red_w, void *ws, size_t ws_bytes)
{
    double t0 = now_s();
    int rc = swin_cpu_ops.patch_merge(be, out, in, order, norm_w, norm_b, red_w, ws, ws_bytes);
    char s[64], g[32];
    grid(g, sizeof g, in);
    snprintf(s, sizeof s, "%s x %d -> x %d", g, in.c, out.c);
    double exec[CPU_UNITS] = {0};
    exec[unit_of(red_w)] = 32.0 * vox(out) * in.c * in.c;
    record("patch_merge", s, "", unit_of(red_w), t0, exec[unit_of(red_w)], exec, 0);
    return rc;
}

static struct swin_ops profiled_ops(void)
{
    struct swin_ops o = swin_cpu_ops;
    o.name = "cpu (profiled)";
    o.pack_input = p_pack_input;
    o.unpack_output = p_unpack_output;
    o.copy = p_copy;
    o.conv3d = p_conv3d;
    o.conv3d_normed_input = p_conv3d_normed_input;
    o.conv_transpose2 = p_conv_transpose2;
    o.instnorm_act = p_instnorm_act;
    o.instnorm_act_narrow_shortcut = p_instnorm_act_narrow_shortcut;
    o.instnorm_act_conv1x1 = p_instnorm_act_conv1x1;
    o.layernorm = p_layernorm;
    o.swin_attention = p_swin_attention;
    o.swin_mlp = p_swin_mlp;
    o.patch_merge = p_patch_merge;
    return o;
}

static int by_time(const void *a, const void *b)
{
    const struct prof_row *x = a, *y = b;
    return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
}

struct peaks {
    double unit1[CPU_UNITS], unit_all[CPU_UNITS]; /* GFLOP/s, 1 thread and all */
    double read1, read_all, copy1, copy_all;
};

/* Seconds the pass would take with every row's executed FLOPs at its unit's peak. */
static double floor_seconds(int runs, const struct peaks *pk)
{
    double f = 0;
    for (int i = 0; i < prof.n; i++)
        for (int u = 0; u < CPU_UNITS; u++)
            if (prof.rows[i].exec[u] > 0 && pk->unit_all[u] > 0) f += prof.rows[i].exec[u] / runs / (pk->unit_all[u] * 1e9);
    return f;
}

static void write_md(FILE *o, const char *model, const int cube[3], const char *precision, int threads, int runs,
                     const double *pass_s, double pass_med, const struct peaks *pk,
                     const struct swin_cpu_wino_phases *ph, double wino_gemm_flops, enum cpu_unit wino_unit)
{
    double op_total = 0, exec_total = 0;
    for (int i = 0; i < prof.n; i++) {
        op_total += prof.rows[i].seconds / runs;
        for (int u = 0; u < CPU_UNITS; u++) exec_total += prof.rows[i].exec[u] / runs;
    }
    fprintf(o, "Model %s, cube %dx%dx%d, CPU backend at the %s level, %s, %d threads, %d timed passes after 1 "
               "untimed.\n\n",
            model, cube[0], cube[1], cube[2], swin_cpu_simd_name(prof.level), precision, threads, runs);
    fprintf(o, "Forward pass, wall: median %.3f s (passes:", pass_med);
    for (int r = 0; r < runs; r++) fprintf(o, " %.3f", pass_s[r]);
    fprintf(o, "); in the ops %.3f s per pass (%.1f %%), the rest is forward()'s own work between ops.\n\n",
            op_total, 100.0 * op_total / pass_med);
    const double fl = floor_seconds(runs, pk);
    fprintf(o, "Floor of the pass: %.3f s (%.1f executed GFLOP, each row's at the peak of its unit on %d threads); "
               "the median pass reaches %.1f %% of it.\n\n",
            fl, exec_total * 1e-9, threads, 100.0 * fl / pass_med);
    fprintf(o, "Measured peaks (bench/ops/cpu_peak.c), GFLOP/s on 1 / %d threads:", threads);
    for (int u = 0; u < CPU_UNITS; u++)
        fprintf(o, " %s %.1f / %.1f%s", cpu_unit_name((enum cpu_unit)u), pk->unit1[u], pk->unit_all[u],
                u + 1 < CPU_UNITS ? "," : ";");
    fprintf(o, " memory read %.1f GB/s on 1 thread, %.1f on %d; copy (read + write) %.1f GB/s on 1, %.1f on %d "
               "(0: the CPU lacks the unit).\n\n",
            pk->read1, pk->read_all, threads, pk->copy1, pk->copy_all, threads);
    fprintf(o, "| op | shape | kernel | unit | calls/pass | ms/pass | share | GFLOP/s | of unit peak | GB/s | of copy "
               "peak |\n");
    fprintf(o, "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < prof.n; i++) {
        const struct prof_row *r = &prof.rows[i];
        const double s = r->seconds / runs;
        fprintf(o, "| %s | %s | %s | %s | %.0f | %.1f | %.1f %% |", r->op, r->shape, r->kernel,
                r->flops > 0 ? cpu_unit_name(r->unit) : "-", (double)r->calls / runs, 1e3 * s, 100.0 * s / pass_med);
        if (r->flops > 0) fprintf(o, " %.1f | %.0f %% |", r->flops / r->seconds * 1e-9,
                                  100.0 * r->flops / r->seconds * 1e-9 / pk->unit_all[r->unit]);
        else fprintf(o, " - | - |");
        if (r->bytes > 0) fprintf(o, " %.1f | %.0f %% |\n", r->bytes / r->seconds * 1e-9,
                                  100.0 * r->bytes / r->seconds * 1e-9 / pk->copy_all);
        else fprintf(o, " - | - |\n");
    }
    const double wt = ph->weights_s + ph->input_s + ph->gemm_s + ph->output_s;
    if (wt > 0) {
        fprintf(o, "\nWinograd convs by phase (thread-seconds per pass, all threads added; share of the Winograd "
                   "time):\n\n| phase | thread-s/pass | share | rate |\n|---|---|---|---|\n");
        fprintf(o, "| weight transform | %.3f | %.1f %% | |\n", ph->weights_s / runs, 100 * ph->weights_s / wt);
        fprintf(o, "| input transform | %.3f | %.1f %% | |\n", ph->input_s / runs, 100 * ph->input_s / wt);
        fprintf(o, "| GEMMs | %.3f | %.1f %% | %.1f GFLOP/s per thread (%.0f %% of 1-thread %s peak) |\n",
                ph->gemm_s / runs, 100 * ph->gemm_s / wt, wino_gemm_flops / ph->gemm_s * 1e-9,
                100 * wino_gemm_flops / ph->gemm_s * 1e-9 / pk->unit1[wino_unit], cpu_unit_name(wino_unit));
        fprintf(o, "| output transform | %.3f | %.1f %% | |\n", ph->output_s / runs, 100 * ph->output_s / wt);
    }
}

static void write_json(FILE *o, const char *precision, int runs, double pass_med, const struct peaks *pk)
{
    fprintf(o, "{\"level\": \"%s\", \"precision\": \"%s\", \"pass_seconds_median\": %.6f, "
               "\"floor_seconds\": %.6f, \"peaks\": {",
            swin_cpu_simd_name(prof.level), precision, pass_med, floor_seconds(runs, pk));
    for (int u = 0; u < CPU_UNITS; u++)
        fprintf(o, "\"%s1\": %.3f, \"%s_all\": %.3f, ", cpu_unit_name((enum cpu_unit)u), pk->unit1[u],
                cpu_unit_name((enum cpu_unit)u), pk->unit_all[u]);
    fprintf(o, "\"read1\": %.3f, \"read_all\": %.3f, \"copy1\": %.3f, \"copy_all\": %.3f}, \"rows\": [",
            pk->read1, pk->read_all, pk->copy1, pk->copy_all);
    for (int i = 0; i < prof.n; i++) {
        const struct prof_row *r = &prof.rows[i];
        double ex = 0;
        for (int u = 0; u < CPU_UNITS; u++) ex += r->exec[u];
        fprintf(o, "%s\n {\"op\": \"%s\", \"shape\": \"%s\", \"kernel\": \"%s\", \"unit\": \"%s\", "
                   "\"calls_per_pass\": %.3f, \"seconds_per_pass\": %.6f, \"flops_per_pass\": %.6g, "
                   "\"executed_flops_per_pass\": %.6g, \"bytes_per_pass\": %.6g}",
                i ? "," : "", r->op, r->shape, r->kernel, cpu_unit_name(r->unit), (double)r->calls / runs,
                r->seconds / runs, r->flops / runs, ex / runs, r->bytes / runs);
    }
    fprintf(o, "\n]}\n");
}

/* The GEMM flops of the Winograd convs (winograd_products). */
static double winograd_gemm_flops(void)
{
    double f = 0;
    for (int i = 0; i < prof.n; i++)
        if (!strncmp(prof.rows[i].kernel, "Winograd", 8)) f += prof.rows[i].flops * winograd_products(prof.rows[i].kernel);
    return f;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(FILE *o)
{
    fprintf(o, "profile_cpu_forward: per-op times of one CPU forward pass against measured FMA and bandwidth peaks\n"
               "\n"
               "Usage: profile_cpu_forward --model PATH [--cube D H W] [--threads N] [--isa LEVEL]\n"
               "                           [--precision fp32|bf16] [--runs N] [--md FILE] [--json FILE]\n"
               "  --model PATH   any model swinrun loads (ONNX, checkpoint, bundle folder)\n"
               "  --cube D H W   window (default: the export cube, else 96 96 96)\n"
               "  --threads N    CPU threads (default 0 = every core)\n"
               "  --isa LEVEL    highest kernel level: avx512bf16, avx512, avx2 or baseline (default: the best the CPU\n"
               "                 has)\n"
               "  --precision P  fp32 (default) or bf16: the GEMM and conv weights bfloat16 (the stem and the head\n"
               "                 kept float32), as swinrun --precision bf16 runs them\n"
               "  --runs N       timed passes after one untimed (default 3)\n"
               "  --md FILE      the table as Markdown (default: stdout)\n"
               "  --json FILE    the rows as JSON\n"
               "Exit: 0 ok, 1 a run failed, 2 bad arguments.\n");
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *md_path = NULL, *json_path = NULL, *precision = "fp32";
    int cube[3] = {0, 0, 0}, threads = 0, runs = 3;
    enum swin_cpu_simd isa = SWIN_CPU_SIMD_AVX512_BF16;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--model") && i + 1 < argc) model_path = argv[++i];
        else if (!strcmp(o, "--md") && i + 1 < argc) md_path = argv[++i];
        else if (!strcmp(o, "--json") && i + 1 < argc) json_path = argv[++i];
        else if (!strcmp(o, "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(o, "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(o, "--isa") && i + 1 < argc) {
            if (!swin_cpu_simd_parse(argv[++i], &isa)) {
                fprintf(stderr, "profile_cpu_forward: error: --isa %s: avx512bf16, avx512, avx2 or baseline\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(o, "--precision") && i + 1 < argc) {
            precision = argv[++i];
            if (strcmp(precision, "fp32") && strcmp(precision, "bf16")) {
                fprintf(stderr, "profile_cpu_forward: error: --precision %s: fp32 or bf16\n", precision);
                return 2;
            }
        } else if (!strcmp(o, "--cube") && i + 3 < argc)
            for (int k = 0; k < 3; k++) cube[k] = atoi(argv[++i]);
        else {
            fprintf(stderr, "profile_cpu_forward: error: bad argument %s (try --help)\n", o);
            return 2;
        }
    }
    if (!model_path || runs < 1 || runs > 100 || threads < 0) {
        fprintf(stderr, "profile_cpu_forward: error: --model is required; --runs 1..100, --threads >= 0\n");
        return 2;
    }
    swin_error err = {0};
    swin_model_t *m = NULL;
    if (swin_model_load(model_path, &m, &err)) {
        fprintf(stderr, "profile_cpu_forward: %s\n", err.msg);
        return 1;
    }
    for (int k = 0; k < 3; k++)
        if (!cube[k]) cube[k] = m->cfg.cube[k] ? m->cfg.cube[k] : 96;
    if (swin_cpu_backend_create(threads, &prof.be, &err)) {
        fprintf(stderr, "profile_cpu_forward: %s\n", err.msg);
        return 1;
    }
    threads = swin_cpu_backend_threads(prof.be);
    prof.level = swin_cpu_backend_set_simd(prof.be, isa);
    struct swin_model *bf16 = NULL;
    if (!strcmp(precision, "bf16")) {
        size_t bf16_bytes = 0;
        if (swin_model_bf16_copy(m, SWIN_BF16_KEEP_DEFAULT, &bf16, &bf16_bytes, &err)) {
            fprintf(stderr, "profile_cpu_forward: %s\n", err.msg);
            return 1;
        }
        swin_cpu_backend_set_bf16(prof.be, bf16->flat, bf16_bytes);
    }
    const struct swin_model *run_model = bf16 ? bf16 : m;
    struct swin_cpu_wino_phases phases = {0};
    const struct swin_ops ops = profiled_ops();
    struct swin_plan plan;
    swin_plan_init(&plan);
    struct swin_exec e = {.plan = &plan, .planning = true, .ops = &ops, .be = prof.be, .err = &err};
    swin_status st = swin_forward(&e, run_model, cube, NULL, NULL);
    if (!st) st = swin_plan_solve(&plan, &err);
    const size_t nin = (size_t)m->cfg.in_channels * cube[0] * cube[1] * cube[2];
    const size_t nout = (size_t)m->cfg.out_channels * cube[0] * cube[1] * cube[2];
    float *in = malloc(nin * sizeof *in), *out = malloc(nout * sizeof *out);
    /* the arena as the CPU backend allocates it (huge pages where offered) */
    char *arena = st ? NULL : swin_big_alloc(plan.arena_bytes, SWIN_PLAN_ALIGN);
    if (!st && (!in || !out || !arena)) st = swin_error_set(&err, SWIN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < nin; i++) in[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    /* the peaks first, on an idle process (the passes' pages are not yet touched) */
    struct peaks pk = {.read1 = cpu_stream_gbps(1, 0), .read_all = cpu_stream_gbps(threads, 0),
                       .copy1 = cpu_stream_gbps(1, 1), .copy_all = cpu_stream_gbps(threads, 1)};
    for (int u = 0; u < CPU_UNITS; u++) {
        pk.unit1[u] = cpu_unit_gflops(1, (enum cpu_unit)u);
        pk.unit_all[u] = cpu_unit_gflops(threads, (enum cpu_unit)u);
    }
    double pass_s[100];
    for (int r = 0; !st && r <= runs; r++) {
        prof.timing = r > 0;
        swin_cpu_backend_set_wino_phases(prof.be, r > 0 ? &phases : NULL);
        swin_plan_rewind(&plan);
        e = (struct swin_exec){.plan = &plan, .arena = arena, .ops = &ops, .be = prof.be, .err = &err};
        const double t0 = now_s();
        st = swin_forward(&e, run_model, cube, in, out);
        if (r > 0) pass_s[r - 1] = now_s() - t0;
    }
    if (st) {
        fprintf(stderr, "profile_cpu_forward: %s\n", err.msg);
        return 1;
    }
    double sorted[100];
    memcpy(sorted, pass_s, (size_t)runs * sizeof *sorted);
    qsort(sorted, (size_t)runs, sizeof *sorted, cmp_double);
    const double med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
    const double wino_flops = winograd_gemm_flops();
    qsort(prof.rows, (size_t)prof.n, sizeof prof.rows[0], by_time);
    FILE *md = md_path ? fopen(md_path, "w") : stdout;
    if (!md) {
        fprintf(stderr, "profile_cpu_forward: cannot write %s\n", md_path);
        return 1;
    }
    write_md(md, model_path, cube, precision, threads, runs, pass_s, med, &pk, &phases, wino_flops, unit_of(NULL));
    if (md != stdout) fclose(md);
    if (json_path) {
        FILE *j = fopen(json_path, "w");
        if (!j) {
            fprintf(stderr, "profile_cpu_forward: cannot write %s\n", json_path);
            return 1;
        }
        write_json(j, precision, runs, med, &pk);
        fclose(j);
    }
    swin_big_free(arena);
    free(in);
    free(out);
    swin_plan_release(&plan);
    swin_cpu_backend_free(prof.be);
    swin_model_bf16_free(bf16);
    swin_model_free(m);
    return 0;
}
