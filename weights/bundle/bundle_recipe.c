#include "weights/bundle/bundle_recipe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void swin_recipe_warn(struct swin_recipe *r, const char *fmt, ...)
{
    size_t used = strlen(r->warnings), room = sizeof r->warnings - used;
    if (room < 2) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->warnings + used, room - 1, fmt, ap);
    va_end(ap);
    used = n < 0 ? used : (size_t)n >= room - 1 ? sizeof r->warnings - 2 : used + (size_t)n;
    r->warnings[used] = '\n';
    r->warnings[used + 1] = 0;
}

/* One transform (or the inferer) being read: its keys are either followed (read by the
 * handler), ignored by design, or reported. */
struct item {
    const struct swin_bundle_config *c;
    const json_node *obj;
    const char *where; /* "preprocessing", "inferer", "postprocessing" */
    const char *name;  /* the _target_ */
    struct swin_recipe *r;
};

static bool in_list(const char *key, const char *const *list)
{
    for (; list && *list; list++)
        if (!strcmp(key, *list)) return true;
    return false;
}

/* Keys of no effect on the result in any transform: which dictionary keys, metadata
 * bookkeeping, lazy resampling, devices and types of intermediate tensors. */
static const char *const common_ignored[] = {
    "_target_",  "_requires_",       "_disabled_", "_desc_",     "_mode_", "keys",   "allow_missing_keys",
    "meta_keys", "meta_key_postfix", "lazy",       "track_meta", "dtype",  "device", NULL};

/* Reports every key of the item that is neither followed nor ignored. */
static void report_unknown(const struct item *it, const char *const *followed, const char *const *ignored)
{
    for (const json_node *k = it->obj->child; k; k = k->next)
        if (!in_list(k->key, common_ignored) && !in_list(k->key, followed) && !in_list(k->key, ignored))
            swin_recipe_warn(it->r, "%s: %s's key '%s' is not followed", it->where, it->name, k->key);
}

/* The item's member key, resolved; an unresolvable one (an expression, a macro) is reported
 * and reads as absent. */
static const json_node *member(const struct item *it, const char *key)
{
    char why[160];
    const json_node *n = swin_bundle_member(it->c, it->obj, key, why, sizeof why);
    if (!n && why[0]) swin_recipe_warn(it->r, "%s: %s's '%s' is %s; not followed", it->where, it->name, key, why);
    return n;
}

/* A key the recipe cannot do without: resolved, or NULL with why saying what it is instead. */
static const json_node *need(const struct item *it, const char *key, char *why, size_t why_len)
{
    const json_node *n = swin_bundle_member(it->c, it->obj, key, why, why_len);
    if (!n && !why[0]) snprintf(why, why_len, "missing");
    return n;
}

static void expect_bool(const struct item *it, const char *key, bool want)
{
    const json_node *n = member(it, key);
    bool v;
    if (n && (!swin_bundle_bool(n, &v) || v != want))
        swin_recipe_warn(it->r, "%s: %s %s other than %s is not supported", it->where, it->name, key,
                         want ? "true" : "false");
}

/* A string key that must be `want` (or absent), also as a one-element list (per-key modes). */
static void expect_string(const struct item *it, const char *key, const char *want)
{
    const json_node *n = member(it, key);
    if (n && n->kind == JSON_ARRAY && swin_json_len(n) == 1) n = swin_json_at(n, 0);
    if (n && (n->kind != JSON_STRING || strcmp(n->text, want)))
        swin_recipe_warn(it->r, "%s: %s %s other than \"%s\" is not supported", it->where, it->name, key, want);
}

static void expect_number(const struct item *it, const char *key, double want)
{
    double v;
    const json_node *n = member(it, key);
    if (n && (!swin_bundle_number(n, &v) || v != want))
        swin_recipe_warn(it->r, "%s: %s %s other than %g is not supported", it->where, it->name, key, want);
}

static void expect_null(const struct item *it, const char *key)
{
    const json_node *n = member(it, key);
    if (n && n->kind != JSON_NULL) swin_recipe_warn(it->r, "%s: %s %s is not supported", it->where, it->name, key);
}

/* ---- preprocessing --------------------------------------------------------------------- */

static swin_status orientation(struct item *it, swin_error *err)
{
    static const char *const followed[] = {"axcodes", "as_closest_canonical", "labels", NULL};
    it->r->reorient = true;
    const json_node *ax = member(it, "axcodes");
    if (!ax || ax->kind != JSON_STRING || strcmp(ax->text, "RAS"))
        swin_recipe_warn(it->r, "preprocessing: Orientationd axcodes other than \"RAS\": swinrun orients to RAS");
    expect_bool(it, "as_closest_canonical", false);
    report_unknown(it, followed, NULL);
    return SWIN_OK;
}

