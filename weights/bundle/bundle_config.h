/* One configuration file of a MONAI bundle (configs/inference.json, metadata.json; YAML when
 * its name ends in .yaml or .yml, read as PyYAML reads it, core/yaml.h) and
 * MONAI's reference syntax over it: a string value "@id" stands for the value at id, an id
 * being keys and list indices joined by "::" (or the older "#"), e.g. "@network_def",
 * "@preprocessing::transforms::3". Nothing is evaluated: "$..." (a Python expression) and
 * "%..." (a macro copying from a file) are reported as such, never run or read. */
#ifndef SWIN_WEIGHTS_BUNDLE_CONFIG_H
#define SWIN_WEIGHTS_BUNDLE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json.h"
#include "core/status.h"

#define SWIN_BUNDLE_CONFIG_MAX_BYTES (4u << 20)

struct swin_bundle_config {
    json_node *root;
    char name[64]; /* e.g. "configs/inference.json", for messages */
};

/* SWIN_ERR_IO when it cannot be read, SWIN_ERR_FORMAT when it is not a JSON object or YAML
 * mapping (or is larger than SWIN_BUNDLE_CONFIG_MAX_BYTES). name decides the format. */
swin_status swin_bundle_config_read(const char *path, const char *name, struct swin_bundle_config *c, swin_error *err);
/* The same from len bytes of text (a configuration kept inside another file). */
swin_status swin_bundle_config_parse(const char *text, size_t len, const char *name, struct swin_bundle_config *c,
                                     swin_error *err);
void swin_bundle_config_free(struct swin_bundle_config *c);

/* The value n stands for: n itself, or the value its "@id" names (references followed, at most
 * 16 deep). NULL when n is NULL, an expression, a macro, or a reference to nothing; then why
 * (why_len bytes) says which. */
const json_node *swin_bundle_resolve(const struct swin_bundle_config *c, const json_node *n, char *why, size_t why_len);
/* obj's member key, resolved (NULL without a why when there is no such member). */
const json_node *swin_bundle_member(const struct swin_bundle_config *c, const json_node *obj, const char *key,
                                    char *why, size_t why_len);

/* A number's value (JSON numbers only); false otherwise. */
bool swin_bundle_number(const json_node *n, double *out);
/* true / false (JSON booleans only). */
bool swin_bundle_bool(const json_node *n, bool *out);
/* Three numbers: a list of 3, or one number for all three (MONAI's fall_back_tuple / ensure_tuple_rep). */
bool swin_bundle_triple(const struct swin_bundle_config *c, const json_node *n, double out[3]);

/* A transform or network's "_target_" without a "monai.transforms." / "monai.networks.nets."
 * style prefix (the text after the last '.'); NULL when n has none. */
const char *swin_bundle_target(const struct swin_bundle_config *c, const json_node *n);

#endif
