/* torch.export.save's archive (.pt2, PyTorch's PT2 archive format): a zip of stored records
 * under one folder, ARCHIVE/:
 *   archive_format                       "pt2"
 *   data/weights/model_weights_config.json
 *       {"config": {FQN: {"path_name": "weight_7", "is_param": true, "use_pickle": false,
 *        "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 12}, ...], "strides": [...],
 *        "storage_offset": {"as_int": 0}, ...}}, ...}}: the state dict, each tensor a view
 *       (sizes, strides, offset in elements) of the raw bytes of data/weights/PATH_NAME (its
 *       untyped storage; views of one storage share it);
 *   models/model.json                    the exported graph (torch._export.serde), of which
 *       only a few calls are read: group norm's num_groups, whether the hidden states are
 *       layer-normalised without weights (normalize=True), the first patch merging's
 *       slices and concatenation (its merge order), and the input's size (the export cube).
 * Pickled tensors (use_pickle: tensor subclasses) are refused; nothing is decompressed. */
#include "weights/checkpoint/ckpt_file.h"
#include "weights/onnx/merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(st, ...) swin_error_set(err, st, __VA_ARGS__)
#define MAX_CONFIG (64u << 20)
#define MAX_GRAPH (64u << 20) /* an f=48 SwinUNETR's graph is about 3 MB */

/* torch._export.serde.schema.ScalarType */
static enum pk_dtype dtype_of(long code)
{
    switch (code) {
    case 1: return PK_U8;
    case 2: return PK_I8;
    case 3: return PK_I16;
    case 4: return PK_I32;
    case 5: return PK_I64;
    case 6: return PK_F16;
    case 7: return PK_F32;
    case 8: return PK_F64;
    case 12: return PK_BOOL8;
    case 13: return PK_BF16;
    default: return PK_DTYPE_UNKNOWN;
    }
}

/* {"as_int": N} (a SymInt that is a plain integer), N >= 0. */
static bool as_int(const json_node *n, int64_t *v)
{
    const char *t = swin_json_text(swin_json_get(n, "as_int"));
    if (!t || t[0] < '0' || t[0] > '9') return false;
    char *end;
    errno = 0;
    long long x = strtoll(t, &end, 10);
    if (*end || errno) return false;
    *v = x;
    return true;
}

static bool as_long(const json_node *n, long *v)
{
    const char *t = swin_json_text(n);
    if (!t) return false;
    char *end;
    errno = 0;
    *v = strtol(t, &end, 10);
    return !*end && !errno && end != t;
}

static swin_status read_json(struct swin_ckpt_file *c, const struct swin_zip_entry *e, uint64_t max, json_node **out,
                             swin_error *err)
{
    *out = NULL;
    if (e->method) return FAIL(SWIN_ERR_FORMAT, "%s: '%s' is compressed (method %d)", c->path, e->name, e->method);
    if (e->size > max) return FAIL(SWIN_ERR_FORMAT, "%s: '%s' is over %u MiB", c->path, e->name, (unsigned)(max >> 20));
    char *text = malloc((size_t)e->size + 1);
    if (!text) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory reading '%s'", c->path, e->name);
    swin_status st = swin_zip_read(&c->zip, e, 0, (size_t)e->size, text, err);
    char why[160];
    if (!st && !(*out = swin_json_parse(text, (size_t)e->size, why, sizeof why)))
        st = FAIL(SWIN_ERR_FORMAT, "%s: '%s': %s", c->path, e->name, why);
    free(text);
    return st;
}

