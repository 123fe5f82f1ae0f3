/* Loads a MONAI Swin UNETR exported to ONNX (TorchScript or dynamo exporter) into a
 * struct swin_model: detects the configuration from the graph and binds every weight by
 * the graph's structure, checking its shape and converting it to the canonical layout of
 * core/model.h. */
#ifndef SWIN_WEIGHTS_ONNX_LOADER_H
#define SWIN_WEIGHTS_ONNX_LOADER_H

#include "core/model.h"
#include "core/status.h"

/* Fills *out: cfg, every weight pointer, `flat` (one 256-byte aligned allocation that all
 * weights point into; free it with swin_model_release), `flat_bytes` and `param_count`
 * (float parameters bound; relative_position_index buffers are not parameters).
 * External data (model.onnx.data next to the file) is read as the file says.
 * On error *out is zeroed, nothing is leaked, and err holds one line naming the problem
 * (for graph problems: the node, its op and what was expected). Host memory during the
 * load stays near the weights' size: payloads are read in chunks straight into `flat`. */
swin_status swin_onnx_load(const char *path, struct swin_model *out, swin_error *err);

struct swin_onnx_load_opts {
    /* Use this patch-merging order instead of the one read from the graph (e.g. to run a
     * MONAI < 1.5 checkpoint exported with MONAI >= 1.5 code); NULL keeps the graph's. */
    const int (*merge_order)[3];
};

swin_status swin_onnx_load_opts(const char *path, const struct swin_onnx_load_opts *opts, struct swin_model *out,
                                swin_error *err);

#endif
