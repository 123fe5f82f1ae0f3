/* A bundle inside its TorchScript module: MONAI's `monai.bundle ckpt_export` (through
 * save_net_with_metadata) traces or scripts the network and keeps, beside it in the zip
 * torch.jit.save writes, ARCHIVE/extra/metadata.json (the bundle's metadata.json and the
 * versions) and ARCHIVE/extra/inference.json (its inference config, as JSON even when the bundle
 * had YAML). Such a model.ts carries its recipe: it is read as the bundle it came from, its
 * weights the module's own. */
#ifndef SWIN_WEIGHTS_BUNDLE_EMBEDDED_H
#define SWIN_WEIGHTS_BUNDLE_EMBEDDED_H

#include <stdbool.h>

#include "core/status.h"
#include "weights/bundle/bundle_config.h"

/* Whether the file at path is a zip holding ARCHIVE/extra/inference.json. */
bool swin_bundle_embedded(const char *path);

/* Its configs: inf always, meta when extra/metadata.json is there (*has_meta). The caller frees
 * both with swin_bundle_config_free. */
swin_status swin_bundle_embedded_configs(const char *path, struct swin_bundle_config *meta, bool *has_meta,
                                         struct swin_bundle_config *inf, swin_error *err);

#endif
