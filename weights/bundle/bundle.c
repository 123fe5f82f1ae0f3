#include "weights/bundle/bundle.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/recipe.h"
#include "weights/bundle/bundle_config.h"
#include "weights/bundle/bundle_embedded.h"
#include "weights/bundle/bundle_network.h"
#include "weights/bundle/bundle_recipe.h"

static bool is_dir(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

bool swin_bundle_detect(const char *path) { return is_dir(path) || swin_bundle_embedded(path); }

static bool join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len;
}

static bool is_file(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* metadata.json's name, version and monai_version (each "" when absent); its channel_def goes to the recipe. */
struct bundle_meta {
    char name[96], version[32], monai_version[32];
};

static void copy_text(const json_node *obj, const char *key, char *out, size_t len)
{
    const json_node *n = swin_json_get(obj, key);
    snprintf(out, len, "%s", n && (n->kind == JSON_STRING || n->kind == JSON_NUMBER) ? n->text : ""); /* YAML: 1.5 */
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
}

/* network_data_format.outputs: the first output's channel_def ({"0": "background", "1":
 * "spleen", ...}) into r->channel_names, channel 0 first, up to the first channel it does not
 * name as a string; control characters become '?', names are cut at 63 bytes (at a UTF-8
 * character's start). */
static void read_channel_def(const json_node *meta, struct swin_recipe *r)
{
    const json_node *outs = swin_json_get(swin_json_get(meta, "network_data_format"), "outputs"), *def = NULL;
    for (const json_node *o = outs && outs->kind == JSON_OBJECT ? outs->child : NULL; o && !def; o = o->next)
        def = swin_json_get(o, "channel_def");
    size_t used = 0;
    for (int ch = 0; def; ch++) {
        char key[16];
        snprintf(key, sizeof key, "%d", ch);
        const json_node *n = swin_json_get(def, key);
        if (!n || n->kind != JSON_STRING) break;
        size_t len = strnlen(n->text, 63);
        while (len && ((unsigned char)n->text[len] & 0xc0) == 0x80) len--;   /* not inside a UTF-8 sequence */
        if (used + len + 2 > sizeof r->channel_names) break;
        if (used) r->channel_names[used++] = '\n';
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)n->text[i];
            r->channel_names[used++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
        r->channel_names[used] = 0;
    }
}

/* metadata.json's root (NULL: there is none) into m and the recipe's channel names. */
static void meta_from(const json_node *root, const char *name, struct bundle_meta *m, struct swin_recipe *r)
{
    memset(m, 0, sizeof *m);
    if (!root) {
        swin_recipe_warn(r, "%s: missing; the MONAI version (the patch-merging order) is not known", name);
        return;
    }
    copy_text(root, "name", m->name, sizeof m->name);
    copy_text(root, "version", m->version, sizeof m->version);
    copy_text(root, "monai_version", m->monai_version, sizeof m->monai_version);
    read_channel_def(root, r);
}

/* configs/STEM.json, else .yaml, else .yml (MONAI's ConfigParser reads each): its path and its
 * name in the bundle; false when there is none (then the .json's, for messages). */
static bool find_config(const char *dir, const char *stem, char *path, size_t len, char *name, size_t name_len)
{
    static const char *const ext[] = {"json", "yaml", "yml"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        snprintf(name, name_len, "configs/%s.%s", stem, ext[i]);
        if (join(path, len, dir, name) && is_file(path)) return true;
    }
    snprintf(name, name_len, "configs/%s.json", stem);
    join(path, len, dir, name);
    return false;
}

/* A folder's configs/metadata.json (absent: warned) and configs/inference.json (or their .yaml, .yml). */
static swin_status folder_configs(const char *dir, struct bundle_meta *m, struct swin_bundle_config *inf,
                                  struct swin_recipe *r, swin_error *err)
{
    char path[PATH_MAX], name[64];
    struct swin_bundle_config meta = {0};
    memset(inf, 0, sizeof *inf);
    if (!join(path, sizeof path, dir, "configs/inference.json"))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: the path is too long", dir);
    swin_status st = find_config(dir, "metadata", path, sizeof path, name, sizeof name)
                         ? swin_bundle_config_read(path, name, &meta, err)
                         : SWIN_OK;
    if (st) return st;
    meta_from(meta.root, name, m, r);
    swin_bundle_config_free(&meta);
    find_config(dir, "inference", path, sizeof path, name, sizeof name);
    return swin_bundle_config_read(path, name, inf, err);
}

/* A TorchScript module's extra/metadata.json and extra/inference.json (bundle_embedded.h). */
static swin_status embedded_configs(const char *path, struct bundle_meta *m, struct swin_bundle_config *inf,
                                    struct swin_recipe *r, swin_error *err)
{
    struct swin_bundle_config meta;
    bool has_meta;
    swin_status st = swin_bundle_embedded_configs(path, &meta, &has_meta, inf, err);
    if (st) return st;
    meta_from(has_meta ? meta.root : NULL, "extra/metadata.json", m, r);
    swin_bundle_config_free(&meta);
    return SWIN_OK;
}

/* models/model.pt, else models/model.safetensors, else models/model.ts (TorchScript: the
 * module's parameters and buffers, weights/checkpoint/torch_zip.c), else models/model.pt2 (a
 * torch.export archive, weights/checkpoint/pt2.c). */
static swin_status find_weights(const char *dir, char *path, size_t len, const char **name, swin_error *err)
{
    static const char *const names[] = {"models/model.pt", "models/model.safetensors", "models/model.ts",
                                        "models/model.pt2"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (join(path, len, dir, names[i]) && is_file(path)) {
            *name = names[i];
            return SWIN_OK;
        }
    return swin_error_set(err, SWIN_ERR_IO,
                          "%s: no models/model.pt, models/model.safetensors, models/model.ts or models/model.pt2: the "
                          "bundle's weights are not downloaded (`swinrun fetch`, or the URL in its large_files.yml)",
                          dir);
}

/* The folder's last path component, for a bundle without a metadata name. */
static void base_name(const char *dir, char *out, size_t len)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/') b--;
    snprintf(out, len, "%.*s", (int)(n - b), dir + b);
}

swin_status swin_bundle_load(const char *path, const struct swin_ckpt_load_opts *override, struct swin_model *out,
                             swin_error *err)
{
    memset(out, 0, sizeof *out);
    struct swin_recipe *r = calloc(1, sizeof *r);
    if (!r) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    const bool folder = is_dir(path);
    char weights[PATH_MAX], merge_why[160];
    const char *weights_name = NULL;
    struct bundle_meta meta;
    struct swin_bundle_config inf = {0};
    const json_node *net = NULL;
    struct swin_ckpt_load_opts opts;
    swin_status st = folder ? folder_configs(path, &meta, &inf, r, err) : embedded_configs(path, &meta, &inf, r, err);
    if (!st) st = swin_bundle_network_find(&inf, &net, err);
    if (!st) st = swin_bundle_network_opts(&inf, net, meta.monai_version, &opts, merge_why, sizeof merge_why, r, err);
    if (!st && folder) st = find_weights(path, weights, sizeof weights, &weights_name, err);
    if (!st && !folder) {
        snprintf(weights, sizeof weights, "%s", path);
        weights_name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    }
    if (!st && override) {
        if (override->merge != SWIN_MERGE_V15) {
            opts.merge = override->merge;
            opts.merge_guessed = false;
            snprintf(merge_why, sizeof merge_why, "as the caller set it");
        }
        if (override->no_normalize) opts.no_normalize = true;
        if (override->norm_groups && !opts.norm_groups) opts.norm_groups = override->norm_groups;
    }
    if (!st) st = swin_ckpt_load(weights, &opts, out, err);
    if (!st && (st = swin_bundle_network_check(&inf, net, out, weights_name, err))) swin_model_release(out);
    if (!st && (st = swin_bundle_recipe_read(&inf, out->cfg.in_channels, out->cfg.out_channels, r, err))) swin_model_release(out);
    swin_bundle_config_free(&inf);
    if (st) {
        free(r);
        memset(out, 0, sizeof *out);
        return st;
    }
    if (opts.merge_guessed && out->cfg.merge_kind != opts.merge)
        snprintf(merge_why, sizeof merge_why, "the merge order %.40s itself gives (metadata.json's monai_version "
                 "implied another)", weights_name);
    for (int k = 0; k < 3; k++)
        if (r->cube[k]) out->cfg.cube[k] = r->cube[k];
    if (!meta.name[0]) base_name(path, meta.name, sizeof meta.name);
    snprintf(r->source, sizeof r->source, "bundle %s%s%s, %s%s", meta.name, meta.version[0] ? " " : "", meta.version,
             inf.name, folder ? "" : " inside the TorchScript module (MONAI's ckpt_export)");
    snprintf(out->source.post, sizeof out->source.post, "bundle %.32s: normalize from network_def, %.120s", meta.name,
             merge_why);
    out->recipe = r;
    return SWIN_OK;
}
