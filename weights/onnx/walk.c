#include "weights/onnx/walk.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights/onnx/mask.h"
#include "weights/onnx/merge.h"
#include "weights/onnx/window.h"

struct walker {
    const struct swin_onnx_index *g;
    const struct swin_onnx_layer_list *L;
    int pos;
    struct swin_model *m;
    struct swin_walk_out *out;
    int cap;
    swin_error *err;
    bool in_affine_seen;              /* some CNN-block InstanceNorm has gamma != 1 or beta != 0 */
    bool batch_norm_seen;             /* some CNN block's convs carry folded batch norms */
    int norm_groups;                  /* the CNN norms' groups so far: -1 none seen, 0 instance norm, G group norm */
    bool have_window, have_merge_order;
    bool proj_out_shared[SWIN_STAGES];   /* hidden state s's proj_out met at stage s + 1's start (merged with its norm1) */
};

#define TRY(x) do { swin_status st_ = (x); if (st_) return st_; } while (0)

static swin_status fail(struct walker *w, int node, swin_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static swin_status fail(struct walker *w, int node, swin_status st, const char *fmt, ...)
{
    char what[300], d[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (node < 0) return swin_error_set(w->err, st, "%s: %s", w->g->f->path, what);
    return swin_error_set(w->err, st, "%s: %s: %s", w->g->f->path, swin_onnx_node_desc(w->g, node, d, sizeof d), what);
}

static const struct swin_onnx_layer *peek(struct walker *w) { return w->pos < w->L->n ? &w->L->v[w->pos] : NULL; }

/* Channels a LayerNorm's scale covers; 0 for a decomposed one without affine (proj_out). */
static uint64_t ln_width(const struct swin_onnx_layer *l) { return l->w ? l->w->numel : 0; }

static swin_status expect(struct walker *w, enum layer_kind k, const char *what, const struct swin_onnx_layer **out)
{
    const struct swin_onnx_layer *l = peek(w);
    if (!l) return fail(w, -1, SWIN_ERR_MODEL, "the graph ends where %s (%s) was expected", what, swin_layer_kind_name(k));
    if (l->kind != k)
        return fail(w, l->node, SWIN_ERR_MODEL, "found a %s where %s (%s) was expected", swin_layer_kind_name(l->kind), what,
                    swin_layer_kind_name(k));
    w->pos++;
    *out = l;
    return SWIN_OK;
}

static const char *shape_str(const int64_t *d, int n, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, i ? ", %lld" : "%lld", (long long)d[i]);
    if (o < cap) snprintf(buf + o, cap - o, ")");
    return buf;
}

static swin_status check_shape(struct walker *w, const struct swin_onnx_layer *l, const struct swin_onnx_tensor *t, const char *what,
                               int n, const int64_t *want)
{
    bool ok = t->ndim == n;
    for (int i = 0; ok && i < n; i++) ok = t->dims[i] == want[i];
    if (ok) return SWIN_OK;
    char a[120], b[120];
    return fail(w, l->node, SWIN_ERR_SHAPE, "%s '%s' has shape %s, the detected configuration needs %s", what, t->name,
                shape_str(t->dims, t->ndim, a, sizeof a), shape_str(want, n, b, sizeof b));
}

/* Names confirm the structure: an initializer that reads like a state_dict key and feeds
 * only this node must be the key of the field it is bound to. ONNX Runtime's Conv + batch
 * norm fusion names what it makes after its sources ("ConvBnFusion_W_<conv weight>",
 * "ConvBnFusion_BN_B_<norm bias>" for the conv's new bias): no keys. */
static swin_status check_name(struct walker *w, const struct swin_onnx_layer *l, const struct swin_onnx_tensor *t, const char *key)
{
    const char *nm = t->name;
    size_t n = strlen(nm), kn = strlen(key);
    static const char *const tails[] = {".weight", ".bias", ".relative_position_bias_table"};
    bool keylike = false;
    for (int i = 0; i < 3; i++) {
        size_t tl = strlen(tails[i]);
        keylike |= n > tl && !strcmp(nm + n - tl, tails[i]);
    }
    keylike = keylike && strncmp(nm, "ConvBnFusion_", 13) != 0;
    const int *c;
    if (!keylike || t->producer >= 0 || swin_onnx_index_consumers(w->g, nm, &c) != 1) return SWIN_OK;
    if (n >= kn && !strcmp(nm + n - kn, key) && (n == kn || nm[n - kn - 1] == '.')) return SWIN_OK;
    return fail(w, l->node, SWIN_ERR_MODEL, "initializer '%s' sits where the graph structure puts '%s'; names and structure disagree",
                nm, key);
}

static swin_status plan(struct walker *w, const struct swin_onnx_layer *l, const float **slot, const struct swin_onnx_tensor *t,
                        enum layout_kind kind, uint64_t d0, uint64_t d1, uint64_t k)
{
    struct swin_walk_out *o = w->out;
    if (o->n_plans == w->cap) {
        int ncap = w->cap ? 2 * w->cap : 256;
        void *p = realloc(o->plans, (size_t)ncap * sizeof *o->plans);
        if (!p) return fail(w, -1, SWIN_ERR_NOMEM, "out of host memory");
        o->plans = p;
        w->cap = ncap;
    }
    o->plans[o->n_plans++] = (struct swin_bind_plan){slot, t, kind, d0, d1, k, false, {0, 0, 0}, d0 * d1 * k, l->node, false};
    return SWIN_OK;
}

/* A 1-D vector of length n (LN/IN scale or bias, a conv or Linear bias). A missing bias
 * becomes zeros. */
static swin_status bind_vec(struct walker *w, const struct swin_onnx_layer *l, const struct swin_onnx_tensor *t, const float **slot,
                            int64_t n, const char *what, const char *key)
{
    if (!t) return plan(w, l, slot, NULL, LAYOUT_ZERO, (uint64_t)n, 1, 1);
    /* (1, C, 1) as a channels-first LayerNorm's affine constant broadcasts: a vector of C */
    bool vector_in_ones = t->ndim > 1 && t->numel == (uint64_t)n;
    for (int k = 0; k < t->ndim && vector_in_ones; k++) vector_in_ones = t->dims[k] == 1 || t->dims[k] == n;
    if (!vector_in_ones) TRY(check_shape(w, l, t, what, 1, &n));
    TRY(check_name(w, l, t, key));
    return plan(w, l, slot, t, LAYOUT_COPY, (uint64_t)n, 1, 1);
}

/* The scale and bias of a LayerNormalization or InstanceNormalization over c channels. */
static swin_status bind_affine(struct walker *w, const struct swin_onnx_layer *l, int64_t c, const float **ws, const float **bs,
                               const char *what, const char *prefix)
{
    char key[176]; /* prefix (< 160) + ".weight" */
    if (!l->w) return fail(w, l->node, SWIN_ERR_MODEL, "%s has no scale; MONAI's is affine", what);
    snprintf(key, sizeof key, "%s.weight", prefix);
    TRY(bind_vec(w, l, l->w, ws, c, what, key));
    snprintf(key, sizeof key, "%s.bias", prefix);
    return bind_vec(w, l, l->b, bs, c, what, key);
}

static swin_status bind_ln(struct walker *w, int64_t c, const float **ws, const float **bs, const char *what,
                           const char *prefix)
{
    const struct swin_onnx_layer *l = NULL;
    TRY(expect(w, L_LN, what, &l));
    return bind_affine(w, l, c, ws, bs, what, prefix);
}

/* Linear in -> out; *wslot gets (in, out). bias: 1 required, 0 forbidden, -1 optional
 * (the caller reads the layer to see which). */
static swin_status bind_linear(struct walker *w, int64_t in, int64_t out, const float **wslot, const float **bslot,
                               int bias, const char *what, const char *prefix)
{
    const struct swin_onnx_layer *l;
    char key[160];
    TRY(expect(w, L_LINEAR, what, &l));
    int64_t want[2] = {l->w_out_in ? out : in, l->w_out_in ? in : out};
    TRY(check_shape(w, l, l->w, what, 2, want));
    snprintf(key, sizeof key, "%s.weight", prefix);
    TRY(check_name(w, l, l->w, key));
    if (l->w_out_in)
        TRY(plan(w, l, wslot, l->w, LAYOUT_OUT_IN, (uint64_t)out, (uint64_t)in, 1));
    else
        TRY(plan(w, l, wslot, l->w, LAYOUT_COPY, (uint64_t)(in * out), 1, 1));
    if (bias == 0 && l->b) return fail(w, l->node, SWIN_ERR_MODEL, "%s has a bias, MONAI's has none", what);
    if (bias == 1 && !l->b)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s has no bias (expected an Add of a constant (%lld) after it)", what, (long long)out);
    if (!l->b) return SWIN_OK;
    snprintf(key, sizeof key, "%s.bias", prefix);
    return bind_vec(w, l, l->b, bslot, out, what, key);
}

/* Conv (cout, cin, k^3) or ConvTranspose (cin, cout, k^3) into (k^3, cin, cout). With lout
 * the layer is returned and its bias left to the caller (the patch and output convs have
 * one); otherwise a bias is an error. fused_ok: the conv may be a FusedConv with MONAI's
 * LeakyReLU (the caller checks that the block has it there). */
static swin_status bind_conv(struct walker *w, enum layer_kind kind, int64_t cin, int64_t cout, int k, int stride,
                             int pad, bool fused_ok, const float **slot, const char *what, const char *key,
                             const struct swin_onnx_layer **lout)
{
    const struct swin_onnx_layer *l = NULL;
    TRY(expect(w, kind, what, &l));
    if (l->fused_lrelu && !fused_ok)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s is fused with a LeakyReLU, which MONAI's Swin UNETR does not apply there",
                    what);
    if (l->kernel != k || l->stride != stride || l->pad != pad)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s has kernel %d, stride %d, pad %d; expected kernel %d, stride %d, pad %d",
                    what, l->kernel, l->stride, l->pad, k, stride, pad);
    int64_t want[5] = {kind == L_CONV ? cout : cin, kind == L_CONV ? cin : cout, k, k, k};
    TRY(check_shape(w, l, l->w, what, 5, want));
    TRY(check_name(w, l, l->w, key));
    if (kind == L_CONVT && l->b) return fail(w, l->node, SWIN_ERR_MODEL, "%s has a bias, MONAI's has none", what);
    if (lout) *lout = l;
    else if (l->b)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s has a bias, MONAI's has none", what);
    return plan(w, l, slot, l->w, kind == L_CONV ? LAYOUT_OUT_IN : LAYOUT_IN_OUT, (uint64_t)want[0], (uint64_t)want[1],
                (uint64_t)k * k * k);
}

