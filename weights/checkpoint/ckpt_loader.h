/* Loads a MONAI SwinUNETR from its trained weights as PyTorch and safetensors write them (a
 * state dict saved by torch.save, a training checkpoint holding one, a whole module pickled by
 * torch.save or saved by torch.jit.save, a .safetensors file): the configuration read from the
 * weights' keys and shapes (and a whole module's classes), every tensor bound to the
 * struct swin_model field the ONNX loader binds it to, in the same layouts (weights/onnx/layout.c),
 * float16 and bfloat16 widened to float32, batch norms folded into their convolutions. */
#ifndef SWIN_WEIGHTS_CKPT_LOADER_H
#define SWIN_WEIGHTS_CKPT_LOADER_H

#include <stdbool.h>

#include "core/model.h"
#include "core/status.h"

/* What the weights cannot tell; zero is MONAI's default, or what a whole module's classes say. */
struct swin_ckpt_load_opts {
    enum swin_merge_kind merge;   /* patch-merging order: SWIN_MERGE_V15 ('merging', MONAI >= 1.5), _PRE15 or _V2 ('mergingv2') */
    bool no_normalize;            /* the model was built with normalize=False (no proj_out LayerNorms) */
    int norm_groups;              /* norm_name=('group', {'num_groups': G}): G; 0: instance or batch norm */
    bool merge_guessed;           /* merge is inferred (a bundle's monai_version), not given: an order the
                                     file itself gives (a TorchScript module's code, an exported graph) wins */
};

/* Whether the file's first bytes are a PyTorch checkpoint's (new or legacy format) or a
 * safetensors file's, i.e. whether swin_ckpt_load rather than swin_onnx_load reads it. */
bool swin_ckpt_detect(const char *path);

/* NULL opts: the defaults. On error *out is zeroed and err holds one line naming the key. */
swin_status swin_ckpt_load(const char *path, const struct swin_ckpt_load_opts *opts, struct swin_model *out, swin_error *err);

#endif