static swin_status spacing(struct item *it, swin_error *err)
{
    static const char *const followed[] = {"pixdim",           "mode",
                                           "padding_mode",     "align_corners",
                                           "diagonal",         "scale_extent",
                                           "recompute_affine", "min_pixdim",
                                           "max_pixdim",       NULL};
    static const char *const ignored[] = {"ensure_same_shape", NULL};
    double px[3];
    char why[160] = "";
    const json_node *p = need(it, "pixdim", why, sizeof why);
    if (!swin_bundle_triple(it->c, p, px) || !(px[0] > 0 && px[1] > 0 && px[2] > 0))
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: Spacingd pixdim is not 3 positive numbers (or one)%s%s: cannot follow the recipe",
                              it->c->name, why[0] ? ": it is " : "", why);
    it->r->resample = true;
    memcpy(it->r->spacing_mm, px, sizeof px);
    expect_string(it, "mode", "bilinear");
    expect_string(it, "padding_mode", "border");
    expect_bool(it, "align_corners", false);
    expect_bool(it, "diagonal", false);
    expect_bool(it, "scale_extent", false);
    expect_bool(it, "recompute_affine", false);
    expect_null(it, "min_pixdim");
    expect_null(it, "max_pixdim");
    report_unknown(it, followed, ignored);
    return SWIN_OK;
}

static swin_status scale_range(struct item *it, swin_error *err)
{
    static const char *const followed[] = {"a_min", "a_max", "b_min", "b_max", "clip", NULL};
    double lo, hi;
    char why[160] = "", why2[160] = "";
    if (!swin_bundle_number(need(it, "a_min", why, sizeof why), &lo) ||
        !swin_bundle_number(need(it, "a_max", why2, sizeof why2), &hi) || !(hi > lo))
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: ScaleIntensityRanged a_min / a_max are not two numbers with a_max > a_min%s%s",
                              it->c->name, why[0] || why2[0] ? ": " : "", why[0] ? why : why2);
    if (it->r->zscore)
        swin_recipe_warn(it->r, "preprocessing: ScaleIntensityRanged after NormalizeIntensityd is not supported "
                                "(swinrun applies one of them: the z-score)");
    it->r->intensity_clip = true;
    it->r->intensity_range[0] = (float)lo;
    it->r->intensity_range[1] = (float)hi;
    double b;
    if (!swin_bundle_number(member(it, "b_min"), &b) || b != 0 || !swin_bundle_number(member(it, "b_max"), &b) ||
        b != 1)
        swin_recipe_warn(it->r, "preprocessing: ScaleIntensityRanged to a range other than [0, 1] is not supported");
    bool clip = false; /* MONAI's default */
    const json_node *cn = member(it, "clip");
    if (!(cn ? swin_bundle_bool(cn, &clip) : true) || !clip)
        swin_recipe_warn(it->r, "preprocessing: ScaleIntensityRanged without clip is not supported (swinrun clips)");
    report_unknown(it, followed, NULL);
    return SWIN_OK;
}

/* NormalizeIntensityd: each channel's z-score, over its nonzero voxels or all of them. */
static swin_status normalize_intensity(struct item *it, int in_channels)
{
    static const char *const followed[] = {"nonzero", "channel_wise", "subtrahend", "divisor", NULL};
    struct swin_recipe *r = it->r;
    bool nonzero = false, channel_wise = false; /* MONAI's defaults */
    const json_node *n = member(it, "nonzero");
    if (n && !swin_bundle_bool(n, &nonzero))
        swin_recipe_warn(r, "preprocessing: NormalizeIntensityd nonzero is not true or false; read as false");
    n = member(it, "channel_wise");
    if (n && !swin_bundle_bool(n, &channel_wise))
        swin_recipe_warn(r, "preprocessing: NormalizeIntensityd channel_wise is not true or false; read as true");
    else if (!channel_wise && in_channels > 1)
        swin_recipe_warn(r, "preprocessing: NormalizeIntensityd without channel_wise over %d channels is not "
                            "supported (swinrun normalises each channel on its own)",
                         in_channels);
    expect_null(it, "subtrahend");
    expect_null(it, "divisor");
    if (r->intensity_clip)
        swin_recipe_warn(r, "preprocessing: NormalizeIntensityd after ScaleIntensityRanged is not supported "
                            "(swinrun applies one of them: the z-score)");
    r->intensity_clip = false;
    r->zscore = true;
    r->zscore_nonzero = nonzero;
    report_unknown(it, followed, NULL);
    return SWIN_OK;
}

