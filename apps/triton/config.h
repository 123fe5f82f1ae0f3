/* The backend's reading of a model's config.pbtxt (as Triton's JSON): which way it serves,
 * its tensors, and swinrun's parameters. Pure functions, no Triton calls: the fuzz harness
 * and the backend share them. */
#ifndef SWIN_TRITON_CONFIG_H
#define SWIN_TRITON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/swinrun.h"

#define SWT_NAME_MAX 128
#define SWT_DIMS_MAX 8

typedef enum swt_mode {
    SWT_MODE_WINDOW = 0,   /* window logits: the ONNX export's input -> its logits */
    SWT_MODE_SEGMENT = 1,  /* a CT volume + affine -> a label map on the input grid */
} swt_mode;

/* precision parameter: "fp32" (default), "fp16" (CUDA half mode) or "bf16" (CPU bfloat16 mode). */
typedef enum swt_precision { SWT_PRECISION_FP32 = 0, SWT_PRECISION_FP16 = 1, SWT_PRECISION_BF16 = 2 } swt_precision;

/* Tensor names of segmentation mode (config.pbtxt must declare exactly these). */
#define SWT_SEG_VOLUME "VOLUME"
#define SWT_SEG_AFFINE "AFFINE"
#define SWT_SEG_LABELS "LABELS"

typedef struct swt_tensor {
    char name[SWT_NAME_MAX];
    char data_type[32];            /* as in the config, e.g. "TYPE_FP32" */
    long long dims[SWT_DIMS_MAX];  /* without the batch axis; -1 = any */
    int ndims;
} swt_tensor;

typedef struct swt_config {
    char name[SWT_NAME_MAX];
    swt_mode mode;
    int max_batch_size;            /* 0: no batch axis (the drop-in for onnxruntime's exports) */
    char model_file[SWT_NAME_MAX]; /* default_model_filename (a file, or a MONAI bundle folder), else
                                      "model.onnx", else the version folder when it is a bundle */
    bool model_file_given;
    swt_tensor inputs[2], outputs[1];
    int n_inputs, n_outputs;
    /* parameters { key: ... value { string_value: ... } } */
    bool backend_given;            /* "backend": cpu | cuda | auto; absent: from the instance kind */
    swin_backend backend;
    swt_precision precision;       /* "precision" */
    int threads;                   /* "threads": CPU threads per instance, 0 = every core (default 1) */
    size_t mem_limit;              /* "memory_limit": bytes, suffixes KiB MiB GiB; 0 = none */
    swin_model_load_params load;   /* "merge_order": v15 | pre15 | v2, "normalize": true | false, "norm_groups": G
                                      (what a checkpoint cannot say; swinrun serve's keys of the same names) */
    int cube[3];                   /* "cube": "D,H,W"; else window mode's fixed input dims (D, H, W);
                                      0 = the model's cube (the export's, or a bundle's roi_size) */
    /* segmentation mode */
    double spacing_mm[3];          /* "spacing_mm": "x,y,z" */
    float intensity_range[2];      /* "intensity_range": "lo,hi" */
    double overlap;                /* "overlap" */
    swin_blend blend;              /* "blend": constant | gaussian */
    swin_intensity_norm normalize; /* "intensity_norm": range | zscore | zscore-nonzero */
    bool multi_label;              /* "multi_label": true | false (a sigmoid mask per channel, bits) */
    long long max_voxels;          /* "max_voxels": refuse larger volumes, per channel (default 512*512*1024) */
    bool spacing_given, range_given, overlap_given, blend_given, norm_given, multi_label_given; /* else the
                                                                                                 model's recipe */
} swt_config;

/* Reads Triton's JSON form of config.pbtxt. false with the reason in why (why_len bytes)
 * when the JSON is malformed, a parameter is unknown or out of range, or the tensors do not
 * fit the mode. */
bool swt_config_parse(const char *json, size_t len, swt_config *out, char *why, size_t why_len);

/* The context parameters the config asks for on an instance of `kind_gpu` (KIND_GPU) on device. */
swin_context_params swt_context_params(const swt_config *c, bool kind_gpu, int device);
/* The segmentation parameters the config asks for over base (the model's recipe:
 * swin_model_segment_params, which a MONAI bundle sets). */
swin_segment_params swt_segment_params(const swt_config *c, const swin_segment_params *base);

#endif
