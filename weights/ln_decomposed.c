#include "weights/ln_decomposed.h"

#include <math.h>
#include <string.h>

/* The node producing `value` if its op is `op`, else -1. */
static int producer_op(const struct graph *g, const char *value, const char *op)
{
    int p = graph_producer(g, value);
    return p >= 0 && !strcmp(g->f->nodes[p]->op_type, op) ? p : -1;
}

/* A ReduceMean over the last axis only (axes as attribute, or as input since opset 18). */
static bool mean_last_axis(const struct graph *g, int node, swin_error *err)
{
    const Onnx__NodeProto *n = g->f->nodes[node];
    const int64_t *a;
    int64_t in[2];
    int k = node_attr_ints(n, "axes", &a);
    if (k < 0 && node_in(n, 1)[0]) {
        k = graph_const_i64(g, node_in(n, 1), in, 2, err);
        a = in;
    }
    return k == 1 && a[0] == -1;
}

/* The single constant float scalar among node n's two inputs; the other input's name in *other. */
static const struct onnx_tensor *const_operand(const struct graph *g, const Onnx__NodeProto *n, const char **other)
{
    for (int k = 0; k < 2; k++) {
        const struct onnx_tensor *t = graph_tensor(g, node_in(n, k));
        if (t && onnx_dtype_is_float(t->dtype)) {
            *other = node_in(n, 1 - k);
            return t;
        }
    }
    return NULL;
}

/* The one consumer of `value` if it is an `op` node, else -1. */
static int single_consumer(const struct graph *g, const char *value, const char *op)
{
    const int *c;
    return graph_consumers(g, value, &c) == 1 && !strcmp(g->f->nodes[c[0]]->op_type, op) ? c[0] : -1;
}

int ln_decomposed_match(const struct graph *g, int div, struct layer *l, int reduce_means[2], swin_error *err)
{
    const Onnx__NodeProto *n = g->f->nodes[div];
    const char *d = node_in(n, 0), *v = NULL, *x = NULL, *mean = NULL;
    int sq = producer_op(g, node_in(n, 1), "Sqrt");
    int add = sq >= 0 ? producer_op(g, node_in(g->f->nodes[sq], 0), "Add") : -1;
    const struct onnx_tensor *eps = add >= 0 ? const_operand(g, g->f->nodes[add], &v) : NULL;
    int rm2 = eps ? producer_op(g, v, "ReduceMean") : -1;
    int pw = rm2 >= 0 ? producer_op(g, node_in(g->f->nodes[rm2], 0), "Pow") : -1;
    int sub = producer_op(g, d, "Sub");
    if (pw < 0 || sub < 0 || strcmp(node_in(g->f->nodes[pw], 0), d)) return 0;
    x = node_in(g->f->nodes[sub], 0);
    mean = node_in(g->f->nodes[sub], 1);
    int rm1 = producer_op(g, mean, "ReduceMean");
    if (rm1 < 0 || strcmp(node_in(g->f->nodes[rm1], 0), x) || !mean_last_axis(g, rm1, err) || !mean_last_axis(g, rm2, err))
        return 0;
    float e, two;
    const struct onnx_tensor *p2 = graph_tensor(g, node_in(g->f->nodes[pw], 1));
    if (eps->numel != 1 || !p2 || p2->numel != 1 || onnx_tensor_read_f32(g->f, eps, 0, 1, &e, err) ||
        onnx_tensor_read_f32(g->f, p2, 0, 1, &two, err) || two != 2.0f)
        return 0;
    memset(l, 0, sizeof *l);
    l->kind = L_LN;
    l->node = div;
    l->x = x;
    reduce_means[0] = rm1;
    reduce_means[1] = rm2;
    if (fabsf(e - 1e-5f) > 1e-7f) {
        char dsc[300];
        swin_error_set(err, SWIN_ERR_MODEL, "%s: %s: decomposed LayerNormalization with epsilon %g, MONAI's is 1e-5", g->f->path,
                       node_desc(g, div, dsc, sizeof dsc), (double)e);
        return -1;
    }
    /* affine: Mul by a constant vector, then Add of one */
    int mul = single_consumer(g, node_out(n, 0), "Mul");
    const char *rest;
    const struct onnx_tensor *gamma = mul >= 0 ? const_operand(g, g->f->nodes[mul], &rest) : NULL;
    if (gamma && gamma->ndim == 1) {
        l->w = gamma;
        int badd = single_consumer(g, node_out(g->f->nodes[mul], 0), "Add");
        const struct onnx_tensor *beta = badd >= 0 ? const_operand(g, g->f->nodes[badd], &rest) : NULL;
        if (beta && beta->ndim == 1) l->b = beta;
    }
    return 1;
}