/* Preprocessing transforms that do nothing to a CT volume's values or grid in swinrun's
 * pipeline (reading, channel and type bookkeeping). */
static const char *const preprocessing_ignored[] = {"LoadImaged",         "LoadImage",   "EnsureChannelFirstd",
                                                    "EnsureChannelFirst", "AddChanneld", "AddChannel",
                                                    "EnsureTyped",        "EnsureType",  "ToTensord",
                                                    "ToTensor",           "ToDeviced",   "Identityd",
                                                    "Identity",           "CastToTyped", NULL};

/* ---- inferer --------------------------------------------------------------------------- */

static swin_status inferer(struct item *it, swin_error *err)
{
    static const char *const followed[] = {"roi_size", "overlap", "mode", "sigma_scale", "padding_mode", "cval", NULL};
    static const char *const ignored[] = {"sw_batch_size",        "sw_device",  "progress",
                                          "cache_roi_weight_map", "cpu_thresh", "buffer_steps",
                                          "buffer_dim",           "with_coord", NULL};
    double roi[3];
    char why[160] = "";
    if (!swin_bundle_triple(it->c, need(it, "roi_size", why, sizeof why), roi))
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: SlidingWindowInferer roi_size is not 3 integers (or one)%s%s",
                              it->c->name, why[0] ? ": it is " : "", why);
    for (int k = 0; k < 3; k++) {
        if (!(roi[k] >= 1 && roi[k] <= 4096 && roi[k] == floor(roi[k])))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: SlidingWindowInferer roi_size %g is not a cube side",
                                  it->c->name, roi[k]);
        it->r->cube[k] = (int)roi[k];
    }
    double ov[3];
    const json_node *o = member(it, "overlap");
    if (o) {
        if (!swin_bundle_triple(it->c, o, ov) || ov[1] != ov[0] || ov[2] != ov[0])
            swin_recipe_warn(it->r, "inferer: an overlap other than one number is not supported");
        else it->r->overlap = ov[0];
    }
    const json_node *m = member(it, "mode");
    if (m && m->kind == JSON_STRING && !strcmp(m->text, "gaussian")) it->r->gaussian = true;
    else if (m && (m->kind != JSON_STRING || strcmp(m->text, "constant")))
        swin_recipe_warn(it->r, "inferer: blending mode other than \"constant\" or \"gaussian\" is not supported");
    const json_node *s = member(it, "sigma_scale");
    if (s) {
        double sg[3];
        if (!swin_bundle_triple(it->c, s, sg) || sg[1] != sg[0] || sg[2] != sg[0] || !(sg[0] > 0))
            swin_recipe_warn(it->r, "inferer: a sigma_scale other than one positive number is not supported");
        else it->r->sigma_scale = sg[0];
    }
    expect_string(it, "padding_mode", "constant");
    expect_number(it, "cval", 0);
    report_unknown(it, followed, ignored);
    return SWIN_OK;
}

/* ---- postprocessing -------------------------------------------------------------------- */

/* What the post-processing does so far. A model with one output channel is a sigmoid model:
 * swinrun labels where its sigmoid is >= 0.5 (MONAI's Activations(sigmoid) then
 * AsDiscrete(threshold=0.5)), and interpolates that sigmoid on the linear way back. A model of
 * several channels whose Activationsd says sigmoid is one too: a mask per channel (masks). */
struct post_state {
    bool one_channel, masks;
    bool softmax, sigmoid, argmax, thresholded, inverted, invert_linear;
};

static bool sigmoid_model(const struct post_state *ps)
{
    return ps->one_channel || ps->masks;
}

static void activations(struct item *it, struct post_state *ps)
{
    static const char *const followed[] = {"softmax", "sigmoid", "other", NULL};
    bool v = false;
    const json_node *sg = member(it, "sigmoid");
    const bool sigmoid = sg && swin_bundle_bool(sg, &v) && v;
    ps->masks = sigmoid && !ps->one_channel;
    if (sigmoid_model(ps)) {
        ps->sigmoid = sigmoid;
        expect_bool(it, "softmax", false);
    } else {
        const json_node *n = member(it, "softmax");
        if (n && swin_bundle_bool(n, &v) && v) ps->softmax = true;
        if (sg && !swin_bundle_bool(sg, &v))
            swin_recipe_warn(it->r, "%s: %s sigmoid other than false is not supported", it->where, it->name);
    }
    expect_null(it, "other");
    report_unknown(it, followed, NULL);
}

