#include "weights/onnx/layers.h"

#include "core/model.h"
#include "weights/onnx/attn_scale.h"
#include "weights/onnx/ln_decomposed.h"
#include "weights/onnx/order.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Operators that carry no weights and may appear in TorchScript or dynamo exports of a
 * Swin UNETR (shape arithmetic, window partition, roll, mask construction, GELU, ...). */
static const char *const plain_ops[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Erf", "Neg", "Abs", "Mod", "Floor", "Ceil", "Min", "Max",
    "Reshape", "Transpose", "Slice", "Concat", "Split", "Shape", "Size", "Unsqueeze", "Squeeze", "Flatten",
    "Expand", "Tile", "Cast", "CastLike", "ConstantOfShape", "Range", "ScatterND", "ScatterElements",
    "Gather", "GatherND", "GatherElements", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
    "Not", "And", "Or", "Where", "Pad", "Softmax", "LeakyRelu", "Identity", "Constant", "Einsum", "Trilu",
};

static const char *const kind_names[] = {"Conv", "ConvTranspose", "Linear", "LayerNormalization",
                                         "InstanceNormalization", "bias-table Gather", "folded constant Add",
                                         "Attention", "BatchNormalization"};

const char *swin_layer_kind_name(enum layer_kind k) { return kind_names[k]; }

static const char *const quantized_ops[] = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                                            "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul"};

static bool listed(const char *op, const char *const *list, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(op, list[k])) return true;
    return false;
}

static bool is_quantized(const char *op) { return listed(op, quantized_ops, sizeof quantized_ops / sizeof quantized_ops[0]); }

static bool is_plain(const char *op) { return listed(op, plain_ops, sizeof plain_ops / sizeof plain_ops[0]); }

/* An If whose branches only do shape plumbing (the TorchScript exporter emits one for a
 * data-dependent squeeze in non-cubic exports); NULL when fine, else the offending op. */
static const char *if_branch_op(const SwinOnnx__NodeProto *n, int depth)
{
    for (size_t a = 0; a < n->n_attribute; a++) {
        const SwinOnnx__GraphProto *g = n->attribute[a]->g;
        if (!g) continue;
        if (g->n_initializer) return "initializer";
        for (size_t i = 0; i < g->n_node; i++) {
            const char *op = g->node[i]->op_type ? g->node[i]->op_type : "";
            if (!strcmp(op, "If") && depth < 4) {
                const char *bad = if_branch_op(g->node[i], depth + 1);
                if (bad) return bad;
            } else if (!is_plain(op)) {
                return op;
            }
        }
    }
    return NULL;
}

static swin_status node_err(const struct swin_onnx_index *g, int i, swin_status st, const char *what, swin_error *err)
{
    char d[300];
    return swin_error_set(err, st, "%s: %s: %s", g->f->path, swin_onnx_node_desc(g, i, d, sizeof d), what);
}

static bool is_float_const(const struct swin_onnx_tensor *t, int rank)
{
    return t && onnx_dtype_is_float(t->dtype) && t->ndim == rank;
}

/* The one consumer of value `name`, when it is one node of type op; else -1. */
static int sole_consumer(const struct swin_onnx_index *g, const char *name, const char *op)
{
    const int *c;
    return swin_onnx_index_consumers(g, name, &c) == 1 && !strcmp(g->f->nodes[c[0]]->op_type, op) ? c[0] : -1;
}

/* The float constant input of Mul / Add node i (the other input a value), else NULL. */
static const struct swin_onnx_tensor *const_operand(const struct swin_onnx_index *g, int i)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    for (int k = 0; k < 2; k++) {
        const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, swin_onnx_node_in(n, k));
        if (t && onnx_dtype_is_float(t->dtype) && !swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1 - k))) return t;
    }
    return NULL;
}

