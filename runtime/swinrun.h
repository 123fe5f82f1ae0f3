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

#include "runtime/status.h"

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

/* Storage and arithmetic of a context (swin_context_params.precision):
 *   FP32  float32 weights and activations, float32 arithmetic (both backends).
 *   FP16  CUDA only: weights and activations stored as float16, float32 arithmetic, half
 *         the device bytes; logits agree with float32 to about 1e-2 relative. A run whose
 *         float16 activations overflow (non-finite logits) fails with SWIN_ERR_BACKEND.
 *         The CPU backend refuses it; AUTO falling back to the CPU runs FP32.
 *   BF16  CPU only: the GEMM and convolution weights stored as bfloat16 (about half the
 *         weight bytes), their inputs rounded to bfloat16 (round to nearest even), products
 *         accumulated in float32; norms, softmax, GELU, biases, the residual stream and the
 *         logits stay float32, and activations are stored as float32. Runs on every CPU:
 *         with AVX2 + FMA the bfloat16 values are widened to float32 for FMA (the same
 *         numerics as a bfloat16 dot-product unit up to summation order). The CUDA backend
 *         refuses it; AUTO picks the CPU for it. */
typedef enum swin_precision {
    SWIN_PRECISION_FP32 = 0,
    SWIN_PRECISION_FP16 = 1,
    SWIN_PRECISION_BF16 = 2,
} swin_precision;

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
} swin_model_info;

/* Exact memory of one context, known before anything is allocated. */
typedef struct swin_plan_info {
    int cube[3];
    swin_backend backend;   /* the backend the plan is for: CPU or CUDA, never AUTO */
    swin_precision precision; /* what the context runs (AUTO falling back to the CPU: FP32) */
    const char *precision_note; /* how the CPU runs BF16 (which kernels, and why); "" otherwise */
    size_t weight_bytes;    /* weights (the backend's copy, in the precision's storage) */
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
    swin_precision precision; /* FP32 (default), FP16 (CUDA), BF16 (CPU): see swin_precision */
} swin_context_params;

swin_status swin_model_load(const char *onnx_path, swin_model_t **out, swin_error *err);
void swin_model_free(swin_model_t *model);
void swin_model_get_info(const swin_model_t *model, swin_model_info *out);

swin_context_params swin_context_default_params(void);

/* Plans a context without allocating it (what `swinrun plan` prints). Needs no GPU: with
 * SWIN_BACKEND_CUDA it gives the device bytes a CUDA context would use. */
swin_status swin_model_plan(const swin_model_t *model, const swin_context_params *params,
                            swin_plan_info *out, swin_error *err);

/* The context reads the model's weights on every run, so the model must outlive it;
 * except with precision BF16, where the context runs its own bfloat16 copy and the model
 * may be freed once the context exists. */
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
