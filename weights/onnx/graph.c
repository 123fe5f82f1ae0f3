#include "weights/onnx/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *swin_onnx_node_in(const SwinOnnx__NodeProto *n, int i)
{
    return i < (int)n->n_input && n->input[i] ? n->input[i] : "";
}

const char *swin_onnx_node_out(const SwinOnnx__NodeProto *n, int i)
{
    return i < (int)n->n_output && n->output[i] ? n->output[i] : "";
}

static const SwinOnnx__AttributeProto *attr(const SwinOnnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name)) return n->attribute[i];
    return NULL;
}

int64_t swin_onnx_node_attr_int(const SwinOnnx__NodeProto *n, const char *name, int64_t dflt)
{
    const SwinOnnx__AttributeProto *a = attr(n, name);
    return a && a->has_i ? a->i : dflt;
}

float swin_onnx_node_attr_float(const SwinOnnx__NodeProto *n, const char *name, float dflt)
{
    const SwinOnnx__AttributeProto *a = attr(n, name);
    return a && a->has_f ? a->f : dflt;
}

bool swin_onnx_node_attr_str_is(const SwinOnnx__NodeProto *n, const char *name, const char *value, bool dflt)
{
    const SwinOnnx__AttributeProto *a = attr(n, name);
    if (!a || !a->has_s) return dflt;
    size_t len = strlen(value);
    return a->s.len == len && !memcmp(a->s.data, value, len);
}

int swin_onnx_node_attr_ints(const SwinOnnx__NodeProto *n, const char *name, const int64_t **vals)
{
    const SwinOnnx__AttributeProto *a = attr(n, name);
    if (!a) return -1;
    *vals = a->ints;
    return (int)a->n_ints;
}

int swin_onnx_node_attr_floats(const SwinOnnx__NodeProto *n, const char *name, const float **vals)
{
    const SwinOnnx__AttributeProto *a = attr(n, name);
    if (!a) return -1;
    *vals = a->floats;
    return (int)a->n_floats;
}

const char *swin_onnx_node_desc(const struct swin_onnx_index *g, int node, char *buf, size_t n)
{
    const SwinOnnx__NodeProto *p = g->f->nodes[node];
    snprintf(buf, n, "node #%d '%s' (%s)", node, p->name ? p->name : "", p->op_type ? p->op_type : "?");
    return buf;
}

const struct swin_onnx_tensor *swin_onnx_index_tensor(const struct swin_onnx_index *g, const char *name)
{
    if (!name || !name[0]) return NULL;
    int id = swin_strmap_get(&g->tensor, name);
    if (id < 0) return NULL;
    return id < g->f->n_inits ? &g->f->inits[id] : &g->consts[id - g->f->n_inits];
}

int swin_onnx_index_producer(const struct swin_onnx_index *g, const char *name)
{
    return name && name[0] ? swin_strmap_get(&g->producer, name) : -1;
}

int swin_onnx_producer_op(const struct swin_onnx_index *g, const char *name, const char *op)
{
    int p = swin_onnx_index_producer(g, name);
    return p >= 0 && !strcmp(g->f->nodes[p]->op_type, op) ? p : -1;
}

int swin_onnx_index_consumers(const struct swin_onnx_index *g, const char *name, const int **nodes)
{
    int v = name && name[0] ? swin_strmap_get(&g->value, name) : -1;
    if (v < 0) return 0;
    *nodes = g->cons + g->cons_start[v];
    return g->cons_start[v + 1] - g->cons_start[v];
}

/* A Cast to float32, float16 or bfloat16. */
static bool is_float_cast(const SwinOnnx__NodeProto *n)
{
    return !strcmp(n->op_type, "Cast") && onnx_dtype_is_float((int)swin_onnx_node_attr_int(n, "to", 0));
}

/* An Unsqueeze whose axes (input 1 from opset 13, else the attribute) are [0] or [-1]: of a
 * scalar, the one axis of the result. */
static bool unsqueezes_first(const struct swin_onnx_index *g, const SwinOnnx__NodeProto *n)
{
    int64_t axis;
    if (n->n_input < 2) {
        const int64_t *v;
        if (swin_onnx_node_attr_ints(n, "axes", &v) != 1) return false;
        axis = v[0];
    } else {
        const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, n->input[1]);
        swin_error ignored;
        if (!t || t->numel != 1 || (t->dtype != ONNX_INT64 && t->dtype != ONNX_INT32) ||
            swin_onnx_tensor_read_i64(g->f, t, &axis, 1, &ignored) != SWIN_OK)
            return false;
    }
    return axis == 0 || axis == -1;
}

