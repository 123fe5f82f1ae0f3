#include "weights/onnx/const_view.h"

#include <string.h>

#define MAX_CHAIN 16

static bool is_op(const SwinOnnx__NodeProto *n, const char *op)
{
    return !strcmp(n->op_type, op) && (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

static bool is_layout_op(const SwinOnnx__NodeProto *n)
{
    return is_op(n, "Reshape") || is_op(n, "Unsqueeze") || is_op(n, "Squeeze") || is_op(n, "Transpose") || is_op(n, "Identity");
}

static void set_contiguous(struct swin_const_view *v)
{
    int64_t s = 1;
    for (int k = v->ndim - 1; k >= 0; k--) {
        v->strides[k] = s;
        s *= v->dims[k];
    }
}

bool swin_const_view_contiguous(const struct swin_const_view *v)
{
    int64_t s = 1;
    for (int k = v->ndim - 1; k >= 0; k--) {
        if (v->dims[k] != 1 && v->strides[k] != s) return false;
        s *= v->dims[k];
    }
    return true;
}

/* axes of an Unsqueeze / Squeeze: the attribute below opset 13, input 1 from it; -2 when
 * unreadable or not a constant, -1 when absent (Squeeze: every axis of size 1) */
static int read_axes(const struct swin_onnx_index *g, const SwinOnnx__NodeProto *n, int64_t *axes, swin_error *err)
{
    const int64_t *a;
    int na = swin_onnx_node_attr_ints(n, "axes", &a);
    if (na >= 0) {
        if (na > ONNX_MAX_RANK) return -2;
        memcpy(axes, a, (size_t)na * sizeof *a);
        return na;
    }
    const char *in1 = swin_onnx_node_in(n, 1);
    if (!in1[0]) return -1;
    int c = swin_onnx_index_const_i64(g, in1, axes, ONNX_MAX_RANK, err);
    return c < 0 ? -2 : c;
}

static bool unsqueeze(struct swin_const_view *v, const int64_t *axes, int na)
{
    int r = v->ndim + na;
    if (na < 1 || r > ONNX_MAX_RANK) return false;
    bool ins[ONNX_MAX_RANK] = {false};
    for (int k = 0; k < na; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
        if (a < 0 || a >= r || ins[a]) return false;
        ins[a] = true;
    }
    struct swin_const_view o = *v;
    o.ndim = r;
    for (int k = 0, j = 0; k < r; k++) {
        o.dims[k] = ins[k] ? 1 : v->dims[j];
        o.strides[k] = ins[k] ? 0 : v->strides[j++];
    }
    *v = o;
    return true;
}

static bool squeeze(struct swin_const_view *v, const int64_t *axes, int na)
{
    bool drop[ONNX_MAX_RANK] = {false};
    for (int k = 0; k < v->ndim; k++) drop[k] = na < 0 && v->dims[k] == 1;
    for (int k = 0; k < na; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + v->ndim : axes[k];
        if (a < 0 || a >= v->ndim || v->dims[a] != 1) return false;
        drop[a] = true;
    }
    struct swin_const_view o = *v;
    o.ndim = 0;
    for (int k = 0; k < v->ndim; k++)
        if (!drop[k]) {
            o.dims[o.ndim] = v->dims[k];
            o.strides[o.ndim++] = v->strides[k];
        }
    *v = o;
    return true;
}

static bool transpose(struct swin_const_view *v, const SwinOnnx__NodeProto *n)
{
    const int64_t *perm;
    int np = swin_onnx_node_attr_ints(n, "perm", &perm);
    int64_t rev[ONNX_MAX_RANK];
    if (np < 0) {
        for (int k = 0; k < v->ndim; k++) rev[k] = v->ndim - 1 - k;
        perm = rev;
        np = v->ndim;
    }
    if (np != v->ndim) return false;
    bool used[ONNX_MAX_RANK] = {false};
    struct swin_const_view o = *v;
    for (int k = 0; k < np; k++) {
        if (perm[k] < 0 || perm[k] >= np || used[perm[k]]) return false;
        used[perm[k]] = true;
        o.dims[k] = v->dims[perm[k]];
        o.strides[k] = v->strides[perm[k]];
    }
    *v = o;
    return true;
}

/* Reshape without a copy (as numpy's view rule): each run of new axes must cover a run of
 * old axes that is contiguous within itself; size-1 axes of either side are free. */
static bool reshape(struct swin_const_view *v, const int64_t *shape, int ns, bool allowzero)
{
    if (ns > ONNX_MAX_RANK) return false;
    int64_t nd[ONNX_MAX_RANK], numel = 1, known = 1;
    int infer = -1;
    for (int k = 0; k < v->ndim; k++) numel *= v->dims[k];
    for (int k = 0; k < ns; k++) {
        nd[k] = shape[k];
        if (nd[k] == 0 && !allowzero) {
            if (k >= v->ndim) return false;
            nd[k] = v->dims[k];
        }
        if (nd[k] == -1) {
            if (infer >= 0) return false;
            infer = k;
            continue;
        }
        if (nd[k] < 1 || nd[k] > numel / known) return false;   /* the product must stay numel */
        known *= nd[k];
    }
    if (infer >= 0) {
        if (known == 0 || numel % known) return false;
        nd[infer] = numel / known;
    } else if (known != numel) {
        return false;
    }
    /* the old axes of size > 1, in order */
    int od[ONNX_MAX_RANK], no = 0;
    for (int k = 0; k < v->ndim; k++)
        if (v->dims[k] != 1) od[no++] = k;
    struct swin_const_view o = *v;
    o.ndim = ns;
    int i = 0, j = 0;
    while (j < ns) {
        if (nd[j] == 1) {
            o.dims[j] = 1;
            o.strides[j++] = 0;
            continue;
        }
        /* grow old run [i, i2) and new run [j, j2) until their products agree */
        int i2 = i, j2 = j;
        int64_t po = 1, pn = 1;
        do {
            if (po <= pn) {
                if (i2 >= no) return false;
                po *= v->dims[od[i2++]];
            } else {
                if (j2 >= ns) return false;
                pn *= nd[j2++];
            }
        } while (po != pn);
        for (int k = i; k + 1 < i2; k++)
            if (v->strides[od[k]] != v->strides[od[k + 1]] * v->dims[od[k + 1]]) return false;
        int64_t s = v->strides[od[i2 - 1]];
        for (int k = j2 - 1; k >= j; k--) {
            o.dims[k] = nd[k];
            o.strides[k] = nd[k] == 1 ? 0 : s;
            s *= nd[k];
        }
        i = i2;
        j = j2;
    }
    if (i != no) return false;
    *v = o;
    return true;
}

int swin_const_view_follow(const struct swin_onnx_index *g, const char *name, struct swin_const_view *v, swin_error *err)
{
    const SwinOnnx__NodeProto *chain[MAX_CHAIN];
    int len = 0;
    const struct swin_onnx_tensor *t;
    while (!(t = swin_onnx_index_tensor(g, name))) {
        int p = swin_onnx_index_producer(g, name);
        if (p < 0 || len == MAX_CHAIN || !is_layout_op(g->f->nodes[p])) return 0;
        chain[len++] = g->f->nodes[p];
        name = swin_onnx_node_in(g->f->nodes[p], 0);
    }
    if (!onnx_dtype_is_float(t->dtype) || t->ndim > ONNX_MAX_RANK) return 0;
    v->src = t;
    v->ndim = t->ndim;
    memcpy(v->dims, t->dims, sizeof v->dims);
    set_contiguous(v);
    while (len > 0) {
        const SwinOnnx__NodeProto *n = chain[--len];
        int64_t a[ONNX_MAX_RANK];
        bool ok = true;
        if (is_op(n, "Unsqueeze") || is_op(n, "Squeeze")) {
            int na = read_axes(g, n, a, err);
            if (na == -2) return 0;
            ok = is_op(n, "Unsqueeze") ? unsqueeze(v, a, na) : squeeze(v, a, na);
        } else if (is_op(n, "Transpose")) {
            ok = transpose(v, n);
        } else if (is_op(n, "Reshape")) {
            int ns = swin_onnx_index_const_i64(g, swin_onnx_node_in(n, 1), a, ONNX_MAX_RANK, err);
            if (ns < 0) return 0;
            ok = reshape(v, a, ns, swin_onnx_node_attr_int(n, "allowzero", 0) != 0);
        }
        if (!ok) return 0;
    }
    return 1;
}
