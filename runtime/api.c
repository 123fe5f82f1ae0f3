/* The public C API of runtime/api.h: models, plans and contexts. */
#include "runtime/api.h"
#include "core/settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/context.h"
#include "runtime/exec.h"
#include "runtime/forward.h"
#include "core/model.h"
#include "core/recipe.h"
#include "weights/bundle/bundle.h"
#include "weights/checkpoint/ckpt_loader.h"
#include "weights/onnx/onnx_loader.h"

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
    const int groups = p ? p->norm_groups : 0;
    if (groups < 0 || groups > SWIN_MAX_NORM_GROUPS)
        return swin_error_set(err, SWIN_ERR_ARG, "norm_groups %d: expected 0 (instance or batch norm) or 1..%d", groups,
                              SWIN_MAX_NORM_GROUPS);
    struct swin_ckpt_load_opts co = {.merge = kinds[mo], .no_normalize = p && p->no_normalize, .norm_groups = groups};
    struct swin_onnx_load_opts oo = {.merge_order = orders[mo]};
    swin_status st = swin_bundle_detect(model_path) ? swin_bundle_load(model_path, &co, m, err)
                     : swin_ckpt_detect(model_path) ? swin_ckpt_load(model_path, &co, m, err)
                                                   : swin_onnx_load_opts(model_path, &oo, m, err);
    if (!st && groups && m->cfg.norm_groups != groups) {
        char kind[48];
        snprintf(kind, sizeof kind, "group norms of %d groups", m->cfg.norm_groups);
        st = swin_error_set(err, SWIN_ERR_ARG, "%s: its CNN norms are %s, but %d norm groups were given", model_path,
                            m->cfg.norm_groups ? kind : m->cfg.batch_norm ? "batch norms" : "instance norms", groups);
        swin_model_release(m);
    }
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
        .batch_norm_at_load = c->batch_norm_at_load,
        .attn_scale = {c->attn_scale[0], c->attn_scale[1], c->attn_scale[2], c->attn_scale[3]},
        .norm_groups = c->norm_groups,
        .downsample = swin_merge_kind_name(c->merge_kind),
        .param_count = m->param_count, .weight_bytes = m->flat_bytes,
        .opset = m->source.opset, .exporter = m->source.exporter, .post = m->source.post,
        .weight_storage = m->source.weight_storage,
        .recipe = m->recipe ? m->recipe->source : "", .recipe_warnings = m->recipe ? m->recipe->warnings : "",
        .channel_names = m->recipe ? m->recipe->channel_names : "",
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

/* Whether m runs on cube: each side in range, the attention windows within the export's bias. */
static swin_status check_cube(const struct swin_model *m, const int cube[3], swin_error *err)
{
    for (int k = 0; k < 3; k++)
        if (cube[k] < SWIN_CUBE_MIN || cube[k] % SWIN_CUBE_MULTIPLE || cube[k] > SWIN_CUBE_MAX)
            return swin_error_set(err, SWIN_ERR_ARG,
                                  "cube %d x %d x %d: every side must be a multiple of %d between %d and %d",
                                  cube[0], cube[1], cube[2], SWIN_CUBE_MULTIPLE, SWIN_CUBE_MIN, SWIN_CUBE_MAX);
    return check_bias_coverage(m, cube, err);
}

static swin_status resolve_cube(const struct swin_model *m, const swin_context_params *p, int cube[3],
                                swin_error *err)
{
    bool given = p->cube[0] || p->cube[1] || p->cube[2];
    for (int k = 0; k < 3; k++) cube[k] = given ? p->cube[k] : m->cfg.cube[k];
    if (!given && (!cube[0] || !cube[1] || !cube[2]))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: give it (%s D H W, each a multiple of 32%s)",
                              m->source.opset ? "the model was exported with dynamic spatial axes, so its cube is not set"
                                              : "a checkpoint does not say which cube the model runs on",
                              swin_setting(SWIN_SETTING_CUBE),
                              m->source.opset ? "" : "; MONAI's Swin UNETR recipes use 96 96 96");
    return check_cube(m, cube, err);
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
                                  "smaller cube (%s; the export cube, say) or re-export without constant folding",
                                  cube[0], cube[1], cube[2], s + 1, n, n_max, swin_setting(SWIN_SETTING_CUBE));
    }
    return SWIN_OK;
}

/* The device bytes of rq's ring on b for cube: 0 without a request or on a backend that
 * blends on the host. */
