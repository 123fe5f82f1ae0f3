/* A MONAI bundle folder as a model: configs/inference.json or .yaml (network_def and the recipe),
 * configs/metadata.json (name, version, the MONAI version that decides the patch-merging
 * order), and the weights in models/ (model.pt, else model.safetensors, model.ts, model.pt2)
 * through the checkpoint reader; or the same configs inside a TorchScript module
 * (extra/inference.json, extra/metadata.json) with the module as the weights. docs/bundles.md lists the keys followed, checked and ignored. */
#ifndef SWIN_WEIGHTS_BUNDLE_H
#define SWIN_WEIGHTS_BUNDLE_H

#include <stdbool.h>

#include "core/model.h"
#include "core/status.h"
#include "weights/checkpoint/ckpt_loader.h"

/* Whether path is a bundle: a folder, or a TorchScript module MONAI's ckpt_export wrote with the
 * bundle's configs inside (bundle_embedded.h). */
bool swin_bundle_detect(const char *path);

/* override: NULL, or values the caller sets instead of the bundle's (a merge order other than
 * SWIN_MERGE_V15 and no_normalize are taken as set). On success out->recipe holds the recipe. */
swin_status swin_bundle_load(const char *path, const struct swin_ckpt_load_opts *override, struct swin_model *out,
                             swin_error *err);

#endif
