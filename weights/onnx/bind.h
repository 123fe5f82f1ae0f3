/* The weight buffer: allocates struct swin_model's one flat, 256-byte aligned buffer and
 * converts every binding plan's payload into it (weights/onnx/layout.h), for the ONNX and the
 * checkpoint loaders alike. */
#ifndef SWIN_WEIGHTS_BIND_H
#define SWIN_WEIGHTS_BIND_H

#include "weights/onnx/walk.h"

/* Sets m->flat, flat_bytes, param_count and every plan's slot, then folds w's batch norms into their convs. */
swin_status swin_bind_plans(const struct swin_onnx_file *f, const struct swin_walk_out *w, struct swin_model *m, swin_error *err);

#endif