static size_t ring_bytes_of(const struct swin_backend_ctx *b, const int cube[3], const struct swin_ring_request *rq)
{
    const struct swin_ops *o = b->inst.ops;
    if (!rq || !o->ring_bytes) return 0;
    struct swin_ring_geom g = {
        .classes = b->inst.model->cfg.out_channels, .label_bytes = rq->label_bytes, .probs = rq->probs};
    for (int k = 0; k < 3; k++) {
        g.size[k] = rq->grid[k];
        g.roi[k] = cube[k];
        g.padded[k] = g.size[k] > cube[k] ? g.size[k] : cube[k];
        g.pad_lo[k] = (g.padded[k] - g.size[k]) / 2;
        g.interval[k] = swin_ring_interval(g.padded[k], cube[k], rq->overlap);
        g.n[k] = swin_ring_starts(g.padded[k], cube[k], g.interval[k]);
    }
    g.ax = swin_ring_slab_axis(g.size, g.roi);
    return o->ring_bytes(b->inst.be, &g);
}

/* Runs forward() in plan mode on b (open, started or not) and solves the plan; with rq, the
 * ring of that volume is counted too. */
static swin_status make_plan(const int cube[3], const struct swin_backend_ctx *b, const struct swin_ring_request *rq,
                             struct swin_plan *plan, swin_plan_info *info, swin_error *err)
{
    const struct swin_backend_inst *in = &b->inst;
    struct swin_exec e = {.plan = plan, .planning = true, .ops = in->ops, .be = in->be, .err = err};
    swin_plan_init(plan);
    swin_status st = swin_forward(&e, in->model, cube, NULL, NULL);
    if (!st) st = swin_plan_solve(plan, err);
    if (st) {
        swin_plan_release(plan);
        return st;
    }
    *info = (swin_plan_info){
        .cube = {cube[0], cube[1], cube[2]}, .backend = b->kind, .precision = b->precision,
        .precision_note = in->precision_note, .weight_bytes = in->weight_bytes,
        .arena_bytes = plan->arena_bytes, .lower_bound = plan->lower_bound, .context_bytes = in->context_bytes,
        .total_bytes = in->weight_bytes + plan->arena_bytes + in->context_bytes, .tensors = plan->n,
        .cpu_threads = in->threads,
        .cpu_isa = in->isa ? in->isa : "",
        .cpu_isa_best = in->isa_best ? in->isa_best : "",
    };
    snprintf(info->backend_reason, sizeof info->backend_reason, "%s", b->reason);
    if (rq) {
        for (int k = 0; k < 3; k++) info->grid[k] = rq->grid[k];
        info->ring_bytes = ring_bytes_of(b, cube, rq);
        info->total_bytes += info->ring_bytes;
    }
    return SWIN_OK;
}

/* The plan info of cube on b (with rq's ring), the plan itself released. */
static swin_status plan_info_of(const int cube[3], const struct swin_backend_ctx *b,
                                const struct swin_ring_request *rq, swin_plan_info *info, swin_error *err)
{
    struct swin_plan plan;
    swin_status st = make_plan(cube, b, rq, &plan, info, err);
    if (!st) swin_plan_release(&plan);
    return st;
}

/* Refuses a plan over the limit, naming what would fit: the limit it needs, and the
 * alternatives in `fits` (may be empty). */
static swin_status check_limit(const swin_plan_info *i, size_t limit, const char *fits, swin_error *err)
{
    if (!limit || i->total_bytes <= limit) return SWIN_OK;
    const double mib = 1024.0 * 1024.0;
    char ring[96] = "";
    if (i->ring_bytes)
        snprintf(ring, sizeof ring, " + the ring of a %lldx%lldx%lld grid %.1f", i->grid[0], i->grid[1], i->grid[2],
                 i->ring_bytes / mib);
    return swin_error_set(err, SWIN_ERR_MEM_LIMIT,
                          "cube %dx%dx%d needs %.1f MiB (weights %.1f + arena %.1f + scratch %.1f%s), over the limit "
                          "of %.1f MiB: raise %s to at least %.1f MiB%s",
                          i->cube[0], i->cube[1], i->cube[2], i->total_bytes / mib, i->weight_bytes / mib,
                          i->arena_bytes / mib, i->context_bytes / mib, ring, limit / mib,
                          swin_setting(SWIN_SETTING_MEM_LIMIT), i->total_bytes / mib, fits);
}

/* The largest window (each axis min(its size, s), s a multiple of 32) whose plan on b fits
 * `limit`, as " or a DxHxW window (X MiB)" (prefixed by `flag`); "" when none does. (The
 * window is --cube for plan and segment, the input's size for forward.) Fails only when
 * memory runs out: a window that cannot be planned otherwise does not fit. */