/* InstanceNormalization node i as GroupNorm's decomposition (layers.h): its input a Reshape's
 * output, its output reshaped back, then multiplied by a constant and added one (either
 * absent where an optimiser dropped it). Fills l->groups, group_w, group_b when it is. */
static void group_norm_parts(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    const int producer = swin_onnx_index_producer(g, swin_onnx_node_in(n, 0));
    if (producer < 0 || strcmp(g->f->nodes[producer]->op_type, "Reshape") || !l->w || l->w->numel < 1 ||
        l->w->numel > SWIN_MAX_NORM_GROUPS)
        return;
    const int back = sole_consumer(g, swin_onnx_node_out(n, 0), "Reshape");
    if (back < 0) return;
    const char *v = swin_onnx_node_out(g->f->nodes[back], 0);
    const int mul = sole_consumer(g, v, "Mul");
    const struct swin_onnx_tensor *gw = mul < 0 ? NULL : const_operand(g, mul);
    if (gw) v = swin_onnx_node_out(g->f->nodes[mul], 0);
    const int add = sole_consumer(g, v, "Add");
    const struct swin_onnx_tensor *gb = add < 0 ? NULL : const_operand(g, add);
    l->groups = (int)l->w->numel;
    l->group_w = gw;
    l->group_b = gb;
}

/* Cubic kernel, equal strides, equal pads, unit dilation, group 1. */
static swin_status conv_attrs(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    const int64_t *v;
    int k = swin_onnx_node_attr_ints(n, "kernel_shape", &v);
    l->kernel = (int)(k == 3 && v[0] == v[1] && v[1] == v[2] ? v[0] : (k < 0 ? l->w->dims[2] : -1));
    k = swin_onnx_node_attr_ints(n, "strides", &v);
    l->stride = (int)(k < 0 ? 1 : (k == 3 && v[0] == v[1] && v[1] == v[2] ? v[0] : -1));
    k = swin_onnx_node_attr_ints(n, "pads", &v);
    l->pad = (int)(k < 0 ? 0 : (k == 6 && v[0] == v[1] && v[1] == v[2] && v[2] == v[3] && v[3] == v[4] && v[4] == v[5] ? v[0] : -1));
    bool ok = l->kernel > 0 && l->stride > 0 && l->pad >= 0 && swin_onnx_node_attr_int(n, "group", 1) == 1 &&
              l->w->dims[2] == l->kernel && l->w->dims[3] == l->kernel && l->w->dims[4] == l->kernel;
    k = swin_onnx_node_attr_ints(n, "dilations", &v);
    for (int j = 0; j < k; j++) ok = ok && v[j] == 1;
    k = swin_onnx_node_attr_ints(n, "output_padding", &v);
    for (int j = 0; j < k; j++) ok = ok && v[j] == 0;
    ok = ok && swin_onnx_node_attr_str_is(n, "auto_pad", "NOTSET", true);
    if (!ok)
        return node_err(g, i, SWIN_ERR_MODEL,
                        "expected a 3-D convolution with a cubic kernel, equal strides and pads, no dilation, group 1", err);
    return SWIN_OK;
}

static bool eps_ok(const SwinOnnx__NodeProto *n)
{
    return fabsf(swin_onnx_node_attr_float(n, "epsilon", 1e-5f) - 1e-5f) <= 1e-7f;
}

/* An inference-mode BatchNormalization (norm_name='batch' exported without constant folding):
 * constant 1-D scale, bias, mean and variance of one length, no training outputs. The walk
 * folds it into the conv before it. */
