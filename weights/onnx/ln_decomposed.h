/* LayerNormalization as opset < 17 exporters write it (docs/forward.md §4):
 *   m = ReduceMean(x, axes=[-1]);  d = Sub(x, m);  v = ReduceMean(Pow(d, 2), axes=[-1]);
 *   y = Div(d, Sqrt(Add(v, eps)))  [;  y = Add(Mul(y, gamma), beta)  when affine]
 * matched at its Div node; also over axis 1 of (B, C, D, H, W) with y moved channels-last by a
 * Transpose before the Mul, as ONNX Runtime's transpose optimiser leaves it. */
#ifndef SWIN_WEIGHTS_LN_DECOMPOSED_H
#define SWIN_WEIGHTS_LN_DECOMPOSED_H

#include "weights/onnx/layers.h"

/* 1: node `div` ends a decomposed LayerNormalization; *l is an L_LN layer (w, b: gamma,
 * beta, NULL when not affine) and reduce_means[0..1] the two ReduceMean nodes it uses.
 * 0: it does not. -1: it does but is not MONAI's (epsilon), with *err set. */
int swin_ln_decomposed_match(const struct swin_onnx_index *g, int div, struct swin_onnx_layer *l, int reduce_means[2], swin_error *err);

/* ONNX Runtime's common-subexpression elimination merges a hidden state's proj_out (a LayerNorm
 * without weights, when normalize) with the next stage's first norm1 over the same input: one
 * decomposition whose Div output has several uses. swin_ln_decomposed_match reads that Div as
 * the weightless LayerNorm; this reads the Mul of the affine one (y * gamma + beta, y moved
 * channels-last first when the decomposition averaged over axis 1) as its own L_LN layer.
 * 1: *l is it; 0: node `mul` is no such Mul. */
int swin_ln_shared_affine_match(const struct swin_onnx_index *g, int mul, struct swin_onnx_layer *l, swin_error *err);

/* ONNX Runtime's extended level fuses the variance half of a decomposition into its
 * SimplifiedLayerNormalization (RMS norm: y = d / sqrt(mean(d^2) + eps) * gamma, over the last
 * axis) and leaves the centring d = x - mean(x) before it: together a LayerNorm. 1: node is
 * that (*l an L_LN layer, its bias the Add after it, *reduce_mean the centring's ReduceMean);
 * 0: it is not; -1 with *err set: its epsilon is not MONAI's. */
int swin_ln_simplified_match(const struct swin_onnx_index *g, int node, struct swin_onnx_layer *l, int *reduce_mean,
                             swin_error *err);

#endif
