#include "weights/checkpoint/ckpt_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights/onnx/window.h"

struct cw {
    const struct swin_ckpt_file *c;
    struct swin_model *m;
    struct swin_ckpt_walk_out *o;
    bool *used;
    int cap;
    swin_error *err;
};

#define BN_EPS 1e-5f   /* MONAI's BatchNorm3d default; a state dict does not store it */

#define TRY(x) do { swin_status st_ = (x); if (st_) return st_; } while (0)

static swin_status fail(struct cw *w, swin_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static swin_status fail(struct cw *w, swin_status st, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return swin_error_set(w->err, st, "%s: %s", w->c->path, what);
}

static int find(const struct cw *w, const char *key)
{
    for (int i = w->c->n; i-- > 0;)
        if (!strcmp(w->c->t[i].key, key)) return i;
    return -1;
}

static bool has(const struct cw *w, const char *key) { return find(w, key) >= 0; }

static const char *shape_str(const int64_t *d, int n, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, i ? ", %lld" : "%lld", (long long)d[i]);
    if (o < cap) snprintf(buf + o, cap - o, ")");
    return buf;
}

/* The entry of key, required, of the given shape (want NULL: any shape), marked used. */
static swin_status take(struct cw *w, const char *key, int n, const int64_t *want, int *idx)
{
    int i = find(w, key);
    if (i < 0) return fail(w, SWIN_ERR_MODEL, "the state dict lacks '%s', which the detected configuration needs", key);
    const struct swin_ckpt_tensor *t = &w->c->t[i];
    if (t->placeholder)
        return fail(w, SWIN_ERR_MODEL, "'%s' is %s%s%s where a weight tensor must be", key,
                    *t->placeholder ? "a placeholder for the global '" : "not a tensor", t->placeholder,
                    *t->placeholder ? "' (never called)" : "");
    bool ok = !want || t->ndim == n;
    for (int k = 0; ok && want && k < n; k++) ok = t->size[k] == want[k];
    if (!ok) {
        char a[120], b[120];
        return fail(w, SWIN_ERR_SHAPE, "'%s' has shape %s, the detected configuration needs %s", key, shape_str(t->size, t->ndim, a, sizeof a),
                    shape_str(want, n, b, sizeof b));
    }
    w->used[i] = true;
    *idx = i;
    return SWIN_OK;
}

static swin_status plan(struct cw *w, const float **slot, int idx, enum layout_kind kind, uint64_t d0, uint64_t d1, uint64_t k)
{
    struct swin_walk_out *o = &w->o->plans;
    if (o->n_plans == w->cap) {
        int ncap = w->cap ? 2 * w->cap : 256;
        void *p = realloc(o->plans, (size_t)ncap * sizeof *o->plans);
        if (!p) return fail(w, SWIN_ERR_NOMEM, "out of host memory");
        o->plans = p;
        w->cap = ncap;
    }
    const struct swin_onnx_tensor *t = NULL;
    if (kind != LAYOUT_ZERO) {
        struct swin_onnx_tensor *v = &w->o->views[idx];
        if (!v->name) TRY(swin_ckpt_tensor_view(w->c, &w->c->t[idx], v, &w->o->bufs[idx], w->err));
        t = v;
    }
    o->plans[o->n_plans++] = (struct swin_bind_plan){slot, t, kind, d0, d1, k, false, {0, 0, 0}, d0 * d1 * k, -1, false};
    return SWIN_OK;
}

static swin_status vec(struct cw *w, const char *key, const float **slot, int64_t n)
{
    int i = -1;
    TRY(take(w, key, 1, &n, &i));
    return plan(w, slot, i, LAYOUT_COPY, (uint64_t)n, 1, 1);
}

/* "<prefix>.weight" and "<prefix>.bias" of a LayerNorm (or affine norm) over n channels. */
static swin_status affine(struct cw *w, const char *prefix, int64_t n, const float **ws, const float **bs)
{
    char key[216]; /* prefix (< 200) + ".weight" */
    snprintf(key, sizeof key, "%s.weight", prefix);
    TRY(vec(w, key, ws, n));
    snprintf(key, sizeof key, "%s.bias", prefix);
    return vec(w, key, bs, n);
}

