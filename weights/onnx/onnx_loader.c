#include "weights/onnx/onnx_loader.h"

#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "weights/onnx/graph.h"
#include "weights/onnx/layers.h"
#include "weights/onnx/merge.h"
#include "weights/onnx/onnx_file.h"
#include "weights/onnx/provenance.h"
#include "weights/onnx/walk.h"
#include "weights/onnx/bind.h"

/* Weights that come from Constant nodes (rare: exporters put parameters in initializers)
 * point into the unpacked nodes; copy them out so the nodes can be freed before the flat
 * buffer is allocated. */
struct detached {
    struct swin_onnx_tensor *t;
    float **data;
    int n;
};

static swin_status detach_constants(const struct swin_onnx_file *f, struct swin_walk_out *w, struct detached *d, swin_error *err)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < w->n_plans; i++) d->n += w->plans[i].t && w->plans[i].t->producer >= 0;
    if (!d->n) return SWIN_OK;
    d->t = calloc((size_t)d->n, sizeof *d->t);
    d->data = calloc((size_t)d->n, sizeof *d->data);
    if (!d->t || !d->data) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", f->path);
    int k = 0;
    for (int i = 0; i < w->n_plans; i++) {
        struct swin_bind_plan *p = &w->plans[i];
        if (!p->t || p->t->producer < 0) continue;
        float *buf = malloc((size_t)(p->t->numel ? p->t->numel : 1) * sizeof *buf);
        if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", f->path);
        d->data[k] = buf;
        swin_status st = swin_onnx_tensor_read_f32(f, p->t, 0, p->t->numel, buf, err);
        if (st) return st;
        d->t[k] = *p->t;
        d->t[k].name = "(constant node output)";
        d->t[k].src = SRC_MEMORY;
        d->t[k].mem = buf;
        d->t[k].producer = -1;
        p->t = &d->t[k++];
    }
    return SWIN_OK;
}

static void detached_free(struct detached *d)
{
    for (int i = 0; i < d->n && d->data; i++) free(d->data[i]);
    free(d->data);
    free(d->t);
}

swin_status swin_onnx_load_opts(const char *path, const struct swin_onnx_load_opts *opts, struct swin_model *out,
                                swin_error *err)
{
    swin_error e = {SWIN_OK, ""};
    if (!out) return swin_error_set(err, SWIN_ERR_ARG, "swin_onnx_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return swin_error_set(err, SWIN_ERR_ARG, "swin_onnx_load: path is NULL");

    struct swin_onnx_file f;
    struct swin_onnx_index g;
    struct swin_onnx_layer_list layers = {0};
    struct swin_walk_out w = {0};
    struct detached det = {0};
    swin_status st = swin_onnx_file_open(path, &f, &e);
    if (st) goto done;
    st = swin_onnx_index_build(&g, &f, &e);
    if (!st) {
        st = swin_layers_find(&g, &layers, &e);
        if (!st) st = swin_walk_model(&g, &layers, out, &w, &e);
        if (!st) swin_provenance_detect(&g, &w, &out->source);
        if (!st && opts && opts->merge_order) {
            memcpy(out->cfg.merge_order, opts->merge_order, sizeof(swin_merge_order));
            out->cfg.merge_kind = swin_merge_kind_of(out->cfg.merge_order);
        }
        if (!st) st = detach_constants(&f, &w, &det, &e);
        swin_layers_free(&layers);
        swin_onnx_index_free(&g);
    }
    /* the graph is matched: free it before the weights are read, so the two never coexist */
    swin_onnx_file_drop_nodes(&f);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    if (!st) st = swin_bind_plans(&f, &w, out, &e);
    free(w.plans);
    detached_free(&det);
    swin_onnx_file_close(&f);
done:
    if (st) {
        memset(out, 0, sizeof *out);
        if (e.status == SWIN_OK) swin_error_set(&e, st, "%s: load failed", path);
        /* names from a corrupt file may hold control characters: keep the message one line */
        for (char *c = e.msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        if (err) *err = e;
    }
    return st;
}

swin_status swin_onnx_load(const char *path, struct swin_model *out, swin_error *err)
{
    return swin_onnx_load_opts(path, NULL, out, err);
}
