/* A bundle's network_def (configs/inference.json): what the weights cannot tell (normalize, the
 * patch-merging order, from `downsample` and the MONAI version of metadata.json) before the
 * load, and every other architectural key checked against what the weights hold after it. */
#ifndef SWIN_WEIGHTS_BUNDLE_NETWORK_H
#define SWIN_WEIGHTS_BUNDLE_NETWORK_H

#include "core/model.h"
#include "core/recipe.h"
#include "core/status.h"
#include "weights/bundle/bundle_config.h"
#include "weights/checkpoint/ckpt_loader.h"

/* The network_def object (a SwinUNETR; anything else is refused). */
swin_status swin_bundle_network_find(const struct swin_bundle_config *inf, const json_node **net, swin_error *err);

/* opts from net and monai_version ("1.0.1"; NULL or "" = unknown, read as >= 1.5); how the
 * merge order was decided goes to why (why_len bytes). Unknown keys warn into r. */
swin_status swin_bundle_network_opts(const struct swin_bundle_config *inf, const json_node *net,
                                     const char *monai_version, struct swin_ckpt_load_opts *opts, char *why,
                                     size_t why_len, struct swin_recipe *r, swin_error *err);

/* SWIN_ERR_MODEL naming the first key whose value the loaded weights contradict. */
swin_status swin_bundle_network_check(const struct swin_bundle_config *inf, const json_node *net,
                                      const struct swin_model *model, const char *weights_name, swin_error *err);

#endif
