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

/* One slice in the chain that takes a merge input from the channels-last (B, D, H, W, C)
 * tensor, as a traced graph writes it (axis, negative from the end; start; step): along D, H or W a stride-2 slice
 * from 0 or 1 sets off[axis - 1] (once per axis); along B or C only the whole axis passes.
 * false where the slice is not of that form. */
bool swin_merge_slice_take(int off[3], int64_t axis, int64_t start, int64_t step);

#endif
