/* The scale of a spelled-out window attention's logits (attn_scale.h). */
#include "weights/onnx/attn_scale.h"

#include <math.h>
#include <string.h>

#include "weights/onnx/onnx_file.h"

/* A trace's result: found (the path is one the attention takes), unknown (a scaling that is not
 * a constant), or not this path; the scale multiplied into *scale as the path is walked. */
enum trace { T_NOT, T_FOUND, T_UNKNOWN, T_ERR };

#define MAX_DEPTH 48

static const char *op_of(const struct swin_onnx_index *g, int node)
{
    return node >= 0 && g->f->nodes[node]->op_type ? g->f->nodes[node]->op_type : "";
}

static bool is_any(const char *op, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(op, *set)) return true;
    return false;
}

/* For a Mul or Div node with a constant float scalar operand (a Div's divisor): its factor
 * (1/c for a Div by c) in *f, the other operand in *other; 0. 1 when it has none, -1 when it
 * cannot be read. */
static int scalar_factor(const struct swin_onnx_index *g, const SwinOnnx__NodeProto *n, float *f, const char **other,
                         swin_error *err)
{
    bool div = !strcmp(n->op_type, "Div");
    const struct swin_onnx_tensor *t = swin_onnx_const_float_operand(g, n, other);
    if (!t || t->numel != 1 || (div && *other != swin_onnx_node_in(n, 0))) return 1;
    float c;
    if (swin_onnx_tensor_read_f32(g->f, t, 0, 1, &c, err)) return -1;
    if (div && c == 0) return 1;
    *f = div ? 1.0f / c : c;
    return 0;
}

/* q or k from the MatMul back to the qkv projection: through the head split's shape operators
 * and constant scalings; the first other operator (the projection's MatMul, Gemm or bias Add)
 * ends it. */
static enum trace trace_operand(const struct swin_onnx_index *g, const char *v, float *scale, int depth,
                                swin_error *err)
{
    static const char *const pass[] = {"Reshape", "Transpose", "Gather", "Slice",    "Split",
                                       "Squeeze", "Unsqueeze", "Cast",   "Identity", NULL};
    for (; depth < MAX_DEPTH; depth++) {
        int p = swin_onnx_index_producer(g, v);
        const char *op = op_of(g, p);
        if (p < 0) return T_FOUND;
        const SwinOnnx__NodeProto *n = g->f->nodes[p];
        if (!strcmp(op, "Mul") || !strcmp(op, "Div")) {
            float f;
            int r = scalar_factor(g, n, &f, &v, err);
            if (r < 0) return T_ERR;
            if (r > 0) return T_UNKNOWN;
            *scale *= f;
        } else if (is_any(op, pass)) {
            v = swin_onnx_node_in(n, 0);
        } else {
            return T_FOUND;
        }
    }
    return T_UNKNOWN;
}

/* The logits from the Softmax back to q k^T: through Reshape (the mask's 5-D view and back),
 * Unsqueeze, Squeeze, Cast, the Adds of the bias and mask (the operand that leads to the product)
 * and constant scalings after the product. */
static enum trace trace_logits(const struct swin_onnx_index *g, const char *v, float *scale, int depth, int *visits,
                               swin_error *err)
{
    static const char *const pass[] = {"Reshape", "Unsqueeze", "Squeeze", "Cast", "Identity", NULL};
    if (depth >= MAX_DEPTH || --*visits < 0) return T_UNKNOWN;
    int p = swin_onnx_index_producer(g, v);
    if (p < 0) return T_NOT;
    const SwinOnnx__NodeProto *n = g->f->nodes[p];
    const char *op = op_of(g, p);
    if (is_any(op, pass)) return trace_logits(g, swin_onnx_node_in(n, 0), scale, depth + 1, visits, err);
    if (!strcmp(op, "Mul") || !strcmp(op, "Div")) {
        float f;
        const char *other;
        int r = scalar_factor(g, n, &f, &other, err);
        if (r < 0) return T_ERR;
        if (r > 0) return T_NOT;
        *scale *= f;
        return trace_logits(g, other, scale, depth + 1, visits, err);
    }
    if (!strcmp(op, "Add") && n->n_input == 2) {
        /* the bias and mask operands end in constants or shape arithmetic, never at a product */
        float s[2] = {*scale, *scale};
        enum trace t[2];
        for (int k = 0; k < 2; k++) {
            t[k] = trace_logits(g, swin_onnx_node_in(n, k), &s[k], depth + 1, visits, err);
            if (t[k] == T_ERR) return T_ERR;
        }
        if ((t[0] == T_NOT) == (t[1] == T_NOT)) return t[0] == T_NOT ? T_NOT : T_UNKNOWN;
        int k = t[0] == T_NOT ? 1 : 0;
        *scale = s[k];
        return t[k];
    }
    bool fused = !strcmp(op, "FusedMatMul");
    if ((strcmp(op, "MatMul") && !fused) || n->n_input != 2) return T_NOT;
    for (int k = 0; k < 2; k++)
        if (swin_onnx_index_tensor(g, swin_onnx_node_in(n, k))) return T_NOT; /* a Linear layer's product */
    if (fused) *scale *= swin_onnx_node_attr_float(n, "alpha", 1);
    for (int k = 0; k < 2; k++) {
        enum trace t = trace_operand(g, swin_onnx_node_in(n, k), scale, depth + 1, err);
        if (t != T_FOUND) return t;
    }
    return T_FOUND;
}

int swin_attn_scale_match(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l, int *visits,
                          swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    float scale = 1;
    enum trace t = n->n_input == 1 ? trace_logits(g, swin_onnx_node_in(n, 0), &scale, 0, visits, err) : T_NOT;
    if (t == T_ERR) return -1;
    if (t != T_FOUND) return 0;
    if (scale == 0 || !isfinite(scale)) { /* L_ATTN's scale 0 means the default: say it here */
        char d[300];
        swin_error_set(err, SWIN_ERR_MODEL,
                       "%s: %s: the attention logits are scaled by %g, MONAI's by 1/sqrt(head dim)", g->f->path,
                       swin_onnx_node_desc(g, i, d, sizeof d), (double)scale);
        return -1;
    }
    l->kind = L_ATTN;
    l->scale = scale;
    return 1;
}
