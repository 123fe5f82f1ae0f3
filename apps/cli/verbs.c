/* swinrun info / plan / forward. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli/cli.h"
#include "core/clock.h"
#include "fileio/atomic_file.h"
#include "fileio/npy.h"

static const double MiB = 1024.0 * 1024.0;

static int need_args(const struct cli_args *a, int n, const char *verb, const char *what)
{
    if (a->npos == n) return 0;
    fprintf(stderr, "swinrun %s: expected %s (try swinrun --help)\n", verb, what);
    return 2;
}

void cli_print_recipe(FILE *f, const swin_model_info *i, const swin_segment_params *sp)
{
    if (!i->recipe[0]) return;
    fprintf(f, "recipe         %s\n", i->recipe);
    if (i->channel_names[0]) {
        fprintf(f, "  channels     ");
        const char *c = i->channel_names;
        for (int ch = 0; c; ch++) {
            size_t len = strcspn(c, "\n");
            fprintf(f, "%s%d %.*s", ch ? ", " : "", ch, (int)len, c);
            c = c[len] ? c + len + 1 : NULL;
        }
        fputc('\n', f);
    }
    fprintf(f, "  orientation  %s\n", sp->reorient ? "RAS" : "as read");
    if (sp->resample) fprintf(f, "  spacing      %g x %g x %g mm\n", sp->spacing_mm[0], sp->spacing_mm[1], sp->spacing_mm[2]);
    else fprintf(f, "  spacing      as read (no Spacingd)\n");
    if (sp->normalize != SWIN_NORM_RANGE)
        fprintf(f, "  intensity    z-score of each channel%s\n",
                sp->normalize == SWIN_NORM_ZSCORE_NONZERO ? " over its nonzero voxels" : "");
    else if (sp->intensity_clip)
        fprintf(f, "  intensity    [%g, %g] to [0, 1], clipped\n", sp->intensity_range[0], sp->intensity_range[1]);
    else fprintf(f, "  intensity    as read (no ScaleIntensityRanged)\n");
    fprintf(f, "  cubes        overlap %g, %s blending", sp->overlap, sp->blend == SWIN_BLEND_GAUSSIAN ? "gaussian" : "constant");
    if (sp->blend == SWIN_BLEND_GAUSSIAN) fprintf(f, " (sigma scale %g)", sp->sigma_scale);
    if (sp->activation == SWIN_ACTIVATION_SIGMOID && i->out_channels > 1)
        fprintf(f, "\n  labels       a sigmoid mask per channel (multi-label), thresholded at 0.5");
    fprintf(f, "\n  way back     %s\n", sp->invert == SWIN_INVERT_LINEAR
                                          ? "probabilities by linear interpolation, then argmax (Invertd nearest_interp false)"
                                          : "argmax, then labels by nearest neighbour");
    cli_print_lines(f, "  not followed ", i->recipe_warnings);
}

void cli_print_lines(FILE *f, const char *indent, const char *lines)
{
    for (const char *w = lines; *w;) {
        const char *nl = strchr(w, '\n');
        int len = nl ? (int)(nl - w) : (int)strlen(w);
        fprintf(f, "%s%.*s\n", indent, len, w);
        w += len + (nl ? 1 : 0);
    }
}

int cli_info(const struct cli_args *a)
{
    int rc = need_args(a, 1, "info", "MODEL.onnx");
    if (rc) return rc;
    swin_model_t *m = cli_load_model(a->pos[0], &a->load, &rc);
    if (!m) return rc;
    swin_model_info i;
    swin_model_get_info(m, &i);
    FILE *jf = NULL;
    struct cli_json *json = NULL;
    swin_error err = {0};
    swin_status st = a->json ? cli_json_open(&json, a->json, &jf, &err) : SWIN_OK;
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        swin_model_free(m);
        return cli_exit_code(st);
    }
    if (a->json) {
        fprintf(jf, "{\"in_channels\": %d, \"out_channels\": %d, \"feature_size\": %d, "
               "\"depths\": [%d, %d, %d, %d], \"heads\": [%d, %d, %d, %d], \"window\": [%d, %d, %d], "
               "\"cube\": [%d, %d, %d], \"normalize\": %s, \"use_v2\": %s, \"qkv_bias\": %s, "
               "\"patch_norm\": %s, \"instnorm_affine\": %s, \"batch_norm\": %s, \"norm_groups\": %d, \"downsample\": \"%s\", "
               "\"params\": %zu, \"weight_bytes\": %zu, \"opset\": %d, \"exporter\": ",
               i.in_channels, i.out_channels, i.feature_size, i.depths[0], i.depths[1], i.depths[2],
               i.depths[3], i.heads[0], i.heads[1], i.heads[2], i.heads[3], i.window[0], i.window[1],
               i.window[2], i.cube[0], i.cube[1], i.cube[2], i.normalize ? "true" : "false",
               i.use_v2 ? "true" : "false", i.qkv_bias ? "true" : "false", i.patch_norm ? "true" : "false",
               i.instnorm_affine ? "true" : "false", i.batch_norm ? "true" : "false", i.norm_groups, i.downsample, i.param_count,
               i.weight_bytes, i.opset);
        json_string(jf, i.exporter);
        fprintf(jf, ", \"batch_norm_at_load\": %s, \"attn_scale\": [%.9g, %.9g, %.9g, %.9g]",
                i.batch_norm_at_load ? "true" : "false", (double)i.attn_scale[0], (double)i.attn_scale[1],
                (double)i.attn_scale[2], (double)i.attn_scale[3]);
        fprintf(jf, ", \"post_processing\": ");
        json_string(jf, i.post);
        fprintf(jf, ", \"weight_storage\": ");
        json_string(jf, i.weight_storage);
        fprintf(jf, ", \"recipe\": ");
        json_string(jf, i.recipe);
        fprintf(jf, ", \"recipe_warnings\": ");
        json_string(jf, i.recipe_warnings);
        fprintf(jf, ", \"channel_names\": ");
        json_string(jf, i.channel_names);
        fprintf(jf, "}\n");
    }
    if (!a->json || strcmp(a->json, "-")) {
        printf("model          %s\n", a->pos[0]);
        if (i.opset) {
            printf("exporter       %s, opset %d\n", i.exporter, i.opset);
            if (i.post[0]) printf("processed by   %s\n", i.post);
        } else {   /* a PyTorch checkpoint, TorchScript module or safetensors file */
            printf("source         %s\n", i.exporter);
            printf("config from    %s\n", i.post);
        }
        printf("weights stored %s\n", i.weight_storage);
        printf("channels       in %d, out %d\n", i.in_channels, i.out_channels);
        printf("feature size   %d\n", i.feature_size);
        printf("depths         %d %d %d %d\n", i.depths[0], i.depths[1], i.depths[2], i.depths[3]);
        printf("heads          %d %d %d %d\n", i.heads[0], i.heads[1], i.heads[2], i.heads[3]);
        printf("window         %d x %d x %d\n", i.window[0], i.window[1], i.window[2]);
        if (i.attn_scale[0] || i.attn_scale[1] || i.attn_scale[2] || i.attn_scale[3]) {
            printf("attn scale    ");
            for (int s = 0; s < 4; s++)
                printf(" %.6g%s", i.attn_scale[s] ? (double)i.attn_scale[s] : 1.0 / sqrt((double)i.feature_size * (1 << s) / i.heads[s]),
                       i.attn_scale[s] ? "" : " (1/sqrt(head dim))");
            printf(", as stored in the file\n");
        }
        if (i.cube[0] && i.cube[1] && i.cube[2])
            printf("%s%d x %d x %d\n", i.recipe[0] ? "cube (roi)     " : "export cube    ", i.cube[0], i.cube[1],
                   i.cube[2]);
        else
            printf("export cube    dynamic (give --cube when planning or running)\n");
        printf("normalize      %s\n", i.normalize ? "yes" : "no");
        printf("use_v2         %s\n", i.use_v2 ? "yes" : "no");
        printf("qkv bias       %s\n", i.qkv_bias ? "yes" : "no");
        printf("patch norm     %s\n", i.patch_norm ? "yes" : "no");
        if (i.norm_groups)
            printf("CNN norm       group, %d groups\n", i.norm_groups);
        else
            printf("CNN norm       %s\n", i.batch_norm ? (i.batch_norm_at_load ? "batch, folded into the convolutions at load"
                                                                    : "batch, folded into the convolutions by the exporter")
                                       : i.instnorm_affine ? "instance, affine" : "instance");
        printf("downsample     %s\n", i.downsample);
        swin_segment_params sp = swin_model_segment_params(m);
        cli_print_recipe(stdout, &i, &sp);
        printf("parameters     %zu\n", i.param_count);
        printf("weight bytes   %zu (%.1f MiB)\n", i.weight_bytes, i.weight_bytes / MiB);
    }
    swin_model_free(m);
    if ((st = cli_json_commit(json, &err))) fprintf(stderr, "swinrun: %s\n", err.msg);
    return cli_exit_code(st);
}

