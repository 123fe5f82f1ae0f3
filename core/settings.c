#include "core/settings.h"

#include <stdatomic.h>

static _Atomic int vocabulary = SWIN_VOCAB_C;

/* [setting][vocabulary]; a program without the setting gets its name in the C API's words, bare */
static const char *const names[SWIN_SETTING_COUNT][SWIN_VOCAB_COUNT] = {
    [SWIN_SETTING_CUBE] = {"swin_context_params.cube", "--cube", "cube", "\"cube\"", "parameter cube"},
    [SWIN_SETTING_PRECISION] = {"swin_context_params.precision", "--precision", "precision", "\"precision\"",
                                "parameter precision"},
    [SWIN_SETTING_BACKEND] = {"swin_context_params.backend", "--backend", "backend", "\"backend\"", "parameter backend"},
    [SWIN_SETTING_MEM_LIMIT] = {"swin_context_params.mem_limit", "--mem-limit", "mem_limit", "\"mem_limit\"",
                                "parameter memory_limit"},
    [SWIN_SETTING_BLEND_ON] = {"swin_segment_params.blend_on", "--blend-on", "blend_on", "blend_on", "blend_on"},
    [SWIN_SETTING_NORM_GROUPS] = {"swin_model_load_params.norm_groups", "--norm-groups", "norm_groups",
                                  "\"norm_groups\"", "parameter norm_groups"},
    [SWIN_SETTING_SPACING] = {"swin_segment_params.spacing_mm", "--spacing", "spacing", "the bundle recipe's spacing",
                              "parameter spacing_mm"},
    [SWIN_SETTING_SERIES] = {"swin_segment_params.dicom_series", "--series", "dicom_series", "dicom_series",
                             "dicom_series"},
    [SWIN_SETTING_SEGMENT_PLAN] = {"swin_segment_plan", "swinrun plan --volume", "swinrun plan --volume",
                                   "swinrun plan --volume", "swinrun plan --volume"},
};

void swin_set_vocabulary(swin_vocabulary v)
{
    if ((int)v >= 0 && v < SWIN_VOCAB_COUNT) atomic_store(&vocabulary, (int)v);
}

const char *swin_setting(enum swin_setting s)
{
    return (int)s >= 0 && s < SWIN_SETTING_COUNT ? names[s][atomic_load(&vocabulary)] : "?";
}
