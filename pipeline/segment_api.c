/* swin_segment, swin_segment_file and swin_segment_dicom (pipeline/segment_api.h): the pipeline
 * of segment.h with the context's forward pass as its predictor. */
#include "pipeline/segment_api.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/label_stats.h"
#include "pipeline/segment.h"

static swin_status predict(void *user, const float *in, float *out, swin_error *err)
{
    return swin_context_run(user, in, out, err);
}

/* The pipeline of params with ctx's forward pass, ctx's plan, and the report zeroed. */
static swin_status pipeline_for(swin_context_t *ctx, const swin_segment_params *params, struct swin_pipeline *p,
                                swin_plan_info *plan, swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!ctx || !params) return swin_error_set(err, SWIN_ERR_ARG, "a context and parameters are required");
    swin_model_info mi;
    swin_model_get_info(swin_context_model(ctx), &mi);
    swin_context_plan(ctx, plan);
    *p = (struct swin_pipeline){.params = *params, .in_channels = mi.in_channels, .out_channels = mi.out_channels,
                                .predict = predict, .predict_user = ctx, .threads = plan->cpu_threads};
    memcpy(p->cube, plan->cube, sizeof p->cube);
    return SWIN_OK;
}

swin_status swin_segment(swin_context_t *ctx, const swin_volume *volume, const swin_segment_params *params,
                         uint16_t *labels, float *probabilities, swin_segment_report *report, swin_error *err)
{
    struct swin_pipeline p;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    swin_status st = pipeline_for(ctx, params, &p, &plan, rep, err);
    if (st) return st;
    st = swin_pipeline_volume(volume, &p, labels, probabilities, rep, err);
    if (!st) st = swin_stats_volume(volume, labels, p.out_channels, rep, err);
    rep->plan = plan;
    return st;
}


/* The file form on inputs of format f (NULL: the format that reads inputs[0]). */
static swin_status segment_inputs(swin_context_t *ctx, const struct swin_format *f, const char *const *inputs,
                                  int ninputs, const char *output_path, const swin_segment_params *params,
                                  swin_segment_report *report, swin_error *err)
{
    struct swin_pipeline p;
    swin_plan_info plan;
    swin_segment_report scratch, *rep = report ? report : &scratch;
    swin_status st = pipeline_for(ctx, params, &p, &plan, rep, err);
    if (st) return st;
    if (!inputs || ninputs < 1 || !inputs[0] || !output_path)
        return swin_error_set(err, SWIN_ERR_ARG, "input and output paths are required");
    st = swin_pipeline_inputs(f ? f : swin_format_for(inputs[0]), inputs, ninputs, output_path, &p, rep, err);
    rep->plan = plan;
    return st;
}

swin_status swin_segment_file(swin_context_t *ctx, const char *input_path, const char *output_path,
                              const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return segment_inputs(ctx, NULL, &input_path, 1, output_path, params, report, err);
}

swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs, const char *output_path,
                               const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return segment_inputs(ctx, swin_format_named("DICOM"), inputs, ninputs, output_path, params, report, err);
}
