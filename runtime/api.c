/* The public C API of runtime/api.h: models, plans and contexts. */
#include "runtime/api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_backend.h"
#include "runtime/backend.h"
#include "runtime/exec.h"
#include "runtime/forward.h"
#include "core/model.h"
#include "core/recipe.h"
#include "weights/bundle/bundle.h"
#include "weights/checkpoint/ckpt_loader.h"
#include "weights/onnx/onnx_loader.h"

struct swin_context {
    const struct swin_model *model;
    int cube[3];
    struct swin_plan plan;
    char *arena;
    struct swin_backend_ctx backend;
    swin_plan_info info;
};

swin_status swin_model_load(const char *model_path, swin_model_t **out, swin_error *err)
{
    return swin_model_load_ex(model_path, NULL, out, err);
}

swin_status swin_model_load_ex(const char *model_path, const swin_model_load_params *p, swin_model_t **out,
                               swin_error *err)
{
    *out = NULL;
    if (!model_path) return swin_error_set(err, SWIN_ERR_ARG, "no model path given");
    swin_merge_order_choice mo = p ? p->merge_order : SWIN_MERGE_ORDER_DEFAULT;
    if (mo < SWIN_MERGE_ORDER_DEFAULT || mo > SWIN_MERGE_ORDER_V2)
        return swin_error_set(err, SWIN_ERR_ARG, "merge_order %d is not a swin_merge_order_choice", (int)mo);
    static const enum swin_merge_kind kinds[] = {SWIN_MERGE_V15, SWIN_MERGE_V15, SWIN_MERGE_PRE15, SWIN_MERGE_V2};
    static const int (*const orders[])[3] = {NULL, swin_merge_order_v15, swin_merge_order_pre15, swin_merge_order_v2};
    struct swin_model *m = calloc(1, sizeof *m);
    if (!m) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    /* by content: a PyTorch checkpoint or safetensors file, else ONNX */
    struct swin_ckpt_load_opts co = {.merge = kinds[mo], .no_normalize = p && p->no_normalize};
    struct swin_onnx_load_opts oo = {.merge_order = orders[mo]};
    swin_status st = swin_bundle_detect(model_path) ? swin_bundle_load(model_path, &co, m, err)
                     : swin_ckpt_detect(model_path) ? swin_ckpt_load(model_path, &co, m, err)
                                                   : swin_onnx_load_opts(model_path, &oo, m, err);
    if (st) {
        free(m);
        return st;
    }
    *out = m;
    return SWIN_OK;
}

void swin_model_free(swin_model_t *model)
{
    if (!model) return;
    swin_model_release(model);
    free(model);
}

void swin_model_get_info(const swin_model_t *m, swin_model_info *o)
{
    const struct swin_config *c = &m->cfg;
    *o = (swin_model_info){
        .in_channels = c->in_channels, .out_channels = c->out_channels, .feature_size = c->feature_size,
        .normalize = c->normalize, .use_v2 = c->use_v2, .qkv_bias = c->qkv_bias,
        .patch_norm = c->patch_norm, .instnorm_affine = c->instnorm_affine, .batch_norm = c->batch_norm,
        .downsample = swin_merge_kind_name(c->merge_kind),
        .param_count = m->param_count, .weight_bytes = m->flat_bytes,
        .opset = m->source.opset, .exporter = m->source.exporter, .post = m->source.post,
        .weight_storage = m->source.weight_storage,
        .recipe = m->recipe ? m->recipe->source : "", .recipe_warnings = m->recipe ? m->recipe->warnings : "",
    };
    memcpy(o->depths, c->depths, sizeof o->depths);
    memcpy(o->heads, c->heads, sizeof o->heads);
    memcpy(o->window, c->window, sizeof o->window);
    memcpy(o->cube, c->cube, sizeof o->cube);
}

const char *swin_precision_name(swin_precision p)
{
    switch (p) {
    case SWIN_PRECISION_FP32: return "fp32";
    case SWIN_PRECISION_FP16: return "fp16";
    case SWIN_PRECISION_BF16: return "bf16";
    }
    return "?";
}