/* A Linear in -> out stored (out, in), with a bias when bias. */
static swin_status linear(struct cw *w, const char *prefix, int64_t in, int64_t out, const float **ws, const float **bs, bool bias)
{
    char key[200];
    int i = -1;
    int64_t want[2] = {out, in};
    snprintf(key, sizeof key, "%s.weight", prefix);
    TRY(take(w, key, 2, want, &i));
    TRY(plan(w, ws, i, LAYOUT_OUT_IN, (uint64_t)out, (uint64_t)in, 1));
    if (!bias) return SWIN_OK;
    snprintf(key, sizeof key, "%s.bias", prefix);
    return vec(w, key, bs, out);
}

/* Conv3d (cout, cin, k, k, k), or with transposed the ConvTranspose3d (cin, cout, k, k, k). */
static swin_status conv(struct cw *w, const char *key, int64_t cin, int64_t cout, int k, bool transposed, const float **slot)
{
    int i = -1;
    int64_t want[5] = {transposed ? cin : cout, transposed ? cout : cin, k, k, k};
    TRY(take(w, key, 5, want, &i));
    return plan(w, slot, i, transposed ? LAYOUT_IN_OUT : LAYOUT_OUT_IN, (uint64_t)want[0], (uint64_t)want[1], (uint64_t)k * k * k);
}

/* Conv idx (1..3) of a UnetResBlock and its norm (batch: folded later; affine instance: bound). */
static swin_status res_conv(struct cw *w, struct swin_resblock_w *r, int idx, int64_t cin, const char *prefix, bool v2)
{
    const float **wslot[] = {&r->conv1_w, &r->conv2_w, &r->conv3_w}, **bslot[] = {&r->conv1_b, &r->conv2_b, &r->conv3_b};
    const float **gslot[] = {&r->norm1_w, &r->norm2_w, &r->norm3_w}, **betaslot[] = {&r->norm1_b, &r->norm2_b, &r->norm3_b};
    const struct swin_config *cfg = &w->m->cfg;
    int k = idx == 3 ? 1 : 3;
    char key[260], norm[200];
    snprintf(key, sizeof key, "%s.conv%d.conv.weight", prefix, idx);
    TRY(conv(w, key, cin, r->cout, k, false, wslot[idx - 1]));
    snprintf(norm, sizeof norm, "%s.norm%d", prefix, idx);
    if (v2) return SWIN_OK;   /* MONAI's v2 blocks use instance norm without affine whatever norm_name says */
    if (cfg->batch_norm) {
        struct swin_walk_out *o = &w->o->plans;
        if (o->n_bn == SWIN_MAX_BN_FOLDS) return fail(w, SWIN_ERR_INTERNAL, "more batch norms than a Swin UNETR has");
        struct swin_bn_fold *b = &o->bn[o->n_bn++];
        static const char *const parts[] = {"weight", "bias", "running_mean", "running_var"};
        const float **slots[] = {&b->gamma, &b->beta, &b->mean, &b->var};
        for (int p = 0; p < 4; p++) {
            snprintf(key, sizeof key, "%s.%s", norm, parts[p]);
            TRY(vec(w, key, slots[p], r->cout));
        }
        snprintf(key, sizeof key, "%s.num_batches_tracked", norm);
        int i = find(w, key);
        if (i >= 0) w->used[i] = true;
        b->conv_w = wslot[idx - 1];
        b->conv_b = bslot[idx - 1];
        b->rows = (uint64_t)k * k * k * (uint64_t)cin;
        b->cout = r->cout;
        b->eps = BN_EPS;
        snprintf(b->what, sizeof b->what, "%s", norm);
        return plan(w, bslot[idx - 1], -1, LAYOUT_ZERO, (uint64_t)r->cout, 1, 1);
    }
    if (cfg->instnorm_affine) return affine(w, norm, r->cout, gslot[idx - 1], betaslot[idx - 1]);
    snprintf(key, sizeof key, "%s.weight", norm);
    if (cfg->norm_groups && has(w, key)) return affine(w, norm, r->cout, gslot[idx - 1], betaslot[idx - 1]);
    return SWIN_OK;
}

static swin_status resblock(struct cw *w, struct swin_resblock_w *r, int64_t cin, int64_t cout, const char *prefix, bool v2)
{
    r->cin = (int)cin;
    r->cout = (int)cout;
    r->bn_folded = w->m->cfg.batch_norm && !v2;
    r->norm_groups = v2 ? 0 : w->m->cfg.norm_groups;
    if (r->norm_groups && cout % r->norm_groups)
        return fail(w, SWIN_ERR_MODEL, "%d norm groups do not divide %s's %lld channels", r->norm_groups, prefix,
                    (long long)cout);
    TRY(res_conv(w, r, 1, cin, prefix, v2));
    TRY(res_conv(w, r, 2, cout, prefix, v2));
    return cin == cout ? SWIN_OK : res_conv(w, r, 3, cin, prefix, v2);
}

