/* The outputs of a format whose writers stream one image's voxels (NIfTI, MetaImage), as
 * format.h's open_outputs .. discard: the label map (uint8, uint16 beyond 256 classes; in a
 * multi-label run every plane's bit masks held and written at finish as one uint8 0/1 volume
 * per channel) and the class probabilities (float32, class after class), each through a
 * writer of the format's behind swin_voxel_writer_ops. put_labels, put_probs, finish, publish
 * and discard below are format.h's entries as they are. */
#ifndef SWIN_FORMATS_LABEL_OUTPUTS_H
#define SWIN_FORMATS_LABEL_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/segment_params.h"
#include "core/segment_report.h"
#include "core/status.h"

struct swin_voxel_writer_ops {
    swin_status (*write)(void *w, const void *data, size_t bytes, swin_error *err);
    swin_status (*finish)(void *w, swin_error *err); /* on failure the file is removed */
    swin_status (*publish)(void *w, swin_error *err); /* frees w whatever happens */
    void (*abort)(void *w);                           /* safe on NULL */
};

struct swin_label_outputs {
    const struct swin_voxel_writer_ops *ops;
    void *labels, *probs; /* the format's writers (probs NULL when not asked for) */
    int wide;             /* uint16 labels: open labels' writer as uint16, else uint8 */
    int masks;            /* overlapping masks: open labels' writer with this many uint8 volumes */
    uint8_t *plane;       /* a plane of uint8 labels */
    size_t plane_n;
    uint16_t *held;       /* masks: every plane's bit masks, until finish */
    int64_t nz;
};

/* New outputs for a grid of dim voxels and the model's classes: the form of the label map
 * (wide, masks) decided and its buffers allocated; the format then opens its writers into
 * labels (and probs) before anything is put. */
swin_status swin_label_outputs_new(struct swin_label_outputs **o, const struct swin_voxel_writer_ops *ops,
                                   const int64_t dim[3], const swin_segment_params *p, int classes,
                                   swin_error *err);
swin_status swin_label_outputs_put_labels(void *outputs, int64_t k, const uint16_t *plane, swin_error *err);
swin_status swin_label_outputs_put_probs(void *outputs, int c, int64_t k, const float *plane, swin_error *err);
swin_status swin_label_outputs_finish(void *outputs, swin_segment_report *rep, swin_error *err);
swin_status swin_label_outputs_publish(void *outputs, swin_segment_report *rep, swin_error *err);
void swin_label_outputs_discard(void *outputs);

#endif
