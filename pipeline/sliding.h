/* Sliding-window inference that streams: cubes run in order of their start along one
 * "slab" axis, weighted logits accumulate in a ring buffer only roi-deep along that axis,
 * and each plane is finalised (sum / weights, handed to a sink) as soon as no later
 * window can touch it. Host memory: (out_channels + 1) floats per voxel of one slab,
 * not of the volume. Same windows, weights, padding and averaging as MONAI's
 * sliding_window_inference (see cubes.h); only the float summation order differs.
 *
 * Two paths, one order. The host path: the predictor hands each cube's logits back and the
 * ring above is host memory. The device path (struct swin_device_blend): the predictor keeps
 * the logits on its device and adds them into a ring there (kernels/ops.h ring_*), and the
 * rows of the planes come back reduced to labels (and probabilities when asked for) as soon as
 * they are final, after the cubes of their last sub-row along o1, which lets the device's
 * ring hold fewer rows than the host's (core/ring_geom.h); whole planes go to the sink. This
 * file decides, for both, the order of the cubes and when each row and plane is final; the
 * device's arithmetic is the host ring's to the bit, so the labels are the same. */
#ifndef SWIN_PIPELINE_SLIDING_H
#define SWIN_PIPELINE_SLIDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ring_geom.h"
#include "core/segment_params.h"
#include "core/status.h"
#include "pipeline/cubes.h"

/* What averaged logits become: the argmax of the classes, or, for a model with one output
 * channel (a sigmoid model: MONAI's Activations(sigmoid) then AsDiscrete(threshold=0.5)),
 * label 1 where sigmoid(logit) >= 0.5, that is logit >= 0, else 0. The device path's ring
 * (kernels/cuda/ring_blend.cu) applies the same rule. */
static inline int swin_sigmoid_label(float logit)
{
    return logit >= 0.0f;
}

/* The labels a model with out_channels outputs gives: 0 .. swin_label_classes - 1. */
static inline int swin_label_classes(int out_channels)
{
    return out_channels > 1 ? out_channels : 2;
}

/* The label values a run writes: 0 .. swin_label_values - 1 (masks: every bit mask). */
static inline int swin_label_values(int out_channels, int masks)
{
    return masks ? 1 << masks : swin_label_classes(out_channels);
}

/* The bit mask of logits x[0..masks): bit c where channel c's sigmoid is >= 0.5. */
static inline int swin_mask_label(const float *x, int masks)
{
    int m = 0;
    for (int c = 0; c < masks; c++) m |= swin_sigmoid_label(x[c]) << c;
    return m;
}

/* in: (1, roi0, roi1, roi2) float32; out: (out_channels, roi0, roi1, roi2) logits. */
typedef swin_status (*swin_predict_fn)(void *user, const float *in, float *out, swin_error *err);
/* Called once per voxel of the volume with its averaged logits (out_channels floats);
 * voxel = (u0 * d1 + u1) * d2 + u2. */
typedef void (*swin_voxel_sink)(void *user, int64_t voxel, const float *logits);
/* Called once per plane along the slab axis (swin_sliding_axis), in increasing order, after
 * the sink has had every voxel of that plane. */
typedef void (*swin_plane_sink)(void *user, int64_t plane);
typedef void (*swin_cube_progress)(void *user, int64_t done, int64_t total);

/* Seconds of a run by phase: cutting the cubes out, the predictor, adding its logits to
 * the ring, and averaging and sinking the finished planes. */
struct swin_sliding_times {
    double gather, predict, blend, finalise;
};

/* Where a run blended its cubes (the device path fills it in begin). */
struct swin_blend_info {
    bool on_device;    /* the device path ran */
    size_t ring_bytes; /* the device bytes of its ring */
    char note[256];    /* why a device that blends left it to the host ("" otherwise) */
};

/* A predictor that blends on its device: the cubes' logits never leave it. */
struct swin_device_blend {
    void *user;
    /* Before a volume's first cube: the ring for layout w and slab axis ax, whose finished
     * planes give back labels of label_bytes (1: uint8, 2: uint16) and, when probs, the
     * probabilities. On SWIN_OK, info->on_device false means the device declined (its ring
     * does not fit) and the host path runs instead; info->note says why. */
    swin_status (*begin)(void *user, const struct swin_cubes *w, int ax, int label_bytes, bool probs,
                         struct swin_blend_info *info, swin_error *err);
    /* The cube `in` (as swin_predict_fn takes it) whose padded start is p: run, and its
     * logits added into the ring. */
    swin_status (*predict_blend)(void *user, const float *in, const int64_t p[3], swin_error *err);
    /* Rows [row_lo, row_hi) along o1 of plane `plane` along ax are final (every cube that
     * reaches them was added; o1 < o2 are the axes other than ax): their labels into `labels`
     * (NULL: not wanted; (row_hi - row_lo) x d_o2, o2 fastest), their probabilities into
     * `probs` (NULL: not wanted; the same voxels x classes, classes fastest). */
    swin_status (*finish_rows)(void *user, int64_t plane, int64_t row_lo, int64_t row_hi, void *labels, float *probs,
                               swin_error *err);
    /* After begin put the ring on the device: the run is over (or failed). */
    void (*end)(void *user);
};
/* The device path's sink: plane `plane`'s labels and probabilities (layouts as finish_rows'
 * for the rows of the whole plane; NULL when not wanted), once per plane in increasing order,
 * before plane_done. */
typedef void (*swin_plane_result_sink)(void *user, int64_t plane, const void *labels, const float *probs);

struct swin_sliding {
    const struct swin_cubes *layout;
    int in_channels;             /* the volume's channels, each window's (at least 1) */
    int out_channels;
    swin_predict_fn predict;
    void *predict_user;
    swin_voxel_sink sink;
    swin_plane_sink plane_done;  /* may be NULL */
    void *sink_user;             /* passed to sink and plane_done */
    /* The sink takes a plane's first voxel only after the plane before it was announced (a
     * sink that holds a few planes, as the linear way back); else the planes a slab row
     * finishes may be sunk together and announced after. */
    bool planes_in_order;
    swin_cube_progress progress; /* may be NULL */
    void *progress_user;
    int threads;                 /* for blending and finalising (0: every core); the sink is
                                    called from several threads at once, for distinct voxels */
    struct swin_sliding_times *times; /* filled when not NULL */
    /* The device path, when `device` is not NULL (and its begin takes the volume): predict
     * and sink are then not called, plane_result has every plane. */
    const struct swin_device_blend *device;
    swin_plane_result_sink plane_result;
    int label_bytes;                  /* the labels plane_result wants: 1 or 2 bytes each */
    bool want_labels, want_probs;     /* what plane_result wants */
    struct swin_blend_info *blend;    /* filled when not NULL */
};

/* The axis a slab runs across (the one with most volume per roi) and the bytes of the
 * accumulation buffers plus one window's input and output and each thread's averaged
 * logits. */
int swin_sliding_axis(const struct swin_cubes *w);
size_t swin_sliding_bytes(const struct swin_cubes *w, int in_channels, int out_channels, int threads);

/* Host bytes of the device path: one window's input, and what comes back of the planes that
 * finish together (those of one slab row). */
size_t swin_sliding_device_bytes(const struct swin_cubes *w, int in_channels, int out_channels, int label_bytes,
                                 bool probs);

/* vol: in_channels volumes (d0, d1, d2) float32 of the layout's size, one after another. */
swin_status swin_sliding_run(const struct swin_sliding *s, const float *vol, swin_error *err);

#endif
