#include "weights/checkpoint/ckpt_loader.h"
#include "core/settings.h"

#include <stdio.h>
#include <string.h>

#include "weights/onnx/bind.h"
#include "weights/onnx/merge.h"
#include "weights/checkpoint/ckpt_walk.h"

static void describe(const struct swin_ckpt_file *c, struct swin_model *m, const char *normalize_from, const char *merge_from,
                     const char *groups_from)
{
    struct swin_source *src = &m->source;
    snprintf(src->exporter, sizeof src->exporter, "%s, state dict at %s", c->format, c->where);
    if (m->cfg.norm_groups)
        snprintf(src->post, sizeof src->post, "the weights; normalize: %s, downsample: %s, CNN norms: group norm of %d "
                 "groups (%s)", normalize_from, merge_from, m->cfg.norm_groups, groups_from);
    else if (c->says_group_norm == 0)
        snprintf(src->post, sizeof src->post, "the weights; normalize: %s, downsample: %s, CNN norms: not group norm (%s)",
                 normalize_from, merge_from, c->says_source);
    else
        snprintf(src->post, sizeof src->post, "the weights; normalize: %s, downsample: %s (not in the tensors); affine CNN "
                 "norms taken as instance norm (group norm has the same keys)", normalize_from, merge_from);
}

/* Which dtypes the bound tensors were stored in (swin_source.weight_storage). */
static void describe_storage(const struct swin_ckpt_walk_out *w, struct swin_model *m)
{
    struct swin_source *src = &m->source;
    bool seen[3] = {false};
    for (int i = 0; i < w->plans.n_plans; i++) {
        const struct swin_onnx_tensor *t = w->plans.plans[i].t;
        if (t) seen[t->dtype == ONNX_FLOAT ? 0 : t->dtype == ONNX_FLOAT16 ? 1 : 2] = true;
    }
    static const char *const names[] = {"float32", "float16", "bfloat16"};
    size_t o = 0;
    src->weight_storage[0] = 0;
    for (int k = 0; k < 3; k++)
        if (seen[k]) o += (size_t)snprintf(src->weight_storage + o, sizeof src->weight_storage - o, "%s%s", o ? " and " : "", names[k]);
    if (seen[1] || seen[2]) snprintf(src->weight_storage + o, sizeof src->weight_storage - o, ", widened to float32 at load");
}

/* The two settings the tensors cannot tell: the options where given, else what a pickled or
 * TorchScript module's classes and attributes say (struct swin_ckpt_file), else MONAI's defaults;
 * an option the module contradicts is refused. */
static swin_status settle_unweighted(const struct swin_ckpt_file *c, const struct swin_ckpt_load_opts *opts,
                                     struct swin_model *out, swin_error *err)
{
    enum swin_merge_kind mk = opts && !(opts->merge_guessed && c->says_order) ? opts->merge : SWIN_MERGE_V15;
    bool no_normalize = opts && opts->no_normalize;
    if (mk == SWIN_MERGE_V2 && c->says_merging_v2 == 0)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: the module's patch merging is PatchMerging ('merging'), but the "
                              "merge order given is 'mergingv2'", c->path);
    if (mk == SWIN_MERGE_PRE15 && c->says_merging_v2 == 1)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: the module's patch merging is PatchMergingV2 ('mergingv2'), but the "
                              "merge order given is MONAI < 1.5 'merging'", c->path);
    if (no_normalize && c->says_normalize == 1)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: %s says normalize=True, but normalize=False was given", c->path,
                              c->says_source);
    if (c->says_order && mk != SWIN_MERGE_V15 &&
        memcmp(c->order, mk == SWIN_MERGE_PRE15 ? swin_merge_order_pre15 : swin_merge_order_v2, sizeof c->order))
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: %s merges its sub-grids in another order than the merge order "
                              "given", c->path, c->says_source);
    const char *merge_from = c->says_order                ? c->says_source
                             : mk != SWIN_MERGE_V15        ? "option"
                             : c->says_merging_v2 == 1     ? "the module's classes"
                                                           : "default";
    const char *normalize_from = no_normalize ? "option" : c->says_normalize >= 0 ? c->says_source : "default";
    if (c->says_merging_v2 == 1) mk = SWIN_MERGE_V2;
    if (c->says_normalize == 0) no_normalize = true;
    const int (*order)[3] = mk == SWIN_MERGE_PRE15 ? swin_merge_order_pre15 : mk == SWIN_MERGE_V2 ? swin_merge_order_v2
                                                                                               : swin_merge_order_v15;
    memcpy(out->cfg.merge_order, c->says_order ? (const int(*)[3])c->order : order, sizeof(swin_merge_order));
    out->cfg.merge_kind = c->says_order ? swin_merge_kind_of(out->cfg.merge_order)
                          : mk == SWIN_MERGE_PRE15 || mk == SWIN_MERGE_V2 ? mk : SWIN_MERGE_V15;
    out->cfg.normalize = !no_normalize;
    describe(c, out, normalize_from, merge_from, opts && opts->norm_groups ? "option" : c->says_source);
    return SWIN_OK;
}