static int batch_norm_match(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    bool training = swin_onnx_node_attr_int(n, "training_mode", 0) != 0 || swin_onnx_node_attr_int(n, "is_test", 1) == 0 ||
                    swin_onnx_node_attr_int(n, "spatial", 1) != 1;
    for (size_t k = 1; k < n->n_output; k++) training |= n->output[k][0] != 0;
    if (training) {
        node_err(g, i, SWIN_ERR_MODEL, "a batch norm in training mode (batch statistics); export the model in eval mode", err);
        return -1;
    }
    const struct swin_onnx_tensor *t[4];
    for (int k = 0; k < 4; k++) {
        t[k] = swin_onnx_index_tensor(g, swin_onnx_node_in(n, k + 1));
        if (!is_float_const(t[k], 1) || t[k]->numel != t[0]->numel) {
            node_err(g, i, SWIN_ERR_MODEL,
                     "a batch norm whose scale, bias, mean and variance are not constant 1-D float vectors of one length", err);
            return -1;
        }
    }
    l->kind = L_BN;
    l->x = swin_onnx_node_in(n, 0);
    l->w = t[0];
    l->b = t[1];
    l->mean = t[2];
    l->var = t[3];
    l->eps = swin_onnx_node_attr_float(n, "epsilon", 1e-5f);
    return 1;
}

/* The 2-D float constant W when `name` is Transpose(W) with perm [1, 0] (or none): a
 * Linear's weight as the TorchScript exporter leaves it without constant folding,
 * x @ W^T with W stored (out, in). */
static const struct swin_onnx_tensor *transposed_weight(const struct swin_onnx_index *g, const char *name)
{
    int p = swin_onnx_index_producer(g, name);
    if (p < 0) return NULL;
    const SwinOnnx__NodeProto *t = g->f->nodes[p];
    if (strcmp(t->op_type ? t->op_type : "", "Transpose") || t->n_input != 1) return NULL;
    const struct swin_onnx_tensor *w = swin_onnx_index_tensor(g, swin_onnx_node_in(t, 0));
    const int64_t *perm;
    int np = swin_onnx_node_attr_ints(t, "perm", &perm);
    return is_float_const(w, 2) && (np < 0 || (np == 2 && perm[0] == 1 && perm[1] == 0)) ? w : NULL;
}

/* ONNX Runtime's FusedMatMul (extended optimisation level): alpha * op(A) @ op(B). Of two
 * activations with nothing transposed it is an attention product, q k^T (k already transposed)
 * with the 1/sqrt(head dim) Mul folded into alpha, or attn @ v: a plain operator, as MatMul is.
 * 0, or -1 for any other use (a Linear layer's weight would go unbound). */
static int fused_matmul(const struct swin_onnx_index *g, int i, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    static const char *const trans[] = {"transA", "transB", "transBatchA", "transBatchB"};
    bool plain = n->n_input == 2 && !swin_onnx_index_tensor(g, swin_onnx_node_in(n, 0)) &&
                 !swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
    for (size_t k = 0; k < sizeof trans / sizeof *trans; k++) plain = plain && !swin_onnx_node_attr_int(n, trans[k], 0);
    if (plain) return 0;
    node_err(g, i, SWIN_ERR_MODEL,
             "an ONNX Runtime FusedMatMul with a constant input or a transpose (a fused Linear layer), which only ONNX "
             "Runtime can run; re-save the model at the basic level (SessionOptions.graph_optimization_level = "
             "ORT_ENABLE_BASIC) or use the original export",
             err);
    return -1;
}

/* ONNX Runtime's FusedConv (its extended level) as it fuses a Conv whose only consumer is a
 * LeakyRelu of slope 0.01: LeakyReLU(conv(x, W) + B), no residual input Z. The walk accepts it
 * only where MONAI's block applies that activation straight to the conv (walk.c). */
static bool fused_lrelu_only(const SwinOnnx__NodeProto *n)
{
    const float *alpha = NULL;
    return (n->n_input <= 3 || (n->n_input == 4 && !swin_onnx_node_in(n, 3)[0])) &&
           swin_onnx_node_attr_str_is(n, "activation", "LeakyRelu", false) &&
           swin_onnx_node_attr_floats(n, "activation_params", &alpha) == 1 && fabsf(alpha[0] - 0.01f) <= 1e-7f;
}

