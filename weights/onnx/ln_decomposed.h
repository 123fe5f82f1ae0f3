/* LayerNormalization as opset < 17 exporters write it (docs/forward.md §4):
 *   m = ReduceMean(x, axes=[-1]);  d = Sub(x, m);  v = ReduceMean(Pow(d, 2), axes=[-1]);
 *   y = Div(d, Sqrt(Add(v, eps)))  [;  y = Add(Mul(y, gamma), beta)  when affine]
 * matched at its Div node. */
#ifndef SWIN_WEIGHTS_LN_DECOMPOSED_H
#define SWIN_WEIGHTS_LN_DECOMPOSED_H

#include "weights/onnx/layers.h"

/* 1: node `div` ends a decomposed LayerNormalization; *l is an L_LN layer (w, b: gamma,
 * beta, NULL when not affine) and reduce_means[0..1] the two ReduceMean nodes it uses.
 * 0: it does not. -1: it does but is not MONAI's (epsilon), with *err set. */
int swin_ln_decomposed_match(const struct swin_onnx_index *g, int div, struct swin_onnx_layer *l, int reduce_means[2], swin_error *err);

#endif