static swin_status fitting_cube(const struct swin_model *m, const struct swin_backend_ctx *b, const int cube[3],
                                const struct swin_ring_request *rq, size_t limit, const char *flag, char *out,
                                size_t cap, swin_error *err)
{
    out[0] = 0;
    int s = cube[0] > cube[1] ? cube[0] : cube[1];
    s = s > cube[2] ? s : cube[2];
    for (s = s / 32 * 32; s >= 32; s -= 32) {
        int t[3];
        for (int k = 0; k < 3; k++) t[k] = cube[k] < s ? cube[k] : s;
        swin_plan_info i;
        swin_error why;
        swin_status st = check_cube(m, t, &why);
        if (!st) st = plan_info_of(t, b, rq, &i, &why);
        if (st == SWIN_ERR_NOMEM) return swin_error_set(err, st, "%s", why.msg);
        if (st == SWIN_OK && i.total_bytes <= limit) {
            snprintf(out, cap, " or %sa %dx%dx%d cube (%.1f MiB)", flag, t[0], t[1], t[2],
                     i.total_bytes / (1024.0 * 1024.0));
            return SWIN_OK;
        }
    }
    return SWIN_OK;
}

/* On CUDA float32, what fp16 would fit in `limit` (alone or with a smaller window), as
 * " or PRECISION fp16 (X MiB)" or " or PRECISION fp16 with a DxHxW cube (X MiB)" (PRECISION the
 * setting's name); "" when nothing does. */
static swin_status fitting_half(const struct swin_model *m, const swin_context_params *p, const int cube[3],
                                const struct swin_ring_request *rq, char *out, size_t cap, swin_error *err)
{
    out[0] = 0;
    swin_context_params q = *p;
    q.precision = SWIN_PRECISION_FP16;
    q.backend = SWIN_BACKEND_CUDA;
    struct swin_backend_ctx h;
    swin_plan_info i;
    swin_error why;
    swin_status st = swin_backend_open(m, &q, &h, &why);
    if (st == SWIN_OK) st = plan_info_of(cube, &h, rq, &i, &why);
    if (st == SWIN_ERR_NOMEM) {
        swin_backend_close(&h);
        return swin_error_set(err, st, "%s", why.msg);
    }
    char fp16[80];
    snprintf(fp16, sizeof fp16, "%s fp16", swin_setting(SWIN_SETTING_PRECISION));
    if (st == SWIN_OK && i.total_bytes <= p->mem_limit)
        snprintf(out, cap, " or %s (%.1f MiB)", fp16, i.total_bytes / (1024.0 * 1024.0));
    else if (h.iface) st = fitting_cube(m, &h, cube, rq, p->mem_limit, strcat(fp16, " with "), out, cap, err);
    else st = SWIN_OK; /* no CUDA to plan fp16 on */
    swin_backend_close(&h);
    return st;
}

/* Plans cube on b (with rq's ring) into *plan and *info. Over p->mem_limit it releases the
 * plan and refuses, naming what would fit: a smaller window, on CUDA float32 fp16 (alone or
 * with one), and with a ring the cubes blended on the host; each alternative planned once
 * on a backend that starts nothing. */
static swin_status plan_in_limit(const struct swin_model *m, const swin_context_params *p, const int cube[3],
                                 const struct swin_backend_ctx *b, const struct swin_ring_request *rq,
                                 struct swin_plan *plan, swin_plan_info *info, swin_error *err)
{
    swin_status st = make_plan(cube, b, rq, plan, info, err);
    if (st || !p->mem_limit || info->total_bytes <= p->mem_limit) return st;
    swin_plan_release(plan);
    char fits[480], smaller[96], half[160] = "", host[160] = "";
    if ((st = fitting_cube(m, b, cube, rq, p->mem_limit, "", smaller, sizeof smaller, err))) return st;
    if (info->backend == SWIN_BACKEND_CUDA && info->precision == SWIN_PRECISION_FP32 &&
        (st = fitting_half(m, p, cube, rq, half, sizeof half, err)))
        return st;
    if (info->ring_bytes && info->total_bytes - info->ring_bytes <= p->mem_limit)
        snprintf(host, sizeof host, " or the cubes blended on the host (%s host: %.1f MiB)",
                 swin_setting(SWIN_SETTING_BLEND_ON), (info->total_bytes - info->ring_bytes) / (1024.0 * 1024.0));
    snprintf(fits, sizeof fits, "%s%s%s", smaller, half, host);
    if (!fits[0]) snprintf(fits, sizeof fits, " (no smaller window fits either)");
    return check_limit(info, p->mem_limit, fits, err);
}

