/* swin_segment, swin_segment_file and swin_segment_dicom (pipeline/segment_api.h): the pipeline
 * of segment.h with the context's forward pass as its predictor. */
#include "pipeline/segment_api.h"
#include "core/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/label_stats.h"
#include "pipeline/segment.h"
#include "runtime/context_ring.h"

static swin_status predict(void *user, const float *in, float *out, swin_error *err)
{
    return swin_context_run(user, in, out, err);
}

/* ---- the context as a predictor that blends on its device (pipeline/sliding.h) ------- */

struct device_predictor {
    swin_context_t *ctx;
    const swin_segment_params *params; /* blend_on, and cancel: polled before each cube */
    int classes;
    struct swin_device_blend dev;
};

static swin_status device_begin(void *user, const struct swin_cubes *w, int ax, int label_bytes, bool probs,
                                struct swin_blend_info *info, swin_error *err)
{
    struct device_predictor *d = user;
    struct swin_ring_geom g = {.ax = ax, .classes = d->classes, .label_bytes = label_bytes, .probs = probs};
    for (int k = 0; k < 3; k++) {
        g.size[k] = w->size[k];
        g.roi[k] = w->roi[k];
        g.padded[k] = w->padded[k];
        g.pad_lo[k] = w->pad_lo[k];
        g.interval[k] = w->interval[k];
        g.n[k] = w->n[k];
    }
    swin_error why = {0};
    swin_status st = swin_context_ring_begin(d->ctx, &g, w->importance, &why);
    if (!st) {
        info->on_device = true;
        info->ring_bytes = swin_context_ring_bytes(d->ctx, &g);
        return SWIN_OK;
    }
    if (d->params->blend_on == SWIN_BLEND_ON_AUTO && (st == SWIN_ERR_MEM_LIMIT || st == SWIN_ERR_NOMEM)) {
        snprintf(info->note, sizeof info->note, "%.255s", why.msg); /* the host path takes the volume */
        return SWIN_OK;
    }
    if (err) *err = why;
    return st;
}

static swin_status device_predict_blend(void *user, const float *in, const int64_t p[3], swin_error *err)
{
    struct device_predictor *d = user;
    const swin_segment_params *o = d->params;
    if (o->cancel && o->cancel(o->user))
        return swin_error_set(err, SWIN_ERR_CANCELLED, "segmentation cancelled by the caller");
    return swin_context_run_ring(d->ctx, in, p, err);
}

static swin_status device_finish_rows(void *user, int64_t plane, int64_t row_lo, int64_t row_hi, void *labels,
                                      float *probs, swin_error *err)
{
    return swin_context_ring_finish(((struct device_predictor *)user)->ctx, plane, row_lo, row_hi, labels, probs,
                                    err);
}

static void device_end(void *user)
{
    swin_context_ring_end(((struct device_predictor *)user)->ctx);
}

/* p->device: d, when ctx's backend blends and params let it. */
static swin_status device_for(swin_context_t *ctx, const swin_segment_params *params, struct device_predictor *d,
                              struct swin_pipeline *p, swin_error *err)
{
    if (params->blend_on != SWIN_BLEND_ON_AUTO && params->blend_on != SWIN_BLEND_ON_HOST &&
        params->blend_on != SWIN_BLEND_ON_DEVICE)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown place to blend the cubes %d (auto, host or device)",
                              (int)params->blend_on);
    const bool blends = swin_context_blends(ctx);
    if (params->blend_on == SWIN_BLEND_ON_DEVICE && !blends)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "the cubes cannot be blended on the device: this context's backend blends on the host "
                              "(use %s auto or host, or %s cuda)",
                              swin_setting(SWIN_SETTING_BLEND_ON), swin_setting(SWIN_SETTING_BACKEND));
    /* the device's ring reduces to one label per voxel: overlapping masks are made on the host */
    const bool masks = swin_mask_channels(params->activation, p->out_channels) > 0;
    if (params->blend_on == SWIN_BLEND_ON_DEVICE && masks)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "the overlapping sigmoid masks of a multi-label run are blended on the host (use "
                              "%s auto or host)",
                              swin_setting(SWIN_SETTING_BLEND_ON));
    *d = (struct device_predictor){.ctx = ctx, .params = &p->params, .classes = p->out_channels,
                                   .dev = {.user = d, .begin = device_begin, .predict_blend = device_predict_blend,
                                           .finish_rows = device_finish_rows, .end = device_end}};
    p->device = blends && !masks && params->blend_on != SWIN_BLEND_ON_HOST ? &d->dev : NULL;
    return SWIN_OK;
}

/* The pipeline of params with ctx's forward pass (blending on its device when it can: d),
 * ctx's plan, and the report zeroed. */
static swin_status pipeline_for(swin_context_t *ctx, const swin_segment_params *params, struct swin_pipeline *p,
                                struct device_predictor *d, swin_plan_info *plan, swin_segment_report *rep,
                                swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!ctx || !params) return swin_error_set(err, SWIN_ERR_ARG, "a context and parameters are required");
    swin_model_info mi;
    swin_model_get_info(swin_context_model(ctx), &mi);
    swin_context_plan(ctx, plan);
    *p = (struct swin_pipeline){.params = *params, .in_channels = mi.in_channels, .out_channels = mi.out_channels,
                                .predict = predict, .predict_user = ctx, .threads = plan->cpu_threads};
    memcpy(p->cube, plan->cube, sizeof p->cube);
    return device_for(ctx, params, d, p, err);
}

