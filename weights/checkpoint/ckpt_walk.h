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

struct swin_ckpt_walk_out {
    struct swin_walk_out plans;
    struct swin_onnx_tensor *views;           /* one per state-dict entry, the plans' sources */
    void **bufs;                              /* gathered strided tensors, freed with the views */
    int n_views;
};

/* Fills m->cfg (merge order and normalize left to the caller) and out. */
swin_status swin_ckpt_walk(const struct swin_ckpt_file *c, struct swin_model *m, struct swin_ckpt_walk_out *out, swin_error *err);
void swin_ckpt_walk_free(struct swin_ckpt_walk_out *out);

#endif
