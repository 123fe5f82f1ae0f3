/* Shared by the emulator's C sources; not for kernels or users. */
#ifndef CUEMU_INTERNAL_H
#define CUEMU_INTERNAL_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "tests/cuemu/cuemu_api.h"

/* Records err as the last error (unless cudaSuccess) and returns it. */
cudaError_t cuemu_set_error(cudaError_t err);

/* Reports a detector hit on stderr. In abort mode it aborts; otherwise it returns and
 * the caller fails the operation. */
void cuemu_detect(enum cuemu_detector det, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reports a misuse that the API also returns as an error code (bad copy range, bad
 * library argument): printed and counted like a detector hit, never aborts. */
void cuemu_report(enum cuemu_detector det, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Marks memory whose content is poison as undefined for valgrind's memcheck (a no-op
 * elsewhere), so reads of never-written device or shared memory are reported. */
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define CUEMU_POISONED(p, n) (void)VALGRIND_MAKE_MEM_UNDEFINED(p, n)
#else
#define CUEMU_POISONED(p, n) ((void)(p), (void)(n))
#endif

/* Whether [p, p + bytes) lies inside one live device allocation. */
int cuemu_mem_is_device_range(const void *p, size_t bytes);
/* Whether p points into any live device allocation. */
int cuemu_mem_is_device_ptr(const void *p);

/* The emulated target's limits. */
struct cuemu_target {
    int sm;                     /* 80 or 90 */
    size_t smem_optin;          /* max dynamic + static shared memory per block */
    size_t smem_per_sm;
    int sms;
    int l2_bytes;
    const char *name;
};
const struct cuemu_target *cuemu_target(void);
size_t cuemu_mem_capacity(void);   /* 0: unlimited */

/* Schedule in force (environment read on first call). */
enum cuemu_schedule cuemu_schedule_kind(void);
/* Next pseudo-random number of the random schedule. */
unsigned long long cuemu_schedule_rand(void);

/* Kernel faults (runtime_fault.c). cuemu_fault_injected: whether CUEMU_INJECT_FAULT
 * plants a fault in this launch (printed). cuemu_fault_raise: a kernel faulted; returns
 * the error for the launch to return (cudaSuccess when deferred). cuemu_fault_lost:
 * a fault is held or delivered, so kernels no longer run. cuemu_fault_sync: for every
 * synchronising call, the held fault (now delivered), or cudaSuccess. cuemu_fault_sticky:
 * the delivered fault, or cudaSuccess (not recorded as the last error). */
int cuemu_fault_injected(const char *kernel_name);
cudaError_t cuemu_fault_raise(cudaError_t fault);
int cuemu_fault_lost(void);
cudaError_t cuemu_fault_sync(void);
cudaError_t cuemu_fault_sticky(void);

/* Stream order (runtime_stream.c). cuemu_legacy_work: a legacy-stream call that may
 * return before its transfer lands (cudaMemcpy to device memory from pageable host or
 * device memory, cudaMemset, their Async forms on the legacy stream). cuemu_legacy_done:
 * the legacy stream is synchronised (legacy-stream synchronisation, a copy to host
 * memory). cuemu_streams_done: every stream is (cudaDeviceSynchronize).
 * cuemu_stream_work: work issued on stream s; reports CUEMU_DET_STREAM_ORDER when s is
 * non-blocking and a legacy transfer is unordered. cuemu_stream_read_check: a blocking
 * legacy-stream copy reads device memory; reports when a non-blocking stream has work
 * the host has not waited for (stream or event synchronisation). */
void cuemu_legacy_work(const char *fn, const void *dst, size_t bytes);
void cuemu_legacy_done(void);
void cuemu_streams_done(void);
void cuemu_stream_work(cudaStream_t s, const char *what);
void cuemu_stream_read_check(const char *fn, const void *src, size_t bytes);
/* A created stream's id and the work issued on it so far (0, 0 for the legacy streams),
 * and whether the host has waited for the work up to `work` of stream `id` (true for a
 * stream that no longer exists: its destruction waited). */
void cuemu_stream_position(cudaStream_t s, unsigned long long *id, unsigned long long *work);
int cuemu_stream_waited(unsigned long long id, unsigned long long work);

/* Whether the stream handle is the default stream or a live stream. */
int cuemu_stream_valid(cudaStream_t s);

/* Parses "123", "64K", "2M", "3G"; returns 0 on error. */
size_t cuemu_parse_size(const char *s);

#endif
