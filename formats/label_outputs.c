/* Label map and probabilities outputs over a format's streaming writers (label_outputs.h). */
#include "formats/label_outputs.h"

#include <stdlib.h>
#include <string.h>

void swin_label_outputs_discard(void *outputs)
{
    struct swin_label_outputs *o = outputs;
    if (!o) return;
    o->ops->abort(o->labels);
    o->ops->abort(o->probs);
    free(o->plane);
    free(o->held);
    free(o);
}

swin_status swin_label_outputs_new(struct swin_label_outputs **out, const struct swin_voxel_writer_ops *ops,
                                   const int64_t dim[3], const swin_segment_params *p, int classes,
                                   swin_error *err)
{
    struct swin_label_outputs *o = calloc(1, sizeof *o);
    if (!o) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    o->ops = ops;
    o->masks = swin_mask_channels(p->activation, classes);
    o->wide = !o->masks && classes > 256;
    o->plane_n = (size_t)(dim[0] * dim[1]);
    o->nz = dim[2];
    if ((!o->wide && !(o->plane = malloc(o->plane_n))) ||
        (o->masks && !(o->held = malloc(o->plane_n * (size_t)o->nz * sizeof *o->held)))) {
        swin_label_outputs_discard(o);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the label map");
    }
    *out = o;
    return SWIN_OK;
}

swin_status swin_label_outputs_put_labels(void *outputs, int64_t k, const uint16_t *plane, swin_error *err)
{
    struct swin_label_outputs *o = outputs;
    if (o->masks) { /* the file holds channel after channel: written at finish */
        memcpy(o->held + (size_t)k * o->plane_n, plane, o->plane_n * sizeof *plane);
        return SWIN_OK;
    }
    if (o->wide) return o->ops->write(o->labels, plane, o->plane_n * 2, err);
    for (size_t i = 0; i < o->plane_n; i++) o->plane[i] = (uint8_t)plane[i];
    return o->ops->write(o->labels, o->plane, o->plane_n, err);
}

swin_status swin_label_outputs_put_probs(void *outputs, int c, int64_t k, const float *plane, swin_error *err)
{
    struct swin_label_outputs *o = outputs;
    return o->ops->write(o->probs, plane, o->plane_n * sizeof *plane, err);
}

swin_status swin_label_outputs_finish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct swin_label_outputs *o = outputs;
    swin_status st = SWIN_OK;
    for (int c = 0; c < o->masks && !st; c++)
        for (int64_t k = 0; k < o->nz && !st; k++) {
            const uint16_t *src = o->held + (size_t)k * o->plane_n;
            for (size_t i = 0; i < o->plane_n; i++) o->plane[i] = (uint8_t)((src[i] >> c) & 1);
            st = o->ops->write(o->labels, o->plane, o->plane_n, err);
        }
    if (!st) st = o->ops->finish(o->labels, err);
    if (!st && o->probs) st = o->ops->finish(o->probs, err);
    return st;
}

swin_status swin_label_outputs_publish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct swin_label_outputs *o = outputs;
    swin_status st = o->ops->publish(o->labels, err);
    o->labels = NULL;
    if (o->probs && !st) {
        st = o->ops->publish(o->probs, err);
        o->probs = NULL;
    }
    swin_label_outputs_discard(o);
    return st;
}
