/* The structural walk: matches the recognised layers, in dataflow order (order.h), against the Swin
 * UNETR layer sequence, detecting the configuration as it goes (feature size from the
 * patch embedding, depths by counting blocks, heads and window from the bias tables,
 * merge order from the Slice/Concat pattern, ...), checking every shape against it, and
 * producing one binding plan per struct swin_model weight field. */
#ifndef SWIN_WEIGHTS_WALK_H
#define SWIN_WEIGHTS_WALK_H

#include "core/model.h"
#include "weights/onnx/layers.h"
#include "weights/onnx/layout.h"

struct swin_bind_plan {
    const float **slot;               /* the struct swin_model field */
    const struct swin_onnx_tensor *t;      /* source; NULL for LAYOUT_ZERO and LAYOUT_ONE */
    enum layout_kind layout;
    uint64_t d0, d1, k;               /* source dims as the layout sees them (see layout.h);
                                         folded bias: d0 = heads, d1 = n tokens */
    bool unfold_bias;                 /* source is a folded (heads, n, n) bias: swin_layout_unfold_bias */
    int64_t bias_strides[3];          /* folded bias: its (head, query, key) strides in the source */
    uint64_t out_numel;               /* floats written to the slot */
    int node;                         /* the node it was bound at, for messages */
    bool in_affine;                   /* a CNN-block InstanceNorm gamma/beta: dropped unless cfg.instnorm_affine */
};

#define SWIN_MAX_BN_FOLDS 32   /* a Swin UNETR's CNN blocks hold 26 batch norms */

/* A batch norm folded into the conv before it once the weights are bound (swin_bind_plans):
 * w' = w * gamma / sqrt(var + eps) per output channel, b' = beta + (b - mean) * gamma / sqrt(var + eps).
 * gamma, beta, mean and var are bound like weights (plans whose slots are these fields). */
struct swin_bn_fold {
    const float *gamma, *beta, *mean, *var;
    const float **conv_w, **conv_b;           /* the swin_model fields: (k^3, cin, cout), (cout) */
    uint64_t rows;                            /* k^3 * cin */
    int cout;
    float eps;
    char what[200];                           /* the norm, for messages: "encoder1.layer.norm1" */
};

struct swin_walk_out {
    struct swin_bind_plan *plans;
    int n_plans;
    struct swin_bn_fold bn[SWIN_MAX_BN_FOLDS];
    int n_bn;
};

/* Fills m->cfg and out->plans (the caller frees out->plans). */
swin_status swin_walk_model(const struct swin_onnx_index *g, const struct swin_onnx_layer_list *layers, struct swin_model *m,
                       struct swin_walk_out *out, swin_error *err);

#endif
