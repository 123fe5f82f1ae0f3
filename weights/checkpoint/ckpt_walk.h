/* The state dict of a MONAI SwinUNETR matched against struct swin_model: the configuration
 * from the keys and shapes (feature size and channels from the patch embedding and the
 * output conv, depths by counting blocks, heads from the bias tables, the window from
 * relative_position_index or the table size, mlp widths, qkv bias, patch norm, use_v2,
 * batch or affine instance norm), every shape checked against it, one binding plan per
 * weight field (weights/onnx/walk.h), and every key of the state dict accounted for. */
#ifndef SWIN_WEIGHTS_CKPT_WALK_H
#define SWIN_WEIGHTS_CKPT_WALK_H

#include "weights/checkpoint/ckpt_file.h"
#include "weights/onnx/walk.h"

#define SWIN_CKPT_MAX_BN 32

/* One batch norm to fold into the conv before it once the weights are bound:
 * w' = w * gamma / sqrt(var + eps) per output channel, b = beta - mean * gamma / sqrt(var + eps). */
struct swin_bn_fold {
    const float *gamma, *beta, *mean, *var;   /* bound like weights (scratch slots) */
    const float **conv_w, **conv_b;           /* the swin_model fields: (k^3, cin, cout), (cout) */
    uint64_t rows;                            /* k^3 * cin */
    int cout;
};

struct swin_ckpt_walk_out {
    struct swin_walk_out plans;
    struct swin_onnx_tensor *views;           /* one per state-dict entry, the plans' sources */
    void **bufs;                              /* gathered strided tensors, freed with the views */
    int n_views;
    struct swin_bn_fold bn[SWIN_CKPT_MAX_BN];
    int n_bn;
};

/* Fills m->cfg (merge order and normalize left to the caller) and out. */
swin_status swin_ckpt_walk(const struct swin_ckpt_file *c, struct swin_model *m, struct swin_ckpt_walk_out *out, swin_error *err);
void swin_ckpt_walk_free(struct swin_ckpt_walk_out *out);

#endif
