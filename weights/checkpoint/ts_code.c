/* What a TorchScript archive says of the model beyond its tensors (ckpt_file.h's says_*): the
 * cube it was traced at (traced_inputs.pkl), and from its code the rest. torch.jit.save
 * keeps each module class's forward as source text under ARCHIVE/code/ (TorchScript's own
 * printer wrote it: one call per line, every value named; most files deflated). It is read
 * here as text, a line at a time, and never run. Of a traced MONAI SwinUNETR it tells what the state dict cannot:
 *   - the GroupNorms' num_groups:   out = torch.group_norm(argument_1, 3, weight, bias)
 *   - normalize: SwinTransformer.proj_out's layer norm has no weights, the blocks' have:
 *                                   x1 = torch.layer_norm(input1, [24])
 *   - the merge order: each PatchMerging(V2).forward slices its (B, D, H, W, C) input 8 times
 *     and concatenates the sub-grids along C:
 *                                   _1 = torch.slice(_0, 1, 0, 9223372036854775807, 2)
 *                                   input = torch.cat([x0, x1, x2, x3, x4, x5, x6, x7], -1)
 *     (PatchMergingV2 names the list first: _40 = [_4, _9, ...]; input = torch.cat(_40, -1))
 * A line of another form says nothing; merges whose orders differ say none. */
#include "weights/checkpoint/ckpt_file.h"
#include "weights/onnx/merge.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCE (4u << 20)   /* one class file; MONAI's largest is under 64 KiB */
#define MAX_TOTAL (64u << 20)   /* all code files read */
#define MAX_SLICES 256          /* slices one merge's forward assigns (a PatchMerging: 40) */
#define NAME_LEN 48
#define MAX_INPUTS_PKL (64u << 10) /* traced_inputs.pkl: one tensor's record is under 400 bytes */

struct slice {
    char name[NAME_LEN], src[NAME_LEN];
    int64_t axis, start, step;
};

/* One PatchMerging class's forward as it is read: its slices and the names its cat joins. */
struct merge_scope {
    bool open;
    struct slice s[MAX_SLICES];
    int n_slices;
    char list_name[NAME_LEN], list[8][NAME_LEN];
    int n_list;          /* 8 when list holds the last list of 8 names assigned */
    char cat[8][NAME_LEN];
    int n_cat;           /* -1: a cat that is not of 8 names */
};

struct tally {
    int groups;          /* 0 none seen, -1 differing, -2 one not a literal (sticky) */
    int other_norms, weighted_ln, weightless_ln;
    int orders;          /* merges read; -1 once two disagree */
    swin_merge_order order;
};

static const char *skip_space(const char *p)
{
    while (*p == ' ') p++;
    return p;
}

/* An identifier at p into out (NAME_LEN); the character after it, NULL when none fits. */
static const char *ident(const char *p, char *out)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
    if (!n || n >= NAME_LEN) return NULL;
    memcpy(out, p, n);
    out[n] = 0;
    return p + n;
}

/* An integer argument (None as dflt); the character after it, NULL when neither. */
static const char *int_arg(const char *p, int64_t dflt, int64_t *v)
{
    p = skip_space(p);
    if (!strncmp(p, "None", 4)) {
        *v = dflt;
        return p + 4;
    }
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p) return NULL;
    *v = x;
    return end;
}

/* "torch.group_norm(X, G, ...": G, or -2 when it is not a positive integer literal. */
static int group_count(const char *args)
{
    const char *comma = strchr(args, ',');
    int64_t g;
    if (!comma || !int_arg(comma + 1, -1, &g) || g < 1 || g > (1 << 20)) return -2;
    return (int)g;
}

/* "torch.layer_norm(X, [C]...": whether it passes a weight (not absent, not None). */
static bool layer_norm_weighted(const char *args)
{
    const char *p = strchr(args, ']');
    if (!p) return true;
    p = skip_space(p + 1);
    if (*p != ',') return false;
    return strncmp(skip_space(p + 1), "None", 4) != 0;
}

