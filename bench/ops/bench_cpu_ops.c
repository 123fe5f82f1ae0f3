/* bench_cpu_ops: GFLOP/s of swinrun's CPU ops (kernels/ops.h, kernels/cpu/cpu_backend.h) at the
 * shapes of a Swin UNETR with f = 48 on a cube of L^3 (default 96^3), against an estimate of
 * this machine's fp32 peak and its measured FMA throughput (cpu_peak.h), at a chosen
 * instruction-set level, with wall and CPU time (cpu_op_timing.h).
 *
 *   bench_cpu_ops [--cube L] [--feature-size F] [--threads N] [--reps N] [--isa LEVEL] [--op SUBSTR]
 *                 [--json FILE] [--check]
 *
 * FLOPs counted per call (2 per multiply-add; only the GEMM-like work, written next to each op):
 *   conv3d k^3          2 k^3 cin cout Vout
 *   conv_transpose2     2 * 8 cin cout Vin
 *   swin_attention      2 Np (3C^2 + C^2) + 2 * 2 Np W C   (qkv + proj, QK^T + AV; Np tokens of the
 *                       padded grid, W tokens per window; LN, softmax and bias not counted)
 *   swin_mlp            2 * 2 V C hidden                    (fc1 + fc2; LN, GELU not counted)
 *   patch_merge         2 Vout 8C 2C                        (the reduction; LN not counted)
 *   instnorm_act, layernorm  ~8 per element (memory-bound: GB/s is the number to read)
 * The inputs are random; the op tests (tests/kernels/cpu) check correctness, --check here only
 * checks that outputs are finite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ops/cpu_op_timing.h"
#include "bench/ops/cpu_peak.h"


static void usage(FILE *o)
{
    fprintf(o,
            "bench_cpu_ops: GFLOP/s of swinrun's CPU ops at Swin UNETR stage shapes vs an estimated fp32 peak\n"
            "\n"
            "Usage: bench_cpu_ops [--cube L] [--feature-size F] [--threads N] [--reps N] [--isa LEVEL] [--op SUBSTR]\n"
            "                     [--json FILE] [--check]\n"
            "  --cube L          input cube L^3 (multiple of 32; default 96: stages at 48, 24, 12, 6)\n"
            "  --feature-size F  f (default 48): stage channels f, 2f, 4f, 8f\n"
            "  --threads N       CPU backend threads (default 0 = every core)\n"
            "  --reps N          timed calls per op after one untimed call (default 3, at most 256)\n"
            "  --isa LEVEL       highest kernel level: avx512bf16, avx512, avx2, baseline (default: the best the\n"
            "                    CPU has; Winograd, the conv3d_wino2, conv3d_wino4 and conv3d_wino6 rows, from avx2\n"
            "                    up; conv3d_wino6 is picked with bfloat16 weights only, timed here on float32 ones)\n"
            "  --op SUBSTR       only ops whose name contains SUBSTR (conv3d, conv3d_taps, conv3d_wino2, conv3d_wino4,\n"
            "                    conv3d_wino6, conv_transpose2,\n"
            "                    instnorm_act, layernorm, swin_attention, swin_mlp, patch_merge; also conv,\n"
            "                    norm, swin, merge, wino)\n"
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

/* The ops of one forward pass at f on L^3, each shape once (stage grids L/2 .. L/32). */
static void bench_model_shapes(struct bench *b, int L, int f)
{
    int s0 = L / 2, s1 = L / 4, s2 = L / 8, s3 = L / 16, s4 = L / 32;
    /* convolutions of the encoders/decoders (UnetResBlock 3x3x3, 1x1 where channels change),
     * patch embedding k2 s2 */
    bench_conv3d(b, L, 1, f, 2, 2, "(patch embed)");
    bench_conv3d(b, L, 1, f, 3, 1, "(encoder1 conv1)");
    bench_conv3d(b, L, f, f, 3, 1, "(encoder1 conv2, decoder1 conv2)");
    bench_conv3d(b, L, 2 * f, f, 3, 1, "(decoder1 conv1)");
    bench_conv3d(b, L, 2 * f, f, 1, 1, "(decoder1 conv3)");
    bench_conv3d(b, s0, f, f, 3, 1, "(encoder2, decoder2 conv2)");
    bench_conv3d(b, s0, 2 * f, f, 3, 1, "(decoder2 conv1)");
    bench_conv3d(b, s1, 2 * f, 2 * f, 3, 1, "(encoder3, decoder3 conv2)");
    bench_conv3d(b, s1, 4 * f, 2 * f, 3, 1, "(decoder3 conv1)");
    bench_conv3d(b, s2, 4 * f, 4 * f, 3, 1, "(encoder4, decoder4 conv2)");
    bench_conv3d(b, s2, 8 * f, 4 * f, 3, 1, "(decoder4 conv1)");
    bench_conv3d(b, s3, 16 * f, 8 * f, 3, 1, "(decoder5 conv1)");
    bench_conv3d(b, s3, 8 * f, 8 * f, 3, 1, "(decoder5 conv2)");
    bench_conv3d(b, s4, 16 * f, 16 * f, 3, 1, "(encoder10)");
    bench_conv_transpose2(b, s1, 2 * f, f, "(decoder2 up)");
    bench_conv_transpose2(b, s0, f, f, "(decoder1 up)");
    bench_instnorm_act(b, L, f, 1, "(decoder1)");
    bench_instnorm_act(b, s0, f, 0, "(encoder2)");
    bench_layernorm(b, s0, f, 1, "(patch norm)");
    bench_layernorm(b, s0, f, 0, "(hidden state 0)");
    /* Swin stages: window 7, heads 3/6/12/24 (MONAI defaults) */
    bench_swin_attention(b, s0, f, 3, 0, "(stage 0 block 0)");
    bench_swin_attention(b, s0, f, 3, 1, "(stage 0 block 1)");
    bench_swin_attention(b, s1, 2 * f, 6, 1, "(stage 1 block 1)");
    bench_swin_attention(b, s2, 4 * f, 12, 1, "(stage 2 block 1)");
    bench_swin_attention(b, s3, 8 * f, 24, 1, "(stage 3 block 1)");
    bench_swin_mlp(b, s0, f, "(stage 0)");
    bench_swin_mlp(b, s1, 2 * f, "(stage 1)");
    bench_swin_mlp(b, s2, 4 * f, "(stage 2)");
    bench_swin_mlp(b, s3, 8 * f, "(stage 3)");
    bench_patch_merge(b, s0, f, "(stage 0 -> 1)");
    bench_patch_merge(b, s1, 2 * f, "(stage 1 -> 2)");
}