/* The JSON object of a plan's fields (no braces), shared by plan and forward. */
static void json_plan(FILE *f, const swin_plan_info *p)
{
    double ratio = p->lower_bound ? (double)p->arena_bytes / (double)p->lower_bound : 1.0;
    fprintf(f,
            "\"cube\": [%d, %d, %d], \"backend\": \"%s\", \"backend_reason\": ", p->cube[0], p->cube[1], p->cube[2],
            cli_backend_name(p->backend));
    json_string(f, p->backend_reason);
    fprintf(f, ", \"precision\": \"%s\", \"precision_note\": ", swin_precision_name(p->precision));
    json_string(f, p->precision_note ? p->precision_note : "");
    fprintf(f, ", \"cpu_isa\": \"%s\", \"cpu_isa_best\": \"%s\"", p->cpu_isa ? p->cpu_isa : "",
            p->cpu_isa_best ? p->cpu_isa_best : "");
    fprintf(f,
            ", \"dtype\": \"%s\", \"weight_bytes\": %zu, \"arena_bytes\": %zu, \"lower_bound\": %zu, \"ratio\": %.4f, "
            "\"context_bytes\": %zu, \"total_bytes\": %zu, \"tensors\": %d",
            cli_dtype_name(p), p->weight_bytes, p->arena_bytes, p->lower_bound, ratio, p->context_bytes,
            p->total_bytes, p->tensors);
    if (p->grid[0])
        fprintf(f, ", \"grid\": [%lld, %lld, %lld], \"ring_bytes\": %zu", p->grid[0], p->grid[1], p->grid[2],
                p->ring_bytes);
}

