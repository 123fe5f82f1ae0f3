#include "weights/bundle/bundle_network.h"

#include "weights/bundle/bundle_recipe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

swin_status swin_bundle_network_find(const struct swin_bundle_config *inf, const json_node **net, swin_error *err)
{
    char why[160];
    const json_node *n = swin_bundle_member(inf, inf->root, "network_def", why, sizeof why);
    if (!n && !why[0]) n = swin_bundle_member(inf, inf->root, "network", why, sizeof why);
    if (!n || n->kind != JSON_OBJECT)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: no network_def object%s%s", inf->name,
                              why[0] ? ": it is " : "", why);
    const char *t = swin_bundle_target(inf, n);
    if (!t || strcmp(t, "SwinUNETR"))
        return swin_error_set(err, SWIN_ERR_MODEL,
                              "%s: network_def is %s, not a SwinUNETR: swinrun runs Swin UNETR only", inf->name,
                              t ? t : "without a _target_");
    *net = n;
    return SWIN_OK;
}

/* MONAI version "X.Y..." before 1.5 (PatchMerging's old sub-grid order). */
static bool before_1_5(const char *v)
{
    int major = 0, minor = 0;
    if (!v || sscanf(v, "%d.%d", &major, &minor) != 2) return false;
    return major < 1 || (major == 1 && minor < 5);
}

static const char *const followed_before[] = {"normalize", "downsample", NULL};
/* checked against the weights after the load */
static const char *const checked_after[] = {"in_channels", "out_channels", "feature_size", "depths",     "num_heads",
                                            "window_size", "mlp_ratio",    "qkv_bias",     "patch_norm", "use_v2",
                                            "norm_name",   "spatial_dims", "patch_size",   "use_hyena",  NULL};
/* no effect on an inference's result: training-time options, the deprecated export size */
static const char *const ignored[] = {"_target_",          "_requires_",          "_disabled_", "_desc_",
                                      "img_size",          "use_checkpoint",      "drop_rate",  "attn_drop_rate",
                                      "dropout_path_rate", "use_flash_attention", NULL};

static bool listed(const char *k, const char *const *l)
{
    for (; *l; l++)
        if (!strcmp(k, *l)) return true;
    return false;
}

/* norm_name in MONAI's get_norm_layer forms: "instance", "batch", ["instance", {"affine": true}],
 * ["group", {"num_groups": G}] (names in any case): *name ("?" when it is none of these), *affine
 * (the args' "affine", else the layer's default: false for instance norm, true for GroupNorm),
 * *groups (0 unless group). */
static void norm_name_of(const struct swin_bundle_config *inf, const json_node *net, const char **name, bool *affine,
                         int *groups)
{
    char w[160];
    const json_node *v = swin_bundle_member(inf, net, "norm_name", w, sizeof w);
    *name = "instance";
    *affine = false;
    *groups = 0;
    if (v && v->kind == JSON_ARRAY && swin_json_len(v) == 2) {
        const json_node *a = swin_json_at(v, 0), *args = swin_json_at(v, 1);
        *name = a->kind == JSON_STRING ? a->text : "?";
        *affine = !strcasecmp(*name, "group");   /* GroupNorm's default; InstanceNorm3d's is false */
        const json_node *af = args->kind == JSON_OBJECT ? swin_json_get(args, "affine") : NULL;
        if (af && !swin_bundle_bool(af, affine)) *name = "?";
        const json_node *ng = args->kind == JSON_OBJECT ? swin_json_get(args, "num_groups") : NULL;
        double g = 0.0;
        if (!swin_bundle_number(ng, &g)) g = 0.0;
        if (!strcasecmp(*name, "group")) {
            if (g >= 1.0 && g <= SWIN_MAX_NORM_GROUPS && g == (double)(int)g) *groups = (int)g;
            else *name = "?";
        }
    } else if (v && v->kind == JSON_STRING) {
        *name = v->text;
    } else if (v || w[0]) {
        *name = "?";
    }
}

