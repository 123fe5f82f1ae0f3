/* 100 windows in one context: the resident set after window 100 is within 1 MiB of the one
 * after window 10. A context allocates its weights and arena once, at creation; the first
 * windows touch every page of them (and OpenBLAS's buffers), and a window allocates
 * nothing (tests/faults: forward makes 0 allocations), so from then on the resident set
 * should not move. 1 MiB is an eighth of the f=12 32^3 arena (8.5 MiB) and far above the
 * page or two a stack or the allocator may still touch; a leak of even one 32^3 float
 * channel per window (128 KiB) would exceed it eight times over by window 100.
 *
 *     test_windows_rss MODEL.onnx */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/swinrun.h"

#define WINDOWS 100
#define EARLY 10
#define BOUND (1024L * 1024L)

/* VmRSS from /proc/self/status, bytes; -1 when it cannot be read. */
static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_windows_rss MODEL.onnx\n");
        return 2;
    }
    swin_error err;
    swin_model_t *m;
    swin_context_t *ctx;
    if (swin_model_load(argv[1], &m, &err)) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    swin_context_params p = swin_context_default_params();
    p.threads = 2;
    p.cube[0] = p.cube[1] = p.cube[2] = 32;
    if (swin_context_create(m, &p, &ctx, &err)) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    swin_model_info mi;
    swin_model_get_info(m, &mi);
    const size_t vox = 32 * 32 * 32, in_n = (size_t)mi.in_channels * vox, out_n = (size_t)mi.out_channels * vox;
    float *in = malloc(in_n * sizeof *in), *out = malloc(out_n * sizeof *out);
    long early = 0, late = 0;
    for (int w = 1; w <= WINDOWS; w++) {
        for (size_t i = 0; i < in_n; i++) in[i] = (float)((i * 31 + (size_t)w * 17) % 101) / 101.0f;
        if (swin_context_run(ctx, in, out, &err)) {
            fprintf(stderr, "FAIL window %d: %s\n", w, err.msg);
            return 1;
        }
        if (w == EARLY) early = rss_bytes();
        if (w == WINDOWS) late = rss_bytes();
    }
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);
    printf("VmRSS after window %d: %.2f MiB, after window %d: %.2f MiB, growth %+ld KiB (bound %ld KiB; "
           "weights %.2f MiB, arena %.2f MiB)\n",
           EARLY, early / 1048576.0, WINDOWS, late / 1048576.0, (late - early) / 1024, BOUND / 1024,
           plan.weight_bytes / 1048576.0, plan.arena_bytes / 1048576.0);
    swin_context_free(ctx);
    swin_model_free(m);
    free(in);
    free(out);
    int ok = early > 0 && late > 0 && late - early < BOUND;
    printf("%s\n", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}
