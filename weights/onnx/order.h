/* The canonical node order the structural walk follows: post-order of a depth-first search
 * from the graph outputs, visiting each node's inputs in order (an If's branch inputs last).
 * It depends only on the dataflow, not on how the file happens to list its nodes, so graphs
 * re-sorted by an optimiser (e.g. ONNX Runtime's saved optimised model) walk the same way as
 * the exporters' own order. For a Swin UNETR it yields: the Swin encoder chain, then per
 * decoder stage the up-convolution, the skip's proj_out and encoder block, the decoder block
 * (see walk.c). */
#ifndef SWIN_WEIGHTS_ORDER_H
#define SWIN_WEIGHTS_ORDER_H

#include "weights/onnx/graph.h"

/* *order: n node indices (nodes the outputs do not depend on are left out); free() it. */
swin_status swin_onnx_dataflow_order(const struct swin_onnx_index *g, int **order, int *n, swin_error *err);

#endif
