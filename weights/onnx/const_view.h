/* A float constant seen through layout-only nodes: Reshape, Unsqueeze, Squeeze, Transpose,
 * Identity. torch's dynamo exporter constant-folds a small relative-position bias lookup
 * table[index] into a (n*n, heads) constant and leaves its view to (1, heads, n, n)
 * (Reshape (n, n, heads), Transpose (2, 0, 1), Unsqueeze 0) in the graph. */
#ifndef SWIN_WEIGHTS_CONST_VIEW_H
#define SWIN_WEIGHTS_CONST_VIEW_H

#include "weights/onnx/graph.h"

/* A strided view of a constant's flat storage: element (i0, .., i{ndim-1}) is the source's
 * flat element sum(i_k * strides[k]). */
struct swin_const_view {
    const struct swin_onnx_tensor *src;
    int ndim;
    int64_t dims[ONNX_MAX_RANK];
    int64_t strides[ONNX_MAX_RANK];
};

/* Follows value `name` back through at most 16 layout-only nodes to a float constant:
 * 1 with *v filled, 0 when it is not such a view (another node, a shape or axes that are
 * not constants, a Reshape that would need a copy of a transposed view). A plain constant
 * is its own view (contiguous strides). */
int swin_const_view_follow(const struct swin_onnx_index *g, const char *name, struct swin_const_view *v, swin_error *err);

/* True when the view reads its source in flat order (a Reshape of it would need no copy). */
bool swin_const_view_contiguous(const struct swin_const_view *v);

#endif