const char *swin_precision_storage(swin_precision p)
{
    switch (p) {
    case SWIN_PRECISION_FP32: return "float32";
    case SWIN_PRECISION_FP16: return "float16";
    case SWIN_PRECISION_BF16: return "bfloat16";
    }
    return "?";
}

swin_context_params swin_context_default_params(void)
{
    return (swin_context_params){.backend = SWIN_BACKEND_AUTO};
}

static swin_status check_bias_coverage(const struct swin_model *m, const int cube[3], swin_error *err);

static swin_status resolve_cube(const struct swin_model *m, const swin_context_params *p, int cube[3],
                                swin_error *err)
{
    bool given = p->cube[0] || p->cube[1] || p->cube[2];
    for (int k = 0; k < 3; k++) cube[k] = given ? p->cube[k] : m->cfg.cube[k];
    if (!given && (!cube[0] || !cube[1] || !cube[2]))
        return swin_error_set(err, SWIN_ERR_ARG, m->source.opset
                                  ? "the model was exported with dynamic spatial axes: give the cube size "
                                    "(--cube D H W, each a multiple of 32)"
                                  : "a checkpoint does not say which cube the model runs on: give it (--cube D H W, "
                                    "each a multiple of 32; MONAI's Swin UNETR recipes use 96 96 96)");
    for (int k = 0; k < 3; k++)
        if (cube[k] < SWIN_CUBE_MIN || cube[k] % SWIN_CUBE_MULTIPLE || cube[k] > SWIN_CUBE_MAX)
            return swin_error_set(err, SWIN_ERR_ARG,
                                  "cube %d x %d x %d: every side must be a multiple of %d between %d and %d",
                                  cube[0], cube[1], cube[2], SWIN_CUBE_MULTIPLE, SWIN_CUBE_MIN, SWIN_CUBE_MAX);
    return check_bias_coverage(m, cube, err);
}

/* An export whose bias tables were recovered from constant-folded (h, n, n) biases only
 * knows the rows of windows of at most n tokens (docs/forward.md §3.4): refuse larger ones. */
static swin_status check_bias_coverage(const struct swin_model *m, const int cube[3], swin_error *err)
{
    int L[3] = {cube[0], cube[1], cube[2]};
    for (int s = 0; s < SWIN_STAGES; s++) {
        for (int k = 0; k < 3; k++) L[k] /= 2;
        int n_max = m->cfg.bias_tokens[s];
        struct swin_window_geom g;
        swin_block_geometry(&m->cfg, s, 0, L, &g);
        int n = g.win[0] * g.win[1] * g.win[2];
        if (n_max > 0 && n > n_max)
            return swin_error_set(err, SWIN_ERR_SHAPE,
                                  "cube %d x %d x %d: stage %d needs attention windows of %d tokens, but this "
                                  "export folded its relative-position bias for %d-token windows only; use a "
                                  "smaller --cube (such as the export cube) or re-export without constant folding",
                                  cube[0], cube[1], cube[2], s + 1, n, n_max);
    }
    return SWIN_OK;
}

/* Runs forward() in plan mode and solves the plan. */
static swin_status make_plan(const struct swin_model *m, const int cube[3], const struct swin_backend_ctx *b,
                             struct swin_plan *plan, swin_plan_info *info, swin_error *err)
{
    struct swin_exec e = {.plan = plan, .planning = true, .ops = b->ops, .be = b->be, .err = err};
    swin_plan_init(plan);
    swin_status st = swin_forward(&e, m, cube, NULL, NULL);
    if (!st) st = swin_plan_solve(plan, err);
    if (st) {
        swin_plan_release(plan);
        return st;
    }
    *info = (swin_plan_info){
        .cube = {cube[0], cube[1], cube[2]}, .backend = b->kind, .precision = b->precision,
        .precision_note = b->precision_note, .weight_bytes = b->weight_bytes,
        .arena_bytes = plan->arena_bytes, .lower_bound = plan->lower_bound, .context_bytes = b->context_bytes,
        .total_bytes = b->weight_bytes + plan->arena_bytes + b->context_bytes, .tensors = plan->n,
        .cpu_threads = b->kind == SWIN_BACKEND_CPU && b->be ? swin_cpu_backend_threads(b->be) : 0,
    };
    snprintf(info->backend_reason, sizeof info->backend_reason, "%s", b->reason);
    return SWIN_OK;
}

