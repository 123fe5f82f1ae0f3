/* swinrun info / plan / forward. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cli/cli.h"
#include "runtime/atomic_file.h"
#include "runtime/npy.h"

static const double MiB = 1024.0 * 1024.0;

static const char *dtype_name(const swin_plan_info *p) { return swin_precision_storage(p->precision); }

static const char *backend_name(swin_backend b)
{
    return b == SWIN_BACKEND_CUDA ? "cuda" : "cpu";
}

static int need_args(const struct cli_args *a, int n, const char *verb, const char *what)
{
    if (a->npos == n) return 0;
    fprintf(stderr, "swinrun %s: expected %s (try swinrun --help)\n", verb, what);
    return 2;
}

int cli_info(const struct cli_args *a)
{
    int rc = need_args(a, 1, "info", "MODEL.onnx");
    if (rc) return rc;
    swin_model_t *m = cli_load_model(a->pos[0], &rc);
    if (!m) return rc;
    swin_model_info i;
    swin_model_get_info(m, &i);
    if (a->json) {
        printf("{\"in_channels\": %d, \"out_channels\": %d, \"feature_size\": %d, "
               "\"depths\": [%d, %d, %d, %d], \"heads\": [%d, %d, %d, %d], \"window\": [%d, %d, %d], "
               "\"cube\": [%d, %d, %d], \"normalize\": %s, \"use_v2\": %s, \"qkv_bias\": %s, "
               "\"patch_norm\": %s, \"instnorm_affine\": %s, \"batch_norm\": %s, \"downsample\": \"%s\", "
               "\"params\": %zu, \"weight_bytes\": %zu, \"opset\": %d, \"exporter\": \"%s\", \"post_processing\": \"%s\", "
               "\"weight_storage\": \"%s\"}\n",
               i.in_channels, i.out_channels, i.feature_size, i.depths[0], i.depths[1], i.depths[2],
               i.depths[3], i.heads[0], i.heads[1], i.heads[2], i.heads[3], i.window[0], i.window[1],
               i.window[2], i.cube[0], i.cube[1], i.cube[2], i.normalize ? "true" : "false",
               i.use_v2 ? "true" : "false", i.qkv_bias ? "true" : "false", i.patch_norm ? "true" : "false",
               i.instnorm_affine ? "true" : "false", i.batch_norm ? "true" : "false", i.downsample, i.param_count,
               i.weight_bytes, i.opset, i.exporter,
               i.post, i.weight_storage);
    } else {
        printf("model          %s\n", a->pos[0]);
        printf("exporter       %s, opset %d\n", i.exporter, i.opset);
        if (i.post[0]) printf("processed by   %s\n", i.post);
        printf("weights stored %s\n", i.weight_storage);
        printf("channels       in %d, out %d\n", i.in_channels, i.out_channels);
        printf("feature size   %d\n", i.feature_size);
        printf("depths         %d %d %d %d\n", i.depths[0], i.depths[1], i.depths[2], i.depths[3]);
        printf("heads          %d %d %d %d\n", i.heads[0], i.heads[1], i.heads[2], i.heads[3]);
        printf("window         %d x %d x %d\n", i.window[0], i.window[1], i.window[2]);
        if (i.cube[0] && i.cube[1] && i.cube[2])
            printf("export cube    %d x %d x %d\n", i.cube[0], i.cube[1], i.cube[2]);
        else
            printf("export cube    dynamic (give --cube when planning or running)\n");
        printf("normalize      %s\n", i.normalize ? "yes" : "no");
        printf("use_v2         %s\n", i.use_v2 ? "yes" : "no");
        printf("qkv bias       %s\n", i.qkv_bias ? "yes" : "no");
        printf("patch norm     %s\n", i.patch_norm ? "yes" : "no");
        printf("CNN norm       %s\n", i.batch_norm ? "batch, folded into the convolutions by the exporter"
                                   : i.instnorm_affine ? "instance, affine" : "instance");
        printf("downsample     %s\n", i.downsample);
        printf("parameters     %zu\n", i.param_count);
        printf("weight bytes   %zu (%.1f MiB)\n", i.weight_bytes, i.weight_bytes / MiB);
    }
    swin_model_free(m);
    return 0;
}

int cli_plan(const struct cli_args *a)
{
    int rc = need_args(a, 1, "plan", "MODEL.onnx");
    if (rc) return rc;
    swin_model_t *m = cli_load_model(a->pos[0], &rc);
    if (!m) return rc;
    swin_plan_info p;
    swin_error err = {0};
    swin_status st = swin_model_plan(m, &a->ctx, &p, &err);
    swin_model_free(m);
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        return cli_exit_code(st);
    }
    double ratio = p.lower_bound ? (double)p.arena_bytes / (double)p.lower_bound : 1.0;
    if (a->json) {
        printf("{\"cube\": [%d, %d, %d], \"backend\": \"%s\", \"precision\": \"%s\", \"dtype\": \"%s\", "
               "\"precision_note\": \"%s\", \"weight_bytes\": %zu, "
               "\"arena_bytes\": %zu, \"lower_bound\": %zu, \"ratio\": %.4f, \"context_bytes\": %zu, "
               "\"total_bytes\": %zu, \"tensors\": %d}\n",
               p.cube[0], p.cube[1], p.cube[2], backend_name(p.backend), swin_precision_name(p.precision),
               dtype_name(&p), p.precision_note, p.weight_bytes, p.arena_bytes,
               p.lower_bound, ratio, p.context_bytes, p.total_bytes, p.tensors);
    } else {
        printf("window         %d x %d x %d\n", p.cube[0], p.cube[1], p.cube[2]);
        printf("backend        %s\n", backend_name(p.backend));
        printf("precision      %s (weights %s)%s%s\n", swin_precision_name(p.precision), dtype_name(&p),
               p.precision_note[0] ? ": " : "", p.precision_note);
        printf("weights        %12zu bytes  %9.1f MiB\n", p.weight_bytes, p.weight_bytes / MiB);
        printf("arena          %12zu bytes  %9.1f MiB  (%d activations and workspaces)\n", p.arena_bytes,
               p.arena_bytes / MiB, p.tensors);
        printf("lower bound    %12zu bytes  %9.1f MiB  (largest sum of live bytes)\n", p.lower_bound,
               p.lower_bound / MiB);
        printf("arena / bound  %.4f\n", ratio);
        if (p.context_bytes)
            printf("scratch        %12zu bytes  %9.1f MiB  (backend staging and reductions)\n", p.context_bytes,
                   p.context_bytes / MiB);
        printf("total          %12zu bytes  %9.1f MiB\n", p.total_bytes, p.total_bytes / MiB);
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Per-run wall times: JSON on stdout with --json, else one line on stderr. */
static void report_runs(const struct cli_args *a, const swin_context_t *ctx, const double *secs)
{
    swin_plan_info p;
    swin_context_plan(ctx, &p);
    if (a->json) {
        printf("{\"cube\": [%d, %d, %d], \"backend\": \"%s\", \"precision\": \"%s\", \"dtype\": \"%s\", "
               "\"weight_bytes\": %zu, "
               "\"arena_bytes\": %zu, \"lower_bound\": %zu, \"total_bytes\": %zu, \"run_seconds\": [",
               p.cube[0], p.cube[1], p.cube[2], backend_name(p.backend), swin_precision_name(p.precision),
               dtype_name(&p), p.weight_bytes, p.arena_bytes,
               p.lower_bound, p.total_bytes);
        for (int r = 0; r < a->runs; r++) printf("%s%.6f", r ? ", " : "", secs[r]);
        printf("]}\n");
    } else {
        for (int r = 0; r < a->runs; r++)
            fprintf(stderr, "swinrun: run %d of %d: %.3f s (arena %.1f MiB, weights %.1f MiB)\n", r + 1, a->runs,
                    secs[r], p.arena_bytes / MiB, p.weight_bytes / MiB);
    }
}

