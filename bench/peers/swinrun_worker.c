/* swinrun_bench_worker: the swinrun side of bench/swinbench.py.
 *
 *   swinrun_bench_worker MODEL.onnx IN.npy [--threads N] [--backend cpu|cuda] [--precision fp32|fp16|bf16]
 *
 * Loads the model, creates one context for IN's cube (what `swinrun forward` does), then
 * answers commands read line by line on stdin, one JSON line on stdout each:
 *   run          -> {"event": "run", "seconds": S}       one forward of the window
 *   save OUT.npy -> {"event": "saved", "path": ...}      the logits of the last run
 *   quit         -> exits 0
 * so that the harness can alternate single runs of this process with ONNX Runtime runs in
 * another process while each process keeps its own peak RSS. The first line is
 *   {"event": "ready", "load_seconds", "create_seconds", "rss_*_kib", plan bytes ...}.
 * Errors: {"event": "error", "message": ...} on stdout, then exit 1 (2 for bad arguments).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fileio/npy.h"
#include "pipeline/swinrun.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Resident set size now and its peak, from /proc/self/status (KiB); -1 if unreadable. */
static void rss_kib(long *now, long *peak)
{
    *now = *peak = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6)) *now = strtol(line + 6, NULL, 10);
        if (!strncmp(line, "VmHWM:", 6)) *peak = strtol(line + 6, NULL, 10);
    }
    fclose(f);
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
    putchar('"');
}

static int fail(const char *what, const char *msg, int code)
{
    printf("{\"event\": \"error\", \"message\": ");
    char buf[1200];
    snprintf(buf, sizeof buf, "%s: %s", what, msg);
    json_str(buf);
    printf("}\n");
    fflush(stdout);
    return code;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *in_path = NULL;
    swin_context_params p = swin_context_default_params();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            p.threads = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "cpu")) p.backend = SWIN_BACKEND_CPU;
            else if (!strcmp(b, "cuda")) p.backend = SWIN_BACKEND_CUDA;
            else return fail("arguments", "--backend takes cpu or cuda", 2);
        } else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "fp32")) p.precision = SWIN_PRECISION_FP32;
            else if (!strcmp(v, "fp16")) p.precision = SWIN_PRECISION_FP16;
            else if (!strcmp(v, "bf16")) p.precision = SWIN_PRECISION_BF16;
            else return fail("arguments", "--precision takes fp32, fp16 or bf16", 2);
        } else if (argv[i][0] == '-') {
            return fail("arguments", "usage: swinrun_bench_worker MODEL.onnx IN.npy [--threads N] [--backend cpu|cuda] [--precision fp32|fp16|bf16]", 2);
        } else if (!model_path) {
            model_path = argv[i];
        } else if (!in_path) {
            in_path = argv[i];
        } else {
            return fail("arguments", "too many arguments", 2);
        }
    }
    if (!model_path || !in_path)
        return fail("arguments", "usage: swinrun_bench_worker MODEL.onnx IN.npy [--threads N] [--backend cpu|cuda] [--precision fp32|fp16|bf16]", 2);

    long rss_base, hwm;
    rss_kib(&rss_base, &hwm);
    swin_error err = {0};
    struct swin_npy_array x;
    if (swin_npy_read_f32(in_path, &x, &err)) return fail(in_path, err.msg, 2);
    int off = x.ndim - 4;
    if ((x.ndim != 4 && x.ndim != 5) || (x.ndim == 5 && x.shape[0] != 1))
        return fail(in_path, "expected shape (1, C, D, H, W) or (C, D, H, W)", 2);
    for (int k = 0; k < 3; k++) p.cube[k] = (int)x.shape[off + 1 + k];

    double t0 = now_seconds();
    swin_model_t *m = NULL;
    if (swin_model_load(model_path, &m, &err)) return fail(model_path, err.msg, 1);
    double t_load = now_seconds() - t0;
    swin_model_info info;
    swin_model_get_info(m, &info);
    if ((int)x.shape[off] != info.in_channels) return fail(in_path, "channel count differs from the model's", 2);
    long rss_loaded;
    rss_kib(&rss_loaded, &hwm);

    t0 = now_seconds();
    swin_context_t *ctx = NULL;
    if (swin_context_create(m, &p, &ctx, &err)) return fail("context", err.msg, 1);
    double t_create = now_seconds() - t0;
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);
    /* BF16 runs the context's own copy of the weights: the float32 ones can go */
    if (plan.precision == SWIN_PRECISION_BF16) {
        swin_model_free(m);
        m = NULL;
    }
    size_t n = (size_t)info.out_channels * (size_t)p.cube[0] * (size_t)p.cube[1] * (size_t)p.cube[2];
    float *y = malloc(n * sizeof *y);
    if (!y) return fail("output", "out of host memory", 1);
    long rss_ready;
    rss_kib(&rss_ready, &hwm);
    printf("{\"event\": \"ready\", \"backend\": \"%s\", \"precision\": \"%s\", \"precision_note\": \"%s\", \"cube\": [%d, %d, %d], \"threads\": %d, "
           "\"in_channels\": %d, \"out_channels\": %d, \"feature_size\": %d, \"params\": %zu, "
           "\"weight_bytes\": %zu, \"arena_bytes\": %zu, \"lower_bound\": %zu, \"total_bytes\": %zu, "
           "\"load_seconds\": %.6f, \"create_seconds\": %.6f, \"rss_base_kib\": %ld, \"rss_loaded_kib\": %ld, "
           "\"rss_ready_kib\": %ld}\n",
           p.backend == SWIN_BACKEND_CUDA ? "cuda" : "cpu", swin_precision_name(plan.precision), plan.precision_note,
           plan.cube[0], plan.cube[1], plan.cube[2], p.threads,
           info.in_channels, info.out_channels, info.feature_size, info.param_count, plan.weight_bytes,
           plan.arena_bytes, plan.lower_bound, plan.total_bytes, t_load, t_create, rss_base, rss_loaded, rss_ready);
    fflush(stdout);

    char line[4096];
    int ran = 0, rc = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!strcmp(line, "run")) {
            t0 = now_seconds();
            swin_status st = swin_context_run(ctx, x.data, y, &err);
            double dt = now_seconds() - t0;
            if (st) {
                rc = fail("run", err.msg, 1);
                break;
            }
            ran = 1;
            long now;
            rss_kib(&now, &hwm);
            printf("{\"event\": \"run\", \"seconds\": %.6f, \"rss_hwm_kib\": %ld}\n", dt, hwm);
        } else if (!strncmp(line, "save ", 5)) {
            if (!ran) {
                rc = fail("save", "no run yet", 1);
                break;
            }
            size_t shape[5] = {1, (size_t)info.out_channels, (size_t)p.cube[0], (size_t)p.cube[1], (size_t)p.cube[2]};
            if (swin_npy_write_f32(line + 5, y, 5, shape, &err)) {
                rc = fail("save", err.msg, 1);
                break;
            }
            printf("{\"event\": \"saved\", \"path\": ");
            json_str(line + 5);
            printf("}\n");
        } else if (!strcmp(line, "quit")) {
            break;
        } else {
            rc = fail("command", "unknown command (run, save PATH, quit)", 2);
            break;
        }
        fflush(stdout);
    }
    fflush(stdout);
    free(y);
    free(x.data);
    swin_context_free(ctx);
    swin_model_free(m);
    return rc;
}