/* The window: from the first relative_position_index (N, N) when the state dict has it (the
 * only way to tell a non-cubic window), else the cube whose table has `rows` rows. */
static swin_status detect_window(struct cw *w, int64_t rows)
{
    int *win = w->m->cfg.window;
    int i = find(w, "swinViT.layers1.0.blocks.0.attn.relative_position_index");
    if (i < 0) {
        for (int k = 1; k <= 64; k++)
            if ((int64_t)(2 * k - 1) * (2 * k - 1) * (2 * k - 1) == rows) {
                win[0] = win[1] = win[2] = k;
                return SWIN_OK;
            }
        return fail(w, SWIN_ERR_MODEL, "the bias tables have %lld rows, not (2w-1)^3, and the state dict has no "
                    "relative_position_index to read a non-cubic window from", (long long)rows);
    }
    const struct swin_ckpt_tensor *t = &w->c->t[i];
    if (t->placeholder || t->ndim != 2 || t->size[0] != t->size[1] || t->size[0] < 1 || t->size[0] > 64 * 64 * 64)
        return fail(w, SWIN_ERR_MODEL, "'%s' is not an (N, N) index", t->key);
    int64_t n = t->size[0];
    int64_t *v = malloc((size_t)(n * n) * sizeof *v);
    if (!v) return fail(w, SWIN_ERR_NOMEM, "out of host memory reading '%s'", t->key);
    swin_status st = swin_ckpt_read_i64(w->c, t, v, w->err);
    bool ok = !st && swin_window_from_index(v, n, rows, win);
    free(v);
    if (st) return st;
    if (!ok)
        return fail(w, SWIN_ERR_MODEL, "'%s' (%lld x %lld) matches no window w1 w2 w3 = %lld with a %lld-row bias table", t->key,
                    (long long)n, (long long)n, (long long)n, (long long)rows);
    return SWIN_OK;
}

static swin_status block(struct cw *w, int s, int b)
{
    struct swin_config *cfg = &w->m->cfg;
    struct swin_block_w *blk = &w->m->stage[s].block[b];
    int64_t c = swin_stage_channels(cfg, s);
    char pre[120], p[200];
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.blocks.%d", s + 1, b);
#define KEY(x) (snprintf(p, sizeof p, "%s." x, pre), p)
    int i = -1;
    TRY(take(w, KEY("attn.relative_position_bias_table"), 0, NULL, &i));
    const struct swin_ckpt_tensor *t = &w->c->t[i];
    if (t->ndim != 2) return fail(w, SWIN_ERR_SHAPE, "'%s' has rank %d, expected (rows, heads)", t->key, t->ndim);
    if (s == 0 && b == 0) TRY(detect_window(w, t->size[0]));
    if (b == 0) {
        if (t->size[1] < 1 || c % t->size[1])
            return fail(w, SWIN_ERR_SHAPE, "'%s' gives %lld heads, which do not divide the stage's %lld channels", t->key,
                        (long long)t->size[1], (long long)c);
        cfg->heads[s] = (int)t->size[1];
    }
    int64_t want[2] = {swin_bias_table_rows(cfg), cfg->heads[s]};
    TRY(take(w, t->key, 2, want, &i));
    TRY(plan(w, &blk->bias_table, i, LAYOUT_COPY, (uint64_t)(want[0] * want[1]), 1, 1));
    int ri = find(w, KEY("attn.relative_position_index"));
    if (ri >= 0) w->used[ri] = true;   /* a buffer the kernels recompute; the first one gave the window */

    TRY(affine(w, KEY("norm1"), c, &blk->norm1_w, &blk->norm1_b));
    TRY(linear(w, KEY("attn.qkv"), c, 3 * c, &blk->qkv_w, &blk->qkv_b, cfg->qkv_bias));
    TRY(linear(w, KEY("attn.proj"), c, c, &blk->proj_w, &blk->proj_b, true));
    TRY(affine(w, KEY("norm2"), c, &blk->norm2_w, &blk->norm2_b));
    if (b == 0) {
        TRY(take(w, KEY("mlp.linear1.weight"), 0, NULL, &i));
        if (w->c->t[i].ndim != 2 || w->c->t[i].size[0] < 1 || w->c->t[i].size[0] > (int64_t)1 << 24)
            return fail(w, SWIN_ERR_SHAPE, "'%s' is not an (hidden, C) Linear weight", w->c->t[i].key);
        cfg->mlp_hidden[s] = (int)w->c->t[i].size[0];
    }
    TRY(linear(w, KEY("mlp.linear1"), c, cfg->mlp_hidden[s], &blk->fc1_w, &blk->fc1_b, true));
    TRY(linear(w, KEY("mlp.linear2"), cfg->mlp_hidden[s], c, &blk->fc2_w, &blk->fc2_b, true));
#undef KEY
    return SWIN_OK;
}

