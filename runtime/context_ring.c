/* A context's ring (runtime/context_ring.h). */
#include "runtime/context_ring.h"
#include "core/settings.h"

#include "runtime/context.h"
#include "runtime/forward.h"

bool swin_context_blends(const swin_context_t *ctx)
{
    const struct swin_ops *o = ctx->backend.inst.ops;
    return o->ring_bytes && o->ring_start && o->ring_add && o->ring_finish;
}

size_t swin_context_ring_bytes(const swin_context_t *ctx, const struct swin_ring_geom *g)
{
    return ctx->backend.inst.ops->ring_bytes(ctx->backend.inst.be, g);
}

/* The message of a failed ring op of ctx's backend. */
static swin_status ring_op_failed(swin_context_t *ctx, int rc, const char *op, swin_error *err)
{
    return swin_error_set(err, (swin_status)rc, "%s: %s", op, ctx->backend.inst.ops->last_error(ctx->backend.inst.be));
}

swin_status swin_context_ring_begin(swin_context_t *ctx, const struct swin_ring_geom *g, const float *importance,
                                    swin_error *err)
{
    const double mib = 1024.0 * 1024.0;
    if (!swin_context_blends(ctx))
        return swin_error_set(err, SWIN_ERR_ARG, "the %s backend blends the cubes on the host",
                              ctx->backend.inst.ops->name);
    swin_context_ring_end(ctx);
    const size_t bytes = swin_context_ring_bytes(ctx, g);
    if (ctx->mem_limit && ctx->info.total_bytes + bytes > ctx->mem_limit)
        return swin_error_set(err, SWIN_ERR_MEM_LIMIT,
                              "the device ring of the %lldx%lldx%lld grid needs %.1f MiB besides the context's %.1f, "
                              "over the limit of %.1f MiB: blend on the host (%s host), or use a smaller cube "
                              "(%s says what fits)",
                              (long long)g->size[0], (long long)g->size[1], (long long)g->size[2], bytes / mib,
                              ctx->info.total_bytes / mib, ctx->mem_limit / mib, swin_setting(SWIN_SETTING_BLEND_ON),
                              swin_setting(SWIN_SETTING_SEGMENT_PLAN));
    swin_error why = {0};
    if (swin_backend_arena_alloc(&ctx->backend, bytes, &ctx->ring, &why))
        return swin_error_set(err, SWIN_ERR_NOMEM,
                              "out of device memory for the %.1f MiB ring of the %lldx%lldx%lld grid (%s): blend on "
                              "the host (%s host), or use a smaller cube",
                              bytes / mib, (long long)g->size[0], (long long)g->size[1], (long long)g->size[2],
                              why.msg, swin_setting(SWIN_SETTING_BLEND_ON));
    ctx->ring_geom = *g;
    ctx->ring_bytes = bytes;
    int rc = swin_op_ring_start(ctx->backend.inst.ops, ctx->backend.inst.be, ctx->ring, &ctx->ring_geom, importance);
    if (rc) {
        swin_context_ring_end(ctx);
        return ring_op_failed(ctx, rc, "ring_start", err);
    }
    return SWIN_OK;
}

swin_status swin_context_run_ring(swin_context_t *ctx, const float *input, const int64_t start[3], swin_error *err)
{
    if (!input) return swin_error_set(err, SWIN_ERR_ARG, "an input buffer is required");
    if (!ctx->ring) return swin_error_set(err, SWIN_ERR_ARG, "no ring: call swin_context_ring_begin first");
    swin_plan_rewind(&ctx->plan);
    struct swin_exec e = {.plan = &ctx->plan, .arena = ctx->arena, .ops = ctx->backend.inst.ops,
                          .be = ctx->backend.inst.be, .err = err, .ring = ctx->ring, .ring_geom = &ctx->ring_geom,
                          .ring_start = start};
    return swin_forward(&e, ctx->model, ctx->cube, input, NULL);
}

swin_status swin_context_ring_finish(swin_context_t *ctx, int64_t plane, int64_t row_lo, int64_t row_hi, void *labels,
                                     float *probs, swin_error *err)
{
    if (!ctx->ring) return swin_error_set(err, SWIN_ERR_ARG, "no ring: call swin_context_ring_begin first");
    long long nonfinite = 0;
    int rc = swin_op_ring_finish(ctx->backend.inst.ops, ctx->backend.inst.be, ctx->ring, &ctx->ring_geom, plane,
                                 row_lo, row_hi, labels, probs, &nonfinite);
    if (rc) return ring_op_failed(ctx, rc, "ring_finish", err);
    /* half mode stores activations as float16 (largest finite value 65504): said, not passed on */
    if (nonfinite && ctx->info.precision == SWIN_PRECISION_FP16)
        return swin_error_set(err, SWIN_ERR_BACKEND,
                              "CUDA half mode: %lld logits of the cubes are not finite (a float16 activation "
                              "overflowed its range of +-65504; is the input normalised like the training data?): "
                              "run with %s fp32",
                              nonfinite, swin_setting(SWIN_SETTING_PRECISION));
    return SWIN_OK;
}

void swin_context_ring_end(swin_context_t *ctx)
{
    swin_backend_arena_free(&ctx->backend, ctx->ring);
    ctx->ring = NULL;
    ctx->ring_bytes = 0;
}

bool swin_context_device_idle(swin_context_t *ctx, double *seconds, long long *missed)
{
    const struct swin_ops *o = ctx->backend.inst.ops;
    *seconds = 0;
    *missed = 0;
    return o->device_idle && o->device_idle(ctx->backend.inst.be, seconds, missed) == 0;
}
