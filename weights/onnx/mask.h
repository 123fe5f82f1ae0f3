/* The shifted-window attention mask of a stage (docs/forward.md §3.3), to check a mask an
 * exporter or optimiser constant-folded into the graph before it is dropped (the kernels
 * derive the mask from token coordinates). */
#ifndef SWIN_WEIGHTS_MASK_H
#define SWIN_WEIGHTS_MASK_H

#include "core/model.h"
#include "weights/onnx/const_view.h"
#include "weights/onnx/onnx_file.h"

/* Checks constant t against the mask of stage s (0-based) at the export cube: shape
 * (.., nW, .., n, n) up to leading/inserted 1s, values 0 within a region and -100 across.
 * With a dynamic cube only the values' set {0, -100} is checked. Sets *err on mismatch. */
swin_status swin_attn_mask_check(const struct swin_onnx_file *f, const struct swin_config *cfg, int s, const struct swin_onnx_tensor *t,
                       swin_error *err);

/* Checks constant v (nW, heads, n, n) as MONAI's flash-attention path builds it for a shifted
 * block and an exporter folds it: the relative-position bias plus the stage's mask, window by
 * window. Window 0's mask is 0 (every token in region 0), so its slice is the bias; every
 * window must hold that bias where its mask is 0, and the bias - 100 within 1 where it masks
 * (float16 or bfloat16 storage rounds the sum).
 * Needs the export cube. */
swin_status swin_attn_bias_mask_check(const struct swin_onnx_file *f, const struct swin_config *cfg, int s,
                                      const struct swin_const_view *v, swin_error *err);

#endif
