/* Sliding-window inference that streams: cubes run in order of their start along one
 * "slab" axis, weighted logits accumulate in a ring buffer only roi-deep along that axis,
 * and each plane is finalised (sum / weights, handed to a sink) as soon as no later
 * window can touch it. Host memory: (out_channels + 1) floats per voxel of one slab,
 * not of the volume. Same windows, weights, padding and averaging as MONAI's
 * sliding_window_inference (see cubes.h); only the float summation order differs. */
#ifndef SWIN_PIPELINE_SLIDING_H
#define SWIN_PIPELINE_SLIDING_H

#include <stdint.h>

#include "pipeline/cubes.h"
#include "core/status.h"

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

struct swin_sliding {
    const struct swin_cubes *layout;
    int out_channels;
    swin_predict_fn predict;
    void *predict_user;
    swin_voxel_sink sink;
    swin_plane_sink plane_done;  /* may be NULL */
    void *sink_user;             /* passed to sink and plane_done */
    swin_cube_progress progress; /* may be NULL */
    void *progress_user;
    int threads;                 /* for blending and finalising (0: every core); the sink is
                                    called from several threads at once, for distinct voxels */
    struct swin_sliding_times *times; /* filled when not NULL */
};

/* The axis a slab runs across (the one with most volume per roi) and the bytes of the
 * accumulation buffers plus one window's input and output and each thread's averaged
 * logits. */
int swin_sliding_axis(const struct swin_cubes *w);
size_t swin_sliding_bytes(const struct swin_cubes *w, int out_channels, int threads);

/* vol: (d0, d1, d2) float32, the layout's size. */
swin_status swin_sliding_run(const struct swin_sliding *s, const float *vol, swin_error *err);

#endif