/* Refuses a plan over the limit, naming what would fit: the limit it needs, and the
 * alternatives in `fits` (may be empty). */
static swin_status check_limit(const swin_plan_info *i, size_t limit, const char *fits, swin_error *err)
{
    if (!limit || i->total_bytes <= limit) return SWIN_OK;
    const double mib = 1024.0 * 1024.0;
    return swin_error_set(err, SWIN_ERR_MEM_LIMIT,
                          "cube %dx%dx%d needs %.1f MiB (weights %.1f + arena %.1f + scratch %.1f), over the limit "
                          "of %.1f MiB: raise --mem-limit to at least %.1f MiB%s",
                          i->cube[0], i->cube[1], i->cube[2], i->total_bytes / mib, i->weight_bytes / mib,
                          i->arena_bytes / mib, i->context_bytes / mib, limit / mib, i->total_bytes / mib, fits);
}

/* The plan of p's window and backend, without a device and without the limit check. */
static swin_status plan_only(const struct swin_model *m, const swin_context_params *p, swin_plan_info *out,
                             swin_error *err)
{
    int cube[3];
    struct swin_backend_ctx b = {0};
    struct swin_plan plan;
    swin_status st = resolve_cube(m, p, cube, err);
    if (!st) st = swin_backend_open(m, p, false, &b, err);
    if (!st) st = make_plan(m, cube, &b, &plan, out, err);
    if (!st) swin_plan_release(&plan);
    swin_backend_close(&b);
    return st;
}

/* The largest window (each axis min(its size, s), s a multiple of 32) whose plan under q
 * fits q->mem_limit, as " or a DxHxW window (X MiB)" (prefixed by `flag`); "" when none
 * does. (The window is --cube for plan and segment, the input's size for forward.) Fails
 * only when memory runs out: a window that cannot be planned otherwise does not fit. */
static swin_status fitting_cube(const struct swin_model *m, const swin_context_params *q, const int cube[3],
                                const char *flag, char *out, size_t cap, swin_error *err)
{
    out[0] = 0;
    int s = cube[0] > cube[1] ? cube[0] : cube[1];
    s = s > cube[2] ? s : cube[2];
    for (s = s / 32 * 32; s >= 32; s -= 32) {
        swin_context_params t = *q;
        swin_plan_info i;
        for (int k = 0; k < 3; k++) t.cube[k] = cube[k] < s ? cube[k] : s;
        swin_error why;
        swin_status st = plan_only(m, &t, &i, &why);
        if (st == SWIN_ERR_NOMEM) return swin_error_set(err, st, "%s", why.msg);
        if (st == SWIN_OK && i.total_bytes <= q->mem_limit) {
            snprintf(out, cap, " or %sa %dx%dx%d cube (%.1f MiB)", flag, t.cube[0], t.cube[1], t.cube[2],
                     i.total_bytes / (1024.0 * 1024.0));
            return SWIN_OK;
        }
    }
    return SWIN_OK;
}

