/* swin_segment_default_params and swin_model_segment_params (pipeline/segment_params.h). */
#include "pipeline/segment_params.h"

#include <string.h>

#include "core/model.h"
#include "core/recipe.h"

swin_segment_params swin_segment_default_params(void)
{
    return (swin_segment_params){
        .reorient = true, .resample = true, .spacing_mm = {1.5, 1.5, 2.0},
        .intensity_clip = true, .intensity_range = {-175.0f, 250.0f},
        .overlap = 0.5, .blend = SWIN_BLEND_CONSTANT, .sigma_scale = 0.125,
    };
}

swin_segment_params swin_model_segment_params(const swin_model_t *model)
{
    swin_segment_params p = swin_segment_default_params();
    const struct swin_recipe *r = model ? model->recipe : NULL;
    if (!r) return p;
    p.reorient = r->reorient;
    p.resample = r->resample;
    memcpy(p.spacing_mm, r->spacing_mm, sizeof p.spacing_mm);
    p.intensity_clip = r->intensity_clip;
    memcpy(p.intensity_range, r->intensity_range, sizeof p.intensity_range);
    p.normalize = !r->zscore ? SWIN_NORM_RANGE : r->zscore_nonzero ? SWIN_NORM_ZSCORE_NONZERO : SWIN_NORM_ZSCORE;
    p.overlap = r->overlap;
    p.blend = r->gaussian ? SWIN_BLEND_GAUSSIAN : SWIN_BLEND_CONSTANT;
    p.sigma_scale = r->sigma_scale;
    p.invert = r->invert_linear ? SWIN_INVERT_LINEAR : SWIN_INVERT_NEAREST;
    p.activation = r->masks ? SWIN_ACTIVATION_SIGMOID : SWIN_ACTIVATION_AUTO;
    p.channel_names = r->channel_names[0] ? r->channel_names : NULL;
    return p;
}
