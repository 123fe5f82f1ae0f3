/* The shifted-window attention mask of a stage (docs/forward.md §3.3), to check a mask an
 * exporter or optimiser constant-folded into the graph before it is dropped (the kernels
 * derive the mask from token coordinates). */
#ifndef SWIN_WEIGHTS_MASK_H
#define SWIN_WEIGHTS_MASK_H

#include "core/model.h"
#include "weights/onnx/onnx_file.h"

/* Checks constant t against the mask of stage s (0-based) at the export cube: shape
 * (.., nW, .., n, n) up to leading/inserted 1s, values 0 within a region and -100 across.
 * With a dynamic cube only the values' set {0, -100} is checked. Sets *err on mismatch. */
swin_status swin_attn_mask_check(const struct swin_onnx_file *f, const struct swin_config *cfg, int s, const struct swin_onnx_tensor *t,
                       swin_error *err);

#endif