/* A GroupNorm's scale or bias over c channels: the (c, 1, 1, 1) constant of its Mul or Add;
 * where an optimiser dropped that node (t NULL), `absent`'s constant (ones or zeros). */
static swin_status bind_group_vec(struct walker *w, const struct swin_onnx_layer *l, const struct swin_onnx_tensor *t,
                                  enum layout_kind absent, const float **slot, int64_t c, const char *what,
                                  const char *key)
{
    if (!t) return plan(w, l, slot, NULL, absent, (uint64_t)c, 1, 1);
    if (t->numel != (uint64_t)c || t->ndim < 1 || t->dims[0] != c)
        return fail(w, l->node, SWIN_ERR_SHAPE, "%s: its affine '%s' has %llu values, the map %lld channels", what,
                    t->name, (unsigned long long)t->numel, (long long)c);
    TRY(check_name(w, l, t, key));
    return plan(w, l, slot, t, LAYOUT_COPY, (uint64_t)c, 1, 1);
}

/* The CNN norms' kind: every one the same, as MONAI builds them from one norm_name (the v2
 * blocks' instance norms aside). */
static swin_status norm_kind(struct walker *w, const struct swin_onnx_layer *l, int groups, const char *what)
{
    if (w->norm_groups >= 0 && w->norm_groups != groups)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s is %s, the norms before it %s; MONAI builds every block's norm alike",
                    what, groups ? "a group norm" : "an instance norm", w->norm_groups ? "group norms" : "instance norms");
    w->norm_groups = groups;
    return SWIN_OK;
}