/* One config entry: the tensor FQN m->key names, a view of its weights record. */
static swin_status add_tensor(struct swin_ckpt_file *c, const char *prefix, const json_node *m, swin_error *err)
{
    struct swin_ckpt_tensor *t = &c->t[c->n++];
    t->key = m->key;
    const json_node *meta = swin_json_get(m, "tensor_meta"), *pickled = swin_json_get(m, "use_pickle");
    const char *file = swin_json_text(swin_json_get(m, "path_name"));
    if (pickled && pickled->kind == JSON_BOOL && !strcmp(pickled->text, "true"))
        return FAIL(SWIN_ERR_MODEL,
                    "%s: tensor '%s' is pickled (a tensor subclass), which swinrun does not read: export "
                    "the model with plain tensors",
                    c->path, t->key);
    long code = -1;
    t->dtype = as_long(swin_json_get(meta, "dtype"), &code) ? dtype_of(code) : PK_DTYPE_UNKNOWN;
    const json_node *sizes = swin_json_get(meta, "sizes"), *strides = swin_json_get(meta, "strides");
    size_t rank = swin_json_len(sizes);
    if (!file || strchr(file, '/') || t->dtype == PK_DTYPE_UNKNOWN || rank > PK_MAX_RANK ||
        swin_json_len(strides) != rank || !as_int(swin_json_get(meta, "storage_offset"), &t->offset))
        return FAIL(SWIN_ERR_FORMAT,
                    "%s: weights entry '%s' lacks a file name, a known dtype (code %ld), sizes and strides "
                    "of one rank <= 8 or a storage offset",
                    c->path, t->key, code);
    t->ndim = (int)rank;
    for (size_t i = 0; i < rank; i++)
        if (!as_int(swin_json_at(sizes, i), &t->size[i]) || !as_int(swin_json_at(strides, i), &t->stride[i]))
            return FAIL(SWIN_ERR_FORMAT, "%s: weights entry '%s' has a size or stride that is not a plain integer",
                        c->path, t->key);
    char name[600];
    snprintf(name, sizeof name, "%sdata/weights/%s", prefix, file);
    const struct swin_zip_entry *e = swin_zip_find(&c->zip, name);
    if (!e)
        return FAIL(SWIN_ERR_FORMAT, "%s: tensor '%s' names record '%s', which the archive lacks", c->path, t->key,
                    name);
    if (e->method) return FAIL(SWIN_ERR_FORMAT, "%s: record '%s' is compressed (method %d)", c->path, name, e->method);
    size_t es = swin_pickle_dtype_size(t->dtype);
    if (e->size % es)
        return FAIL(SWIN_ERR_FORMAT, "%s: record '%s' of %llu bytes is not a whole number of %s elements", c->path,
                    name, (unsigned long long)e->size, swin_pickle_dtype_name(t->dtype));
    t->storage_off = e->data_off;
    t->storage_numel = e->size / es;
    return SWIN_OK;
}

/* A node's input called name, or NULL. */
static const json_node *input(const json_node *node, const char *name)
{
    const json_node *ins = swin_json_get(node, "inputs");
    for (const json_node *in = ins && ins->kind == JSON_ARRAY ? ins->child : NULL; in; in = in->next) {
        const char *n = swin_json_text(swin_json_get(in, "name"));
        if (n && !strcmp(n, name)) return swin_json_get(in, "arg");
    }
    return NULL;
}

/* The node whose output is the tensor called name, or NULL. */
static const json_node *producer(const json_node *nodes, const char *name)
{
    if (!name || !nodes || nodes->kind != JSON_ARRAY) return NULL;
    for (const json_node *node = nodes->child; node; node = node->next) {
        const char *out = swin_json_text(
            swin_json_get(swin_json_get(swin_json_at(swin_json_get(node, "outputs"), 0), "as_tensor"), "name"));
        if (out && !strcmp(out, name)) return node;
    }
    return NULL;
}

/* The class of the innermost module a node ran in: the last entry of its nn_module_stack
 * ("PATH,FQN,CLASS;..."), e.g. "monai.networks.nets.swin_unetr.PatchMerging". */
static const char *module_class(const json_node *node)
{
    const char *s = swin_json_text(swin_json_get(swin_json_get(node, "metadata"), "nn_module_stack"));
    const char *last = s ? strrchr(s, ',') : NULL;
    return last ? last + 1 : "";
}

/* The first patch merging's concatenation (SwinUNETR's PatchMerging or PatchMergingV2: 8
 * stride-2 sub-grids of the channels-last (B, D, H, W, C) input) as a merge order: each of
 * the 8 inputs followed back through its aten.slice calls (dim, start, end, step) to the
 * (D, H, W) offsets of its sub-grid. false where the graph is not of that form. */
static bool merge_order_of(const json_node *nodes, swin_merge_order order)
{
    for (const json_node *cat = nodes && nodes->kind == JSON_ARRAY ? nodes->child : NULL; cat; cat = cat->next) {
        const char *target = swin_json_text(swin_json_get(cat, "target")), *cls = module_class(cat);
        if (!target || strcmp(target, "torch.ops.aten.cat.default") ||
            (strcmp(cls + (strlen(cls) > 12 ? strlen(cls) - 12 : 0), "PatchMerging") &&
             strcmp(cls + (strlen(cls) > 14 ? strlen(cls) - 14 : 0), "PatchMergingV2")))
            continue;
        const json_node *ins = swin_json_get(input(cat, "tensors"), "as_tensors");
        if (swin_json_len(ins) != 8) return false;
        for (int m = 0; m < 8; m++) {
            int off[3] = {-1, -1, -1};
            const json_node *p = producer(nodes, swin_json_text(swin_json_get(swin_json_at(ins, (size_t)m), "name")));
            for (int depth = 0; p && depth < 8; depth++) {
                const char *t = swin_json_text(swin_json_get(p, "target"));
                if (!t || strcmp(t, "torch.ops.aten.slice.Tensor")) break;
                int64_t dim, start, step;
                if (!as_int(input(p, "dim"), &dim) || !as_int(input(p, "start"), &start) ||
                    !as_int(input(p, "step"), &step))
                    return false;
                if (!swin_merge_slice_take(off, dim, start, step)) return false;
                p = producer(nodes,
                             swin_json_text(swin_json_get(swin_json_get(input(p, "self"), "as_tensor"), "name")));
            }
            if (off[0] < 0 || off[1] < 0 || off[2] < 0) return false;
            memcpy(order[m], off, sizeof off);
        }
        return true;
    }
    return false;
}

