/* A context's ring: the sliding cubes of one volume blended in its backend's memory (the ops
 * ring_* of kernels/ops.h), for the pipeline's device path (pipeline/sliding.h). Internal to
 * the library: the pipeline calls it, the public API does not name it.
 *
 *   if (swin_context_blends(ctx) && !swin_context_ring_begin(ctx, &g, importance, &err)) {
 *       for each cube in run order: swin_context_run_ring(ctx, in, start, &err);
 *       for each final row block:   swin_context_ring_finish(ctx, plane, row_lo, row_hi, labels, probs, &err);
 *       swin_context_ring_end(ctx);
 *   }
 *
 * The ring is one allocation per volume, of the bytes the plan counts for it
 * (swin_model_plan_ring), made before the volume's first cube, never in a forward pass. */
#ifndef SWIN_CONTEXT_RING_H
#define SWIN_CONTEXT_RING_H

#include <stdbool.h>

#include "core/ring_geom.h"
#include "runtime/api.h"

/* Whether ctx's backend blends in its own memory (CUDA: yes; the CPU: no). */
bool swin_context_blends(const swin_context_t *ctx);
/* The device bytes of g's ring on ctx's backend. */
size_t swin_context_ring_bytes(const swin_context_t *ctx, const struct swin_ring_geom *g);
/* Allocates the ring of g and starts it with `importance` (roi^3 host floats). Refuses with
 * SWIN_ERR_MEM_LIMIT, allocating nothing, when the context's bytes and the ring's exceed its
 * memory limit; SWIN_ERR_NOMEM when the device has no room. */
swin_status swin_context_ring_begin(swin_context_t *ctx, const struct swin_ring_geom *g, const float *importance,
                                    swin_error *err);
/* swin_context_run with the logits added into the ring as the cube at padded start `start`. */
swin_status swin_context_run_ring(swin_context_t *ctx, const float *input, const int64_t start[3], swin_error *err);
/* Rows [row_lo, row_hi) of plane `plane` of the ring, reduced (kernels/ops.h ring_finish). In
 * half precision, fails with SWIN_ERR_BACKEND when a cube's logits were not finite, as
 * swin_context_run does. */
swin_status swin_context_ring_finish(swin_context_t *ctx, int64_t plane, int64_t row_lo, int64_t row_hi, void *labels,
                                     float *probs, swin_error *err);
/* Frees the ring (none: nothing happens). */
void swin_context_ring_end(swin_context_t *ctx);
/* The seconds ctx's device had nothing queued between its pieces of work since the last
 * call (kernels/ops.h device_idle), and the gaps it could not time; then counts afresh.
 * False, with *seconds 0, on a backend that runs on the host or when the device failed. */
bool swin_context_device_idle(swin_context_t *ctx, double *seconds, long long *missed);

#endif