/* The device's idle clock, from this volume's first piece of work to its last. */
static void idle_start(swin_context_t *ctx)
{
    double s;
    long long missed;
    swin_context_device_idle(ctx, &s, &missed);
}

static void idle_read(swin_context_t *ctx, swin_segment_report *rep)
{
    double s;
    long long missed;
    rep->seconds_device_idle = swin_context_device_idle(ctx, &s, &missed) && !missed ? s : -1;
}

swin_status swin_segment(swin_context_t *ctx, const swin_volume *volume, const swin_segment_params *params,
                         uint16_t *labels, float *probabilities, swin_segment_report *report, swin_error *err)
{
    return swin_segment_channels(ctx, volume, 1, params, labels, probabilities, report, err);
}

swin_status swin_segment_channels(swin_context_t *ctx, const swin_volume *channels, int nchannels,
                                  const swin_segment_params *params, uint16_t *labels, float *probabilities,
                                  swin_segment_report *report, swin_error *err)
{
    struct swin_pipeline p;
    struct device_predictor d;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    swin_status st = pipeline_for(ctx, params, &p, &d, &plan, rep, err);
    if (st) return st;
    idle_start(ctx);
    st = swin_pipeline_volume(channels, nchannels, &p, labels, probabilities, rep, err);
    idle_read(ctx, rep);
    const int masks = swin_mask_channels(params->activation, p.out_channels);
    /* the statistics over the first channel's intensities, as the file form's */
    if (!st) st = swin_stats_volume(channels, labels, swin_label_values(p.out_channels, masks), masks, rep, err);
    rep->plan = plan;
    return st;
}


/* The file form on inputs of format f (NULL: the format that reads inputs[0]). */
static swin_status segment_inputs(swin_context_t *ctx, const struct swin_format *f, const char *const *inputs,
                                  int ninputs, const char *output_path, const swin_segment_params *params,
                                  swin_segment_report *report, swin_error *err)
{
    struct swin_pipeline p;
    struct device_predictor d;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    swin_status st = pipeline_for(ctx, params, &p, &d, &plan, rep, err);
    if (st) return st;
    if (!inputs || ninputs < 1 || !inputs[0] || !output_path)
        return swin_error_set(err, SWIN_ERR_ARG, "input and output paths are required");
    idle_start(ctx);
    st = swin_pipeline_inputs(f ? f : swin_format_for(inputs[0]), inputs, ninputs, output_path, &p, rep, err);
    idle_read(ctx, rep);
    rep->plan = plan;
    return st;
}

struct swin_segment_prepared {
    struct swin_prepared *pv;
    char *paths[1]; /* the input path */
    char *out_path;
};

void swin_segment_prepared_free(swin_segment_prepared *sp)
{
    if (!sp) return;
    swin_prepared_free(sp->pv);
    free(sp->paths[0]);
    free(sp->out_path);
    free(sp);
}

swin_status swin_segment_file_prepare(swin_context_t *ctx, const char *input_path, const char *output_path,
                                      const swin_segment_params *params, swin_segment_prepared **prepared,
                                      swin_segment_report *report, swin_error *err)
{
    struct swin_pipeline p;
    struct device_predictor d;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    if (!prepared) return swin_error_set(err, SWIN_ERR_ARG, "a place for the prepared volume is required");
    *prepared = NULL;
    swin_status st = pipeline_for(ctx, params, &p, &d, &plan, rep, err);
    if (st) return st;
    if (!input_path || !output_path) return swin_error_set(err, SWIN_ERR_ARG, "input and output paths are required");
    swin_segment_prepared *sp = calloc(1, sizeof *sp);
    if (!sp || !(sp->paths[0] = strdup(input_path)) || !(sp->out_path = strdup(output_path))) {
        swin_segment_prepared_free(sp);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    }
    st = swin_pipeline_prepare(swin_format_for(input_path), (const char *const *)sp->paths, 1, sp->out_path, &p, &sp->pv,
                               rep, err);
    rep->plan = plan;
    if (st) {
        swin_segment_prepared_free(sp);
        return st;
    }
    *prepared = sp;
    return SWIN_OK;
}

swin_status swin_segment_file_prepared(swin_context_t *ctx, swin_segment_prepared *prepared,
                                       const swin_segment_params *params, swin_segment_report *report,
                                       swin_error *err)
{
    struct swin_pipeline p;
    struct device_predictor d;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    if (!prepared) return swin_error_set(err, SWIN_ERR_ARG, "a prepared volume is required");
    swin_status st = pipeline_for(ctx, params, &p, &d, &plan, rep, err);
    if (st) {
        swin_segment_prepared_free(prepared);
        return st;
    }
    idle_start(ctx);
    st = swin_pipeline_run_prepared(prepared->pv, &p, rep, err);
    prepared->pv = NULL; /* freed by the run */
    idle_read(ctx, rep);
    rep->plan = plan;
    swin_segment_prepared_free(prepared);
    return st;
}

swin_status swin_segment_file(swin_context_t *ctx, const char *input_path, const char *output_path,
                              const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return segment_inputs(ctx, NULL, &input_path, 1, output_path, params, report, err);
}

swin_status swin_segment_files(swin_context_t *ctx, const char *const *inputs, int ninputs, const char *output_path,
                               const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return segment_inputs(ctx, NULL, inputs, ninputs, output_path, params, report, err);
}

swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs, const char *output_path,
                               const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return segment_inputs(ctx, swin_format_named("DICOM"), inputs, ninputs, output_path, params, report, err);
}