/* A view ending (.., n, n), n > 1: a bias or mask added to attention logits. */
static bool tokens_by_tokens(const struct swin_const_view *v)
{
    return v->ndim >= 2 && v->dims[v->ndim - 1] > 1 && v->dims[v->ndim - 1] == v->dims[v->ndim - 2];
}

/* Recognises node i; *l->kind is set and 1 returned when it carries weights, 0 when it is a
 * plain operator, -1 on error. rm: the ReduceMean nodes a decomposed LayerNorm ending here
 * uses (else left alone). visits: what the attention-scale traces may still visit (attn_scale.h). */
static int recognise(const struct swin_onnx_index *g, int i, struct swin_onnx_layer *l, int rm[2], int *visits,
                     swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[i];
    const char *op = n->op_type ? n->op_type : "";
    memset(l, 0, sizeof *l);
    l->node = i;
    if (n->domain && !strcmp(n->domain, "com.microsoft") && !strcmp(op, "FusedMatMul")) return fused_matmul(g, i, err);
    if (n->domain && !strcmp(n->domain, "com.microsoft") && !strcmp(op, "Gelu") && n->n_input == 1)
        return 0;   /* ONNX Runtime's fusion of the exact erf GELU's Div/Erf/Add/Mul (its FastGelu is tanh's) */
    bool fused_conv = n->domain && !strcmp(n->domain, "com.microsoft") && !strcmp(op, "FusedConv") && fused_lrelu_only(n);
    if (n->domain && !strncmp(n->domain, "com.microsoft", 13) && !fused_conv) {
        node_err(g, i, SWIN_ERR_MODEL,
                 "an ONNX Runtime fused operator: this file was saved by ONNX Runtime at the extended or all optimisation "
                 "level, which only ONNX Runtime can run; re-save it at the basic level "
                 "(SessionOptions.graph_optimization_level = ORT_ENABLE_BASIC) or use the original export",
                 err);
        return -1;
    }
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") && !fused_conv) {
        node_err(g, i, SWIN_ERR_MODEL, "operator from a custom domain; a Swin UNETR export uses only standard ONNX operators", err);
        return -1;
    }
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || fused_conv) {
        bool t = op[4] == 'T';
        l->kind = t ? L_CONVT : L_CONV;
        l->fused_lrelu = fused_conv;
        l->w = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
        l->b = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 2));
        if (is_float_const(l->w, 4)) {
            node_err(g, i, SWIN_ERR_MODEL, "a 2-D convolution: a 2-D Swin UNETR (spatial_dims=2)? swinrun runs the 3-D model", err);
            return -1;
        }
        if (!is_float_const(l->w, 5)) {
            node_err(g, i, SWIN_ERR_MODEL, "expected a constant 5-D float weight (3-D convolution)", err);
            return -1;
        }
        if (swin_onnx_node_in(n, 2)[0] && !is_float_const(l->b, 1)) {
            node_err(g, i, SWIN_ERR_MODEL, "expected a constant 1-D float bias", err);
            return -1;
        }
        return conv_attrs(g, i, l, err) ? -1 : 1;
    }
    if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) {
        const struct swin_onnx_tensor *b = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
        bool b_transposed = false;
        if (!b && op[0] == 'M') b = transposed_weight(g, swin_onnx_node_in(n, 1)), b_transposed = b != NULL;
        if (!b || swin_onnx_index_tensor(g, swin_onnx_node_in(n, 0))) return 0;   /* activation x activation (attention) */
        if (!is_float_const(b, 2)) {
            node_err(g, i, SWIN_ERR_MODEL, "expected a constant 2-D float weight for a Linear layer", err);
            return -1;
        }
        l->kind = L_LINEAR;
        l->w = b;
        l->w_out_in = b_transposed;
        if (op[0] == 'G') {
            if (swin_onnx_node_attr_int(n, "transA", 0) || swin_onnx_node_attr_float(n, "alpha", 1) != 1 || swin_onnx_node_attr_float(n, "beta", 1) != 1) {
                node_err(g, i, SWIN_ERR_MODEL, "expected Gemm with transA=0, alpha=1, beta=1", err);
                return -1;
            }
            l->w_out_in = swin_onnx_node_attr_int(n, "transB", 0) != 0;
            l->b = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 2));
            if (swin_onnx_node_in(n, 2)[0] && !is_float_const(l->b, 1)) {
                node_err(g, i, SWIN_ERR_MODEL, "expected a constant 1-D float Gemm bias", err);
                return -1;
            }
            return 1;
        }
        /* MatMul: the bias is the other input of the one Add that consumes the product. */
        const int *c;
        int nc = swin_onnx_index_consumers(g, swin_onnx_node_out(n, 0), &c);
        if (nc == 1 && !strcmp(g->f->nodes[c[0]]->op_type, "Add")) {
            const SwinOnnx__NodeProto *a = g->f->nodes[c[0]];
            const struct swin_onnx_tensor *bt = swin_onnx_index_tensor(g, swin_onnx_node_in(a, 0));
            if (!bt) bt = swin_onnx_index_tensor(g, swin_onnx_node_in(a, 1));
            if (is_float_const(bt, 1)) l->b = bt;
        }
        return 1;
    }
    if (!strcmp(op, "LayerNormalization") || !strcmp(op, "InstanceNormalization")) {
        l->kind = op[0] == 'L' ? L_LN : L_IN;
        l->x = swin_onnx_node_in(n, 0);
        l->w = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
        l->b = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 2));
        if (!is_float_const(l->w, 1) || (swin_onnx_node_in(n, 2)[0] && !is_float_const(l->b, 1))) {
            node_err(g, i, SWIN_ERR_MODEL, "expected constant 1-D float scale and bias", err);
            return -1;
        }
        if (!eps_ok(n)) {
            node_err(g, i, SWIN_ERR_MODEL, "epsilon differs from MONAI's 1e-5", err);
            return -1;
        }
        if (l->kind == L_LN && swin_onnx_node_attr_int(n, "axis", -1) != -1) {
            node_err(g, i, SWIN_ERR_MODEL, "expected normalisation over the last axis (axis=-1)", err);
            return -1;
        }
        if (l->b && l->b->numel != l->w->numel) {
            node_err(g, i, SWIN_ERR_SHAPE, "scale and bias have different lengths", err);
            return -1;
        }
        if (l->kind == L_IN) group_norm_parts(g, i, l);
        /* an affine applied by separate Mul/Add nodes would be silently lost: refuse it */
        const int *c;
        int nc = swin_onnx_index_consumers(g, swin_onnx_node_out(n, 0), &c);
        for (int k = 0; k < nc; k++) {
            const SwinOnnx__NodeProto *u = g->f->nodes[c[k]];
            if (strcmp(u->op_type, "Mul") && strcmp(u->op_type, "Add")) continue;
            for (int x = 0; x < 2; x++) {
                const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, swin_onnx_node_in(u, x));
                if (t && onnx_dtype_is_float(t->dtype) && t->numel > 1) {
                    node_err(g, c[k], SWIN_ERR_MODEL,
                             "a normalisation's affine applied as a separate Mul/Add of a constant is not supported; expected it in the normalisation's scale and bias",
                             err);
                    return -1;
                }
            }
        }
        return 1;
    }
    if (!strcmp(op, "GroupNormalization")) {
        /* opset 21's (scale and bias per channel, as torch.nn.GroupNorm's); opsets 18-20 took
         * them per group, which no GroupNorm exports to */
        l->kind = L_IN;
        l->x = swin_onnx_node_in(n, 0);
        const int64_t groups = swin_onnx_node_attr_int(n, "num_groups", 0);
        l->groups = groups >= 1 && groups <= SWIN_MAX_NORM_GROUPS ? (int)groups : 0;
        l->group_w = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
        l->group_b = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 2));
        if (g->f->opset < 21) {
            node_err(g, i, SWIN_ERR_MODEL, "GroupNormalization before opset 21 (scale and bias per group): re-export at opset 21 or later", err);
            return -1;
        }
        if (!is_float_const(l->group_w, 1) || !is_float_const(l->group_b, 1) || l->groups < 1) {
            node_err(g, i, SWIN_ERR_MODEL, "expected num_groups 1..4096 and constant 1-D float scale and bias", err);
            return -1;
        }
        if (!eps_ok(n)) {
            node_err(g, i, SWIN_ERR_MODEL, "epsilon differs from MONAI's 1e-5", err);
            return -1;
        }
        return 1;
    }
    if (!strcmp(op, "Gather") || !strcmp(op, "GatherND")) {
        const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 0));
        if (!t || !onnx_dtype_is_float(t->dtype)) return 0;
        if (t->ndim != 2 || (!strcmp(op, "Gather") && swin_onnx_node_attr_int(n, "axis", 0) != 0)) {
            node_err(g, i, SWIN_ERR_MODEL, "a Gather from a float constant must be a bias-table lookup: 2-D table, axis 0", err);
            return -1;
        }
        l->kind = L_TABLE;
        l->w = t;
        return 1;
    }
    if (!strcmp(op, "Add")) {
        /* a constant (.., n, n), or one seen through layout-only nodes (const_view.h), added
         * to a computed value */
        for (int k = 0; k < 2; k++) {
            struct swin_const_view v;
            if (swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1 - k)) ||
                swin_const_view_follow(g, swin_onnx_node_in(n, k), &v, err) != 1)
                continue;
            if (v.ndim >= 3 && v.ndim <= 5 && tokens_by_tokens(&v)) {
                l->kind = L_FOLDED;
                l->w = v.src;
                l->view = v;
                return 1;
            }
        }
        return 0;
    }
    if (!strcmp(op, "Attention")) {
        /* opset 23's attention (torch's scaled_dot_product_attention, MONAI's use_flash_attention):
         * softmax(scale q k^T + mask) v with the bias and shift mask as the additive mask */
        if (n->n_input > 4 || swin_onnx_node_attr_int(n, "is_causal", 0) != 0 || swin_onnx_node_attr_float(n, "softcap", 0) != 0) {
            node_err(g, i, SWIN_ERR_MODEL,
                     "expected plain attention (no past key/value, not causal, no softcap) with an additive mask", err);
            return -1;
        }
        l->kind = L_ATTN;
        l->scale = swin_onnx_node_attr_float(n, "scale", 0);
        /* a constant mask: the bias (and the shifted window's mask) an optimiser folded, the
         * Add before the node folded with them */
        struct swin_const_view v;
        if (swin_const_view_follow(g, swin_onnx_node_in(n, 3), &v, err) == 1 && tokens_by_tokens(&v))
            l->view = v;
        return 1;
    }
    if (!strcmp(op, "Softmax")) return swin_attn_scale_match(g, i, l, visits, err);
    if (!strcmp(op, "Div")) return swin_ln_decomposed_match(g, i, l, rm, err);
    if (!strcmp(op, "SimplifiedLayerNormalization") && (!n->domain || !n->domain[0] || !strcmp(n->domain, "com.microsoft"))) {
        int r = swin_ln_simplified_match(g, i, l, &rm[0], err);
        if (!r)
            node_err(g, i, SWIN_ERR_MODEL,
                     "an ONNX Runtime SimplifiedLayerNormalization (RMS norm) that does not follow the centring of a "
                     "LayerNorm: not a Swin UNETR's",
                     err);
        return r ? r : -1;
    }
    if (!strcmp(op, "Mul")) return swin_ln_shared_affine_match(g, i, l, err);
    if (!strcmp(op, "ReduceMean")) return 0;   /* checked in swin_layers_find: part of a decomposed LayerNorm */
    if (!strcmp(op, "BatchNormalization")) return batch_norm_match(g, i, l, err);
    if (!strcmp(op, "Tanh") || (!strcmp(op, "Gelu") && !swin_onnx_node_attr_str_is(n, "approximate", "none", true))) {
        node_err(g, i, SWIN_ERR_MODEL, "tanh-approximated GELU is not supported; MONAI's Swin UNETR uses the exact erf GELU", err);
        return -1;
    }
    if (!strcmp(op, "Gelu")) return 0;   /* opset 20's exact GELU, in place of Div/Erf/Add/Mul */
    if (!strcmp(op, "LeakyRelu") && fabsf(swin_onnx_node_attr_float(n, "alpha", 0.01f) - 0.01f) > 1e-7f) {
        char m[160];
        snprintf(m, sizeof m, "LeakyReLU with negative slope %g; MONAI's UNETR blocks use 0.01",
                 (double)swin_onnx_node_attr_float(n, "alpha", 0.01f));
        node_err(g, i, SWIN_ERR_MODEL, m, err);
        return -1;
    }
    if (!strcmp(op, "If")) {
        const char *bad = if_branch_op(n, 0);
        if (!bad) return 0;
        char m[160];
        snprintf(m, sizeof m, "a branch of this If contains %s; expected only shape operations", bad);
        node_err(g, i, SWIN_ERR_MODEL, m, err);
        return -1;
    }
    if (is_plain(op)) return 0;
    if (is_quantized(op)) {
        node_err(g, i, SWIN_ERR_MODEL,
                 "a quantized model (int8 weights or activations, as ONNX Runtime's quantize_dynamic or "
                 "quantize_static write): swinrun runs float32, float16 or bfloat16 weights; give it the export "
                 "before quantization",
                 err);
        return -1;
    }
    node_err(g, i, SWIN_ERR_MODEL, "operator not expected in a Swin UNETR graph", err);
    return -1;
}

