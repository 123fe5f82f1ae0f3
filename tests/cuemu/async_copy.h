/* The asynchronous-copy state (async_copy.c) as seen by the scheduler (sched.c). */
#ifndef CUEMU_ASYNC_COPY_H
#define CUEMU_ASYNC_COPY_H

#include "tests/cuemu/cuemu_abi.h"

/* Makes room for blocks of n threads. Returns 0, or -1 when out of memory. */
int cuemu_async_reserve(unsigned n);
/* Forgets every copy of threads 0..n-1 (a block starts, or follows an abandoned one). */
void cuemu_async_begin_block(unsigned n);
/* Thread `linear` reaches a barrier / exits: reports copies left uncommitted / unwaited. */
void cuemu_async_at_barrier(unsigned linear, const char *barrier, const char *file, int line);
void cuemu_async_at_exit(unsigned linear);

#endif
