/* The label map on the input grid into a format's outputs, plane k by plane k (k the input's
 * third axis, the order of a NIfTI file), with the organ statistics of each plane over the
 * input's intensities (format.h's hu_plane): sampled by nearest neighbour from the argmax on
 * the preprocessed grid, or the label map the linear way back already made.
 *
 * Either all at once after the cubes (swin_label_planes_write), or streamed by a thread of its
 * own while the cubes run (swin_label_stream_*): with the nearest way back through the
 * separable tables (resample.h) and the input's third axis along the cubes' slab axis, in the
 * same direction, input plane k reads one grid plane, need(k), non-decreasing in k; the thread
 * writes plane k once the slab's planes [0, need(k)] are finished. The outputs stay under
 * their temporary names either way (format.h: finish and publish come later). */
#ifndef SWIN_PIPELINE_LABEL_WRITER_H
#define SWIN_PIPELINE_LABEL_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/segment_report.h"
#include "core/status.h"
#include "formats/format.h"
#include "pipeline/resample.h"

struct swin_label_planes {
    const struct swin_format *f;
    struct swin_format_input *in;
    void *outs;                   /* the format's open outputs */
    const struct swin_inverse *inv;
    const void *grid_labels;      /* nearest: the argmax on the grid, lb bytes a voxel; else NULL */
    const void *in_labels;        /* linear: the label map on the input grid, lb bytes a voxel */
    int lb;                       /* 1 or 2 */
    int classes;                  /* the label values (masks: every bit mask) */
    int masks;                    /* overlapping sigmoid masks: statistics per channel (0: per label) */
};

/* Every plane, then the statistics into rep. */
swin_status swin_label_planes_write(const struct swin_label_planes *lp, swin_segment_report *rep, swin_error *err);

/* Whether the labels can stream while the cubes run (see above): the nearest way back, inv's
 * separable tables, and the input's third axis along grid axis slab_axis, increasing. */
bool swin_label_stream_possible(const struct swin_inverse *inv, bool linear, int slab_axis);

struct swin_label_stream;
/* Starts the thread (*s: NULL when the thread cannot start: write afterwards instead). lp's
 * grid_labels are read only from planes announced finished. */
swin_status swin_label_stream_start(struct swin_label_stream **s, const struct swin_label_planes *lp, int slab_axis,
                                    swin_error *err);
/* Planes [0, upto) of the slab axis are finished (their labels written). */
void swin_label_stream_planes_done(struct swin_label_stream *s, int64_t upto);
/* The thread's failure (its status and message), or SWIN_OK while it is well. */
swin_status swin_label_stream_poll(struct swin_label_stream *s, swin_error *err);
/* Every slab plane finished: waits for the last planes, the statistics and the thread's
 * working seconds (seconds_write_overlapped) into rep; frees s. */
swin_status swin_label_stream_finish(struct swin_label_stream *s, swin_segment_report *rep, swin_error *err);
/* Stops the thread wherever it is and frees s (the outputs are the caller's to discard); safe
 * on NULL. */
void swin_label_stream_abort(struct swin_label_stream *s);

#endif