/* A GroupNorm of l->groups groups over c channels (layers.h): the InstanceNormalization's
 * own scale and bias must be 1 and 0, the affine is the Mul's and Add's (none when both were
 * dropped). */
static swin_status bind_group(struct walker *w, const struct swin_onnx_layer *l, int64_t c, bool plain,
                              const float **ws, const float **bs, const char *what, const char *prefix)
{
    char key[176]; /* prefix (< 160) + ".weight" */
    if (!plain)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s: a group norm whose InstanceNormalization has an affine of its own", what);
    if (c % l->groups)
        return fail(w, l->node, SWIN_ERR_SHAPE, "%s: %d groups do not divide its %lld channels", what, l->groups,
                    (long long)c);
    TRY(norm_kind(w, l, l->groups, what));
    if (!l->group_w && !l->group_b) return SWIN_OK;
    snprintf(key, sizeof key, "%s.weight", prefix);
    TRY(bind_group_vec(w, l, l->group_w, LAYOUT_ONE, ws, c, what, key));
    snprintf(key, sizeof key, "%s.bias", prefix);
    return bind_group_vec(w, l, l->group_b, LAYOUT_ZERO, bs, c, what, key);
}

/* InstanceNormalization over c channels, or a GroupNorm exported as one (bind_group). Its
 * affine parameters are bound as optional plans, kept only when some CNN-block InstanceNorm
 * turns out to be affine (see swin_walk_model). *groups: the norm's groups, 0 for instance norm. */
static swin_status bind_in(struct walker *w, int64_t c, const float **ws, const float **bs, const char *what,
                           const char *prefix, bool v2, int *groups)
{
    const struct swin_onnx_layer *l = NULL;
    TRY(expect(w, L_IN, what, &l));
    swin_status st;
    bool plain = swin_onnx_index_const_all(w->g, l->w, 1.0f, w->err, &st);
    if (st) return st;
    plain = plain && swin_onnx_index_const_all(w->g, l->b, 0.0f, w->err, &st);
    if (st) return st;
    *groups = l->groups;
    if (l->groups && v2)
        return fail(w, l->node, SWIN_ERR_MODEL, "%s is a group norm; MONAI's v2 blocks use instance norm whatever norm_name says",
                    what);
    if (l->groups) return bind_group(w, l, c, plain, ws, bs, what, prefix);
    if (v2) {
        if (!plain)
            return fail(w, l->node, SWIN_ERR_MODEL, "%s has affine parameters; MONAI's v2 block InstanceNorm has none", what);
        return check_shape(w, l, l->w, what, 1, &c);
    }
    if (l->w && l->w->numel != (uint64_t)c && l->w->numel > 1 && c % (int64_t)l->w->numel == 0)
        return fail(w, l->node, SWIN_ERR_MODEL,
                    "%s normalises %llu groups of a %lld-channel map, but not as torch exports GroupNorm (Reshape, "
                    "InstanceNormalization, Reshape, Mul, Add)",
                    what, (unsigned long long)l->w->numel, (long long)c);
    TRY(norm_kind(w, l, 0, what));
    w->in_affine_seen |= !plain;
    int first = w->out->n_plans;
    TRY(bind_affine(w, l, c, ws, bs, what, prefix));
    for (int i = first; i < w->out->n_plans; i++) w->out->plans[i].in_affine = true;
    return SWIN_OK;
}

/* The BatchNormalization after a resblock conv l (a batch norm the exporter left unfolded),
 * folded into it at bind time (walk.h): its four vectors bound to the fold's fields. */
