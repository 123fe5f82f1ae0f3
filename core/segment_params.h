/* What a segmentation is asked to do (swin_segment_params) and the types it names: the
 * pipeline (pipeline/) runs it, the formats (formats/) read and write by it. */
#ifndef SWIN_SEGMENT_PARAMS_H
#define SWIN_SEGMENT_PARAMS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" { /* the callbacks' function types */
#endif

/* Limits the library enforces (and the CLI's validators quote). */
#define SWIN_SPACING_MIN_MM 0.01  /* swin_segment_params.spacing_mm, each axis */
#define SWIN_SPACING_MAX_MM 100.0
#define SWIN_OVERLAP_MAX 0.99     /* swin_segment_params.overlap: 0..this */
#define SWIN_CLASSES_MAX 65535    /* output channels a segmentation supports (uint16 labels) */
#define SWIN_VOLUME_MAX_CHANNELS 16 /* input channels (e.g. MRI sequences) a volume may hold */

typedef enum swin_blend {
    SWIN_BLEND_CONSTANT = 0,  /* every cube's logits weigh the same */
    SWIN_BLEND_GAUSSIAN = 1,  /* weighted by a gaussian centred on the cube (sigma_scale * side) */
} swin_blend;

typedef enum swin_stage {
    SWIN_STAGE_READ = 0,        /* reading the input file (file form only) */
    SWIN_STAGE_PREPROCESS = 1,  /* reorientation, resampling, intensity range */
    SWIN_STAGE_INFER = 2,       /* the sliding cubes through the model */
    SWIN_STAGE_WRITE = 3,       /* labels (and probabilities) back on the input grid */
    SWIN_STAGE_DONE = 4,        /* reported once, with fraction 1, when the run succeeded */
} swin_stage;

/* fraction: of the whole segmentation, 0..1, never decreasing; 1 once, with SWIN_STAGE_DONE.
 * The cubes take the fractions 0.05..0.95 in proportion to the cubes run. */
typedef void (*swin_progress_fn)(void *user, swin_stage stage, double fraction);
/* Polled between cubes and stages: returning true stops the run with SWIN_ERR_CANCELLED,
 * leaving no output behind. */
typedef bool (*swin_cancel_fn)(void *user);

/* What a label means, for the DICOM outputs (SEG segments, RTSTRUCT ROIs): a name, the
 * SNOMED CT (or other scheme's) type code, an optional laterality modifier (SCT), a colour. */
typedef struct swin_dicom_class {
    int label;
    const char *name;                         /* SegmentLabel / ROIName */
    const char *type_code, *type_scheme, *type_meaning;
    const char *modifier_code, *modifier_meaning; /* NULL when none */
    unsigned char rgb[3];                     /* recommended display colour */
} swin_dicom_class;
/* SNOMED CT "Tissue": the type of a label no class table names (an RT Structure Set leaves
 * such an ROI's interpreted type empty: it need not be an organ). */
#define SWIN_DICOM_TISSUE_CODE "85756007"

/* SWIN_SEG_BINARY: Segmentation Storage, one 1-bit frame per segment per slice where the
 * segment has voxels (read by every SEG reader). SWIN_SEG_LABELMAP: Label Map Segmentation
 * Storage (DICOM 2024c, Supplement 243), one 8- or 16-bit frame per slice with voxels, each
 * pixel its segment's number (0 background): fewer frames and attributes for many organs,
 * read by newer readers only (highdicom >= 0.24). */
typedef enum swin_seg_type { SWIN_SEG_BINARY = 0, SWIN_SEG_LABELMAP = 1 } swin_seg_type;

/* How the result comes back onto the input grid (MONAI Invertd's nearest_interp). */
typedef enum swin_invert {
    SWIN_INVERT_NEAREST = 0, /* argmax on the preprocessed grid, the labels back by nearest neighbour */
    SWIN_INVERT_LINEAR = 1,  /* softmax probabilities back by trilinear interpolation, argmax on the
                                input grid (nearest_interp: false, as the BTCV bundle's recipe) */
} swin_invert;

/* Where the cubes' logits are blended, averaged and reduced to labels. The CPU backend
 * always blends on the host; the CUDA backend keeps the logits on the device in a ring of the
 * planes still open and brings back only each finished plane's labels (and probabilities when
 * they are asked for: --probabilities, SWIN_INVERT_LINEAR). The labels are the same either way. */
typedef enum swin_blend_on {
    SWIN_BLEND_ON_AUTO = 0,   /* on the device when its backend blends and the ring fits (the memory
                                 limit, the device's memory); else on the host, the report saying why */
    SWIN_BLEND_ON_HOST = 1,   /* every cube's logits come back to the host */
    SWIN_BLEND_ON_DEVICE = 2, /* on the device, or fail (SWIN_ERR_MEM_LIMIT, SWIN_ERR_NOMEM, or
                                 SWIN_ERR_ARG on a backend that blends on the host) */
} swin_blend_on;