/* "NAME = torch.slice(SRC, AXIS[, START[, END[, STEP]]])" into the scope. */
static void read_slice(struct merge_scope *m, const char *name, const char *args)
{
    if (m->n_slices == MAX_SLICES) return;
    struct slice *s = &m->s[m->n_slices];
    const char *p = ident(skip_space(args), s->src);
    if (!p || *p != ',' || !(p = int_arg(p + 1, 0, &s->axis))) return;
    s->start = 0, s->step = 1;
    int64_t end;
    if (*p == ',' && (p = int_arg(p + 1, 0, &s->start)) && *p == ',' && (p = int_arg(p + 1, 0, &end)) && *p == ',')
        p = int_arg(p + 1, 1, &s->step);
    if (!p || *skip_space(p) != ')') return;
    snprintf(s->name, sizeof s->name, "%s", name);
    m->n_slices++;
}

/* "[A, B, ...]" of 8 names into names; the character after the ']', NULL when not that. */
static const char *eight_names(const char *p, char names[8][NAME_LEN])
{
    int n = 0;
    if (*p++ != '[') return NULL;
    for (;;) {
        if (n == 8 || !(p = ident(skip_space(p), names[n]))) return NULL;
        n++;
        p = skip_space(p);
        if (*p == ']') return n == 8 ? p + 1 : NULL;
        if (*p++ != ',') return NULL;
    }
}

/* "NAME = torch.cat([A, B, ...], AXIS)" or "NAME = torch.cat(LIST, AXIS)" of a list assigned
 * before ("LIST = [A, B, ...]"): the names, when there are 8 and AXIS is C's. */
static void read_cat(struct merge_scope *m, const char *args)
{
    const char *p = skip_space(args);
    char list[NAME_LEN];
    m->n_cat = -1;
    if (*p == '[') {
        p = eight_names(p, m->cat);
    } else if ((p = ident(p, list)) && m->n_list == 8 && !strcmp(list, m->list_name)) {
        memcpy(m->cat, m->list, sizeof m->cat);
    } else {
        return;
    }
    int64_t axis;
    if (!p || *(p = skip_space(p)) != ',' || !(p = int_arg(p + 1, 0, &axis)) || (axis != -1 && axis != 4)) return;
    m->n_cat = 8;
}

static const struct slice *slice_named(const struct merge_scope *m, const char *name)
{
    for (int i = 0; i < m->n_slices; i++)
        if (!strcmp(m->s[i].name, name)) return &m->s[i];
    return NULL;
}

/* The closed scope's order: each cat input followed back through its slices. */
static void close_merge(struct merge_scope *m, struct tally *t)
{
    if (!m->open) return;
    m->open = false;
    if (m->n_cat != 8 || t->orders < 0) return;
    swin_merge_order order;
    for (int k = 0; k < 8; k++) {
        int off[3] = {-1, -1, -1};
        const struct slice *s = slice_named(m, m->cat[k]);
        for (int depth = 0; s && depth < 8; depth++, s = slice_named(m, s->src))
            if (!swin_merge_slice_take(off, s->axis, s->start, s->step)) return;
        if (s || off[0] < 0 || off[1] < 0 || off[2] < 0) return;
        memcpy(order[k], off, sizeof off);
    }
    if (t->orders > 0 && memcmp(order, t->order, sizeof order)) {
        t->orders = -1;
        return;
    }
    memcpy(t->order, order, sizeof order);
    t->orders++;
}

static void read_line(const char *line, struct merge_scope *m, struct tally *t)
{
    const char *p = skip_space(line), *call;
    if (!strncmp(p, "class ", 6)) {
        close_merge(m, t);
        p += 6;
        if (!strncmp(p, "PatchMerging(", 13) || !strncmp(p, "PatchMergingV2(", 15)) {
            memset(m, 0, sizeof *m);
            m->open = true;
        }
        return;
    }
    if ((call = strstr(p, "torch.group_norm("))) {
        int g = group_count(call + 17);
        t->groups = t->groups == -2 || g == -2 ? -2 : t->groups == 0 || t->groups == g ? g : -1;
    } else if (strstr(p, "torch.instance_norm(") || strstr(p, "torch.batch_norm(")) {
        t->other_norms++;
    } else if ((call = strstr(p, "torch.layer_norm("))) {
        if (layer_norm_weighted(call + 17)) t->weighted_ln++;
        else t->weightless_ln++;
    }
    if (!m->open) return;
    char name[NAME_LEN];
    const char *q = ident(p, name);
    if (!q || strncmp(q, " = ", 3)) return;
    q += 3;
    if (!strncmp(q, "torch.slice(", 12)) {
        read_slice(m, name, q + 12);
    } else if (!strncmp(q, "torch.cat(", 10)) {
        read_cat(m, q + 10);
    } else if (*q == '[') {
        m->n_list = eight_names(q, m->list) ? 8 : 0;
        snprintf(m->list_name, sizeof m->list_name, "%s", name);
    }
}

