/* The cuda_pipeline.h primitives for the emulated build (the kernels include the vendor
 * header under nvcc only, as with mma.h):
 *
 *   __pipeline_memcpy_async(dst_shared, src_global, size_and_align, zfill = 0)
 *   __pipeline_commit()
 *   __pipeline_wait_prior(n)
 *
 * A copy is deferred to the wait that covers it and its destination holds poison (0xFF
 * bytes: NaN) until then, so a thread that reads a stage before waiting for it, or
 * after a barrier that the issuing thread reached without waiting, reads garbage here as
 * it would race on a GPU. Checked at the call (detector CUEMU_DET_ASYNC_COPY): size 4, 8
 * or 16, zfill <= size, both pointers aligned to size, src inside a device allocation
 * (the bytes read; for a copy of zfill = size, its address), dst not device memory and not the destination of a copy of the
 * same thread still in flight. Checked at every barrier: no copy left uncommitted; at
 * the thread's exit: no copy left unwaited. The state lives in async_copy.c. */
#ifndef CUEMU_PIPELINE_H
#define CUEMU_PIPELINE_H

#include <cstddef>

inline void __pipeline_memcpy_async(void *__restrict__ dst_shared, const void *__restrict__ src_global,
                                    size_t size_and_align, size_t zfill = 0, const char *file = __builtin_FILE(),
                                    int line = __builtin_LINE())
{
    __asm__ volatile("" ::: "memory");
    cuemu_async_copy(dst_shared, src_global, size_and_align, zfill, file, line);
    __asm__ volatile("" ::: "memory");
}

inline void __pipeline_commit() { cuemu_async_commit(); }

/* The memory clobbers keep the compiler from reading a destination before the copy. */
inline void __pipeline_wait_prior(size_t prior, const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    __asm__ volatile("" ::: "memory");
    cuemu_async_wait_prior(prior, file, line);
    __asm__ volatile("" ::: "memory");
}

#endif
