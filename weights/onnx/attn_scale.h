/* The scale of a window attention's logits in a graph that spells the attention out (MatMul,
 * Add of the bias and mask, Softmax), so that a model scaling them other than by MONAI's
 * 1/sqrt(head dim) is refused rather than run with MONAI's. */
#ifndef SWIN_WEIGHTS_ATTN_SCALE_H
#define SWIN_WEIGHTS_ATTN_SCALE_H

#include "weights/onnx/layers.h"

/* Softmax node i: when its input traces back to q k^T (a MatMul or ONNX Runtime FusedMatMul of
 * two activations) through the bias and mask Adds and the view Reshapes, and each of q and k
 * back to the qkv projection through the head split (Reshape, Transpose, Gather, Slice, Split,
 * Squeeze, Unsqueeze, Cast), l becomes an L_ATTN whose scale is the product of every constant
 * scalar Mul and Div on those paths and the FusedMatMul's alpha (TorchScript's decomposed
 * scaled_dot_product_attention scales q and k by sqrt(scale) each), and 1 is returned. 0: not
 * a window attention's Softmax, or one whose scale is not a product of constants (left to the
 * other checks). -1: a constant that cannot be read (err set). visits: the nodes the traces of
 * a graph may still visit, decremented (both operands of an Add are followed, so a hostile
 * graph of Adds fed twice by one value would take 2^depth steps): once spent, a Softmax is left
 * unchecked. */
#define SWIN_ATTN_SCALE_VISITS (1 << 20)
int swin_attn_scale_match(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l, int *visits,
                          swin_error *err);

#endif