/* One code file, its lines split in place (text is NUL-terminated). */
static void read_source(char *text, struct tally *t)
{
    struct merge_scope *m = calloc(1, sizeof *m);
    if (!m) return;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        read_line(line, m, t);
        line = nl ? nl + 1 : NULL;
    }
    close_merge(m, t);
    free(m);
}

/* v, or what restore_type_tag(v, 'TYPE') wraps (TorchScript tags containers with their type). */
static const struct pk_value *untagged(const struct pk_value *v)
{
    return v && v->kind == PK_OBJECT && v->n == 2 && !strcmp(v->s, "torch.jit._pickle.restore_type_tag") ? v->items[0] : v;
}

/* ARCHIVE/traced_inputs.pkl, where torch.jit.trace keeps its example inputs
 * (restore_type_tag({'forward': restore_type_tag([x], 'List[Any]')}, 'Dict[str, List[Any]]')): the one input's (D, H, W)
 * when x is (N, C, D, H, W), each a multiple of 32 in [32, 1024] (a size SwinUNETR runs), as
 * the cube the module was traced at. Only the tensor's record is read, not its data. */
static void traced_cube(struct swin_ckpt_file *c, const char *prefix)
{
    char name[600];
    snprintf(name, sizeof name, "%straced_inputs.pkl", prefix);
    const struct swin_zip_entry *e = swin_zip_find(&c->zip, name);
    if (!e || e->usize > MAX_INPUTS_PKL) return;
    unsigned char *buf = malloc((size_t)e->usize + 1);
    struct swin_pickle pk = {0};
    size_t len = 0;
    swin_error ignored;
    bool read = buf && !swin_zip_inflate(&c->zip, e, buf, (size_t)e->usize, &len, &ignored) &&
                !swin_pickle_load(buf, len, name, &pk, &ignored);
    free(buf);
    if (!read) return;
    const struct pk_value *inputs = untagged(swin_pickle_dict_get(untagged(pk.root), "forward"));
    const struct pk_value *x = inputs && inputs->kind == PK_LIST && inputs->n == 1 ? inputs->items[0] : NULL;
    bool fits = x && x->kind == PK_TENSOR && x->ndim == 5;
    for (int k = 2; fits && k < 5; k++) fits = x->size[k] >= 32 && x->size[k] <= 1024 && x->size[k] % 32 == 0;
    for (int k = 0; fits && k < 3; k++) c->says_cube[k] = (int)x->size[k + 2];
    swin_pickle_free(&pk);
}

void swin_ts_code_read(struct swin_ckpt_file *c, const char *prefix)
{
    struct tally t = {0};
    size_t pn = strlen(prefix), total = 0;
    for (int i = 0; i < c->zip.n; i++) {
        const struct swin_zip_entry *e = &c->zip.entries[i];
        size_t len = strlen(e->name);
        if (strncmp(e->name, prefix, pn) || strncmp(e->name + pn, "code/", 5) || len < 3 || strcmp(e->name + len - 3, ".py") ||
            e->usize > MAX_SOURCE || total + e->usize > MAX_TOTAL)
            continue;
        char *text = malloc((size_t)e->usize + 1);
        size_t got = 0;
        swin_error ignored;
        if (!text) return;
        if (!swin_zip_inflate(&c->zip, e, text, (size_t)e->usize, &got, &ignored)) {
            text[got] = 0;
            total += got;
            read_source(text, &t);
        }
        free(text);
    }
    if ((t.groups > 0 || t.groups == -1) && c->says_group_norm == 1 && c->says_norm_groups == 0) c->says_norm_groups = t.groups;
    if (t.weighted_ln && c->says_normalize < 0) c->says_normalize = t.weightless_ln > 0;
    if (t.orders > 0) memcpy(c->order, t.order, sizeof t.order), c->says_order = true;
    traced_cube(c, prefix);
}
