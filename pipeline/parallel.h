/* A parallel loop for the pipeline's work around the forward pass (resampling, blending,
 * argmax): [0, n) cut into `threads` contiguous ranges, one per thread, the caller's
 * included. Threads are started per call (microseconds, against milliseconds of work per
 * call); where one cannot start, the caller runs its range too: never a failure. */
#ifndef SWIN_PIPELINE_PARALLEL_H
#define SWIN_PIPELINE_PARALLEL_H

#include <stdint.h>

/* tid: 0 .. threads - 1, the range's index (0 on the caller). */
typedef void (*swin_range_fn)(void *user, int tid, int64_t begin, int64_t end);

/* threads <= 1 or n small: fn(user, 0, 0, n) on the caller. At most min(threads, n) ranges. */
void swin_parallel_for(int threads, int64_t n, swin_range_fn fn, void *user);

/* Threads for `threads` (0 = every online core), at most SWIN_PARALLEL_MAX. */
#define SWIN_PARALLEL_MAX 64
int swin_parallel_threads(int threads);

#endif