/* The spatial size (D, H, W) of the one user input, (N, C, D, H, W), when the export fixed it
 * (each a multiple of 32: a size MONAI's SwinUNETR runs); else cube stays 0. */
static void input_cube(const json_node *gm, int cube[3])
{
    const json_node *specs = swin_json_get(swin_json_get(gm, "signature"), "input_specs"), *user = NULL;
    for (const json_node *spec = specs && specs->kind == JSON_ARRAY ? specs->child : NULL; spec; spec = spec->next) {
        const json_node *u = swin_json_get(spec, "user_input");
        if (u && user) return;
        if (u) user = u;
    }
    const char *name = swin_json_text(swin_json_get(swin_json_get(swin_json_get(user, "arg"), "as_tensor"), "name"));
    const json_node *values = swin_json_get(swin_json_get(gm, "graph"), "tensor_values");
    const json_node *sizes = name ? swin_json_get(swin_json_get(values, name), "sizes") : NULL;
    int64_t d[3];
    if (swin_json_len(sizes) != 5) return;
    for (int k = 0; k < 3; k++)
        if (!as_int(swin_json_at(sizes, (size_t)k + 2), &d[k]) || d[k] < 32 || d[k] > 1024 || d[k] % 32) return;
    for (int k = 0; k < 3; k++) cube[k] = (int)d[k];
}

/* What the graph says (ckpt_file.h's says_*, the merge order, the input's size); a graph that
 * cannot be read says nothing. */
static void read_graph(struct swin_ckpt_file *c, const char *prefix)
{
    char name[600];
    snprintf(name, sizeof name, "%smodels/model.json", prefix);
    const struct swin_zip_entry *e = swin_zip_find(&c->zip, name);
    json_node *g = NULL;
    swin_error ignored;
    if (!e || read_json(c, e, MAX_GRAPH, &g, &ignored)) return;
    const json_node *nodes = swin_json_get(swin_json_get(swin_json_get(g, "graph_module"), "graph"), "nodes");
    int groups = 0, other_norms = 0, weightless_ln = 0, weighted_ln = 0;
    for (const json_node *node = nodes && nodes->kind == JSON_ARRAY ? nodes->child : NULL; node; node = node->next) {
        const char *target = swin_json_text(swin_json_get(node, "target"));
        if (!target) continue;
        if (!strcmp(target, "torch.ops.aten.group_norm.default")) {
            int64_t g_i = -1;
            if (!as_int(input(node, "num_groups"), &g_i) || g_i < 1 || g_i > (1 << 30)) g_i = -1;
            groups = groups == 0 ? (int)g_i : groups == (int)g_i ? groups : -1;
        } else if (strstr(target, "instance_norm") || strstr(target, "batch_norm")) {
            other_norms++;
        } else if (!strcmp(target, "torch.ops.aten.layer_norm.default")) {
            const json_node *w = input(node, "weight");
            if (w && swin_json_get(w, "as_tensor")) weighted_ln++;
            else weightless_ln++;
        }
    }
    if (groups) c->says_group_norm = 1, c->says_norm_groups = groups;
    else if (other_norms) c->says_group_norm = 0;
    if (weighted_ln) c->says_normalize = weightless_ln > 0; /* SwinUNETR.proj_out: F.layer_norm without weights */
    c->says_order = merge_order_of(nodes, c->order);
    input_cube(swin_json_get(g, "graph_module"), c->says_cube);
    swin_json_free(g);
}

swin_status swin_pt2_read(struct swin_ckpt_file *c, const char *prefix, const struct swin_zip_entry *config,
                          swin_error *err)
{
    swin_status st = read_json(c, config, MAX_CONFIG, &c->json, err);
    if (st) return st;
    const json_node *cfg = swin_json_get(c->json, "config");
    if (!cfg || cfg->kind != JSON_OBJECT)
        return FAIL(SWIN_ERR_FORMAT, "%s: '%s' has no \"config\" object", c->path, config->name);
    size_t n = 0;
    for (const json_node *m = cfg->child; m; m = m->next) n++;
    if (!(c->t = calloc(n + 1, sizeof *c->t))) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    for (const json_node *m = cfg->child; m && !st; m = m->next) st = add_tensor(c, prefix, m, err);
    if (st) return st;
    read_graph(c, prefix);
    c->says_source = "the exported graph";
    snprintf(c->format, sizeof c->format, "torch.export archive (.pt2)");
    snprintf(c->where, sizeof c->where, "%sdata/weights/model_weights_config.json", prefix);
    return SWIN_OK;
}