static swin_status bind_bn(struct walker *w, const struct swin_onnx_layer *conv, int64_t cout, uint64_t rows, const float **wslot,
                           const float **bslot, const char *what, const char *prefix)
{
    const struct swin_onnx_layer *l;
    TRY(expect(w, L_BN, what, &l));
    if (strcmp(l->x, swin_onnx_node_out(w->g->f->nodes[conv->node], 0)))
        return fail(w, l->node, SWIN_ERR_MODEL, "%s does not normalise the output of the conv before it", what);
    struct swin_walk_out *o = w->out;
    if (o->n_bn == SWIN_MAX_BN_FOLDS) return fail(w, l->node, SWIN_ERR_MODEL, "more batch norms than a Swin UNETR has");
    struct swin_bn_fold *b = &o->bn[o->n_bn++];
    *b = (struct swin_bn_fold){.conv_w = wslot, .conv_b = bslot, .rows = rows, .cout = (int)cout, .eps = l->eps};
    snprintf(b->what, sizeof b->what, "%s", prefix);
    static const char *const parts[] = {"weight", "bias", "running_mean", "running_var"};
    const struct swin_onnx_tensor *src[] = {l->w, l->b, l->mean, l->var};
    const float **slots[] = {&b->gamma, &b->beta, &b->mean, &b->var};
    char key[200];
    for (int p = 0; p < 4; p++) {
        snprintf(key, sizeof key, "%s.%s", prefix, parts[p]);
        TRY(bind_vec(w, l, src[p], slots[p], cout, what, key));
    }
    return SWIN_OK;
}

/* Conv idx (1, 2 or 3 = the 1x1x1 residual) of a UnetResBlock and its norm: an
 * InstanceNormalization after it, or a batch norm (norm_name='batch'; conv1 decides for the
 * block): folded by the exporter into the conv's bias, or a BatchNormalization after it. */
static swin_status bind_res_conv(struct walker *w, struct swin_resblock_w *r, int idx, int64_t cin, const char *prefix,
                                 const char *what, bool v2)
{
    const float **wslot[] = {&r->conv1_w, &r->conv2_w, &r->conv3_w}, **bslot[] = {&r->conv1_b, &r->conv2_b, &r->conv3_b};
    const float **gslot[] = {&r->norm1_w, &r->norm2_w, &r->norm3_w}, **betaslot[] = {&r->norm1_b, &r->norm2_b, &r->norm3_b};
    const int k = idx == 3 ? 1 : 3;
    char key[160], desc[200];
    const struct swin_onnx_layer *l;
    snprintf(key, sizeof key, "%s.conv%d.conv.weight", prefix, idx);
    snprintf(desc, sizeof desc, "%s conv%d%s", what, idx, idx == 3 ? " (1x1x1 residual)" : "");
    TRY(bind_conv(w, L_CONV, cin, r->cout, k, 1, k / 2, idx == 1, wslot[idx - 1], desc, key, &l));
    const struct swin_onnx_layer *next = peek(w);
    bool bn_node = next && next->kind == L_BN;
    bool folded = bn_node || (l->b && !(next && next->kind == L_IN));
    if (idx == 1) r->bn_folded = folded;
    /* conv1 -> LeakyReLU directly only where the batch norm between them is folded into conv1 */
    if (l->fused_lrelu && (!folded || bn_node))
        return fail(w, l->node, SWIN_ERR_MODEL, "%s is fused with a LeakyReLU, but its block normalises before that activation",
                    desc);
    if (folded != r->bn_folded || (folded && v2))
        return fail(w, l->node, SWIN_ERR_MODEL, "%s %s; expected %s", desc,
                    folded ? "carries a batch norm (a BatchNormalization, or a bias and no InstanceNormalization after it)"
                           : "is followed by an InstanceNormalization",
                    v2 || !r->bn_folded ? "an InstanceNormalization after every conv of the block"
                                        : "every conv of the block to carry a batch norm like conv1");
    if (folded) {
        w->batch_norm_seen = true;
        snprintf(key, sizeof key, "%s.conv%d.conv.bias", prefix, idx);
        TRY(bind_vec(w, l, l->b, bslot[idx - 1], r->cout, desc, key));
        if (!bn_node) return SWIN_OK;
        snprintf(key, sizeof key, "%s.norm%d", prefix, idx);
        snprintf(desc, sizeof desc, "%s norm%d", what, idx);
        return bind_bn(w, l, r->cout, (uint64_t)k * k * k * (uint64_t)cin, wslot[idx - 1], bslot[idx - 1], desc, key);
    }
    if (l->b) return fail(w, l->node, SWIN_ERR_MODEL, "%s has a bias and an InstanceNormalization after it; MONAI's has none", desc);
    snprintf(key, sizeof key, "%s.norm%d", prefix, idx);
    snprintf(desc, sizeof desc, "%s norm%d", what, idx);
    return bind_in(w, r->cout, gslot[idx - 1], betaslot[idx - 1], desc, key, v2, &r->norm_groups);
}

/* UnetResBlock cin -> cout (conv3 only when cin != cout); prefix e.g. "encoder1.layer". */
static swin_status bind_resblock(struct walker *w, struct swin_resblock_w *r, int64_t cin, int64_t cout, const char *prefix,
                                 const char *what, bool v2)
{
    r->cin = (int)cin;
    r->cout = (int)cout;
    TRY(bind_res_conv(w, r, 1, cin, prefix, what, v2));
    TRY(bind_res_conv(w, r, 2, cout, prefix, what, v2));
    return cin == cout ? SWIN_OK : bind_res_conv(w, r, 3, cin, prefix, what, v2);
}

static swin_status set_heads(struct walker *w, const struct swin_onnx_layer *l, int s, int b, int64_t heads)
{
    int64_t c = swin_stage_channels(&w->m->cfg, s);
    if (b == 0) {
        if (heads < 1 || c % heads)
            return fail(w, l->node, SWIN_ERR_SHAPE, "'%s' gives %lld heads, which do not divide the stage's %lld channels",
                        l->w->name, (long long)heads, (long long)c);
        w->m->cfg.heads[s] = (int)heads;
    } else if (heads != w->m->cfg.heads[s]) {
        return fail(w, l->node, SWIN_ERR_SHAPE, "'%s' gives %lld heads, block 0 of stage %d has %d", l->w->name, (long long)heads,
                    s + 1, w->m->cfg.heads[s]);
    }
    return SWIN_OK;
}

