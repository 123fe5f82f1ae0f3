#include "weights/onnx/ln_decomposed.h"

#include <math.h>
#include <string.h>

/* The node producing `value` if its op is `op`, else -1. */
static int producer_op(const struct swin_onnx_index *g, const char *value, const char *op)
{
    int p = swin_onnx_index_producer(g, value);
    return p >= 0 && !strcmp(g->f->nodes[p]->op_type, op) ? p : -1;
}

/* A ReduceMean over the last axis only (axes as attribute, or as input since opset 18). */
static bool mean_last_axis(const struct swin_onnx_index *g, int node, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[node];
    const int64_t *a;
    int64_t in[2];
    int k = swin_onnx_node_attr_ints(n, "axes", &a);
    if (k < 0 && swin_onnx_node_in(n, 1)[0]) {
        k = swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 1), in, 2, err);
        a = in;
    }
    return k == 1 && a[0] == -1;
}

/* The single constant float scalar among node n's two inputs; the other input's name in *other. */
static const struct swin_onnx_tensor *const_operand(const struct swin_onnx_index *g, const SwinOnnx__NodeProto *n, const char **other)
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

/* The one consumer of `value` if it is an `op` node, else -1. */
static int single_consumer(const struct swin_onnx_index *g, const char *value, const char *op)
{
    const int *c;
    return swin_onnx_index_consumers(g, value, &c) == 1 && !strcmp(g->f->nodes[c[0]]->op_type, op) ? c[0] : -1;
}

int swin_ln_decomposed_match(const struct swin_onnx_index *g, int div, struct swin_onnx_layer *l, int reduce_means[2], swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[div];
    const char *d = swin_onnx_node_in(n, 0), *v = NULL, *x = NULL, *mean = NULL;
    int sq = producer_op(g, swin_onnx_node_in(n, 1), "Sqrt");
    int add = sq >= 0 ? producer_op(g, swin_onnx_node_in(g->f->nodes[sq], 0), "Add") : -1;
    const struct swin_onnx_tensor *eps = add >= 0 ? const_operand(g, g->f->nodes[add], &v) : NULL;
    int rm2 = eps ? producer_op(g, v, "ReduceMean") : -1;
    int pw = rm2 >= 0 ? producer_op(g, swin_onnx_node_in(g->f->nodes[rm2], 0), "Pow") : -1;
    int sub = producer_op(g, d, "Sub");
    if (pw < 0 || sub < 0 || strcmp(swin_onnx_node_in(g->f->nodes[pw], 0), d)) return 0;
    x = swin_onnx_node_in(g->f->nodes[sub], 0);
    mean = swin_onnx_node_in(g->f->nodes[sub], 1);
    int rm1 = producer_op(g, mean, "ReduceMean");
    if (rm1 < 0 || strcmp(swin_onnx_node_in(g->f->nodes[rm1], 0), x) || !mean_last_axis(g, rm1, err) || !mean_last_axis(g, rm2, err))
        return 0;
    float e, two;
    const struct swin_onnx_tensor *p2 = swin_onnx_index_tensor(g, swin_onnx_node_in(g->f->nodes[pw], 1));
    if (eps->numel != 1 || !p2 || p2->numel != 1 || swin_onnx_tensor_read_f32(g->f, eps, 0, 1, &e, err) ||
        swin_onnx_tensor_read_f32(g->f, p2, 0, 1, &two, err) || two != 2.0f)
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
                       swin_onnx_node_desc(g, div, dsc, sizeof dsc), (double)e);
        return -1;
    }
    /* affine: Mul by a constant vector, then Add of one */
    int mul = single_consumer(g, swin_onnx_node_out(n, 0), "Mul");
    const char *rest;
    const struct swin_onnx_tensor *gamma = mul >= 0 ? const_operand(g, g->f->nodes[mul], &rest) : NULL;
    if (gamma && gamma->ndim == 1) {
        l->w = gamma;
        int badd = single_consumer(g, swin_onnx_node_out(g->f->nodes[mul], 0), "Add");
        const struct swin_onnx_tensor *beta = badd >= 0 ? const_operand(g, g->f->nodes[badd], &rest) : NULL;
        if (beta && beta->ndim == 1) l->b = beta;
    }
    return 1;
}