static void print_plan(FILE *f, const swin_plan_info *p)
{
    double ratio = p->lower_bound ? (double)p->arena_bytes / (double)p->lower_bound : 1.0;
    fprintf(f, "cube           %d x %d x %d\n", p->cube[0], p->cube[1], p->cube[2]);
    fprintf(f, "backend        %s (%s; %s)\n", cli_backend_name(p->backend), cli_dtype_name(p), p->backend_reason);
    fprintf(f, "precision      %s (weights %s)%s%s\n", swin_precision_name(p->precision), cli_dtype_name(p),
            p->precision_note && p->precision_note[0] ? ": " : "", p->precision_note ? p->precision_note : "");
    if (p->cpu_isa && p->cpu_isa[0])
        fprintf(f, "cpu kernels    %s%s%s%s\n", p->cpu_isa, strcmp(p->cpu_isa, p->cpu_isa_best) ? " (capped; this CPU has " : "",
                strcmp(p->cpu_isa, p->cpu_isa_best) ? p->cpu_isa_best : "", strcmp(p->cpu_isa, p->cpu_isa_best) ? ")" : "");
    fprintf(f, "weights        %12zu bytes  %9.1f MiB\n", p->weight_bytes, p->weight_bytes / MiB);
    fprintf(f, "arena          %12zu bytes  %9.1f MiB  (%d activations and workspaces)\n", p->arena_bytes,
            p->arena_bytes / MiB, p->tensors);
    fprintf(f, "lower bound    %12zu bytes  %9.1f MiB  (largest sum of live bytes)\n", p->lower_bound,
            p->lower_bound / MiB);
    fprintf(f, "arena / bound  %.4f\n", ratio);
    if (p->context_bytes)
        fprintf(f, "scratch        %12zu bytes  %9.1f MiB  (backend staging and reductions)\n", p->context_bytes,
                p->context_bytes / MiB);
    if (p->grid[0])
        fprintf(f, "ring           %12zu bytes  %9.1f MiB  (the cubes of a %lld x %lld x %lld grid blended %s)\n",
                p->ring_bytes, p->ring_bytes / MiB, p->grid[0], p->grid[1], p->grid[2],
                p->ring_bytes ? "on the device" : "on the host");
    fprintf(f, "total          %12zu bytes  %9.1f MiB\n", p->total_bytes, p->total_bytes / MiB);
}

int cli_plan(const struct cli_args *a)
{
    int rc = need_args(a, 1, "plan", "MODEL.onnx");
    if (rc) return rc;
    swin_model_t *m = cli_load_model(a->pos[0], &a->load, &rc);
    if (!m) return rc;
    swin_plan_info p;
    swin_error err = {0};
    swin_status st;
    if (a->volume[0]) {
        /* the segmentation's own options over the model's recipe, as segment takes them */
        struct cli_args sa = *a;
        const swin_segment_params recipe = swin_model_segment_params(m);
        cli_seg_over(&sa, &recipe);
        if (a->with_probs) sa.seg.probabilities_path = "(planned)";
        st = swin_segment_plan(m, &a->ctx, &sa.seg, a->volume, a->voxel_mm[0] ? a->voxel_mm : NULL, &p, &err);
    } else {
        st = swin_model_plan(m, &a->ctx, &p, &err);
    }
    swin_model_free(m);
    FILE *jf = NULL;
    struct cli_json *json = NULL;
    if (!st && a->json && !(st = cli_json_open(&json, a->json, &jf, &err))) {
        fputc('{', jf);
        json_plan(jf, &p);
        fprintf(jf, "}\n");
        st = cli_json_commit(json, &err);
    }
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        return cli_exit_code(st);
    }
    if (!a->json || strcmp(a->json, "-")) print_plan(stdout, &p);
    return 0;
}