swin_status swin_model_plan(const swin_model_t *m, const swin_context_params *p, swin_plan_info *out,
                            swin_error *err)
{
    int cube[3];
    struct swin_backend_ctx b = {0};
    struct swin_plan plan;
    swin_status st = resolve_cube(m, p, cube, err);
    if (!st) st = swin_backend_open(m, p, &b, err);
    if (!st) st = plan_in_limit(m, p, cube, &b, NULL, &plan, out, err);
    if (!st) swin_plan_release(&plan);
    swin_backend_close(&b);
    return st;
}

swin_status swin_model_plan_ring(const swin_model_t *m, const swin_context_params *p, const struct swin_ring_request *rq,
                                 swin_plan_info *out, swin_error *err)
{
    int cube[3];
    struct swin_backend_ctx b = {0};
    struct swin_plan plan;
    swin_status st = resolve_cube(m, p, cube, err);
    if (!st) st = swin_backend_open(m, p, &b, err);
    if (!st) st = plan_in_limit(m, p, cube, &b, rq, &plan, out, err);
    if (!st) swin_plan_release(&plan);
    swin_backend_close(&b);
    return st;
}

/* Starts the context's planned backend. When AUTO's CUDA does not start, the CPU takes its
 * place: planned anew and checked against the limit (no alternatives: it is the last
 * choice), then started. */
static swin_status start_backend(struct swin_context *ctx, const swin_context_params *p, swin_error *err)
{
    swin_error why = {0};
    swin_status st = swin_backend_start(&ctx->backend, &why);
    if (st && !ctx->backend.may_fall_back) {
        if (err) *err = why;
        return st;
    }
    if (!st) return SWIN_OK;
    swin_plan_release(&ctx->plan);
    st = swin_backend_fall_back(&ctx->backend, why.msg, err);
    if (!st) st = make_plan(ctx->cube, &ctx->backend, NULL, &ctx->plan, &ctx->info, err);
    if (!st) st = check_limit(&ctx->info, p->mem_limit, "", err);
    if (!st) st = swin_backend_start(&ctx->backend, err);
    return st;
}

swin_status swin_context_create_on(const swin_model_t *m, const swin_context_params *p, const int cube[3],
                                   struct swin_backend_ctx *b, swin_context_t **out, swin_error *err)
{
    *out = NULL;
    struct swin_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        swin_backend_close(b);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    }
    ctx->model = m;
    ctx->mem_limit = p->mem_limit;
    memcpy(ctx->cube, cube, sizeof ctx->cube);
    ctx->backend = *b;
    *b = (struct swin_backend_ctx){0};
    /* A plan over the limit is refused before the backend starts: no thread, no device
     * memory, no weight copy. */
    swin_status st = plan_in_limit(m, p, ctx->cube, &ctx->backend, NULL, &ctx->plan, &ctx->info, err);
    if (!st) st = start_backend(ctx, p, err);
    if (!st) ctx->model = ctx->backend.inst.model;
    if (!st) st = swin_backend_arena_alloc(&ctx->backend, ctx->plan.arena_bytes, (void **)&ctx->arena, err);
    if (st) {
        swin_context_free(ctx);
        return st;
    }
    *out = ctx;
    return SWIN_OK;
}

swin_status swin_context_create(const swin_model_t *m, const swin_context_params *p, swin_context_t **out,
                                swin_error *err)
{
    *out = NULL;
    int cube[3];
    struct swin_backend_ctx b;
    swin_status st = resolve_cube(m, p, cube, err);
    if (!st) st = swin_backend_open(m, p, &b, err);
    return st ? st : swin_context_create_on(m, p, cube, &b, out, err);
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
                          "range of +-65504; is the input normalised like the training data?): run with %s fp32",
                          bad, n, swin_setting(SWIN_SETTING_PRECISION));
}

swin_status swin_context_run(swin_context_t *ctx, const float *input, float *logits, swin_error *err)
{
    if (!input || !logits) return swin_error_set(err, SWIN_ERR_ARG, "input and logits buffers are required");
    swin_plan_rewind(&ctx->plan);
    struct swin_exec e = {
        .plan = &ctx->plan, .arena = ctx->arena, .ops = ctx->backend.inst.ops, .be = ctx->backend.inst.be, .err = err};
    swin_status st = swin_forward(&e, ctx->model, ctx->cube, input, logits);
    if (!st && ctx->info.precision == SWIN_PRECISION_FP16) st = check_half_finite(ctx, logits, err);
    return st;
}

void swin_context_free(swin_context_t *ctx)
{
    if (!ctx) return;
    swin_backend_arena_free(&ctx->backend, ctx->ring);
    swin_backend_arena_free(&ctx->backend, ctx->arena);
    swin_plan_release(&ctx->plan);
    swin_backend_close(&ctx->backend);
    free(ctx);
}