/* A relative-position bias an exporter constant-folded into (1, heads, n, n), or into
 * table[index] (n*n, heads) viewed as that (const_view.h): the table rows it reaches are
 * recovered (swin_layout_unfold_bias); cfg.bias_tokens[s] records n. */
static swin_status bind_folded_bias(struct walker *w, const struct swin_onnx_layer *l, const struct swin_onnx_layer *qkv, int s, int b)
{
    struct swin_config *cfg = &w->m->cfg;
    const struct swin_onnx_tensor *t = l->view.src;
    const struct swin_const_view *v = &l->view;
    int r = v->ndim;
    char sh[120];
    /* (heads, n, n) after 1s; MONAI's flash-attention path adds the bias to the mask's view
     * (1, nW, 1, n, n) before attention: (1, 1, heads, n, n) when only the bias was folded,
     * (.., nW, heads, n, n) when the mask was folded into it too */
    int ones = 0;
    while (ones < r && v->dims[ones] == 1) ones++;
    bool with_mask = r - ones == 4 && v->dims[r - 4] > 1;
    if (r < 3 || (r - ones > 3 && !with_mask))
        return fail(w, l->node, SWIN_ERR_MODEL, "expected the relative-position bias (1, heads, n, n) to be added here, found constant '%s' of shape %s",
                    t->name, shape_str(v->dims, r, sh, sizeof sh));
    if (with_mask) {
        if (!w->have_window)
            return fail(w, l->node, SWIN_ERR_MODEL, "constant '%s' folds a bias and a shifted-window mask before the window is known", t->name);
        TRY(swin_attn_bias_mask_check(w->g->f, cfg, s, v, w->err));
    }
    int64_t heads = v->dims[r - 3], n = v->dims[r - 1];
    if (!w->have_window) {
        /* no table: the window from stage 1's partition, or, when the graph computes its
         * shapes, from the token count (a cube); either unshrunk by stage 1's grid */
        int win[3];
        if (!swin_window_from_partition(w->g, qkv->node, win, w->err) || (int64_t)win[0] * win[1] * win[2] != n) {
            int k = 1;
            while ((int64_t)k * k * k < n) k++;
            win[0] = win[1] = win[2] = (int64_t)k * k * k == n ? k : 0;
        }
        bool shrunk = false;
        for (int a = 0; a < 3; a++) shrunk |= cfg->cube[a] && cfg->cube[a] / 2 <= win[a];
        if (!win[0] || s != 0 || shrunk)
            return fail(w, l->node, SWIN_ERR_MODEL,
                        "the relative-position bias was constant-folded into '%s' for %lld-token windows; the configured window cannot be told from it (not a cube, or shrunk to the stage size)",
                        t->name, (long long)n);
        memcpy(cfg->window, win, sizeof win);
        w->have_window = true;
    }
    if (n > (int64_t)cfg->window[0] * cfg->window[1] * cfg->window[2])
        return fail(w, l->node, SWIN_ERR_SHAPE, "folded bias '%s' covers %lld-token windows, more than the %dx%dx%d window has", t->name,
                    (long long)n, cfg->window[0], cfg->window[1], cfg->window[2]);
    TRY(set_heads(w, l, s, b, heads));
    if (b > 0 && cfg->bias_tokens[s] != n)
        return fail(w, l->node, SWIN_ERR_MODEL, "stage %d mixes folded biases of different window sizes", s + 1);
    cfg->bias_tokens[s] = (int)n;
    TRY(plan(w, l, &w->m->stage[s].block[b].bias_table, t, LAYOUT_COPY, (uint64_t)heads, (uint64_t)n, (uint64_t)n));
    struct swin_bind_plan *p = &w->out->plans[w->out->n_plans - 1];
    p->unfold_bias = true;
    for (int k = 0; k < 3; k++) p->bias_strides[k] = v->strides[r - 3 + k];
    p->out_numel = (uint64_t)swin_bias_table_rows(cfg) * (uint64_t)heads;
    return SWIN_OK;
}

