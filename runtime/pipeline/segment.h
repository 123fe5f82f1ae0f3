/* The whole CT pipeline, one volume: NIfTI in -> RAS + spacing + intensity window ->
 * streaming sliding windows (a predictor callback runs each window) -> argmax -> labels
 * back on the input's grid (nearest) -> NIfTI out with the input's affine and codes.
 * Optional: class probabilities (softmax, on the input grid, trilinear; needs
 * out_channels floats per preprocessed voxel) and a PNG preview. Nothing here prints:
 * progress goes through callbacks, errors through swin_error. */
#ifndef SWIN_PIPELINE_SEGMENT_H
#define SWIN_PIPELINE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/pipeline/resample.h"
#include "runtime/pipeline/sliding.h"
#include "runtime/pipeline/windows.h"

struct swin_segment_options {
    bool reorient;                 /* Orientation to RAS (default true) */
    bool resample;                 /* Spacing to `spacing` (default true) */
    double spacing[3];             /* mm along the RAS axes (default 1.5 1.5 2.0) */
    struct swin_intensity window;  /* default [-175, 250] HU -> [0, 1], clipped */
    int roi[3];                    /* window (D, H, W) = the model's cube */
    double overlap;                /* default 0.5 */
    enum swin_blend blend;         /* default constant */
    double sigma_scale;            /* gaussian: default 0.125 */
    int in_channels, out_channels; /* the model's */
    swin_predict_fn predict;
    void *predict_user;
    swin_window_progress progress; /* may be NULL; progress_user is also the stage callback's */
    void *progress_user;
    void (*stage)(void *user, const char *what); /* may be NULL: "reading", "preprocessing", ... */
    const char *probabilities_path; /* NULL: none */
    const char *preview_path;       /* NULL: none */
};

struct swin_segment_report {
    int64_t in_dim[3], grid_dim[3];
    char in_axcodes[4];
    double in_spacing[3], grid_spacing[3];
    int64_t windows;
    int slab_axis;
    int label_bytes;              /* 1 (uint8) or 2 (uint16) */
    size_t planned_bytes;         /* the pipeline's largest set of simultaneous host buffers */
    double t_read, t_preprocess, t_windows, t_write; /* seconds */
};

struct swin_segment_options swin_segment_default_options(void);

/* Checks that cost nothing and should fail a run before any work: an output name
 * (.nii/.nii.gz) in an existing writable directory, a preview name, the channel count. */
swin_status swin_segment_check(const char *out_path, const struct swin_segment_options *o, swin_error *err);

/* The outputs (label map, probabilities, preview) appear together when the volume succeeds;
 * a failure leaves none of them (and no temporary file). */
swin_status swin_segment_file(const char *in_path, const char *out_path, const struct swin_segment_options *o,
                              struct swin_segment_report *rep, swin_error *err);

#endif