/* Accepts (1, C, D, H, W) or (C, D, H, W). */
static int volume_shape(const struct npy_array *x, int *c, int cube[3])
{
    int off = x->ndim - 4;
    if ((x->ndim != 4 && x->ndim != 5) || (x->ndim == 5 && x->shape[0] != 1)) return -1;
    *c = (int)x->shape[off];
    for (int k = 0; k < 3; k++) cube[k] = (int)x->shape[off + 1 + k];
    return 0;
}

int cli_forward(const struct cli_args *a)
{
    int rc = need_args(a, 3, "forward", "MODEL.onnx IN.npy OUT.npy");
    if (rc) return rc;
    swin_error err = {0};
    struct npy_array x;
    swin_status st = atomic_file_check_dir(a->pos[2], "logits", &err);
    if (!st) st = npy_read_f32(a->pos[1], &x, &err);
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        return cli_exit_code(st);
    }
    swin_context_params p = a->ctx;
    int c;
    if (volume_shape(&x, &c, p.cube)) {
        fprintf(stderr, "swinrun: %s: expected shape (1, C, D, H, W) or (C, D, H, W)\n", a->pos[1]);
        free(x.data);
        return 2;
    }
    swin_model_t *m = cli_load_model(a->pos[0], &rc);
    if (!m) {
        free(x.data);
        return rc;
    }
    swin_model_info info;
    swin_model_get_info(m, &info);
    swin_context_t *ctx = NULL;
    float *y = NULL;
    if (c != info.in_channels) {
        st = swin_error_set(&err, SWIN_ERR_SHAPE, "%s has %d channels but the model takes %d", a->pos[1], c,
                            info.in_channels);
    } else {
        st = swin_context_create(m, &p, &ctx, &err);
        if (st == SWIN_ERR_BACKEND && p.backend == SWIN_BACKEND_CUDA) {
            fprintf(stderr, "swinrun: %s; running on the CPU backend (float32) instead\n", err.msg);
            p.backend = SWIN_BACKEND_CPU;
            p.precision = SWIN_PRECISION_FP32;
            st = swin_context_create(m, &p, &ctx, &err);
        }
    }
    size_t n = (size_t)info.out_channels * (size_t)p.cube[0] * (size_t)p.cube[1] * (size_t)p.cube[2];
    if (!st && !(y = malloc(n * sizeof *y))) st = swin_error_set(&err, SWIN_ERR_NOMEM, "out of host memory");
    double *secs = NULL;
    if (!st && !(secs = calloc((size_t)a->runs, sizeof *secs))) st = swin_error_set(&err, SWIN_ERR_NOMEM, "out of host memory");
    for (int r = 0; r < a->runs && !st; r++) {
        double t0 = now_seconds();
        st = swin_context_run(ctx, x.data, y, &err);
        secs[r] = now_seconds() - t0;
    }
    if (!st) report_runs(a, ctx, secs);
    free(secs);
#ifdef SWINRUN_EMULATED_CUDA
    swin_plan_info used;
    if (!st) swin_context_plan(ctx, &used);
    if (!st && used.backend == SWIN_BACKEND_CUDA) st = cli_emu_check_device_bytes(&used, &err);
#endif
    if (!st) {
        size_t shape[5] = {1, (size_t)info.out_channels, (size_t)p.cube[0], (size_t)p.cube[1], (size_t)p.cube[2]};
        st = npy_write_f32(a->pos[2], y, 5, shape, &err);
    }
    if (st) fprintf(stderr, "swinrun: %s\n", err.msg);
    free(y);
    free(x.data);
    swin_context_free(ctx);
    swin_model_free(m);
    return cli_exit_code(st);
}
