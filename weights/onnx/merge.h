/* Patch-merging order from the graph: the 8 inputs of the Concat that feeds a merge's
 * LayerNormalization are each traced back through their Slice chain, whose stride-2 start
 * offsets along (D, H, W) give the sub-grid each input takes. */
#ifndef SWIN_WEIGHTS_MERGE_H
#define SWIN_WEIGHTS_MERGE_H

#include "core/model.h"
#include "weights/onnx/graph.h"

/* ln_node: the merge's LayerNormalization (for messages), x: the value it normalises.
 * Fills *order. */
swin_status swin_merge_order_read(const struct swin_onnx_index *g, int ln_node, const char *x, swin_merge_order order, swin_error *err);
enum swin_merge_kind swin_merge_kind_of(swin_merge_order order);

#endif