static void invert(struct item *it, struct post_state *ps)
{
    static const char *const followed[] = {"nearest_interp", NULL};
    static const char *const ignored[] = {"transform", "orig_keys", "orig_meta_keys", "meta_key_postfix", "to_tensor",
                                          "post_func", NULL};
    bool nearest = true; /* MONAI's default */
    const json_node *n = member(it, "nearest_interp");
    if (n && !swin_bundle_bool(n, &nearest))
        swin_recipe_warn(it->r, "postprocessing: Invertd nearest_interp is not true or false; read as true");
    ps->inverted = true;
    const bool labelled = ps->argmax || ps->thresholded;
    if (!nearest && labelled)
        swin_recipe_warn(it->r, "postprocessing: Invertd with nearest_interp false after the %s interpolates "
                                "label values; swinrun brings the labels back by nearest neighbour",
                         ps->argmax ? "argmax" : "threshold");
    else if (!nearest && !ps->softmax && !ps->sigmoid)
        swin_recipe_warn(it->r, "postprocessing: Invertd with nearest_interp false without a %s before it "
                                "interpolates logits; swinrun interpolates the %s probabilities",
                         sigmoid_model(ps) ? "sigmoid" : "softmax", sigmoid_model(ps) ? "sigmoid" : "softmax");
    ps->invert_linear = !nearest && !labelled;
    report_unknown(it, followed, ignored);
}

static void discrete(struct item *it, struct post_state *ps)
{
    static const char *const followed[] = {"argmax", "to_onehot", "threshold", "rounding", NULL};
    bool v = false;
    double t;
    const bool sig = sigmoid_model(ps);
    const json_node *n = member(it, sig ? "threshold" : "argmax");
    if (sig && n && swin_bundle_number(n, &t) && t == 0.5) ps->thresholded = true;
    else if (sig)
        swin_recipe_warn(it->r, "postprocessing: AsDiscreted without threshold 0.5 is not supported for a sigmoid "
                                "model (swinrun labels where each sigmoid is >= 0.5)");
    else if (n && swin_bundle_bool(n, &v) && v) ps->argmax = true;
    else
        swin_recipe_warn(it->r,
                         "postprocessing: AsDiscreted without argmax is not supported (swinrun takes the argmax)");
    if (sig) expect_bool(it, "argmax", false);
    else expect_null(it, "threshold");
    expect_null(it, "to_onehot");
    expect_null(it, "rounding");
    report_unknown(it, followed, NULL);
}

static const char *const postprocessing_ignored[] = {"SaveImaged", "SaveImage",  "EnsureTyped", "EnsureType",
                                                     "ToTensord",  "CopyItemsd", "ToDeviced",   NULL};

/* ---- the three sections ---------------------------------------------------------------- */

/* The transforms of a section: a Compose's "transforms", or a list. NULL (reported) otherwise. */
static const json_node *transforms_of(const struct swin_bundle_config *c, const char *section, struct swin_recipe *r)
{
    char why[160];
    const json_node *s = swin_bundle_member(c, c->root, section, why, sizeof why);
    if (!s) {
        if (why[0]) swin_recipe_warn(r, "%s is %s; not followed", section, why);
        return NULL;
    }
    if (s->kind == JSON_OBJECT) {
        const char *t = swin_bundle_target(c, s);
        if (!t || strcmp(t, "Compose")) {
            swin_recipe_warn(r, "%s is not a Compose of transforms; not followed", section);
            return NULL;
        }
        s = swin_bundle_member(c, s, "transforms", why, sizeof why);
    }
    if (!s || s->kind != JSON_ARRAY) {
        swin_recipe_warn(r, "%s has no list of transforms; not followed", section);
        return NULL;
    }
    return s;
}