static swin_status stage(struct cw *w, int s)
{
    struct swin_config *cfg = &w->m->cfg;
    struct swin_stage_w *st = &w->m->stage[s];
    int64_t c = swin_stage_channels(cfg, s);
    char pre[160], key[200];
    if (cfg->use_v2) {
        snprintf(pre, sizeof pre, "swinViT.layers%dc.0.layer", s + 1);
        TRY(resblock(w, &st->v2, c, c, pre, true));
    }
    int b = 0;
    for (;; b++) {
        snprintf(key, sizeof key, "swinViT.layers%d.0.blocks.%d.norm1.weight", s + 1, b);
        if (!has(w, key)) break;
        if (b == SWIN_MAX_DEPTH) return fail(w, SWIN_ERR_MODEL, "stage %d has more than %d Swin blocks", s + 1, SWIN_MAX_DEPTH);
        TRY(block(w, s, b));
    }
    if (!b) return fail(w, SWIN_ERR_MODEL, "the state dict has no Swin block in stage %d ('%s')", s + 1, key);
    cfg->depths[s] = b;
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.downsample.norm", s + 1);
    TRY(affine(w, pre, 8 * c, &st->merge_norm_w, &st->merge_norm_b));
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.downsample.reduction", s + 1);
    return linear(w, pre, 8 * c, 2 * c, &st->merge_red_w, NULL, false);
}

/* What the keys tell before anything is bound. */
static swin_status detect(struct cw *w)
{
    struct swin_config *cfg = &w->m->cfg;
    const char *pe = "swinViT.patch_embed.proj.weight";
    bool decoder = has(w, "decoder1.transp_conv.conv.weight") || has(w, "out.conv.conv.weight");
    if ((has(w, pe) || has(w, "patch_embed.proj.weight")) && !decoder)
        return fail(w, SWIN_ERR_MODEL, "an encoder-only checkpoint (the Swin ViT of self-supervised pre-training, e.g. "
                    "model_swinvit.pt): it has no decoder, and swinrun runs the whole SwinUNETR");
    int i = find(w, pe);
    if (i < 0) {
        char keys[160] = "";
        size_t o = 0;
        for (int k = 0; k < w->c->n && k < 3 && o < sizeof keys; k++)
            o += (size_t)snprintf(keys + o, sizeof keys - o, "%s'%s'", k ? ", " : "", w->c->t[k].key);
        return fail(w, SWIN_ERR_MODEL, "no '%s' in the state dict (%s %s): not a MONAI SwinUNETR", pe, w->c->where, keys);
    }
    int k;
    if (w->c->t[i].placeholder) return take(w, pe, 0, NULL, &k);   /* names the global */
    const struct swin_ckpt_tensor *t = &w->c->t[i];
    if (t->ndim == 4)
        return fail(w, SWIN_ERR_MODEL, "'%s' is a 2-D conv weight: a 2-D Swin UNETR (spatial_dims=2)? swinrun runs the 3-D "
                    "model", pe);
    if (t->ndim != 5 || t->size[0] < 1 || t->size[1] < 1 || t->size[0] > 4096 || t->size[1] > 4096)
        return fail(w, SWIN_ERR_SHAPE, "'%s' is not a (f, Ci, p, p, p) conv weight", pe);
    if (t->size[2] != 2 || t->size[3] != 2 || t->size[4] != 2)
        return fail(w, SWIN_ERR_MODEL, "patch embedding with kernel %lld: only patch_size 2 is supported", (long long)t->size[2]);
    cfg->feature_size = (int)t->size[0];
    cfg->in_channels = (int)t->size[1];
    i = find(w, "out.conv.conv.weight");
    if (i < 0 || w->c->t[i].placeholder || w->c->t[i].ndim != 5 || w->c->t[i].size[0] < 1 || w->c->t[i].size[0] > 65535)
        return fail(w, SWIN_ERR_MODEL, "no (Co, f, 1, 1, 1) 'out.conv.conv.weight' in the state dict");
    cfg->out_channels = (int)w->c->t[i].size[0];
    cfg->qkv_bias = has(w, "swinViT.layers1.0.blocks.0.attn.qkv.bias");
    cfg->patch_norm = has(w, "swinViT.patch_embed.norm.weight");
    cfg->use_v2 = has(w, "swinViT.layers1c.0.layer.conv1.conv.weight");
    cfg->batch_norm = cfg->batch_norm_at_load = has(w, "encoder1.layer.norm1.running_mean");
    cfg->instnorm_affine = !cfg->batch_norm && has(w, "encoder1.layer.norm1.weight");
    if (cfg->norm_groups && cfg->batch_norm)
        return fail(w, SWIN_ERR_MODEL, "%d norm groups were given, but the CNN norms are batch norms (running_mean keys)",
                    cfg->norm_groups);
    if (cfg->norm_groups) cfg->instnorm_affine = false;   /* the affine is the group norm's */
    return SWIN_OK;
}