swin_status swin_layers_find(const struct swin_onnx_index *g, struct swin_onnx_layer_list *out, swin_error *err)
{
    int nn = g->f->n_nodes, *order = NULL, n_order = 0, visits = SWIN_ATTN_SCALE_VISITS;
    out->n = 0;
    out->v = malloc(((size_t)nn + 1) * sizeof *out->v);
    struct swin_onnx_layer *by_node = malloc(((size_t)nn + 1) * sizeof *by_node);
    unsigned char *has = calloc((size_t)nn + 1, 1), *in_ln = calloc((size_t)nn + 1, 1);
    swin_status st = out->v && by_node && has && in_ln ? SWIN_OK : swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", g->f->path);
    /* every node is checked, in file order, so errors name the first offender as listed */
    for (int i = 0; i < nn && !st; i++) {
        int rm[2] = {-1, -1};
        int r = recognise(g, i, &by_node[i], rm, &visits, err);
        if (r < 0) st = err->status;
        else has[i] = (unsigned char)r;
        /* a LayerNorm recognised claims its ReduceMeans; a shape it was not taken as claims none */
        for (int k = 0; k < 2 && r > 0; k++)
            if (rm[k] >= 0) in_ln[rm[k]] = 1;
    }
    for (int i = 0; i < nn && !st; i++)
        if (!strcmp(g->f->nodes[i]->op_type, "ReduceMean") && !in_ln[i])
            st = node_err(g, i, SWIN_ERR_MODEL, "a ReduceMean that is not part of a decomposed LayerNormalization (mean, centre, variance, divide)", err);
    if (!st) st = swin_onnx_dataflow_order(g, &order, &n_order, err);
    for (int k = 0; k < n_order && !st; k++)
        if (has[order[k]]) out->v[out->n++] = by_node[order[k]];
    free(order);
    free(by_node);
    free(has);
    free(in_ln);
    if (st) swin_layers_free(out);
    return st;
}

void swin_layers_free(struct swin_onnx_layer_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
