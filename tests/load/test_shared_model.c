/* One model shared by four CPU contexts, each created and run in its own thread: every
 * thread's logits are bitwise equal to those of one context with the same threads
 * setting running the same inputs one after the other. Run for threads = 1 and 2 per
 * context, or the one setting given (tools/test.sh runs --threads 2 under ThreadSanitizer,
 * where a window takes seconds: four contexts, each with a worker thread).
 *
 *     test_shared_model MODEL.onnx [--threads N] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/swinrun.h"

#define CONTEXTS 4
#define RUNS 2 /* per context: the second run reuses the arena the first one left behind */

struct job {
    const swin_model_t *model;
    int threads;
    const float *input;   /* this thread's own input */
    float *logits[RUNS];  /* the logits of each run */
    swin_status st;
    swin_error err;
};

static swin_context_params params_for(int threads)
{
    swin_context_params p = swin_context_default_params();
    p.threads = threads;
    p.cube[0] = p.cube[1] = p.cube[2] = 32;
    return p;
}

static void *run_job(void *arg)
{
    struct job *j = arg;
    swin_context_params p = params_for(j->threads);
    swin_context_t *ctx;
    j->st = swin_context_create(j->model, &p, &ctx, &j->err);
    for (int r = 0; r < RUNS && !j->st; r++) j->st = swin_context_run(ctx, j->input, j->logits[r], &j->err);
    swin_context_free(ctx);
    return NULL;
}

static int check_threads(const swin_model_t *m, size_t out_n, float *const in[CONTEXTS], int threads)
{
    int bad = 0;
    struct job jobs[CONTEXTS];
    float *ref = malloc(out_n * sizeof *ref);
    memset(jobs, 0, sizeof jobs);
    for (int c = 0; c < CONTEXTS; c++) {
        jobs[c] = (struct job){.model = m, .threads = threads, .input = in[c]};
        for (int r = 0; r < RUNS; r++) jobs[c].logits[r] = malloc(out_n * sizeof(float));
    }
    pthread_t t[CONTEXTS];
    int started = 0;
    while (started < CONTEXTS && !pthread_create(&t[started], NULL, run_job, &jobs[started])) started++;
    for (int c = 0; c < started; c++) pthread_join(t[c], NULL);
    if (started < CONTEXTS) {
        fprintf(stderr, "FAIL cannot start thread %d\n", started);
        return 1;
    }

    /* the reference: one context, the same inputs one after the other */
    swin_context_params p = params_for(threads);
    swin_context_t *ctx;
    swin_error err;
    if (swin_context_create(m, &p, &ctx, &err)) {
        fprintf(stderr, "FAIL reference context: %s\n", err.msg);
        return 1;
    }
    for (int c = 0; c < CONTEXTS; c++) {
        if (jobs[c].st) {
            fprintf(stderr, "FAIL threads=%d, context %d: %s\n", threads, c, jobs[c].err.msg);
            bad++;
            continue;
        }
        if (swin_context_run(ctx, in[c], ref, &err)) {
            fprintf(stderr, "FAIL reference run %d: %s\n", c, err.msg);
            bad++;
            continue;
        }
        for (int r = 0; r < RUNS; r++) {
            size_t diff = 0;
            for (size_t i = 0; i < out_n; i++) diff += memcmp(&ref[i], &jobs[c].logits[r][i], sizeof(float)) != 0;
            printf("threads=%d context %d run %d: %zu of %zu logits differ from the single context\n", threads, c,
                   r + 1, diff, out_n);
            bad += diff != 0;
        }
    }
    /* different inputs must give different logits, or the comparison proves nothing */
    if (!memcmp(jobs[0].logits[0], jobs[1].logits[0], out_n * sizeof(float))) {
        fprintf(stderr, "FAIL contexts 0 and 1 gave identical logits for different inputs\n");
        bad++;
    }
    swin_context_free(ctx);
    for (int c = 0; c < CONTEXTS; c++)
        for (int r = 0; r < RUNS; r++) free(jobs[c].logits[r]);
    free(ref);
    return bad;
}

int main(int argc, char **argv)
{
    int only = 0;
    if (argc == 4 && !strcmp(argv[2], "--threads")) only = atoi(argv[3]);
    if (argc != 2 && only < 1) {
        fprintf(stderr, "usage: test_shared_model MODEL.onnx [--threads N]\n");
        return 2;
    }
    swin_error err;
    swin_model_t *m;
    if (swin_model_load(argv[1], &m, &err)) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    swin_model_info mi;
    swin_model_get_info(m, &mi);
    const size_t vox = 32 * 32 * 32, in_n = (size_t)mi.in_channels * vox, out_n = (size_t)mi.out_channels * vox;
    float *in[CONTEXTS];
    unsigned s = 12345;
    for (int c = 0; c < CONTEXTS; c++) {
        in[c] = malloc(in_n * sizeof(float));
        for (size_t i = 0; i < in_n; i++) {
            s = s * 1103515245u + 12345u;
            in[c][i] = (float)((s >> 8) & 0xffff) / 65535.0f;
        }
    }
    int bad = only ? check_threads(m, out_n, in, only) : check_threads(m, out_n, in, 1) + check_threads(m, out_n, in, 2);
    for (int c = 0; c < CONTEXTS; c++) free(in[c]);
    swin_model_free(m);
    printf("%s\n", bad ? "FAIL" : "ok: every context's logits bitwise equal to the single context's");
    return bad ? 1 : 0;
}
