#include "weights/onnx/ln_decomposed.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The one axis a ReduceMean averages over (axes as attribute, or as input since opset 18);
 * AXIS_NONE when it is not one axis. */
#define AXIS_NONE INT64_MIN
static int64_t mean_axis(const struct swin_onnx_index *g, int node, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[node];
    const int64_t *a;
    int64_t in[2];
    int k = swin_onnx_node_attr_ints(n, "axes", &a);
    if (k < 0 && swin_onnx_node_in(n, 1)[0]) {
        k = swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 1), in, 2, err);
        a = in;
    }
    return k == 1 ? a[0] : AXIS_NONE;
}

/* Whether node t is a Transpose moving axis 1 of a rank-5 tensor last ((B, C, D, H, W) to
 * (B, D, H, W, C)). */
static bool channels_last(const struct swin_onnx_index *g, int t)
{
    const int64_t *perm;
    static const int64_t want[5] = {0, 2, 3, 4, 1};
    return t >= 0 && swin_onnx_node_attr_ints(g->f->nodes[t], "perm", &perm) == 5 && !memcmp(perm, want, sizeof want);
}

/* The one consumer of `value` if it is an `op` node, else -1. */
static int single_consumer(const struct swin_onnx_index *g, const char *value, const char *op)
{
    const int *c;
    return swin_onnx_index_consumers(g, value, &c) == 1 && !strcmp(g->f->nodes[c[0]]->op_type, op) ? c[0] : -1;
}

/* x - mean(x) feeding `value`: the Sub, with a Transpose moving channels last in between or
 * not; its input in *x, the mean's ReduceMean in *rm and its axis in *axis (-1, or 1 of
 * (B, C, D, H, W)). *moved: the Transpose is there (so the centred value is channels-last). */
static bool centred(const struct swin_onnx_index *g, const char *value, const char **x, int *rm, int64_t *axis, bool *moved,
                    swin_error *err)
{
    int t = swin_onnx_producer_op(g, value, "Transpose");
    *moved = t >= 0 && channels_last(g, t);
    int sub = swin_onnx_producer_op(g, *moved ? swin_onnx_node_in(g->f->nodes[t], 0) : value, "Sub");
    if (sub < 0) return false;
    *x = swin_onnx_node_in(g->f->nodes[sub], 0);
    *rm = swin_onnx_producer_op(g, swin_onnx_node_in(g->f->nodes[sub], 1), "ReduceMean");
    if (*rm < 0 || strcmp(swin_onnx_node_in(g->f->nodes[*rm], 0), *x)) return false;
    *axis = mean_axis(g, *rm, err);
    return *moved ? *axis == 1 : (*axis == -1 || *axis == 1);
}

static int epsilon_check(const struct swin_onnx_index *g, int node, float e, swin_error *err)
{
    if (fabsf(e - 1e-5f) <= 1e-7f) return 1;
    char dsc[300];
    swin_error_set(err, SWIN_ERR_MODEL, "%s: %s: decomposed LayerNormalization with epsilon %g, MONAI's is 1e-5", g->f->path,
                   swin_onnx_node_desc(g, node, dsc, sizeof dsc), (double)e);
    return -1;
}

/* The normalisation ending at node `div`: 1 with the input in *x, the axis its output's
 * channels are on (-1, or 1 of (B, C, D, H, W)) in *axis and the ReduceMeans in
 * reduce_means; 0 when it is none; -1 with *err set when its epsilon is not MONAI's. ONNX
 * Runtime's transpose optimiser (any level, opset <= 16 exports) moves the Transpose before a
 * stage's first LayerNorm into the decomposition: the mean is then over axis 1, and the
 * channels are moved last after the centring or after the Div. */
static int normalisation(const struct swin_onnx_index *g, int div, const char **x, int64_t *axis, int reduce_means[2],
                         swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[div];
    const char *d = swin_onnx_node_in(n, 0), *v = NULL;
    int sq = swin_onnx_producer_op(g, swin_onnx_node_in(n, 1), "Sqrt");
    int add = sq >= 0 ? swin_onnx_producer_op(g, swin_onnx_node_in(g->f->nodes[sq], 0), "Add") : -1;
    const struct swin_onnx_tensor *eps = add >= 0 ? swin_onnx_const_float_operand(g, g->f->nodes[add], &v) : NULL;
    int rm2 = eps ? swin_onnx_producer_op(g, v, "ReduceMean") : -1;
    int pw = rm2 >= 0 ? swin_onnx_producer_op(g, swin_onnx_node_in(g->f->nodes[rm2], 0), "Pow") : -1;
    bool moved;
    int64_t mean_ax;
    if (pw < 0 || strcmp(swin_onnx_node_in(g->f->nodes[pw], 0), d) || !centred(g, d, x, &reduce_means[0], &mean_ax, &moved, err))
        return 0;
    *axis = moved ? -1 : mean_ax;
    if (mean_axis(g, rm2, err) != *axis) return 0;
    float e, two;
    const struct swin_onnx_tensor *p2 = swin_onnx_index_tensor(g, swin_onnx_node_in(g->f->nodes[pw], 1));
    if (eps->numel != 1 || !p2 || p2->numel != 1 || swin_onnx_tensor_read_f32(g->f, eps, 0, 1, &e, err) ||
        swin_onnx_tensor_read_f32(g->f, p2, 0, 1, &two, err) || two != 2.0f)
        return 0;
    reduce_means[1] = rm2;
    return epsilon_check(g, div, e, err);
}