/* What the averaged logits become. */
typedef enum swin_output_activation {
    SWIN_ACTIVATION_AUTO = 0,    /* softmax and argmax: one label per voxel (a model with one output
                                    channel: its sigmoid >= 0.5, labels 0 and 1) */
    SWIN_ACTIVATION_SIGMOID = 1, /* each output channel's sigmoid >= 0.5 on its own: overlapping masks
                                    (multi-label, as BraTS' tumour core, whole tumour, enhancing
                                    tumour); a voxel's label is a bit mask, bit c for channel c */
} swin_output_activation;
#define SWIN_MASK_CHANNELS_MAX 16 /* output channels SWIN_ACTIVATION_SIGMOID takes (16-bit labels) */

/* How the intensities become the model's input, after resampling. */
typedef enum swin_intensity_norm {
    SWIN_NORM_RANGE = 0,          /* intensity_range to [0, 1], clipped (intensity_clip): the CT recipe */
    SWIN_NORM_ZSCORE = 1,         /* each channel minus its mean, divided by its standard deviation
                                     (population; 1 when it is 0): MONAI NormalizeIntensity, channel_wise */
    SWIN_NORM_ZSCORE_NONZERO = 2, /* the same over each channel's nonzero voxels, zeros stay 0 (MONAI
                                     NormalizeIntensity nonzero=True, channel_wise=True: the BraTS recipe) */
} swin_intensity_norm;

typedef struct swin_segment_params {
    bool reorient;              /* to RAS before resampling (default true) */
    bool resample;              /* to spacing_mm (default true) */
    double spacing_mm[3];       /* along R, A, S: default 1.5 1.5 2.0 */
    bool intensity_clip;        /* map intensity_range to [0, 1], clipped (default true) */
    float intensity_range[2];   /* the HU window: default -175 250 */
    double overlap;             /* of neighbouring cubes, 0..SWIN_OVERLAP_MAX (default 0.5) */
    swin_blend blend;           /* default constant */
    double sigma_scale;         /* gaussian blending: sigma = sigma_scale * cube side (default 0.125) */
    swin_progress_fn progress;  /* may be NULL */
    swin_cancel_fn cancel;      /* may be NULL */
    void *user;                 /* passed to progress and cancel */
    /* swin_segment_file only: the class probabilities (float32, one volume per class, on
     * the input grid) and a PNG preview (three orthogonal slices with the labels); NULL = none. */
    const char *probabilities_path;
    const char *preview_path;
    /* DICOM input only (swin_segment_file on a series folder, swin_segment_dicom): an RT
     * Structure Set written beside the main output; NULL = none. */
    const char *rtstruct_path;
    /* The meaning of the labels for SEG / RTSTRUCT; NULL = the 13 BTCV organs (label 1..13).
     * Labels the table lacks become "Label N" (SNOMED CT Tissue). */
    const swin_dicom_class *dicom_classes;
    int dicom_nclasses;
    /* DICOM input: the series to read when the inputs hold several (a study folder, a
     * DICOMDIR): its SeriesInstanceUID, or its SeriesNumber when one series has it. NULL (the
     * default): the only CT series, else the axial CT series with the most slices; two such
     * series of as many slices are refused (SWIN_ERR_FORMAT), naming the series. */
    const char *dicom_series;
    /* The DICOM SEG's form (default SWIN_SEG_BINARY). */
    swin_seg_type seg_type;
    /* The labels' way back to the input grid (default SWIN_INVERT_NEAREST). */
    swin_invert invert;
    /* The DICOM outputs' series and instance UIDs: NULL (the default) new ones each run; else
     * derived from this text and the CT's SeriesInstanceUID (UUID-derived, 2.25.N, from their
     * SHA-256), so that the same series with the same seed (e.g. the model's digest) gives the
     * same UIDs again and a receiver replaces what it holds rather than adding a copy. */
    const char *dicom_uid_seed;
    /* Where the cubes are blended (default SWIN_BLEND_ON_AUTO). */
    swin_blend_on blend_on;
    /* How the intensities are normalised (default SWIN_NORM_RANGE); the z-scores ignore
     * intensity_clip and intensity_range. */
    swin_intensity_norm normalize;
    /* Labels from softmax and argmax, or one sigmoid mask per channel (default
     * SWIN_ACTIVATION_AUTO). Masks: the file form writes a 4D uint8 NIfTI, one 0/1 volume per
     * channel; probabilities are each channel's sigmoid; statistics are per channel (label
     * c + 1 for channel c); the cubes are blended on the host. */
    swin_output_activation activation;
    /* What each output channel means, one name per line, channel 0 first (a MONAI bundle's
     * channel_def: swin_model_segment_params sets it); NULL = not known. With dicom_classes
     * NULL, the DICOM outputs name label l by channel l's name (a one-channel sigmoid model's
     * label 1: the last name), with its SNOMED CT code where the name is one of the BTCV
     * organs', else as "Tissue". */
    const char *channel_names;
} swin_segment_params;

/* The channels whose sigmoid masks overlap (SWIN_ACTIVATION_SIGMOID on several channels), or 0
 * when a voxel gets one label. */
static inline int swin_mask_channels(swin_output_activation a, int out_channels)
{
    return a == SWIN_ACTIVATION_SIGMOID && out_channels > 1 ? out_channels : 0;
}

#ifdef __cplusplus
}
#endif

#endif
