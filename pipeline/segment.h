/* The whole CT pipeline behind swin_segment / swin_segment_file (pipeline/segment_api.h), one
 * volume: intensities + affine -> RAS + spacing + intensity range -> streaming sliding
 * cubes (a predictor callback runs each cube) -> labels back on the input's grid (argmax then
 * nearest, or softmax then trilinear then argmax: params.invert) -> memory, or a format's
 * outputs on the input's grid (file form). Optional:
 * class probabilities (softmax, on the input grid, trilinear; out_channels floats per
 * preprocessed voxel) and a PNG preview (file form). Nothing here prints: progress and
 * cancel go through the public callbacks, errors through swin_error.
 *
 * The predictor is a seam: the public functions pass the context's forward pass, the
 * pipeline tests (tests/pipeline/probe.c) a fake model. */
#ifndef SWIN_PIPELINE_SEGMENT_H
#define SWIN_PIPELINE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "formats/format.h"
#include "pipeline/sliding.h"
#include "pipeline/segment_api.h"

struct swin_pipeline {
    swin_segment_params params;    /* the public options */
    int cube[3];                   /* the predictor's cube (D, H, W) */
    int in_channels, out_channels; /* the predictor's */
    swin_predict_fn predict;
    void *predict_user;
    const struct swin_device_blend *device; /* NULL, or the predictor blends on its device (sliding.h) */
    int threads;                   /* for the work around the predictor (0: every core) */
};

/* swin_segment_default_params() and no predictor. */
struct swin_pipeline swin_pipeline_defaults(void);

/* File form, through a format (formats/format.h) that reads paths: the options and the
 * outputs are checked before any work; the outputs (the format's, and the preview) appear
 * together when the volume succeeds; a failure leaves none of them (and no temporary file).
 * rep: never NULL. */
swin_status swin_pipeline_inputs(const struct swin_format *f, const char *const *paths, int npaths,
                                 const char *out_path, const struct swin_pipeline *p, swin_segment_report *rep,
                                 swin_error *err);
/* swin_pipeline_inputs in two steps, so that a batch can read and preprocess the next
 * volume while this one's cubes run: prepare reads and preprocesses (rep: what it filled;
 * *out NULL on failure), run_prepared does the rest with p (the same parameters; its
 * predictor may differ) and frees pv whatever happens. paths and out_path must outlive pv.
 * Reading runs nothing of p's predictor: two prepares, or a prepare and a run on another
 * volume, may run at once. */
struct swin_prepared;
swin_status swin_pipeline_prepare(const struct swin_format *f, const char *const *paths, int npaths,
                                  const char *out_path, const struct swin_pipeline *p, struct swin_prepared **out,
                                  swin_segment_report *rep, swin_error *err);
swin_status swin_pipeline_run_prepared(struct swin_prepared *pv, const struct swin_pipeline *p,
                                       swin_segment_report *rep, swin_error *err);
void swin_prepared_free(struct swin_prepared *pv);
/* One input path, in the format that reads it (formats/registry.c). */
swin_status swin_pipeline_file(const char *in_path, const char *out_path, const struct swin_pipeline *p,
                               swin_segment_report *rep, swin_error *err);

/* v: nv channels on one grid (the model's in_channels); labels: nx * ny * nz; probs: NULL or
 * out_channels * nx * ny * nz (see swin_segment_channels). */
swin_status swin_pipeline_volume(const swin_volume *v, int nv, const struct swin_pipeline *p, uint16_t *labels,
                                 float *probs, swin_segment_report *rep, swin_error *err);

#endif