swin_status swin_bundle_network_opts(const struct swin_bundle_config *inf, const json_node *net,
                                     const char *monai_version, struct swin_ckpt_load_opts *opts, char *why,
                                     size_t why_len, struct swin_recipe *r, swin_error *err)
{
    char w[160];
    memset(opts, 0, sizeof *opts);
    for (const json_node *k = net->child; k; k = k->next)
        if (!listed(k->key, followed_before) && !listed(k->key, checked_after) && !listed(k->key, ignored) &&
            strncmp(k->key, "hyena_", 6)) /* the Hyena options mean nothing without use_hyena (checked) */
            swin_recipe_warn(r, "network_def: key '%s' is not followed", k->key);
    const json_node *n = swin_bundle_member(inf, net, "normalize", w, sizeof w);
    bool normalize = true;
    if ((n && !swin_bundle_bool(n, &normalize)) || (!n && w[0]))
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: network_def normalize is not true or false", inf->name);
    opts->no_normalize = !normalize;
    const char *norm;
    bool affine;
    norm_name_of(inf, net, &norm, &affine, &opts->norm_groups);
    const json_node *d = swin_bundle_member(inf, net, "downsample", w, sizeof w);
    const char *ds = d && d->kind == JSON_STRING ? d->text : d || w[0] ? NULL : "merging";
    if (!ds || (strcmp(ds, "merging") && strcmp(ds, "mergingv2")))
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: network_def downsample is not \"merging\" or \"mergingv2\"",
                              inf->name);
    if (!strcmp(ds, "mergingv2")) {
        opts->merge = SWIN_MERGE_V2;
        snprintf(why, why_len, "network_def downsample \"mergingv2\"");
    } else if (before_1_5(monai_version)) {
        opts->merge = SWIN_MERGE_PRE15;
        opts->merge_guessed = true;
        snprintf(why, why_len, "'merging' of MONAI %s (metadata.json monai_version): the < 1.5 order", monai_version);
    } else {
        opts->merge = SWIN_MERGE_V15;
        opts->merge_guessed = true;
        snprintf(why, why_len, "'merging' of MONAI %s: the >= 1.5 order",
                 monai_version && monai_version[0] ? monai_version : "(version not stated in metadata.json)");
    }
    return SWIN_OK;
}

/* A key's value against the weights': an int, an int list of n, or a bool. */
static swin_status check_int(const struct swin_bundle_config *inf, const json_node *net, const char *key, int n,
                             const int *have, const char *weights_name, swin_error *err)
{
    char w[160];
    const json_node *v = swin_bundle_member(inf, net, key, w, sizeof w);
    if (!v) {
        if (w[0]) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: network_def %s is %s", inf->name, key, w);
        return SWIN_OK;
    }
    double x[3] = {0};
    bool ok = true;
    if (n == 1) ok = swin_bundle_number(v, &x[0]) && x[0] == have[0];
    else if (n == 3) ok = swin_bundle_triple(inf, v, x) && x[0] == have[0] && x[1] == have[1] && x[2] == have[2];
    else {
        ok = v->kind == JSON_ARRAY && swin_json_len(v) == (size_t)n;
        for (int i = 0; ok && i < n; i++)
            ok = swin_bundle_number(swin_bundle_resolve(inf, swin_json_at(v, (size_t)i), w, sizeof w), &x[0]) &&
                 x[0] == have[i];
    }
    if (ok) return SWIN_OK;
    char h[64] = "";
    for (int i = 0; i < n; i++) snprintf(h + strlen(h), sizeof h - strlen(h), "%s%d", i ? ", " : "", have[i]);
    return swin_error_set(err, SWIN_ERR_MODEL,
                          "%s: network_def %s does not match %s, whose weights hold %s %s: the bundle's configuration "
                          "and weights disagree",
                          inf->name, key, weights_name, key, h);
}

static swin_status check_bool(const struct swin_bundle_config *inf, const json_node *net, const char *key, bool dflt,
                              bool have, const char *weights_name, swin_error *err)
{
    char w[160];
    const json_node *v = swin_bundle_member(inf, net, key, w, sizeof w);
    bool b = dflt;
    if ((v && !swin_bundle_bool(v, &b)) || (!v && w[0]))
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: network_def %s is not true or false", inf->name, key);
    if (b == have) return SWIN_OK;
    return swin_error_set(err, SWIN_ERR_MODEL, "%s: network_def %s is %s%s but %s's weights are of a model with %s=%s",
                          inf->name, key, b ? "true" : "false", v ? "" : " (MONAI's default)", weights_name, key,
                          have ? "true" : "false");
}

