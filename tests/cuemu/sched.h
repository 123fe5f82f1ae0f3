/* The block scheduler (sched.c) as seen by the launcher (launch.c). */
#ifndef CUEMU_SCHED_H
#define CUEMU_SCHED_H

#include "tests/cuemu/cuemu_abi.h"
#include "tests/cuemu/cuemu_api.h"

/* Makes room for blocks of n threads. Returns 0, or -1 when out of memory. */
int cuemu_sched_reserve(unsigned n);

/* Runs block `block_idx` of launch d to completion. Returns 0, or -1 when a detector
 * fired (in CUEMU_DETECT_ERROR mode) and the block was abandoned. */
int cuemu_sched_run_block(const struct cuemu_launch_desc *d, uint3 block_idx);

/* Linear index of the running CUDA thread; `what` names the caller outside a kernel. */
unsigned cuemu_sched_current(const char *what);

/* Reports a kernel bug found in the running thread (named in the report) with detector
 * det; in error mode the thread leaves and the block is abandoned (never returns inside
 * a kernel). */
void cuemu_sched_fail(enum cuemu_detector det, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Computes the results of a built-in warp op (warp.c). Returns NULL or a message. */
const char *cuemu_warp_compute(struct cuemu_warp_arg *const lanes[32], unsigned mask);

#endif
