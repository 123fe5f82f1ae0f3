#include "weights/onnx/bind.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/big_alloc.h"

#define FLAT_ALIGN 256

static uint64_t aligned_floats(uint64_t n) { return (n + FLAT_ALIGN / 4 - 1) / (FLAT_ALIGN / 4) * (FLAT_ALIGN / 4); }

/* walk.h's fold, per output channel o (the fastest index of the bound (k^3, cin, cout) weight) */
static swin_status fold_bn(const struct swin_onnx_file *f, const struct swin_bn_fold *b, swin_error *err)
{
    float *w = (float *)*b->conv_w, *bias = (float *)*b->conv_b;
    for (int o = 0; o < b->cout; o++)
        if (!(b->var[o] + b->eps > 0) || !isfinite(b->var[o]))
            return swin_error_set(err, SWIN_ERR_MODEL, "%s: batch norm %s: running variance %g of channel %d plus epsilon %g "
                                  "is not a positive number; the file is damaged",
                                  f->path, b->what, (double)b->var[o], o, (double)b->eps);
    for (int o = 0; o < b->cout; o++) {
        float s = b->gamma[o] / sqrtf(b->var[o] + b->eps);
        bias[o] = b->beta[o] + (bias[o] - b->mean[o]) * s;
        for (uint64_t r = 0; r < b->rows; r++) w[r * (uint64_t)b->cout + (uint64_t)o] *= s;
    }
    return SWIN_OK;
}

swin_status swin_bind_plans(const struct swin_onnx_file *f, const struct swin_walk_out *w, struct swin_model *m, swin_error *err)
{
    uint64_t total = 0, params = 0;
    for (int i = 0; i < w->n_plans; i++) {
        const struct swin_bind_plan *p = &w->plans[i];
        total += aligned_floats(p->out_numel);
        params += p->out_numel;
    }
    if (total > SIZE_MAX / 4 / 2)
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: the weights need %llu floats, more than this host can address", f->path,
                              (unsigned long long)total);
    size_t bytes = (size_t)(total ? total : 1) * 4;
    bytes = (bytes + FLAT_ALIGN - 1) / FLAT_ALIGN * FLAT_ALIGN;
    float *flat = swin_big_alloc(bytes, FLAT_ALIGN);
    if (!flat)
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: cannot allocate %zu bytes of host memory for the weights", f->path, bytes);
    uint64_t off = 0;
    for (int i = 0; i < w->n_plans; i++) {
        const struct swin_bind_plan *p = &w->plans[i];
        uint64_t n = p->out_numel;
        swin_status st = p->unfold_bias ? swin_layout_unfold_bias(f, p->t, p->d0, p->d1, p->bias_strides, m->cfg.window, flat + off, err)
                                        : swin_layout_convert(f, p->t, p->layout, p->d0, p->d1, p->k, flat + off, err);
        if (st) {
            swin_big_free(flat);
            return st;
        }
        /* zero the alignment gap so the buffer has no uninitialised bytes */
        memset(flat + off + n, 0, (size_t)(aligned_floats(n) - n) * 4);
        *p->slot = flat + off;
        off += aligned_floats(n);
    }
    memset(flat + off, 0, bytes - (size_t)off * 4);
    for (int i = 0; i < w->n_bn; i++) {
        swin_status st = fold_bn(f, &w->bn[i], err);
        if (st) {
            swin_big_free(flat);
            return st;
        }
    }
    m->flat = flat;
    m->flat_bytes = bytes;
    m->param_count = (size_t)params;
    return SWIN_OK;
}