/* Whether t holds one value per channel as the affine part broadcasts it: a vector (C) for
 * channels last, (1, C, 1, ..) for channels on axis 1. */
static bool per_channel(const struct swin_onnx_tensor *t, bool channels_first)
{
    if (!t) return false;
    if (!channels_first) return t->ndim == 1;
    if (t->ndim < 2 || (uint64_t)t->dims[1] != t->numel) return false;
    return true;
}

/* The affine part after the normalisation's output y (channels last, or on axis 1 where it
 * averaged over axis 1 and y was not moved): Mul by a constant per channel, then Add of one;
 * l->w, l->b set when there. */
static void affine(const struct swin_onnx_index *g, int mul, struct swin_onnx_layer *l, bool channels_first)
{
    const char *rest;
    const struct swin_onnx_tensor *gamma = mul >= 0 ? swin_onnx_const_float_operand(g, g->f->nodes[mul], &rest) : NULL;
    if (!per_channel(gamma, channels_first)) return;
    l->w = gamma;
    int badd = single_consumer(g, swin_onnx_node_out(g->f->nodes[mul], 0), "Add");
    const struct swin_onnx_tensor *beta = badd >= 0 ? swin_onnx_const_float_operand(g, g->f->nodes[badd], &rest) : NULL;
    if (per_channel(beta, channels_first)) l->b = beta;
}

int swin_ln_decomposed_match(const struct swin_onnx_index *g, int div, struct swin_onnx_layer *l, int reduce_means[2], swin_error *err)
{
    const char *x, *y = swin_onnx_node_out(g->f->nodes[div], 0);
    int64_t axis;
    int r = normalisation(g, div, &x, &axis, reduce_means, err);
    if (r <= 0) return r;
    const int *c;
    int consumers = swin_onnx_index_consumers(g, y, &c);
    /* over the channels of (B, C, D, H, W): ONNX Runtime's transpose optimiser (any level) moves
     * the Transpose before a stage's first LayerNorm below its decomposition (opset <= 16); the
     * patch norm over (B, C, D*H*W) it leaves channels first, its affine constants (1, C, 1) */
    int transpose = axis == 1 && consumers == 1 ? single_consumer(g, y, "Transpose") : -1;
    bool channels_first = axis == 1 && consumers == 1 && transpose < 0;
    if (axis == 1 && consumers == 1 && !channels_first && !channels_last(g, transpose)) return 0;
    memset(l, 0, sizeof *l);
    l->kind = L_LN;
    l->node = div;
    l->x = x;
    /* one use: its affine Mul follows; several: ONNX Runtime merged the hidden state's proj_out
     * (weightless) with the next stage's norm1, whose affine part is matched at its Mul
     * (swin_ln_shared_affine_match) */
    if (consumers == 1) {
        affine(g, single_consumer(g, swin_onnx_node_out(transpose >= 0 ? g->f->nodes[transpose] : g->f->nodes[div], 0), "Mul"), l,
               channels_first);
        if (channels_first && !l->w) return 0;   /* a weightless LayerNorm over axis 1: not MONAI's */
    } else {
        l->shared = true;
    }
    return 1;
}

int swin_ln_shared_affine_match(const struct swin_onnx_index *g, int mul, struct swin_onnx_layer *l, swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[mul];
    const char *y;
    const struct swin_onnx_tensor *gamma = swin_onnx_const_float_operand(g, n, &y);
    if (!gamma || gamma->ndim != 1) return 0;
    int transpose = swin_onnx_producer_op(g, y, "Transpose");
    int div = swin_onnx_producer_op(g, transpose >= 0 ? swin_onnx_node_in(g->f->nodes[transpose], 0) : y, "Div");
    const int *c;
    const char *x;
    int64_t axis;
    int rm[2];
    if (div < 0 || swin_onnx_index_consumers(g, swin_onnx_node_out(g->f->nodes[div], 0), &c) < 2 ||
        normalisation(g, div, &x, &axis, rm, err) != 1 || (axis == 1) != (transpose >= 0) ||
        (transpose >= 0 && !channels_last(g, transpose)))
        return 0;
    memset(l, 0, sizeof *l);
    l->kind = L_LN;
    l->node = mul;
    l->x = x;
    affine(g, mul, l, false);
    return 1;
}

int swin_ln_simplified_match(const struct swin_onnx_index *g, int node, struct swin_onnx_layer *l, int *reduce_mean,
                             swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[node];
    const char *x;
    int64_t axis;
    bool moved;
    if (swin_onnx_node_attr_int(n, "axis", -1) != -1 || !centred(g, swin_onnx_node_in(n, 0), &x, reduce_mean, &axis, &moved, err) ||
        (!moved && axis != -1))
        return 0;
    memset(l, 0, sizeof *l);
    l->kind = L_LN;
    l->node = node;
    l->x = x;
    l->w = swin_onnx_index_tensor(g, swin_onnx_node_in(n, 1));
    if (!l->w || l->w->ndim != 1) return 0;
    const char *rest;
    int badd = single_consumer(g, swin_onnx_node_out(n, 0), "Add");
    const struct swin_onnx_tensor *beta = badd >= 0 ? swin_onnx_const_float_operand(g, g->f->nodes[badd], &rest) : NULL;
    if (beta && beta->ndim == 1) l->b = beta;
    return epsilon_check(g, node, swin_onnx_node_attr_float(n, "epsilon", 1e-5f), err);
}