static swin_status read_preprocessing(const struct swin_bundle_config *c, int in_channels, struct swin_recipe *r,
                                      swin_error *err)
{
    const json_node *list = transforms_of(c, "preprocessing", r);
    if (!list) {
        swin_recipe_warn(r, "preprocessing: none found; swinrun feeds the CT as read");
        return SWIN_OK;
    }
    swin_status st = SWIN_OK;
    for (size_t i = 0; i < swin_json_len(list) && !st; i++) {
        char why[160];
        struct item it = {.c = c, .where = "preprocessing", .r = r};
        it.obj = swin_bundle_resolve(c, swin_json_at(list, i), why, sizeof why);
        it.name = it.obj && it.obj->kind == JSON_OBJECT ? swin_bundle_target(c, it.obj) : NULL;
        if (!it.name)
            swin_recipe_warn(r, "preprocessing: transform %zu is not an object with a _target_; not followed", i);
        else if (!strcmp(it.name, "Orientationd") || !strcmp(it.name, "Orientation")) st = orientation(&it, err);
        else if (!strcmp(it.name, "Spacingd") || !strcmp(it.name, "Spacing")) st = spacing(&it, err);
        else if (!strcmp(it.name, "ScaleIntensityRanged") || !strcmp(it.name, "ScaleIntensityRange"))
            st = scale_range(&it, err);
        else if (!strcmp(it.name, "NormalizeIntensityd") || !strcmp(it.name, "NormalizeIntensity"))
            st = normalize_intensity(&it, in_channels);
        else if (!in_list(it.name, preprocessing_ignored))
            swin_recipe_warn(r, "preprocessing: %s is not followed", it.name);
    }
    return st;
}

static swin_status read_inferer(const struct swin_bundle_config *c, struct swin_recipe *r, swin_error *err)
{
    char why[160];
    struct item it = {.c = c, .where = "inferer", .r = r};
    it.obj = swin_bundle_member(c, c->root, "inferer", why, sizeof why);
    it.name = it.obj && it.obj->kind == JSON_OBJECT ? swin_bundle_target(c, it.obj) : NULL;
    if (it.name && !strcmp(it.name, "SlidingWindowInferer")) return inferer(&it, err);
    swin_recipe_warn(r, "inferer: %s is not followed; swinrun slides cubes as MONAI's SlidingWindowInferer",
                     it.name ? it.name : "none found");
    return SWIN_OK;
}

static void read_postprocessing(const struct swin_bundle_config *c, int out_channels, struct swin_recipe *r)
{
    struct post_state ps = {.one_channel = out_channels == 1};
    const json_node *list = transforms_of(c, "postprocessing", r);
    for (size_t i = 0; list && i < swin_json_len(list); i++) {
        char why[160];
        struct item it = {.c = c, .where = "postprocessing", .r = r};
        it.obj = swin_bundle_resolve(c, swin_json_at(list, i), why, sizeof why);
        it.name = it.obj && it.obj->kind == JSON_OBJECT ? swin_bundle_target(c, it.obj) : NULL;
        if (!it.name)
            swin_recipe_warn(r, "postprocessing: transform %zu is not an object with a _target_; not followed", i);
        else if (!strcmp(it.name, "Activationsd")) activations(&it, &ps);
        else if (!strcmp(it.name, "Invertd")) invert(&it, &ps);
        else if (!strcmp(it.name, "AsDiscreted")) discrete(&it, &ps);
        else if (!in_list(it.name, postprocessing_ignored))
            swin_recipe_warn(r, "postprocessing: %s is not followed", it.name);
    }
    if (ps.one_channel && !ps.sigmoid)
        swin_recipe_warn(r, "postprocessing: no Activationsd(sigmoid=true) for a model with one output channel; "
                            "swinrun labels where its sigmoid is >= 0.5");
    else if (sigmoid_model(&ps) && !ps.thresholded)
        swin_recipe_warn(r, "postprocessing: no AsDiscreted(threshold=0.5); swinrun labels where the sigmoid is >= 0.5");
    else if (!sigmoid_model(&ps) && !ps.argmax)
        swin_recipe_warn(r, "postprocessing: no AsDiscreted(argmax=true); swinrun writes the argmax labels");
    if (!ps.inverted)
        swin_recipe_warn(r, "postprocessing: no Invertd (MONAI would write the model's grid); swinrun writes the "
                            "labels on the CT's grid");
    r->invert_linear = ps.invert_linear;
    r->masks = ps.masks;
}

swin_status swin_bundle_recipe_read(const struct swin_bundle_config *inf, int in_channels, int out_channels,
                                    struct swin_recipe *r, swin_error *err)
{
    /* MONAI's defaults for what the configuration leaves out */
    r->overlap = 0.25;
    r->sigma_scale = 0.125;
    swin_status st = read_preprocessing(inf, in_channels, r, err);
    if (!st) st = read_inferer(inf, r, err);
    if (!st) read_postprocessing(inf, out_channels, r);
    return st;
}
