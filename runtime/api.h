/* The runtime's public API: models, their plans and contexts, the forward pass (runtime/api.c).
 * A program includes swinrun.h, which includes this. */
#ifndef SWIN_RUNTIME_API_H
#define SWIN_RUNTIME_API_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/plan_info.h"
#include "../core/status.h"

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

/* What the loader read from the model: the ONNX graph, the checkpoint or the bundle. */
typedef struct swin_model_info {
    int in_channels, out_channels, feature_size;
    int depths[4], heads[4], window[3];
    int cube[3];            /* export cube (D, H, W); 0 where the export is dynamic */
    bool normalize, use_v2, qkv_bias, patch_norm, instnorm_affine;
    bool batch_norm;        /* norm_name='batch': the CNN blocks' batch norms folded into their convs */
    int norm_groups;        /* norm_name=('group', {'num_groups': G}): G; 0 for instance or batch norm */
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
    const char *channel_names;   /* a MONAI bundle's channel_def: the name of output channel 0,
                                    1, ... one per line; "" when not known */
    bool batch_norm_at_load;     /* batch_norm: folded by swinrun's loader (a checkpoint, or an
                                    ONNX file's BatchNormalization nodes), not by the exporter */
    float attn_scale[4];         /* per stage, the attention logits' scale the file stores where
                                    float16 or bfloat16 rounding moved it off 1/sqrt(head dim)
                                    (e.g. head_dim ** -0.25 rounded, applied to q and k each);
                                    swinrun runs it; 0 where the file holds 1/sqrt(head dim) */
} swin_model_info;

/* The highest instruction-set level the CPU backend's kernels may use
 * (swin_context_params.cpu_isa). AUTO: the best the CPU has, capped by the environment
 * variable SWINRUN_CPU_ISA when it is set (baseline, avx2, avx512 or avx512bf16). A level the
 * CPU lacks runs the best one below it; swin_plan_info.cpu_isa says which. */
typedef enum swin_cpu_isa {
    SWIN_CPU_ISA_AUTO = 0,
    SWIN_CPU_ISA_BASELINE = 1,   /* x86-64, OpenBLAS GEMMs */
    SWIN_CPU_ISA_AVX2 = 2,       /* AVX2 + FMA */
    SWIN_CPU_ISA_AVX512 = 3,     /* AVX-512 F, BW, DQ, VL */
    SWIN_CPU_ISA_AVX512_BF16 = 4 /* AVX-512 with AVX512_BF16 (vdpbf16ps for precision BF16) */
} swin_cpu_isa;

typedef struct swin_context_params {
    swin_backend backend;
    int threads;            /* CPU threads; 0 = every core */
    int device;             /* CUDA device index (CUDA and AUTO backends) */
    int cube[3];            /* the cube (sliding patch) one forward pass runs on, (D, H, W),
                               multiples of SWIN_CUBE_MULTIPLE in SWIN_CUBE_MIN..SWIN_CUBE_MAX;
                               0 = the export cube */
    size_t mem_limit;       /* refuse plans whose total exceeds this many bytes; 0 = none */
    swin_precision precision; /* FP32 (default), FP16 (CUDA), BF16 (CPU): see swin_precision */
    swin_cpu_isa cpu_isa;   /* the CPU backend's highest kernel level; AUTO (default): see swin_cpu_isa */
} swin_context_params;

/* model_path: an ONNX export, or the trained weights themselves: a PyTorch checkpoint
 * (torch.save's zip: a state dict, or a training checkpoint holding one) or a .safetensors
 * file, told apart by content; a checkpoint's configuration is read from its weights, with
 * MONAI's defaults for what they cannot tell (normalize=True, 'merging' in the >= 1.5 order).
 * Or a MONAI bundle folder (configs/inference.json or .yaml, configs/metadata.json, models/model.pt):
 * the weights, what they cannot tell from network_def and the MONAI version, and the recipe
 * (swin_model_segment_params; the cube, roi_size, as the model's cube) (docs/bundles.md). */
SWIN_API swin_status swin_model_load(const char *model_path, swin_model_t **out, swin_error *err);

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
    int norm_groups;              /* checkpoint: built with norm_name=('group', {'num_groups': G}): G (its state
                                     dict keys are affine instance norm's); 0: instance or batch norm as the keys
                                     say. ONNX files and bundles say it themselves (a value given must agree). */
} swin_model_load_params;

/* swin_model_load with params (NULL: all defaults). */
SWIN_API swin_status swin_model_load_ex(const char *model_path, const swin_model_load_params *params,
                                        swin_model_t **out, swin_error *err);
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

#ifdef __cplusplus
}
#endif

#endif