/* One Swin block of stage s (0-based), block b. */
static swin_status bind_block(struct walker *w, int s, int b)
{
    struct swin_config *cfg = &w->m->cfg;
    struct swin_block_w *blk = &w->m->stage[s].block[b];
    int64_t c = swin_stage_channels(cfg, s);
    char pre[120], p[160], what[160];
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.blocks.%d", s + 1, b);
#define WHAT(x) (snprintf(what, sizeof what, "stage %d block %d " x, s + 1, b), what)
#define KEY(x) (snprintf(p, sizeof p, "%s." x, pre), p)
    TRY(bind_ln(w, c, &blk->norm1_w, &blk->norm1_b, WHAT("norm1"), KEY("norm1")));

    const struct swin_onnx_layer *qkv = peek(w);
    TRY(bind_linear(w, c, 3 * c, &blk->qkv_w, &blk->qkv_b, -1, WHAT("attn.qkv"), KEY("attn.qkv")));
    bool has_bias = qkv->b != NULL;
    if (s == 0 && b == 0) cfg->qkv_bias = has_bias;
    else if (has_bias != cfg->qkv_bias)
        return fail(w, qkv->node, SWIN_ERR_MODEL, "%s %s a bias but the first block's %s", WHAT("attn.qkv"),
                    has_bias ? "has" : "lacks", cfg->qkv_bias ? "has one" : "does not");

    const struct swin_onnx_layer *t = peek(w);
    if (t && t->kind == L_FOLDED) {
        w->pos++;
        TRY(bind_folded_bias(w, t, qkv, s, b));
    } else if (t && t->kind == L_ATTN && t->view.src) {
        /* the Attention's constant mask: its scale is checked below */
        TRY(bind_folded_bias(w, t, qkv, s, b));
    } else {
        TRY(expect(w, L_TABLE, WHAT("relative_position_bias_table lookup"), &t));
        if (!w->have_window) {
            TRY(swin_attn_window_detect(w->g, t->node, t->w->dims[0], cfg->window, w->err));
            w->have_window = true;
        }
        if (cfg->bias_tokens[s])
            return fail(w, t->node, SWIN_ERR_MODEL, "stage %d mixes folded and table relative-position biases", s + 1);
        TRY(set_heads(w, t, s, b, t->w->dims[1]));
        int64_t want[2] = {swin_bias_table_rows(cfg), cfg->heads[s]};
        TRY(check_shape(w, t, t->w, WHAT("bias table"), 2, want));
        TRY(check_name(w, t, t->w, KEY("attn.relative_position_bias_table")));
        TRY(plan(w, t, &blk->bias_table, t->w, LAYOUT_COPY, (uint64_t)(want[0] * want[1]), 1, 1));
    }
    /* a folded shifted-window mask: checked, then dropped (the kernels derive it) */
    while ((t = peek(w)) && t->kind == L_FOLDED) {
        if (!swin_const_view_contiguous(&t->view))
            return fail(w, t->node, SWIN_ERR_MODEL,
                        "constant '%s' reaches stage %d's attention logits through a transposed view; a folded shifted-window mask is checked in its stored order only",
                        t->w->name, s + 1);
        TRY(swin_attn_mask_check(w->g->f, cfg, s, t->w, w->err));
        w->pos++;
    }
    if ((t = peek(w)) && t->kind == L_ATTN) {
        /* 1e-2: a graph stored in float16 or bfloat16 holds the scale (or the square root
         * TorchScript's decomposed SDPA scales q and k by) rounded to its precision */
        float want = 1.0f / sqrtf((float)(c / cfg->heads[s]));
        if (t->scale != 0 && !(fabsf(t->scale - want) <= 1e-2f * want))
            return fail(w, t->node, SWIN_ERR_MODEL, "%s scales the logits by %g, MONAI by 1/sqrt(head dim) = %g",
                        WHAT("attention"), (double)t->scale, (double)want);
        /* a rounded copy of MONAI's scale is run as stored, as ONNX Runtime runs it */
        if (t->scale != 0 && fabsf(t->scale - want) > 1e-6f * want) {
            if (cfg->attn_scale[s] != 0 && cfg->attn_scale[s] != t->scale)
                return fail(w, t->node, SWIN_ERR_MODEL, "%s scales the logits by %.9g, an earlier block of the stage by %.9g",
                            WHAT("attention"), (double)t->scale, (double)cfg->attn_scale[s]);
            cfg->attn_scale[s] = t->scale;
        }
        w->pos++;
    }

    TRY(bind_linear(w, c, c, &blk->proj_w, &blk->proj_b, 1, WHAT("attn.proj"), KEY("attn.proj")));
    TRY(bind_ln(w, c, &blk->norm2_w, &blk->norm2_b, WHAT("norm2"), KEY("norm2")));
    const struct swin_onnx_layer *fc1 = peek(w);
    if (b == 0 && fc1 && fc1->kind == L_LINEAR && fc1->w->ndim == 2)
        cfg->mlp_hidden[s] = (int)(fc1->w_out_in ? fc1->w->dims[0] : fc1->w->dims[1]);
    int64_t hid = cfg->mlp_hidden[s];
    TRY(bind_linear(w, c, hid, &blk->fc1_w, &blk->fc1_b, 1, WHAT("mlp.linear1"), KEY("mlp.linear1")));
    TRY(bind_linear(w, hid, c, &blk->fc2_w, &blk->fc2_b, 1, WHAT("mlp.linear2"), KEY("mlp.linear2")));
#undef WHAT
#undef KEY
    return SWIN_OK;
}

/* proj_out of hidden state hs (C = f << hs channels) when cfg.normalize: a LayerNormalization
 * without affine parameters (scale 1, bias 0 or absent). */
static swin_status proj_out(struct walker *w, int hs)
{
    if (!w->m->cfg.normalize || (hs < SWIN_STAGES && w->proj_out_shared[hs])) return SWIN_OK;
    int64_t c = swin_stage_channels(&w->m->cfg, hs);
    char what[80];
    snprintf(what, sizeof what, "the proj_out LayerNormalization of hidden state %d", hs);
    const struct swin_onnx_layer *l = NULL;
    TRY(expect(w, L_LN, what, &l));
    swin_status st;
    bool plain = swin_onnx_index_const_all(w->g, l->w, 1.0f, w->err, &st);
    if (!st) plain = plain && swin_onnx_index_const_all(w->g, l->b, 0.0f, w->err, &st);
    if (st) return st;
    if (l->w && l->w->numel != (uint64_t)c)
        return fail(w, l->node, SWIN_ERR_SHAPE, "%s normalises %llu channels, expected %lld", what, (unsigned long long)l->w->numel,
                    (long long)c);
    if (!plain) return fail(w, l->node, SWIN_ERR_MODEL, "%s has affine parameters; MONAI's has none", what);
    return SWIN_OK;
}

