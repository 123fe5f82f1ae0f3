/* The parameters a segmentation starts from (pipeline/segment_params.c): MONAI's usual recipe,
 * or a bundle's. A program includes swinrun.h, which includes this. */
#ifndef SWIN_PIPELINE_SEGMENT_PARAMS_H
#define SWIN_PIPELINE_SEGMENT_PARAMS_H

#include "../core/segment_params.h"
#include "../core/status.h"
#include "../runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each field as swin_segment_params says its default is. */
SWIN_API swin_segment_params swin_segment_default_params(void);
/* The segmentation parameters of a model loaded from a bundle: its inference.json's recipe, MONAI's
 * defaults where it says nothing; of any other model: swin_segment_default_params(). */
SWIN_API swin_segment_params swin_model_segment_params(const swin_model_t *model);

#ifdef __cplusplus
}
#endif

#endif