static swin_status check_norm(const struct swin_bundle_config *inf, const json_node *net, const struct swin_model *m,
                              const char *weights_name, swin_error *err)
{
    const struct swin_config *cfg = &m->cfg;
    const bool norm_weights = m->encoder[0].norm1_w != NULL;
    const char *name;
    bool affine;
    int groups;
    norm_name_of(inf, net, &name, &affine, &groups);
    /* MONAI's Norm factory takes names in any case; instance_nvfuser is instance norm's math, a
     * SyncBatchNorm at inference a batch norm's */
    bool inst = !strcasecmp(name, "instance") || !strcasecmp(name, "instance_nvfuser");
    bool batch = !strcasecmp(name, "batch") || !strcasecmp(name, "syncbatch");
    if (!inst && !batch && !groups)
        return swin_error_set(err, SWIN_ERR_MODEL,
                              "%s: network_def norm_name is not \"instance\", \"batch\" or [\"group\", {\"num_groups\": G}]: "
                              "swinrun runs those",
                              inf->name);
    if (batch != cfg->batch_norm || groups != cfg->norm_groups || (inst && affine && !cfg->instnorm_affine) ||
        (groups && affine != norm_weights))
        return swin_error_set(err, SWIN_ERR_MODEL,
                              "%s: network_def norm_name does not match %s, whose weights are of %s", inf->name,
                              weights_name,
                              cfg->batch_norm        ? "batch norms"
                              : cfg->norm_groups     ? (norm_weights ? "affine group norms" : "group norms without affine")
                              : cfg->instnorm_affine ? "affine instance norms"
                                                     : "instance norms");
    return SWIN_OK;
}

swin_status swin_bundle_network_check(const struct swin_bundle_config *inf, const json_node *net,
                                      const struct swin_model *model, const char *weights_name, swin_error *err)
{
    const struct swin_config *cfg = &model->cfg;
    const int three = 3, two[3] = {2, 2, 2};
    int mlp_ratio_ok = 1;
    swin_status st;
    if ((st = check_int(inf, net, "spatial_dims", 1, &three, weights_name, err)) ||
        (st = check_int(inf, net, "patch_size", 3, two, weights_name, err)) ||
        (st = check_int(inf, net, "in_channels", 1, &cfg->in_channels, weights_name, err)) ||
        (st = check_int(inf, net, "out_channels", 1, &cfg->out_channels, weights_name, err)) ||
        (st = check_int(inf, net, "feature_size", 1, &cfg->feature_size, weights_name, err)) ||
        (st = check_int(inf, net, "depths", SWIN_STAGES, cfg->depths, weights_name, err)) ||
        (st = check_int(inf, net, "num_heads", SWIN_STAGES, cfg->heads, weights_name, err)) ||
        (st = check_int(inf, net, "window_size", 3, cfg->window, weights_name, err)) ||
        (st = check_bool(inf, net, "qkv_bias", true, cfg->qkv_bias, weights_name, err)) ||
        (st = check_bool(inf, net, "patch_norm", false, cfg->patch_norm, weights_name, err)) ||
        (st = check_bool(inf, net, "use_v2", false, cfg->use_v2, weights_name, err)) ||
        (st = check_bool(inf, net, "use_hyena", false, false, weights_name, err)) ||
        (st = check_norm(inf, net, model, weights_name, err)))
        return st;
    char w[160];
    double ratio = 4.0;
    const json_node *m = swin_bundle_member(inf, net, "mlp_ratio", w, sizeof w);
    if (m && !swin_bundle_number(m, &ratio)) mlp_ratio_ok = 0;
    for (int s = 0; mlp_ratio_ok && s < SWIN_STAGES; s++)
        mlp_ratio_ok = (int)(swin_stage_channels(cfg, s) * ratio) == cfg->mlp_hidden[s];
    if (!mlp_ratio_ok)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: network_def mlp_ratio does not match %s's MLP widths",
                              inf->name, weights_name);
    return SWIN_OK;
}