static swin_status bind_stage(struct walker *w, int s)
{
    struct swin_config *cfg = &w->m->cfg;
    struct swin_stage_w *st = &w->m->stage[s];
    int64_t c = swin_stage_channels(cfg, s);
    char pre[120], what[160];
    const struct swin_onnx_layer *l = peek(w);
    if (s == 0) cfg->use_v2 = l && l->kind == L_CONV && l->kernel == 3;
    if (cfg->use_v2) {
        snprintf(pre, sizeof pre, "swinViT.layers%dc.0.layer", s + 1);
        snprintf(what, sizeof what, "stage %d v2 residual block", s + 1);
        TRY(bind_resblock(w, &st->v2, c, c, pre, what, true));
    }
    /* hidden state s's proj_out, merged by ONNX Runtime with this stage's first norm1: its
     * weightless normalisation comes here, the norm1's scale and shift next */
    if ((l = peek(w)) && l->kind == L_LN && l->shared && !l->w && !l->b) {
        w->proj_out_shared[s] = true;
        w->pos++;
    }
    int b = 0;
    while ((l = peek(w)) && l->kind == L_LN && ln_width(l) == (uint64_t)c) {
        if (b == SWIN_MAX_DEPTH)
            return fail(w, l->node, SWIN_ERR_MODEL, "stage %d has more than %d Swin blocks", s + 1, SWIN_MAX_DEPTH);
        TRY(bind_block(w, s, b++));
    }
    if (!b) {
        if (!l) return fail(w, -1, SWIN_ERR_MODEL, "the graph ends where stage %d's first Swin block was expected", s + 1);
        return fail(w, l->node, SWIN_ERR_MODEL, "found a %s where stage %d's first Swin block (LayerNormalization over %lld channels) was expected",
                    swin_layer_kind_name(l->kind), s + 1, (long long)c);
    }
    cfg->depths[s] = b;

    /* patch merging: LN(8C) over the Concat of 8 sub-grids, then Linear 8C -> 2C without bias */
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.downsample.norm", s + 1);
    snprintf(what, sizeof what, "stage %d patch-merging norm", s + 1);
    l = peek(w);
    TRY(bind_ln(w, 8 * c, &st->merge_norm_w, &st->merge_norm_b, what, pre));
    swin_merge_order order;
    TRY(swin_merge_order_read(w->g, l->node, l->x, order, w->err));
    if (!w->have_merge_order) {
        memcpy(cfg->merge_order, order, sizeof order);
        cfg->merge_kind = swin_merge_kind_of(order);
        w->have_merge_order = true;
    } else if (memcmp(cfg->merge_order, order, sizeof order)) {
        return fail(w, l->node, SWIN_ERR_MODEL, "stage %d's patch merging concatenates its sub-grids in another order than stage 1's", s + 1);
    }
    snprintf(pre, sizeof pre, "swinViT.layers%d.0.downsample.reduction", s + 1);
    snprintf(what, sizeof what, "stage %d patch-merging reduction", s + 1);
    TRY(bind_linear(w, 8 * c, 2 * c, &st->merge_red_w, NULL, 0, what, pre));

    return SWIN_OK;
}

/* The graph input (B, Ci, D, H, W): the export cube, 0 where an axis is dynamic. */
static swin_status read_input(struct walker *w)
{
    const struct swin_onnx_file *f = w->g->f;
    struct swin_config *cfg = &w->m->cfg;
    const struct swin_onnx_value_info *in = NULL;
    for (int i = 0; i < f->n_inputs; i++) {
        if (swin_onnx_index_tensor(w->g, f->inputs[i].name)) continue;   /* IR < 4 lists initializers as inputs */
        if (in) return fail(w, -1, SWIN_ERR_MODEL, "the graph has more than one input ('%s', '%s'); a Swin UNETR has one", in->name,
                            f->inputs[i].name);
        in = &f->inputs[i];
    }
    if (!in) return fail(w, -1, SWIN_ERR_MODEL, "the graph has no input");
    if (in->ndim != 5)
        return fail(w, -1, SWIN_ERR_MODEL, "graph input '%s' has rank %d, expected 5 (batch, channels, D, H, W)", in->name, in->ndim);
    if (in->dims[1] && in->dims[1] != cfg->in_channels)
        return fail(w, -1, SWIN_ERR_SHAPE, "graph input '%s' has %lld channels but the patch embedding takes %d", in->name,
                    (long long)in->dims[1], cfg->in_channels);
    for (int k = 0; k < 3; k++) {
        cfg->cube[k] = (int)in->dims[2 + k];
        if (cfg->cube[k] % 32)
            return fail(w, -1, SWIN_ERR_SHAPE, "graph input '%s' has spatial size %lld, not a multiple of 32", in->name,
                        (long long)in->dims[2 + k]);
    }
    return SWIN_OK;
}

