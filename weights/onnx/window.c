#include "weights/onnx/window.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static swin_status fail(const struct swin_onnx_index *g, int node, const char *what, swin_error *err)
{
    char d[300];
    return swin_error_set(err, SWIN_ERR_MODEL, "%s: %s: %s", g->f->path, swin_onnx_node_desc(g, node, d, sizeof d), what);
}

/* The (N, N) integer constant the table's indices come from, following index plumbing
 * (Reshape, Slice, Unsqueeze, Cast, ...) back from the Gather; NULL when there is none. */
static const struct swin_onnx_tensor *find_index(const struct swin_onnx_index *g, int table_node)
{
    const char *v = swin_onnx_node_in(g->f->nodes[table_node], 1);
    for (int depth = 0; depth < 8; depth++) {
        const struct swin_onnx_tensor *t = swin_onnx_index_tensor(g, v);
        if (t) return (t->dtype == ONNX_INT64 || t->dtype == ONNX_INT32) && t->ndim == 2 && t->dims[0] == t->dims[1] ? t : NULL;
        int p = swin_onnx_index_producer(g, v);
        if (p < 0) return NULL;
        const char *op = g->f->nodes[p]->op_type;
        if (strcmp(op, "Reshape") && strcmp(op, "Slice") && strcmp(op, "Unsqueeze") && strcmp(op, "Squeeze") &&
            strcmp(op, "Cast") && strcmp(op, "Flatten") && strcmp(op, "Identity"))
            return NULL;
        v = swin_onnx_node_in(g->f->nodes[p], 0);
    }
    return NULL;
}

static int64_t rows_of(const int w[3]) { return (int64_t)(2 * w[0] - 1) * (2 * w[1] - 1) * (2 * w[2] - 1); }

bool swin_window_from_index(const int64_t *v, int64_t n, int64_t rows, int window[3])
{
    /* every factorisation n = w1 w2 w3 whose table has `rows` rows; the index must match one */
    for (int a = 1; a <= n; a++) {
        if (n % a) continue;
        for (int b = 1; b <= n / a; b++) {
            if ((n / a) % b) continue;
            int w[3] = {a, b, (int)(n / a / b)};
            if (rows_of(w) != rows) continue;
            bool ok = true;
            for (int64_t i = 0; i < n && ok; i++)
                for (int64_t t = 0; t < n && ok; t++) ok = v[i * n + t] == window_rel_index(w, i, t);
            if (ok) {
                memcpy(window, w, sizeof w);
                return true;
            }
        }
    }
    return false;
}

swin_status swin_attn_window_detect(const struct swin_onnx_index *g, int table_node, int64_t rows, int window[3], swin_error *err)
{
    const struct swin_onnx_tensor *idx = find_index(g, table_node);
    if (!idx) {
        for (int w = 1; w <= 64; w++) {
            int c[3] = {w, w, w};
            if (rows_of(c) == rows) {
                memcpy(window, c, sizeof c);
                return SWIN_OK;
            }
        }
        return fail(g, table_node, "the bias table's row count is not (2w-1)^3 and the graph has no relative_position_index to read a non-cubic window from", err);
    }
    int64_t n = idx->dims[0];
    if (n < 1 || n > 64 * 64 * 64) return fail(g, table_node, "relative_position_index has an impossible size", err);
    /* the n*n values must be in the file (at least a byte each) before n*n*8 bytes are allocated */
    if (idx->src == SRC_NONE || idx->numel != (uint64_t)(n * n) || idx->len < idx->numel)
        return fail(g, table_node, "relative_position_index has less data than its shape needs", err);
    int64_t *v = malloc((size_t)(n * n) * sizeof *v);
    if (!v) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory reading relative_position_index", g->f->path);
    swin_status st = swin_onnx_tensor_read_i64(g->f, idx, v, (uint64_t)(n * n), err);
    if (st) { free(v); return st; }
    bool found = swin_window_from_index(v, n, rows, window);
    free(v);
    if (found) return SWIN_OK;
    char m[200];
    snprintf(m, sizeof m, "relative_position_index '%s' (%lld x %lld) matches no window w1 w2 w3 = %lld with a %lld-row bias table",
             idx->name, (long long)n, (long long)n, (long long)n, (long long)rows);
    return fail(g, table_node, m, err);
}

bool swin_window_from_partition(const struct swin_onnx_index *g, int qkv_node, int window[3], swin_error *err)
{
    static const int64_t perm_want[8] = {0, 1, 3, 5, 2, 4, 6, 7};
    int64_t shape[8];
    /* the flattening Reshape, and a second one to 2-D where ONNX Runtime made the projection a Gemm */
    const char *v = swin_onnx_node_in(g->f->nodes[qkv_node], 0);
    for (int k = 0, r; k < 2 && (r = swin_onnx_producer_op(g, v, "Reshape")) >= 0; k++) v = swin_onnx_node_in(g->f->nodes[r], 0);
    int tr = swin_onnx_producer_op(g, v, "Transpose");
    if (tr < 0) return false;
    const int64_t *perm;
    if (swin_onnx_node_attr_ints(g->f->nodes[tr], "perm", &perm) != 8 || memcmp(perm, perm_want, sizeof perm_want)) return false;
    int part = swin_onnx_producer_op(g, swin_onnx_node_in(g->f->nodes[tr], 0), "Reshape");
    if (part < 0 || swin_onnx_index_const_i64(g, swin_onnx_node_in(g->f->nodes[part], 1), shape, 8, err) != 8)
        return false;
    for (int a = 0; a < 3; a++) {
        if (shape[2 + 2 * a] < 1 || shape[2 + 2 * a] > 64) return false;
        window[a] = (int)shape[2 + 2 * a];
    }
    return true;
}
