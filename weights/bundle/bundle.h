/* A MONAI bundle folder as a model: configs/inference.json (network_def and the recipe),
 * configs/metadata.json (name, version, the MONAI version that decides the patch-merging
 * order), and the weights in models/ (model.pt, else model.safetensors) through the
 * checkpoint reader. docs/bundles.md lists the keys followed, checked and ignored. */
#ifndef SWIN_WEIGHTS_BUNDLE_H
#define SWIN_WEIGHTS_BUNDLE_H

#include <stdbool.h>

#include "core/model.h"
#include "core/status.h"
#include "weights/checkpoint/ckpt_loader.h"

/* Whether path is a folder (so a bundle, not a model file). */
bool swin_bundle_detect(const char *path);

/* override: NULL, or values the caller sets instead of the bundle's (a merge order other than
 * SWIN_MERGE_V15 and no_normalize are taken as set). On success out->recipe holds the recipe. */
swin_status swin_bundle_load(const char *dir, const struct swin_ckpt_load_opts *override, struct swin_model *out,
                             swin_error *err);

#endif