swin_status swin_walk_model(const struct swin_onnx_index *g, const struct swin_onnx_layer_list *layers, struct swin_model *m, struct swin_walk_out *out,
                       swin_error *err)
{
    struct walker wk = {.g = g, .L = layers, .m = m, .out = out, .err = err, .norm_groups = -1}, *w = &wk;
    struct swin_config *cfg = &m->cfg;
    out->plans = NULL;
    out->n_plans = 0;

    /* patch embedding: Conv k=2 s=2 with bias (a patchify conv with another size is a
     * patch_size MONAI allows since 1.5 but swinrun does not) */
    const struct swin_onnx_layer *l = peek(w);
    if (l && l->kind == L_CONV && l->kernel == l->stride && l->kernel != 2)
        return fail(w, l->node, SWIN_ERR_MODEL, "patch embedding with kernel %d, stride %d: only patch_size 2 is supported", l->kernel,
                    l->stride);
    if (l && l->kind == L_CONV && l->w->ndim == 5) {
        cfg->feature_size = (int)l->w->dims[0];
        cfg->in_channels = (int)l->w->dims[1];
    }
    int64_t f = cfg->feature_size;
    TRY(bind_conv(w, L_CONV, cfg->in_channels, f, 2, 2, 0, false, &m->patch_w, "patch-embedding conv", "swinViT.patch_embed.proj.weight", &l));
    if (f < 1) return fail(w, l->node, SWIN_ERR_SHAPE, "patch-embedding conv has no output channels");
    TRY(bind_vec(w, l, l->b, &m->patch_b, f, "patch-embedding conv bias", "swinViT.patch_embed.proj.bias"));
    if (!l->b) return fail(w, l->node, SWIN_ERR_MODEL, "patch-embedding conv has no bias; MONAI's has one");
    TRY(read_input(w));

    /* patch_norm: an LN over f right after the conv that is not stage 1's first norm1 (which a
     * Linear, qkv, follows) */
    l = peek(w);
    cfg->patch_norm = l && l->kind == L_LN && ln_width(l) == (uint64_t)f &&
                      !(w->pos + 1 < layers->n && layers->v[w->pos + 1].kind == L_LINEAR);
    if (cfg->patch_norm) TRY(bind_ln(w, f, &m->patch_norm_w, &m->patch_norm_b, "patch_norm", "swinViT.patch_embed.norm"));
    for (int s = 0; s < SWIN_STAGES; s++) TRY(bind_stage(w, s));

    /* The CNN part in dataflow order (order.h): encoder10 on hs4; then per decoder stage
     * the up-convolution, the skip (hs3 raw for decoder5, else encoder<k> on its hidden
     * state), the decoder block; each hidden state's proj_out LN comes just before its
     * first consumer. Its presence before encoder10 decides `normalize`. */
    l = peek(w);
    cfg->normalize = l && l->kind == L_LN && (ln_width(l) == (uint64_t)(16 * f) || !l->w);
    TRY(proj_out(w, 4));
    TRY(bind_resblock(w, &m->encoder[4], 16 * f, 16 * f, "encoder10.layer", "encoder10", false));
    char pre[80], key[120], what[80];
    for (int d = SWIN_DECODERS - 1; d >= 0; d--) {
        int64_t cin = d ? f << d : f, cout = d ? cin / 2 : f;
        snprintf(key, sizeof key, "decoder%d.transp_conv.conv.weight", d + 1);
        snprintf(what, sizeof what, "decoder%d transposed conv", d + 1);
        TRY(bind_conv(w, L_CONVT, cin, cout, 2, 2, 0, false, &m->decoder[d].transp_w, what, key, NULL));
        if (d == 4) {
            TRY(proj_out(w, 3));                  /* hs3 is decoder5's skip as it is */
        } else if (d > 0) {
            TRY(proj_out(w, d - 1));              /* encoder<d+1> runs on hs<d-1> */
            snprintf(pre, sizeof pre, "encoder%d.layer", d + 1);
            snprintf(what, sizeof what, "encoder%d", d + 1);
            TRY(bind_resblock(w, &m->encoder[d], f << (d - 1), f << (d - 1), pre, what, false));
        } else {
            TRY(bind_resblock(w, &m->encoder[0], cfg->in_channels, f, "encoder1.layer", "encoder1", false));
        }
        snprintf(pre, sizeof pre, "decoder%d.conv_block", d + 1);
        snprintf(what, sizeof what, "decoder%d", d + 1);
        TRY(bind_resblock(w, &m->decoder[d].res, 2 * cout, cout, pre, what, false));
    }
    l = peek(w);
    if (l && l->kind == L_CONV && l->w->ndim == 5) cfg->out_channels = (int)l->w->dims[0];
    TRY(bind_conv(w, L_CONV, f, cfg->out_channels, 1, 1, 0, false, &m->out_w, "output conv", "out.conv.conv.weight", &l));
    if (!l->b) return fail(w, l->node, SWIN_ERR_MODEL, "output conv has no bias; MONAI's has one");
    TRY(bind_vec(w, l, l->b, &m->out_b, cfg->out_channels, "output conv bias", "out.conv.conv.bias"));
    if ((l = peek(w)))
        return fail(w, l->node, SWIN_ERR_MODEL, "unexpected %s after the output conv; a Swin UNETR ends there", swin_layer_kind_name(l->kind));

    /* InstanceNorm gamma/beta are kept only for an affine model */
    cfg->instnorm_affine = w->in_affine_seen;
    cfg->batch_norm = w->batch_norm_seen;
    cfg->batch_norm_at_load = w->out->n_bn > 0;
    cfg->norm_groups = w->norm_groups > 0 ? w->norm_groups : 0;
    if (!cfg->instnorm_affine) {
        int k = 0;
        for (int i = 0; i < out->n_plans; i++)
            if (!out->plans[i].in_affine) out->plans[k++] = out->plans[i];
        out->n_plans = k;
    }
    return SWIN_OK;
}
