/* Emulator controls that CUDA does not have: memory accounting, test switches, detector
 * mode, schedule and target. C11 and C++; used by tests and by the backend's reporting.
 *
 * Environment (read at first use):
 *   CUEMU_SCHEDULE=forward|reverse|random:SEED   order of threads between barriers and
 *                                                 of blocks (random prints its seed)
 *   CUEMU_DETECT=abort|error     on a kernel bug: print and abort (default), or print,
 *                                abandon the launch and return cudaErrorLaunchFailure
 *   CUEMU_DEVICE_MEM=N[K|M|G]    device capacity (default unlimited, reported as 80 GiB)
 *   CUEMU_TARGET=sm_80|sm_90     the emulated device (default sm_80)
 *   CUEMU_STACK_KB=N             fiber stack size (default 64, 256 under ASan)
 *   CUEMU_WMMA_LAYOUT=identity|scrambled:SEED   wmma fragment element mapping
 *   CUEMU_FAULTS=immediate|deferred   when a kernel fault reaches the host: at its launch
 *                                (default), or, as on hardware, at the next synchronising
 *                                call, sticky from then on (see cuemu_set_fault_mode)
 *   CUEMU_INJECT_FAULT=SUBSTRING every launch of a kernel whose name contains SUBSTRING
 *                                faults with cudaErrorIllegalAddress instead of running
 *   CUEMU_DYN_SMEM_OFFSET=N      the dynamic shared memory base N bytes (mod 128) past its
 *                                128-byte alignment (default 0): e.g. 16 makes every wmma
 *                                tile in it misaligned, which the wmma checks report */
#ifndef CUEMU_API_H
#define CUEMU_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory registry. */
size_t cuemu_mem_in_use(void);            /* bytes of live device allocations */
size_t cuemu_mem_high_water(void);        /* largest cuemu_mem_in_use() so far */
void cuemu_mem_reset_high_water(void);    /* high water := in use */
size_t cuemu_mem_live_allocations(void);  /* number of live device allocations */
void cuemu_mem_set_capacity(size_t bytes);/* 0: unlimited; over it cudaMalloc fails */
void cuemu_mem_freeze(int on);            /* while on, every cudaMalloc is an error */

/* Detectors: what happens when a kernel bug is found. */
enum cuemu_detect_mode { CUEMU_DETECT_ABORT, CUEMU_DETECT_ERROR };
void cuemu_set_detect_mode(enum cuemu_detect_mode mode);

enum cuemu_detector {
    CUEMU_DET_NONE,
    CUEMU_DET_BARRIER_DIVERGENCE, /* threads wait at different __syncthreads */
    CUEMU_DET_WARP_EXITED_LANE,   /* a warp op names a lane that exited or doesn't exist */
    CUEMU_DET_WARP_MISMATCH,      /* lanes of one group at different ops, masks or widths */
    CUEMU_DET_WARP_BAD_MASK,      /* the caller is not in its own mask, or a bad width */
    CUEMU_DET_DEADLOCK,           /* no thread can run */
    CUEMU_DET_KERNEL_CHECK,       /* a header-side precondition (wmma alignment, ldm) */
    CUEMU_DET_MEMORY_RANGE,       /* a copy, memset or library call outside an allocation */
    CUEMU_DET_ASYNC_COPY,         /* __pipeline_memcpy_async misuse: size, alignment, memory
                                     space, a copy not committed at a barrier or never
                                     waited for at exit, a destination still in flight */
    CUEMU_DET_STREAM_ORDER,       /* work on a non-blocking stream (kernel, copy, cuBLAS,
                                     cuDNN) while a legacy-stream cudaMemcpy/cudaMemset to
                                     device memory is not synchronised, or a cudaMemcpy from
                                     device memory while work on a non-blocking stream is
                                     not; the work still runs */
    CUEMU_DET_PINNED_REUSE        /* a cudaMemcpyAsync out of pinned host memory whose last
                                     asynchronous copy out of it (on a created stream) the
                                     host has not waited for: the host rewrote a buffer the
                                     device may still be reading; the copy still runs */
};
enum cuemu_detector cuemu_last_detector(void);
unsigned cuemu_detector_hits(void);
void cuemu_clear_detector(void);

/* Kernel faults: a detector hit in CUEMU_DETECT=error mode (cudaErrorLaunchFailure) or a
 * planted fault (cudaErrorIllegalAddress). Immediate: the launch returns it. Deferred:
 * the launch returns cudaSuccess, later launches do not run, and the next synchronising
 * call (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, the Query
 * forms, cudaMemcpy) returns it; from then on it is sticky: every synchronising call,
 * launch and cudaMemcpy(Async) returns it, and cudaGetLastError returns it without
 * clearing it. cuemu_clear_fault forgets it (allocations stay). Detector hits in the
 * default CUEMU_DETECT=abort mode still abort where they are found. */
enum cuemu_fault_mode { CUEMU_FAULTS_IMMEDIATE, CUEMU_FAULTS_DEFERRED };
void cuemu_set_fault_mode(enum cuemu_fault_mode mode);
/* Plants a fault in every launch of a kernel whose name contains kernel_substring (NULL or
 * "": none); overrides CUEMU_INJECT_FAULT. */
void cuemu_inject_fault(const char *kernel_substring);
void cuemu_clear_fault(void);

enum cuemu_schedule { CUEMU_SCHED_FORWARD, CUEMU_SCHED_REVERSE, CUEMU_SCHED_RANDOM };
void cuemu_set_schedule(enum cuemu_schedule s, unsigned long long seed);

/* wmma fragment layout: 0 for the identity map, otherwise a permutation from this seed. */
void cuemu_set_wmma_layout(unsigned long long seed);

/* The emulated device: 80 (A100-like) or 90 (H100-like). Returns 0, or -1 if unknown. */
int cuemu_set_target(int sm);

#ifdef __cplusplus
}
#endif
#endif
