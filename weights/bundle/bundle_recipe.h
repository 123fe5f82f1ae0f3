/* A bundle's inference recipe, read from configs/inference.json (MONAI's keys "preprocessing",
 * "inferer", "postprocessing") into struct swin_recipe. Transforms and keys that would change
 * the result and that swinrun does not follow are named in r->warnings; keys without effect
 * on the result (readers, batch sizes, devices, savers) are ignored by design (docs/bundles.md). */
#ifndef SWIN_WEIGHTS_BUNDLE_RECIPE_H
#define SWIN_WEIGHTS_BUNDLE_RECIPE_H

#include "core/recipe.h"
#include "core/status.h"
#include "weights/bundle/bundle_config.h"

/* in_channels, out_channels: the model's (one output channel: a sigmoid model, whose
 * post-processing is a sigmoid and a threshold of 0.5 rather than a softmax and an argmax;
 * several input channels are normalised one by one). SWIN_ERR_FORMAT only where a followed
 * key has a value of the wrong kind (e.g. a roi_size that is not 3 positive integers). */
swin_status swin_bundle_recipe_read(const struct swin_bundle_config *inf, int in_channels, int out_channels,
                                    struct swin_recipe *r, swin_error *err);

/* Appends one line to r->warnings (printf-style; silently cut at the buffer's end). */
void swin_recipe_warn(struct swin_recipe *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
