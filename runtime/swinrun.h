/* swinrun: run a MONAI Swin UNETR ONNX export in a fixed, known memory footprint.
 *
 * Basic usage:
 *
 *     swin_error err;
 *     swin_model_t *model;
 *     if (swin_model_load("model.onnx", &model, &err)) { report(err.msg); return; }
 *     swin_context_params p = swin_context_default_params();   // CPU, export cube
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

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWINRUN_VERSION "0.1.0"

typedef struct swin_model swin_model_t;
typedef struct swin_context swin_context_t;

typedef enum swin_backend {
    SWIN_BACKEND_CPU = 0,
    SWIN_BACKEND_CUDA = 1,
    SWIN_BACKEND_AUTO = 2,  /* CUDA when a GPU is present, else CPU */
} swin_backend;

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
                                    holds them as float32 (CUDA half mode: float16) */
} swin_model_info;

/* Exact memory of one context, known before anything is allocated. */
typedef struct swin_plan_info {
    int cube[3];
    swin_backend backend;   /* the backend the plan is for: CPU or CUDA, never AUTO */
    bool half;              /* weights and activations stored as float16 (CUDA half mode) */
    size_t weight_bytes;    /* weights (the backend's copy) */
    size_t arena_bytes;     /* every activation and op workspace, one allocation */
    size_t lower_bound;     /* largest sum of simultaneously live bytes in the plan */
    size_t context_bytes;   /* the backend's fixed scratch (CUDA: staging, reductions; CPU: 0) */
    size_t total_bytes;     /* weight_bytes + arena_bytes + context_bytes: all device (or host) bytes */
    int tensors;            /* activations and workspaces planned */
} swin_plan_info;

typedef struct swin_context_params {
    swin_backend backend;
    int threads;            /* CPU threads; 0 = every core */
    int device;             /* CUDA device index (CUDA and AUTO backends) */
    int cube[3];            /* window (D, H, W), multiples of 32; 0 = the export cube */
    size_t mem_limit;       /* refuse plans whose total exceeds this many bytes; 0 = none */
    bool half;              /* CUDA only: store weights and activations as float16 (float32
                               arithmetic), half the device bytes; logits agree with float32
                               to about 1e-2 relative. SWIN_BACKEND_CPU refuses it; AUTO
                               falling back to the CPU runs float32 (plan info .half false).
                               A run whose float16 activations overflow (non-finite logits)
                               fails with SWIN_ERR_BACKEND instead of returning them. */
} swin_context_params;

swin_status swin_model_load(const char *onnx_path, swin_model_t **out, swin_error *err);
void swin_model_free(swin_model_t *model);
void swin_model_get_info(const swin_model_t *model, swin_model_info *out);

swin_context_params swin_context_default_params(void);

/* Plans a context without allocating it (what `swinrun plan` prints). Needs no GPU: with
 * SWIN_BACKEND_CUDA it gives the device bytes a CUDA context would use. */
swin_status swin_model_plan(const swin_model_t *model, const swin_context_params *params,
                            swin_plan_info *out, swin_error *err);

swin_status swin_context_create(const swin_model_t *model, const swin_context_params *params,
                                swin_context_t **out, swin_error *err);
void swin_context_plan(const swin_context_t *ctx, swin_plan_info *out);

/* input: float32 (Ci, D, H, W); logits: float32 (Co, D, H, W), with (D, H, W) the cube. */
swin_status swin_context_run(swin_context_t *ctx, const float *input, float *logits, swin_error *err);
void swin_context_free(swin_context_t *ctx);

#ifdef __cplusplus
}
#endif

#endif
