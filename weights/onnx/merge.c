#include "weights/onnx/merge.h"

#include <stdio.h>
#include <string.h>

#define RANK 5   /* the merge input is channels-last (B, D, H, W, C) */

static swin_status fail(const struct swin_onnx_index *g, int node, const char *what, swin_error *err)
{
    char d[300];
    return swin_error_set(err, SWIN_ERR_MODEL, "%s: %s: patch merging: %s", g->f->path, swin_onnx_node_desc(g, node, d, sizeof d), what);
}

/* Slice (opset >= 10): data, starts, ends, axes, steps, all constant 1-D int tensors. */
static swin_status read_slice(const struct swin_onnx_index *g, int node, int off[3], swin_error *err)
{
    const SwinOnnx__NodeProto *n = g->f->nodes[node];
    int64_t st[RANK], en[RANK], ax[RANK], sp[RANK];
    int ns = swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 1), st, RANK, err);
    int ne = swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 2), en, RANK, err);
    int na = swin_onnx_node_in(n, 3)[0] ? swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 3), ax, RANK, err) : ns;
    int np = swin_onnx_node_in(n, 4)[0] ? swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 4), sp, RANK, err) : ns;
    if (ns < 1 || ne != ns || na != ns || np != ns)
        return fail(g, node, "expected a Slice with constant starts/ends/axes/steps of equal length", err);
    for (int k = 0; k < ns; k++) {
        int64_t a = swin_onnx_node_in(n, 3)[0] ? ax[k] : k;
        int64_t step = swin_onnx_node_in(n, 4)[0] ? sp[k] : 1;
        if (a < 0) a += RANK;
        if (a >= 1 && a <= 3) {
            if (step != 2 || (st[k] != 0 && st[k] != 1) || en[k] <= st[k])
                return fail(g, node, "expected a stride-2 slice starting at 0 or 1 along D, H or W", err);
            if (off[a - 1] >= 0) return fail(g, node, "two slices along the same axis in one merge input", err);
            off[a - 1] = (int)st[k];
        } else if (!(a == 0 || a == 4) || step != 1 || st[k] != 0 || en[k] < (int64_t)1 << 30) {
            return fail(g, node, "expected only full slices along the batch and channel axes", err);
        }
    }
    return SWIN_OK;
}

swin_status swin_merge_order_read(const struct swin_onnx_index *g, int ln_node, const char *x, swin_merge_order order, swin_error *err)
{
    int cat = swin_onnx_index_producer(g, x);
    const SwinOnnx__NodeProto *c = cat >= 0 ? g->f->nodes[cat] : NULL;
    if (!c || strcmp(c->op_type, "Concat") || c->n_input != 8 ||
        (swin_onnx_node_attr_int(c, "axis", -1) != -1 && swin_onnx_node_attr_int(c, "axis", -1) != RANK - 1))
        return fail(g, ln_node, "expected its input to be a Concat of 8 sub-grids along the channel axis", err);
    const char *root = NULL;
    for (int m = 0; m < 8; m++) {
        int off[3] = {-1, -1, -1};
        const char *v = swin_onnx_node_in(c, m);
        int p = swin_onnx_index_producer(g, v);
        int depth = 0;
        while (p >= 0 && !strcmp(g->f->nodes[p]->op_type, "Slice") && depth++ < 8) {
            swin_status st = read_slice(g, p, off, err);
            if (st) return st;
            v = swin_onnx_node_in(g->f->nodes[p], 0);
            p = swin_onnx_index_producer(g, v);
        }
        if (off[0] < 0 || off[1] < 0 || off[2] < 0) {
            char w[120];
            snprintf(w, sizeof w, "Concat input %d is not a chain of stride-2 Slices along D, H and W", m);
            return fail(g, cat, w, err);
        }
        if (root && strcmp(root, v)) return fail(g, cat, "the 8 sub-grids are not sliced from the same tensor", err);
        root = v;
        for (int k = 0; k < 3; k++) order[m][k] = off[k];
    }
    return SWIN_OK;
}

enum swin_merge_kind swin_merge_kind_of(swin_merge_order order)
{
    if (!memcmp(order, swin_merge_order_v15, sizeof(swin_merge_order))) return SWIN_MERGE_V15;
    if (!memcmp(order, swin_merge_order_pre15, sizeof(swin_merge_order))) return SWIN_MERGE_PRE15;
    if (!memcmp(order, swin_merge_order_v2, sizeof(swin_merge_order))) return SWIN_MERGE_V2;
    return SWIN_MERGE_OTHER;
}

bool swin_merge_slice_take(int off[3], int64_t axis, int64_t start, int64_t step)
{
    if (axis < 0) axis += RANK;
    if (axis < 1 || axis > 3) return (axis == 0 || axis == RANK - 1) && step == 1 && start == 0;
    if (step != 2 || (start != 0 && start != 1) || off[axis - 1] >= 0) return false;
    off[axis - 1] = (int)start;
    return true;
}
