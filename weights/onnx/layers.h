/* Layer recognition: one pass over the nodes that turns every node carrying
 * weights into a `struct swin_onnx_layer` (Conv, ConvTranspose, Linear = MatMul/Gemm + bias Add,
 * LayerNormalization, InstanceNormalization, an inference-mode BatchNormalization, bias-table Gather, a constant (.., n, n)
 * added to attention logits: a folded bias or mask, and an attention whose scale is checked:
 * opset 23's fused Attention, or a spelled-out attention's Softmax (attn_scale.h)), listed in the canonical dataflow
 * order of order.h, and rejects operators a Swin UNETR export never contains. */
#ifndef SWIN_WEIGHTS_LAYERS_H
#define SWIN_WEIGHTS_LAYERS_H

#include <stdbool.h>

#include "weights/onnx/const_view.h"
#include "weights/onnx/graph.h"

enum layer_kind { L_CONV, L_CONVT, L_LINEAR, L_LN, L_IN, L_TABLE, L_FOLDED, L_ATTN, L_BN };

struct swin_onnx_layer {
    enum layer_kind kind;
    int node;                          /* the Conv / MatMul / Gemm / LN / IN / Gather / Add node */
    const struct swin_onnx_tensor *w;       /* weight, LN/IN scale, bias table, folded constant */
    struct swin_const_view view;            /* folded constant: w as the Add sees it; an Attention's
                                               constant mask (view.src NULL when computed) */
    const struct swin_onnx_tensor *b;       /* bias, LN/IN bias; NULL when absent */
    bool w_out_in;                     /* Linear: w stored (out, in) (Gemm transB=1), else (in, out) */
    bool fused_lrelu;                  /* Conv: ONNX Runtime's FusedConv, LeakyReLU(0.01) applied to its output */
    int kernel, stride, pad;           /* Conv / ConvTranspose (cubic) */
    const char *x;                     /* LayerNorm, BatchNormalization: the normalised value (input 0; x of a
                                          decomposed LayerNorm) */
    float scale;                       /* attention: the logits' scale, 0 when the default 1/sqrt(head dim) */
    bool shared;                       /* decomposed LN without weights whose output the next stage's norm1
                                          also scales (ONNX Runtime merged proj_out into it, ln_decomposed.h) */
    /* InstanceNormalization that is a GroupNorm (torch exports GroupNorm(G, C) as Reshape to
     * (N, G, -1), InstanceNormalization over the G rows, Reshape back, Mul, Add; an optimiser
     * drops a Mul by ones and an Add of zeros): G, and the Mul's and Add's constants (C values
     * each; NULL where dropped); groups 0 otherwise. */
    int groups;
    const struct swin_onnx_tensor *group_w, *group_b;
    /* BatchNormalization (w gamma, b beta): its running statistics and epsilon */
    const struct swin_onnx_tensor *mean, *var;
    float eps;
};

struct swin_onnx_layer_list {
    struct swin_onnx_layer *v;
    int n;
};

swin_status swin_layers_find(const struct swin_onnx_index *g, struct swin_onnx_layer_list *out, swin_error *err);
void swin_layers_free(struct swin_onnx_layer_list *l);
const char *swin_layer_kind_name(enum layer_kind k);

#endif