/* Per-run wall times: the JSON report with --json, one line each on stderr. */
static swin_status report_runs(const struct cli_args *a, const swin_context_t *ctx, const double *secs,
                               swin_error *err)
{
    swin_plan_info p;
    swin_context_plan(ctx, &p);
    fprintf(stderr, "swinrun: backend %s (%s; %s)\n", cli_backend_name(p.backend), cli_dtype_name(&p),
            p.backend_reason);
    for (int r = 0; r < a->runs; r++)
        fprintf(stderr, "swinrun: run %d of %d: %.3f s (arena %.1f MiB, weights %.1f MiB)\n", r + 1, a->runs, secs[r],
                p.arena_bytes / MiB, p.weight_bytes / MiB);
    if (!a->json) return SWIN_OK;
    FILE *jf;
    struct cli_json *json;
    swin_status st = cli_json_open(&json, a->json, &jf, err);
    if (st) return st;
    fputc('{', jf);
    json_plan(jf, &p);
    fprintf(jf, ", \"run_seconds\": [");
    for (int r = 0; r < a->runs; r++) fprintf(jf, "%s%.6f", r ? ", " : "", secs[r]);
    fprintf(jf, "]}\n");
    return cli_json_commit(json, err);
}

/* Accepts (1, C, D, H, W) or (C, D, H, W). */
static int volume_shape(const struct swin_npy_array *x, int *c, int cube[3])
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
    struct swin_npy_array x;
    swin_status st = swin_atomic_file_check_dir(a->pos[2], "logits", &err);
    if (!st && a->json && strcmp(a->json, "-")) st = swin_atomic_file_check_dir(a->json, "JSON report", &err);
    if (!st) st = swin_npy_read_f32(a->pos[1], &x, &err);
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
    swin_model_t *m = cli_load_model(a->pos[0], &a->load, &rc);
    if (!m) {
        free(x.data);
        return rc;
    }
    swin_model_info info;
    swin_model_get_info(m, &info);
    swin_context_t *ctx = NULL;
    float *y = NULL;
    if (c != info.in_channels)
        st = swin_error_set(&err, SWIN_ERR_SHAPE, "%s has %d channels but the model takes %d", a->pos[1], c,
                            info.in_channels);
    else
        st = swin_context_create(m, &p, &ctx, &err);
    swin_plan_info made;
    if (!st) swin_context_plan(ctx, &made);
    if (!st && made.precision == SWIN_PRECISION_BF16) {
        /* the context runs its own bfloat16 copy: the float32 weights can go before the run */
        swin_model_free(m);
        m = NULL;
    }
    size_t n = (size_t)info.out_channels * (size_t)p.cube[0] * (size_t)p.cube[1] * (size_t)p.cube[2];
    if (!st && !(y = malloc(n * sizeof *y))) st = swin_error_set(&err, SWIN_ERR_NOMEM, "out of host memory");
    double *secs = NULL;
    if (!st && !(secs = calloc((size_t)a->runs, sizeof *secs))) st = swin_error_set(&err, SWIN_ERR_NOMEM, "out of host memory");
    for (int r = 0; r < a->runs && !st; r++) {
        double t0 = swin_clock_seconds();
        st = swin_context_run(ctx, x.data, y, &err);
        secs[r] = swin_clock_seconds() - t0;
    }
#ifdef SWINRUN_EMULATED_CUDA
    swin_plan_info used;
    if (!st) swin_context_plan(ctx, &used);
    if (!st && used.backend == SWIN_BACKEND_CUDA) st = cli_emu_check_device_bytes(&used, 0, &err);
#endif
    if (!st) {
        size_t shape[5] = {1, (size_t)info.out_channels, (size_t)p.cube[0], (size_t)p.cube[1], (size_t)p.cube[2]};
        st = swin_npy_write_f32(a->pos[2], y, 5, shape, &err);
    }
    if (!st) st = report_runs(a, ctx, secs, &err);
    if (st) fprintf(stderr, "swinrun: %s\n", err.msg);
    free(secs);
    free(y);
    free(x.data);
    swin_context_free(ctx);
    swin_model_free(m);
    return cli_exit_code(st);
}