int main(int argc, char **argv)
{
    struct bench b = {.reps = 3};
    int L = 96, f = 48, threads = 0;
    enum swin_cpu_simd isa = SWIN_CPU_SIMD_AVX512_BF16;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int need = !strcmp(o, "--cube") || !strcmp(o, "--feature-size") || !strcmp(o, "--threads") ||
                   !strcmp(o, "--reps") || !strcmp(o, "--isa") || !strcmp(o, "--op") || !strcmp(o, "--json");
        if (need && i + 1 >= argc) {
            fprintf(stderr, "bench_cpu_ops: error: %s needs a value (try --help)\n", o);
            return 2;
        }
        const char *bad = NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--cube")) {
            if (parse_int(argv[++i], 32, 512, &L) || L % 32) bad = "a multiple of 32 in 32..512";
        } else if (!strcmp(o, "--feature-size")) {
            if (parse_int(argv[++i], 1, 1024, &f)) bad = "an integer 1..1024";
        } else if (!strcmp(o, "--threads")) {
            if (parse_int(argv[++i], 0, 4096, &threads)) bad = "an integer 0..4096";
        } else if (!strcmp(o, "--reps")) {
            if (parse_int(argv[++i], 1, 256, &b.reps)) bad = "an integer 1..256";
        } else if (!strcmp(o, "--isa")) {
            if (!swin_cpu_simd_parse(argv[++i], &isa)) bad = "avx512bf16, avx512, avx2 or baseline";
        } else if (!strcmp(o, "--op")) {
            b.filter = argv[++i];
        } else if (!strcmp(o, "--json")) {
            json_path = argv[++i];
        } else if (!strcmp(o, "--check")) {
            b.check = 1;
        } else {
            fprintf(stderr, "bench_cpu_ops: error: unknown argument '%s' (try --help)\n", o);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "bench_cpu_ops: error: %s takes %s, not '%s'\n", o, bad, argv[i]);
            return 2;
        }
    }
    if (json_path && !(b.json = fopen(json_path, "w"))) {
        fprintf(stderr, "bench_cpu_ops: error: cannot write %s\n", json_path);
        return 2;
    }
    swin_error err = {0};
    if (swin_cpu_backend_create(threads, &b.be, &err)) {
        fprintf(stderr, "bench_cpu_ops: error: cannot create the CPU backend: %s\n", err.msg);
        return 1;
    }
    const enum swin_cpu_simd level = swin_cpu_backend_set_simd(b.be, isa);
    b.threads = swin_cpu_backend_threads(b.be);
    const struct cpu_peak pk = cpu_peak_estimate(b.threads);
    b.peak_gflops = pk.gflops;
    printf("bench_cpu_ops: swinrun CPU ops, Swin UNETR f=%d on %d^3, %d thread(s), %s kernels (asked %s), "
           "median of %d call(s)\n", f, L, b.threads, swin_cpu_simd_name(level), swin_cpu_simd_name(isa), b.reps);
    printf("CPU: %s\n", pk.cpu);
    printf("Peak ESTIMATE %.0f GFLOP/s fp32 = %s\n", pk.gflops, pk.basis);
    double m2 = 0, m5 = 0; /* best of 3 trials each */
    for (int trial = 0; trial < 3; trial++) {
        double v2 = cpu_unit_gflops(b.threads, CPU_FMA256), v5 = cpu_unit_gflops(b.threads, CPU_FMA512);
        m2 = v2 > m2 ? v2 : m2;
        m5 = v5 > m5 ? v5 : m5;
    }
    printf("Measured FMA throughput (best of 3), %d thread(s) of register-only FMA chains: AVX2 %.0f GFLOP/s, AVX-512 %.0f GFLOP/s "
           "(0 = not supported; a check of the estimate at the real clock, lowered by whatever else runs)\n",
           b.threads, m2, m5);
    b.fma_gflops = m2 > m5 ? m2 : m5;
    if (b.fma_gflops > 0)
        printf("Implied clock at the estimate's %d FLOP/cycle: %.0f MHz (vs %.0f MHz in /proc/cpuinfo)\n", pk.flops_per_cycle,
               b.fma_gflops * 1e3 / (pk.cores * pk.flops_per_cycle), pk.mhz);
    printf("Columns: %% est. = GFLOP/s / the estimate; %% FMA = GFLOP/s / the better measured FMA throughput;\n"
           "cpu ms = the process's CPU time per call (median); idle GF/s = GFLOP / that CPU time x %d threads, the\n"
           "wall rate on an idle machine; ws = the op's workspace; * = the kernel conv3d runs at this shape\n\n",
           b.threads);
    bench_table_header();
    if (b.json)
        fprintf(b.json, "{\"cube\": %d, \"feature_size\": %d, \"threads\": %d, \"reps\": %d, \"isa\": \"%s\", "
                        "\"cpu\": \"%s\", \"peak_gflops_estimate\": %.1f, \"peak_basis\": \"%s\", "
                        "\"measured_fma_gflops_avx2\": %.1f, \"measured_fma_gflops_avx512\": %.1f, \"ops\": [",
                L, f, b.threads, b.reps, swin_cpu_simd_name(level), pk.cpu, pk.gflops, pk.basis, m2, m5);

    bench_model_shapes(&b, L, f);

    if (b.json) {
        fprintf(b.json, "\n]}\n");
        fclose(b.json);
    }
    swin_cpu_backend_free(b.be);
    if (b.failures) fprintf(stderr, "bench_cpu_ops: %d op(s) failed or gave non-finite output\n", b.failures);
    return b.failures ? 1 : 0;
}
