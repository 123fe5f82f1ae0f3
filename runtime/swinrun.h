/* swinrun: run a MONAI Swin UNETR ONNX export in a fixed, known memory footprint.
 *
 * Basic usage:
 *
 *     swin_error err;
 *     swin_model_t *model;
 *     if (swin_model_load("model.onnx", &model, &err)) { report(err.msg); return; }
 *     swin_context_params p = swin_context_default_params();   // auto backend, export cube
 *     swin_context_t *ctx;
 *     if (swin_context_create(model, &p, &ctx, &err)) { ... }  // plans, allocates once
 *     swin_plan_info plan;
 *     swin_context_plan(ctx, &plan);                              // exact bytes in use
 *     swin_context_run(ctx, input, logits, &err);                 // (Ci,D,H,W) -> (Co,D,H,W)
 *     swin_context_free(ctx);
 *     swin_model_free(model);
 *
 * Every function returns SWIN_OK (0) or a status, with a message in *err that says what
 * was wrong and what to do; nothing here prints, exits or aborts.
 * Thread safety: a model is immutable after loading and may be shared by contexts in
 * several threads; a context is used by one thread at a time.
 */
#ifndef SWINRUN_H
#define SWINRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan_info.h"
#include "core/segment_params.h"
#include "core/segment_report.h"
#include "core/status.h"
#include "core/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits the library enforces (and the CLI's validators quote). Three different things are
 * called "window" in this field; swinrun names them apart:
 *   - the attention window: the Swin blocks' token window, fixed by the model (model info .window);
 *   - the cube (sliding patch, MONAI's roi_size): the (D, H, W) region one forward pass runs on;
 *   - the intensity range (HU window): the [lo, hi] input range mapped to [0, 1] before the model. */
#define SWIN_CUBE_MULTIPLE 32     /* every cube side is a multiple of this (the 5 downsamplings) */
#define SWIN_CUBE_MIN 32
#define SWIN_CUBE_MAX 1024
#define SWIN_THREADS_MAX 4096     /* swin_context_params.threads: 0..this, 0 = every core */
#define SWIN_DEVICE_MAX 64        /* swin_context_params.device: 0..this */

typedef struct swin_model swin_model_t;
typedef struct swin_context swin_context_t;

/* "fp32", "fp16", "bf16" (the CLI's names); "?" for a value outside the enum. */
const char *swin_precision_name(swin_precision p);
/* Storage name of the weights in a precision: "float32", "float16", "bfloat16". */
const char *swin_precision_storage(swin_precision p);

/* What the loader read from the ONNX graph. */
typedef struct swin_model_info {
    int in_channels, out_channels, feature_size;
    int depths[4], heads[4], window[3];
    int cube[3];            /* export cube (D, H, W); 0 where the export is dynamic */
    bool normalize, use_v2, qkv_bias, patch_norm, instnorm_affine;
    bool batch_norm;        /* norm_name='batch': the CNN blocks' batch norms folded into their convs */
    const char *downsample; /* patch-merging order, e.g. "merging (MONAI >= 1.5 order)" */
    size_t param_count;     /* float parameters */
    size_t weight_bytes;    /* bytes of the one weight buffer */
    int opset;              /* ONNX opset of the file */
    const char *exporter;   /* what wrote the file, e.g. "torch.onnx dynamo exporter (pytorch 2.15.0)" */
    const char *post;       /* post-processing tools the file shows traces of; "" when none */
    const char *weight_storage;  /* how the file stores the weights, e.g. "float32" or
                                    "float16 (...), cast to float32 in the graph"; swinrun
                                    holds them as float32 (or as the context's
                                    precision says) */
    const char *recipe;     /* a MONAI bundle: where its recipe came from, e.g. "bundle
                               swin_unetr_btcv_segmentation 0.5.6, configs/inference.json"; "" otherwise */
    const char *recipe_warnings; /* keys of the recipe that would change the result and that
                                    swinrun does not follow, one per line; "" when none */
} swin_model_info;

typedef struct swin_context_params {
    swin_backend backend;
    int threads;            /* CPU threads; 0 = every core */
    int device;             /* CUDA device index (CUDA and AUTO backends) */
    int cube[3];            /* the cube (sliding patch) one forward pass runs on, (D, H, W),
                               multiples of SWIN_CUBE_MULTIPLE in SWIN_CUBE_MIN..SWIN_CUBE_MAX;
                               0 = the export cube */
    size_t mem_limit;       /* refuse plans whose total exceeds this many bytes; 0 = none */
    swin_precision precision; /* FP32 (default), FP16 (CUDA), BF16 (CPU): see swin_precision */
} swin_context_params;

/* onnx_path: an ONNX export, or the trained weights themselves: a PyTorch checkpoint
 * (torch.save's zip: a state dict, or a training checkpoint holding one) or a .safetensors
 * file, told apart by content; a checkpoint's configuration is read from its weights, with
 * MONAI's defaults for what they cannot tell (normalize=True, 'merging' in the >= 1.5 order).
 * Or a MONAI bundle folder (configs/inference.json, configs/metadata.json, models/model.pt):
 * the weights, what they cannot tell from network_def and the MONAI version, and the recipe
 * (swin_model_segment_params; the cube, roi_size, as the model's cube) (docs/bundles.md). */
SWIN_API swin_status swin_model_load(const char *onnx_path, swin_model_t **out, swin_error *err);

/* What a checkpoint's weights cannot tell; zero is MONAI's default. */
typedef enum swin_merge_order_choice {
    SWIN_MERGE_ORDER_DEFAULT = 0, /* checkpoint: 'merging' in MONAI >= 1.5's order; ONNX: the graph's */
    SWIN_MERGE_ORDER_V15 = 1,     /* 'merging', MONAI >= 1.5 */
    SWIN_MERGE_ORDER_PRE15 = 2,   /* 'merging', MONAI 0.9 - 1.4 (weights trained there, run as trained) */
    SWIN_MERGE_ORDER_V2 = 3,      /* 'mergingv2' */
} swin_merge_order_choice;

typedef struct swin_model_load_params {
    swin_merge_order_choice merge_order; /* also overrides an ONNX graph's order when not DEFAULT */
    bool no_normalize;            /* checkpoint: built with normalize=False (ONNX: read from the graph) */
} swin_model_load_params;

/* swin_model_load with params (NULL: all defaults). */
SWIN_API swin_status swin_model_load_ex(const char *path, const swin_model_load_params *params, swin_model_t **out,
                                        swin_error *err);
SWIN_API void swin_model_free(swin_model_t *model);
SWIN_API void swin_model_get_info(const swin_model_t *model, swin_model_info *out);

SWIN_API swin_context_params swin_context_default_params(void);

/* Plans a context without allocating it (what `swinrun plan` prints). Needs no GPU: with
 * SWIN_BACKEND_CUDA it gives the device bytes a CUDA context would use. */
SWIN_API swin_status swin_model_plan(const swin_model_t *model, const swin_context_params *params,
                            swin_plan_info *out, swin_error *err);

/* The context reads the model's weights on every run, so the model must outlive it;
 * except with precision BF16, where the context runs its own bfloat16 copy and the model
 * may be freed once the context exists. */
SWIN_API swin_status swin_context_create(const swin_model_t *model, const swin_context_params *params,
                                swin_context_t **out, swin_error *err);
SWIN_API void swin_context_plan(const swin_context_t *ctx, swin_plan_info *out);
/* The model ctx runs: the one it was created for, or with precision BF16 the context's own
 * bfloat16 copy (valid while ctx lives, the original may be freed; its info's weight_bytes
 * are the copy's). */
SWIN_API const swin_model_t *swin_context_model(const swin_context_t *ctx);

/* input: float32 (Ci, D, H, W); logits: float32 (Co, D, H, W), with (D, H, W) the cube. */
SWIN_API swin_status swin_context_run(swin_context_t *ctx, const float *input, float *logits, swin_error *err);
SWIN_API void swin_context_free(swin_context_t *ctx);

/* ---- Segmentation: a CT volume in, a label map on the same grid out ----------------------
 *
 *     swin_segment_params sp = swin_segment_default_params();   // RAS, 1.5x1.5x2 mm, [-175, 250] HU
 *     uint16_t *labels = malloc(nx * ny * nz * sizeof *labels);
 *     swin_volume v = {.voxels = hu, .type = SWIN_VOXELS_I16, .dim = {nx, ny, nz}, .affine = {...}};
 *     swin_segment(ctx, &v, &sp, labels, NULL, &report, &err);
 *
 * The pipeline is MONAI's usual inference recipe, reproduced to the voxel: Orientation to RAS,
 * Spacing to spacing_mm (trilinear), ScaleIntensityRange of the intensity range to [0, 1]
 * (clipped), sliding_window_inference with the context's cube as roi_size, and the result
 * brought back onto the input grid as Invertd does: by default argmax, then the labels by
 * nearest neighbour; with params->invert SWIN_INVERT_LINEAR the softmax probabilities by
 * trilinear interpolation, then argmax (streamed: a few planes of probabilities at a time).
 * A MONAI bundle's recipe: swin_model_segment_params. Host memory is planned
 * up front (report .pipeline_bytes): the sliding windows stream, holding one slab of logits. */

typedef enum swin_voxel_type { SWIN_VOXELS_F32 = 0, SWIN_VOXELS_I16 = 1 } swin_voxel_type;

/* A 3D scalar volume in memory, in NIfTI order: voxel (i, j, k) at i + nx * (j + ny * k). */
typedef struct swin_volume {
    const void *voxels;         /* nx * ny * nz values of `type`: intensities (HU for CT) */
    swin_voxel_type type;
    long long dim[3];           /* nx, ny, nz */
    double affine[4][4];        /* voxel (i, j, k, 1) -> world RAS+ mm (NIfTI's sform), row-major */
} swin_volume;

SWIN_API swin_segment_params swin_segment_default_params(void);
/* The segmentation parameters of a model loaded from a bundle: its inference.json's recipe, MONAI's
 * defaults where it says nothing; of any other model: swin_segment_default_params(). */
SWIN_API swin_segment_params swin_model_segment_params(const swin_model_t *model);

/* Segments a volume in memory with ctx's model (in_channels 1). labels: nx * ny * nz values
 * on the input grid (the argmax class). probabilities: NULL, or classes * nx * ny * nz floats,
 * class c's volume at c * nx * ny * nz (softmax, on the input grid). report may be NULL. */
SWIN_API swin_status swin_segment(swin_context_t *ctx, const swin_volume *volume, const swin_segment_params *params,
                                  uint16_t *labels, float *probabilities, swin_segment_report *report,
                                  swin_error *err);

/* NIfTI-1/2 (.nii, .nii.gz) in, the label map (uint8, uint16 beyond 256 classes) out on the
 * input's grid with its header geometry. Every output appears, complete, only when the run
 * succeeds (written under a temporary name and renamed); a failure or a cancel leaves none. */
SWIN_API swin_status swin_segment_file(swin_context_t *ctx, const char *input_path, const char *output_path,
                                       const swin_segment_params *params, swin_segment_report *report,
                                       swin_error *err);

/* ---- DICOM: a CT series in, DICOM SEG / RT Structure Set / NIfTI out --------------------
 *
 * inputs: folders (read recursively, or through the DICOMDIR they hold), DICOMDIR files and
 * DICOM files (CT Image Storage, Enhanced CT, Legacy Converted Enhanced CT; uncompressed,
 * deflate, RLE, JPEG baseline / extended / lossless, JPEG-LS, JPEG 2000, HTJ2K). Of several
 * series, params->dicom_series picks one, else the default (report .dicom_series_reason says
 * which and why); localizers and non-image objects are skipped (.dicom_skipped). The slices are ordered by ImagePositionPatient along the slice
 * normal; a series with mixed geometry, duplicate positions, uneven spacing,
 * gantry tilt or a blank SOPInstanceUID is refused (SWIN_ERR_FORMAT, one line that says
 * where); blank study, series or frame of reference UIDs get new ones (report .dicom_notice). The volume goes
 * through swin_segment; the labels on the CT's grid are written to output_path: .nii /
 * .nii.gz a NIfTI label map, .dcm a DICOM SEG (and params->rtstruct_path an RT Structure
 * Set). Without any label other than 0 no DICOM output is written (report .dicom_written
 * false; SWIN_OK). Outputs appear together, whole, or not at all. swin_segment_file calls
 * this for a folder or a DICOM file. Builds without DCMTK return SWIN_ERR_ARG. */
SWIN_API swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs,
                                        const char *output_path, const swin_segment_params *params,
                                        swin_segment_report *report, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