static swin_status nomem(struct swin_onnx_index *g, swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory while indexing the graph", g->f->path);
}

static int value_id(struct swin_onnx_index *g, const char *name, bool *oom)
{
    int v = swin_strmap_get(&g->value, name);
    if (v >= 0) return v;
    if (!swin_strmap_put(&g->value, name, g->n_values)) { *oom = true; return -1; }
    return g->n_values++;
}

swin_status swin_onnx_index_build(struct swin_onnx_index *g, struct swin_onnx_file *f, swin_error *err)
{
    memset(g, 0, sizeof *g);
    g->f = f;
    size_t n_edges = 0;
    for (int i = 0; i < f->n_nodes; i++) n_edges += f->nodes[i]->n_input;
    if (!swin_strmap_init(&g->tensor, (size_t)f->n_inits + (size_t)f->n_nodes) ||
        !swin_strmap_init(&g->producer, (size_t)f->n_nodes * 2) || !swin_strmap_init(&g->value, n_edges) ||
        !(g->consts = calloc((size_t)f->n_nodes + 1, sizeof *g->consts))) {
        swin_onnx_index_free(g);
        return nomem(g, err);
    }
    for (int i = 0; i < f->n_inits; i++)
        if (!swin_strmap_put(&g->tensor, f->inits[i].name, i)) { swin_onnx_index_free(g); return nomem(g, err); }
    swin_status st = SWIN_OK;
    for (int i = 0; i < f->n_nodes && !st; i++) {
        const SwinOnnx__NodeProto *n = f->nodes[i];
        for (size_t o = 0; o < n->n_output; o++)
            if (n->output[o][0] && !swin_strmap_put(&g->producer, n->output[o], i)) st = nomem(g, err);
        if (!n->op_type || (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx"))) continue;
        if (!strcmp(n->op_type, "Constant") && n->n_output == 1) {
            const SwinOnnx__AttributeProto *a = n->n_attribute == 1 ? n->attribute[0] : NULL;
            if (a && a->t && a->name && !strcmp(a->name, "value")) {
                st = swin_onnx_tensor_from_proto(a->t, n->output[0], i, &g->consts[g->n_consts], f->path, err);
            } else if (a && a->name && (!strcmp(a->name, "value_ints") || !strcmp(a->name, "value_int"))) {
                struct swin_onnx_tensor *t = &g->consts[g->n_consts];
                memset(t, 0, sizeof *t);
                t->name = n->output[0], t->producer = i, t->dtype = ONNX_INT64;
                t->src = SRC_MEM_I64;
                t->mem = a->name[7] == 's' ? (const void *)a->ints : (const void *)&a->i;
                t->numel = a->name[7] == 's' ? a->n_ints : 1;
                t->len = t->numel * 8;
                t->ndim = a->name[7] == 's' ? 1 : 0;
                t->dims[0] = (int64_t)t->numel;
            } else {
                continue;   /* other Constant forms never carry what the loader reads */
            }
            if (!st && !swin_strmap_put(&g->tensor, n->output[0], f->n_inits + g->n_consts++)) st = nomem(g, err);
        } else if ((!strcmp(n->op_type, "Identity") || is_float_cast(n)) && n->n_input == 1 && n->n_output == 1) {
            /* an alias of the constant; a Cast between float types (weights stored in float16
             * or bfloat16, cast back to float32) reads the stored tensor widened to float32 */
            int id = swin_strmap_get(&g->tensor, n->input[0]);
            const struct swin_onnx_tensor *t = id < 0 ? NULL : id < f->n_inits ? &f->inits[id] : &g->consts[id - f->n_inits];
            if (t && (n->op_type[0] == 'I' || onnx_dtype_is_float(t->dtype)) && !swin_strmap_put(&g->tensor, n->output[0], id))
                st = nomem(g, err);
        } else if (!strcmp(n->op_type, "Unsqueeze") && n->n_input >= 1 && n->n_output == 1) {
            /* a scalar int constant made 1-D: a Slice bound as the TorchScript exporter writes
             * it without constant folding (Unsqueeze(Constant 3, axes [0])); the same values */
            int id = swin_strmap_get(&g->tensor, n->input[0]);
            const struct swin_onnx_tensor *t = id < 0 ? NULL : id < f->n_inits ? &f->inits[id] : &g->consts[id - f->n_inits];
            if (t && t->ndim == 0 && (t->dtype == ONNX_INT64 || t->dtype == ONNX_INT32) && unsqueezes_first(g, n)) {
                struct swin_onnx_tensor *u = &g->consts[g->n_consts];
                *u = *t;
                u->name = n->output[0], u->producer = i, u->ndim = 1, u->dims[0] = 1;
                if (!swin_strmap_put(&g->tensor, n->output[0], f->n_inits + g->n_consts++)) st = nomem(g, err);
            }
        }
    }
    /* Consumer lists (CSR). */
    bool oom = false;
    int *count = NULL;
    if (!st) {
        for (int i = 0; i < f->n_nodes && !oom; i++)
            for (size_t k = 0; k < f->nodes[i]->n_input; k++)
                if (f->nodes[i]->input[k][0]) value_id(g, f->nodes[i]->input[k], &oom);
        g->cons_start = calloc((size_t)g->n_values + 2, sizeof *g->cons_start);
        g->cons = malloc((n_edges + 1) * sizeof *g->cons);
        count = calloc((size_t)g->n_values + 1, sizeof *count);
        if (oom || !g->cons_start || !g->cons || !count) st = nomem(g, err);
    }
    if (!st) {
        for (int i = 0; i < f->n_nodes; i++)
            for (size_t k = 0; k < f->nodes[i]->n_input; k++)
                if (f->nodes[i]->input[k][0]) g->cons_start[swin_strmap_get(&g->value, f->nodes[i]->input[k]) + 1]++;
        for (int v = 0; v < g->n_values; v++) g->cons_start[v + 1] += g->cons_start[v];
        for (int i = 0; i < f->n_nodes; i++)
            for (size_t k = 0; k < f->nodes[i]->n_input; k++) {
                if (!f->nodes[i]->input[k][0]) continue;
                int v = swin_strmap_get(&g->value, f->nodes[i]->input[k]);
                g->cons[g->cons_start[v] + count[v]++] = i;   /* a node reading a value twice is listed twice */
            }
    }
    free(count);
    if (st) swin_onnx_index_free(g);
    return st;
}

void swin_onnx_index_free(struct swin_onnx_index *g)
{
    swin_strmap_free(&g->tensor);
    swin_strmap_free(&g->producer);
    swin_strmap_free(&g->value);
    free(g->consts);
    free(g->cons_start);
    free(g->cons);
    struct swin_onnx_file *f = g->f;
    memset(g, 0, sizeof *g);
    g->f = f;
}

int swin_onnx_index_const_i64(const struct swin_onnx_index *g, const char *name, int64_t *out, int max, swin_error *err)
{
    const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, name);
    if (!t || (t->dtype != ONNX_INT64 && t->dtype != ONNX_INT32) || t->numel > (uint64_t)max) return -1;
    if (swin_onnx_tensor_read_i64(g->f, t, out, t->numel, err) != SWIN_OK) return -1;
    return (int)t->numel;
}

bool swin_onnx_index_const_all(const struct swin_onnx_index *g, const struct swin_onnx_tensor *t, float value, swin_error *err, swin_status *st)
{
    *st = SWIN_OK;
    if (!t) return true;
    float buf[1024];
    for (uint64_t i = 0; i < t->numel; i += 1024) {
        uint64_t n = t->numel - i < 1024 ? t->numel - i : 1024;
        if ((*st = swin_onnx_tensor_read_f32(g->f, t, i, n, buf, err))) return false;
        for (uint64_t k = 0; k < n; k++)
            if (buf[k] != value) return false;
    }
    return true;
}

const struct swin_onnx_tensor *swin_onnx_const_float_operand(const struct swin_onnx_index *g,
                                                             const SwinOnnx__NodeProto *n, const char **other)
{
    for (int k = 0; k < 2; k++) {
        const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, swin_onnx_node_in(n, k));
        if (t && onnx_dtype_is_float(t->dtype)) {
            *other = swin_onnx_node_in(n, 1 - k);
            return t;
        }
    }
    return NULL;
}