swin_status swin_model_plan(const swin_model_t *m, const swin_context_params *p, swin_plan_info *out,
                            swin_error *err)
{
    swin_status st = plan_only(m, p, out, err);
    if (st || !p->mem_limit || out->total_bytes <= p->mem_limit) return st;
    /* What would fit: a smaller window, and on CUDA float32, fp16 (alone or with one). */
    char fits[256], smaller[96], half[96] = "";
    if ((st = fitting_cube(m, p, out->cube, "", smaller, sizeof smaller, err))) return st;
    if (out->backend == SWIN_BACKEND_CUDA && out->precision == SWIN_PRECISION_FP32) {
        swin_context_params q = *p;
        swin_plan_info h;
        q.precision = SWIN_PRECISION_FP16;
        q.backend = SWIN_BACKEND_CUDA;
        swin_error why;
        st = plan_only(m, &q, &h, &why);
        if (st == SWIN_ERR_NOMEM) return swin_error_set(err, st, "%s", why.msg);
        if (st == SWIN_OK && h.total_bytes <= p->mem_limit)
            snprintf(half, sizeof half, " or --half (%.1f MiB)", h.total_bytes / (1024.0 * 1024.0));
        else if ((st = fitting_cube(m, &q, out->cube, "--half with ", half, sizeof half, err)))
            return st;
    }
    snprintf(fits, sizeof fits, "%s%s", smaller, half);
    if (!fits[0]) snprintf(fits, sizeof fits, " (no smaller window fits either)");
    return check_limit(out, p->mem_limit, fits, err);
}

swin_status swin_context_create(const swin_model_t *m, const swin_context_params *p, swin_context_t **out,
                                swin_error *err)
{
    *out = NULL;
    struct swin_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    ctx->model = m;
    /* The limit is checked on a device-free plan first: a refused plan allocates nothing. */
    swin_status st = p->mem_limit ? swin_model_plan(m, p, &ctx->info, err) : SWIN_OK;
    if (!st) st = resolve_cube(m, p, ctx->cube, err);
    if (!st) st = swin_backend_open(m, p, true, &ctx->backend, err);
    if (!st && ctx->backend.weights) ctx->model = ctx->backend.weights;
    if (!st) st = make_plan(ctx->model, ctx->cube, &ctx->backend, &ctx->plan, &ctx->info, err);
    if (!st) st = check_limit(&ctx->info, p->mem_limit, "", err);
    if (!st) st = swin_backend_arena_alloc(&ctx->backend, ctx->plan.arena_bytes, (void **)&ctx->arena, err);
    if (st) {
        swin_context_free(ctx);
        return st;
    }
    *out = ctx;
    return SWIN_OK;
}

void swin_context_plan(const swin_context_t *ctx, swin_plan_info *out)
{
    *out = ctx->info;
}

const swin_model_t *swin_context_model(const swin_context_t *ctx)
{
    return ctx->model;
}

/* Half mode stores activations as float16 (largest finite value 65504): an input far
 * outside the range the model was trained on can overflow to inf/NaN. Said, not passed on. */
static swin_status check_half_finite(const swin_context_t *ctx, const float *logits, swin_error *err)
{
    const size_t n = (size_t)ctx->model->cfg.out_channels * (size_t)ctx->cube[0] * (size_t)ctx->cube[1] *
                     (size_t)ctx->cube[2];
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += !isfinite(logits[i]);
    if (!bad) return SWIN_OK;
    return swin_error_set(err, SWIN_ERR_BACKEND,
                          "CUDA half mode: %zu of %zu logits are not finite (a float16 activation overflowed its "
                          "range of +-65504; is the input normalised like the training data?): run without --half",
                          bad, n);
}

swin_status swin_context_run(swin_context_t *ctx, const float *input, float *logits, swin_error *err)
{
    if (!input || !logits) return swin_error_set(err, SWIN_ERR_ARG, "input and logits buffers are required");
    swin_plan_rewind(&ctx->plan);
    struct swin_exec e = {.plan = &ctx->plan, .arena = ctx->arena, .ops = ctx->backend.ops, .be = ctx->backend.be,
                          .err = err};
    swin_status st = swin_forward(&e, ctx->model, ctx->cube, input, logits);
    if (!st && ctx->info.precision == SWIN_PRECISION_FP16) st = check_half_finite(ctx, logits, err);
    return st;
}

void swin_context_free(swin_context_t *ctx)
{
    if (!ctx) return;
    swin_backend_arena_free(&ctx->backend, ctx->arena);
    swin_plan_release(&ctx->plan);
    swin_backend_close(&ctx->backend);
    free(ctx);
}
