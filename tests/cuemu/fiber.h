/* Fibers: one stack and saved stack pointer per CUDA thread, switched by a few lines of
 * x86-64 assembly (~7 ns, against ~200 ns for swapcontext, which makes a syscall).
 * Besides the fibers there is one scheduler context (the launching OS thread). A fiber
 * that blocks hands the CPU straight to the next fiber to run, or back to the scheduler.
 * Under AddressSanitizer every switch is announced with
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
    void *tsan;         /* ThreadSanitizer's fiber context (TSan builds) */
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
/* Fiber side: switch from `from` (the running fiber) to `to`, or to the scheduler when
 * `to` is NULL; returns when `from` is resumed. */
void cuemu_fiber_transfer(struct cuemu_fiber *from, struct cuemu_fiber *to);
/* Fiber side: leave the running fiber for good, for `to` or (NULL) the scheduler. */
void cuemu_fiber_exit(struct cuemu_fiber *to) __attribute__((noreturn));

#endif