/* The CNN norms' groups (struct swin_config norm_groups): the option where given, else what a
 * pickled module's GroupNorms say; a module of GroupNorms whose num_groups it does not keep
 * (TorchScript) needs the option, and one the module contradicts is refused. */
static swin_status settle_groups(const struct swin_ckpt_file *c, const struct swin_ckpt_load_opts *opts, int *groups,
                                 swin_error *err)
{
    const int given = opts ? opts->norm_groups : 0;
    *groups = given;
    if (c->says_group_norm == 0 && given)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: the module's CNN norms are not GroupNorm, but %d norm groups were "
                              "given", c->path, given);
    if (c->says_group_norm != 1) return SWIN_OK;
    if (c->says_norm_groups > 0 && given && given != c->says_norm_groups)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: the module's GroupNorms have num_groups %d, but %d norm groups were "
                              "given", c->path, c->says_norm_groups, given);
    if (!given && c->says_norm_groups > 0) *groups = c->says_norm_groups;
    if (!*groups)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: the module's CNN norms are GroupNorm (norm_name='group') and %s: "
                              "give the num_groups it was built with (%s G)", c->path,
                              c->says_norm_groups < 0 ? "their num_groups differ" : "the file does not keep num_groups",
                              swin_setting(SWIN_SETTING_NORM_GROUPS));
    return SWIN_OK;
}

bool swin_ckpt_detect(const char *path) { return swin_weights_kind_of(path) != SWIN_WEIGHTS_ONNX; }

swin_status swin_ckpt_load(const char *path, const struct swin_ckpt_load_opts *opts, struct swin_model *out, swin_error *err)
{
    swin_error e = {SWIN_OK, ""};
    if (!out) return swin_error_set(err, SWIN_ERR_ARG, "swin_ckpt_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return swin_error_set(err, SWIN_ERR_ARG, "swin_ckpt_load: path is NULL");
    struct swin_ckpt_file c;
    struct swin_ckpt_walk_out w;
    swin_status st = swin_ckpt_open(path, &c, &e);
    if (!st) {
        st = settle_groups(&c, opts, &out->cfg.norm_groups, &e);
        if (!st) st = swin_ckpt_walk(&c, out, &w, &e);
        if (!st) {
            st = settle_unweighted(&c, opts, out, &e);
            memcpy(out->cfg.cube, c.says_cube, sizeof out->cfg.cube);
            if (!st) describe_storage(&w, out);
            struct swin_onnx_file f;
            struct swin_onnx_side_file side;
            swin_ckpt_as_onnx_file(&c, &f, &side);
            if (!st) st = swin_bind_plans(&f, &w.plans, out, &e);
            swin_ckpt_walk_free(&w);
        }
        swin_ckpt_close(&c);
    }
    if (st) {
        swin_model_release(out);
        memset(out, 0, sizeof *out);
        if (e.status == SWIN_OK) swin_error_set(&e, st, "%s: load failed", path);
        for (char *ch = e.msg; *ch; ch++)
            if ((unsigned char)*ch < 0x20 || *ch == 0x7f) *ch = '?';
        if (err) *err = e;
    }
    return st;
}
