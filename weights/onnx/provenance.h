/* What produced an ONNX file (exporter, post-processing tools, opset) and how its weights are
 * stored, read from the file's metadata and naming conventions and the bound weight tensors. */
#ifndef SWIN_WEIGHTS_PROVENANCE_H
#define SWIN_WEIGHTS_PROVENANCE_H

#include "core/model.h"
#include "weights/onnx/graph.h"
#include "weights/onnx/walk.h"

void swin_provenance_detect(const struct swin_onnx_index *g, const struct swin_walk_out *w, struct swin_source *out);

#endif
