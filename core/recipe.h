/* A MONAI bundle's inference recipe (configs/inference.json) as plain values: what the
 * segmentation parameters (core/segment_params.h swin_segment_params) and the context's cube take
 * from it. weights/bundle/bundle_recipe.c fills it; the public API maps it. */
#ifndef SWIN_CORE_RECIPE_H
#define SWIN_CORE_RECIPE_H

#include <stdbool.h>

#define SWIN_RECIPE_WARNINGS 2048
#define SWIN_RECIPE_CHANNEL_NAMES 4096

struct swin_recipe {
    bool reorient;            /* Orientationd(axcodes="RAS") */
    bool resample;            /* Spacingd */
    double spacing_mm[3];     /* its pixdim */
    bool intensity_clip;      /* ScaleIntensityRanged to [0, 1], clipped */
    float intensity_range[2]; /* its a_min, a_max */
    bool zscore, zscore_nonzero; /* NormalizeIntensityd (channel_wise), nonzero=True */
    int cube[3];              /* SlidingWindowInferer roi_size (D, H, W) */
    double overlap;
    bool gaussian; /* mode="gaussian" */
    double sigma_scale;
    bool invert_linear;                  /* Invertd(nearest_interp=false) before the argmax */
    bool masks;                          /* Activationsd(sigmoid) on several channels: a mask each */
    char source[256];                    /* e.g. "bundle swin_unetr_btcv_segmentation 0.3.7, configs/inference.json" */
    char warnings[SWIN_RECIPE_WARNINGS]; /* keys that would change the result and are not followed, one per line */
    /* configs/metadata.json's channel_def of the output: the name of channel 0, 1, ... one per
     * line; "" when the bundle gives none */
    char channel_names[SWIN_RECIPE_CHANNEL_NAMES];
};

#endif
