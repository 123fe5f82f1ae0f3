/* Fibers: one stack and saved stack pointer per CUDA thread, switched by a few lines of
 * x86-64 assembly (~7 ns, against ~200 ns for swapcontext, which makes a syscall).
 * There is one scheduler context (the launching OS thread); fibers only ever switch to
 * it and it to them. Under AddressSanitizer every switch is announced with
 * __sanitizer_start/finish_switch_fiber. */
#ifndef CUEMU_FIBER_H
#define CUEMU_FIBER_H

#include <stddef.h>

struct cuemu_fiber {
    void *sp;           /* saved stack pointer while not running */
    char *stack_lo;     /* lowest usable byte (above the guard page) */
    size_t stack_size;
    void *asan_fake;    /* ASan's fake-stack handle while switched out */
    int dirty;          /* abandoned mid-kernel: its stack shadow needs clearing */
};

/* Makes sure fibers[0..n) have stacks (kept and reused across launches). */
int cuemu_fiber_reserve(struct cuemu_fiber **fibers, unsigned n);

/* Prepares f to start at entry() on its next cuemu_fiber_resume; index offsets the stack
 * top to spread fibers over L1 sets. entry must never return. */
void cuemu_fiber_start(struct cuemu_fiber *f, void (*entry)(void), unsigned index);

/* Scheduler side: run f until it yields or exits. */
void cuemu_fiber_resume(struct cuemu_fiber *f);

/* Fiber side: first thing entry() does. */
void cuemu_fiber_entered(void);
/* Fiber side: back to the scheduler; returns when resumed. */
void cuemu_fiber_yield(struct cuemu_fiber *f);
/* Fiber side: back to the scheduler for good. */
void cuemu_fiber_exit(void) __attribute__((noreturn));

#endif
