/* ThreadSanitizer model of CUDA's synchronisation (builds with -fsanitize=thread; no-ops
 * otherwise). Each CUDA thread is a TSan fiber and switches carry no ordering, so TSan
 * only sees the orderings declared here:
 *   - the host's work before a block happens before the block's threads start, and
 *     every thread's work (up to its exit, or its last wait if the block is abandoned
 *     by a detector) happens before the host continues after the block; this also
 *     separates blocks, which reuse the same shared memory, so races between blocks
 *     are not reported;
 *   - __syncthreads: every arrival happens before every departure. Two objects
 *     alternate by barrier generation, so a thread that leaves late cannot acquire
 *     arrivals at the next barrier;
 *   - __syncwarp and wmma::mma_sync order their lanes; shuffles and votes do not.
 * The emulator's own sources are compiled without instrumentation (CMake defines
 * CUEMU_TSAN for them instead) and move kernel data with plain loops instead of the
 * intercepted memcpy (warp.c). */
#ifndef CUEMU_TSAN_MODEL_H
#define CUEMU_TSAN_MODEL_H

#if defined(CUEMU_TSAN)
#include <sanitizer/tsan_interface.h>
#define CUEMU_HB_RELEASE(p) __tsan_release((void *)(p))
#define CUEMU_HB_ACQUIRE(p) __tsan_acquire((void *)(p))
#else
#define CUEMU_HB_RELEASE(p) ((void)(p))
#define CUEMU_HB_ACQUIRE(p) ((void)(p))
#endif

#endif