swin_status swin_ckpt_walk(const struct swin_ckpt_file *c, struct swin_model *m, struct swin_ckpt_walk_out *o, swin_error *err)
{
    memset(o, 0, sizeof *o);
    struct cw wk = {.c = c, .m = m, .o = o, .err = err}, *w = &wk;
    o->n_views = c->n;
    o->views = calloc((size_t)c->n + 1, sizeof *o->views);
    o->bufs = calloc((size_t)c->n + 1, sizeof *o->bufs);
    w->used = calloc((size_t)c->n + 1, sizeof *w->used);
    swin_status st = SWIN_OK;
    if (!o->views || !o->bufs || !w->used) st = fail(w, SWIN_ERR_NOMEM, "out of host memory");
    if (!st) st = detect(w);
    struct swin_config *cfg = &m->cfg;
    int64_t f = cfg->feature_size;
    int i = -1;
    if (!st) st = conv(w, "swinViT.patch_embed.proj.weight", cfg->in_channels, f, 2, false, &m->patch_w);
    if (!st) st = vec(w, "swinViT.patch_embed.proj.bias", &m->patch_b, f);
    if (!st && cfg->patch_norm) st = affine(w, "swinViT.patch_embed.norm", f, &m->patch_norm_w, &m->patch_norm_b);
    for (int s = 0; s < SWIN_STAGES && !st; s++) st = stage(w, s);
    if (!st) st = resblock(w, &m->encoder[4], 16 * f, 16 * f, "encoder10.layer", false);
    char pre[80], key[120];
    for (int d = SWIN_DECODERS - 1; d >= 0 && !st; d--) {
        int64_t cin = d ? f << d : f, cout = d ? cin / 2 : f;
        snprintf(key, sizeof key, "decoder%d.transp_conv.conv.weight", d + 1);
        st = conv(w, key, cin, cout, 2, true, &m->decoder[d].transp_w);
        if (!st && d > 0 && d < 4) {
            snprintf(pre, sizeof pre, "encoder%d.layer", d + 1);
            st = resblock(w, &m->encoder[d], f << (d - 1), f << (d - 1), pre, false);
        } else if (!st && d == 0) {
            st = resblock(w, &m->encoder[0], cfg->in_channels, f, "encoder1.layer", false);
        }
        snprintf(pre, sizeof pre, "decoder%d.conv_block", d + 1);
        if (!st) st = resblock(w, &m->decoder[d].res, 2 * cout, cout, pre, false);
    }
    if (!st) st = conv(w, "out.conv.conv.weight", f, cfg->out_channels, 1, false, &m->out_w);
    if (!st) st = vec(w, "out.conv.conv.bias", &m->out_b, cfg->out_channels);
    for (i = 0; i < c->n && !st; i++)
        if (!w->used[i])
            st = fail(w, SWIN_ERR_MODEL, "'%s' is not part of a SwinUNETR swinrun runs (a MONAI option it does not support, such "
                      "as use_hyena, or another network's key)", c->t[i].key);
    free(w->used);
    if (st) swin_ckpt_walk_free(o);
    return st;
}

void swin_ckpt_walk_free(struct swin_ckpt_walk_out *o)
{
    for (int i = 0; i < o->n_views && o->bufs; i++) free(o->bufs[i]);
    free(o->bufs);
    free(o->views);
    free(o->plans.plans);
    memset(o, 0, sizeof *o);
}
