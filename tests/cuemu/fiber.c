/* Fiber stacks and the context switch. See fiber.h. */
#define _GNU_SOURCE
#include "tests/cuemu/fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define CUEMU_ASAN 1
#define CUEMU_DEFAULT_STACK_KB 256 /* ASan redzones make frames several times larger */
#else
#define CUEMU_ASAN 0
#define CUEMU_DEFAULT_STACK_KB 64
#endif

#if defined(CUEMU_TSAN)
#include <sanitizer/tsan_interface.h>
static void *sched_tsan; /* the scheduler's TSan context */
/* Tells TSan which context runs next, without ordering anything (tsan_model.h). */
#define TSAN_SWITCH(to) __tsan_switch_to_fiber((to) ? (to)->tsan : sched_tsan, __tsan_switch_to_fiber_no_sync)
#define TSAN_CREATE() __tsan_create_fiber(0)
#else
#define TSAN_SWITCH(to) ((void)(to))
#define TSAN_CREATE() NULL
#endif

/* valgrind must be told about the fiber stacks, or it takes every switch for a stack
 * overflow; the client requests cost a few instructions when not under valgrind. */
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CUEMU_STACK_REGISTER(lo, hi) VALGRIND_STACK_REGISTER(lo, hi)
#else
#define CUEMU_STACK_REGISTER(lo, hi) 0
#endif

#if !defined(__x86_64__)
#error "tests/cuemu: the fiber switch is written for x86-64 (SysV ABI)"
#endif

/* cuemu_fiber_switch(save, load): pushes the callee-saved registers on the current
 * stack, stores rsp in *save, loads rsp from load, pops the other context's registers
 * and returns into it. A fresh stack is laid out by cuemu_fiber_start to look like one
 * that called this function. MXCSR and the x87 control word are not switched: kernels
 * must not change the floating-point environment. */
void cuemu_fiber_switch(void **save, void *load);
__asm__(".text\n"
        ".globl cuemu_fiber_switch\n"
        ".type cuemu_fiber_switch,@function\n"
        "cuemu_fiber_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size cuemu_fiber_switch,.-cuemu_fiber_switch\n");

static void *sched_sp;                /* the scheduler's rsp while a fiber runs */
#if CUEMU_ASAN
#include <pthread.h>
static void *sched_fake;
static void *sched_bottom; /* the scheduler's stack, for switches back to it */
static size_t sched_size;

static void find_sched_stack(void)
{
    pthread_attr_t attr;
    if (sched_bottom || pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    pthread_attr_getstack(&attr, &sched_bottom, &sched_size);
    pthread_attr_destroy(&attr);
}
#endif

static size_t stack_bytes(void)
{
    static size_t bytes;
    if (!bytes) {
        const char *e = getenv("CUEMU_STACK_KB");
        long kb = e ? strtol(e, NULL, 10) : 0;
        bytes = (size_t)(kb > 0 ? kb : CUEMU_DEFAULT_STACK_KB) * 1024;
    }
    return bytes;
}

static unsigned capacity;             /* stacks allocated so far */
static struct cuemu_fiber *all_fibers; /* for the overflow handler */

#if !CUEMU_ASAN && !defined(CUEMU_TSAN)
#include <signal.h>
/* A fault in a guard page is a fiber stack overflow: say so and exit with status 70
 * (EX_SOFTWARE) instead of a bare SIGSEGV. Other faults get the default action when the
 * instruction is retried. (Sanitizer builds keep their own SIGSEGV reports.) */
static void on_segv(int sig, siginfo_t *info, void *ctx)
{
    static const char msg[] = "cuemu: fiber stack overflow (a CUDA thread's locals exceed its "
                              "stack): raise CUEMU_STACK_KB\n";
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *addr = info->si_addr;
    for (unsigned i = 0; i < capacity; i++)
        if (addr >= all_fibers[i].stack_lo - page && addr < all_fibers[i].stack_lo) {
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            _exit(70);
        }
    signal(sig, SIG_DFL);
    (void)ctx;
}

/* The handler runs on its own stack: the faulting one is exhausted. */
static void catch_overflows(void)
{
    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    if (sigaltstack(&ss, NULL) == 0)
        sigaction(SIGSEGV, &sa, NULL);
}
#else
static void catch_overflows(void) {}
#endif

int cuemu_fiber_reserve(struct cuemu_fiber **fibers, unsigned n)
{
    if (n <= capacity)
        return 0;
    struct cuemu_fiber *f = realloc(*fibers, n * sizeof *f);
    if (!f)
        return -1;
    *fibers = f;
    all_fibers = f;
    if (capacity == 0)
        catch_overflows();
    size_t page = (size_t)sysconf(_SC_PAGESIZE), size = stack_bytes();
    for (; capacity < n; capacity++) {
        /* One guard page below each stack turns an overflow into SIGSEGV. */
        char *m = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0)
            return -1;
        f[capacity] = (struct cuemu_fiber){.stack_lo = m + page, .stack_size = size, .tsan = TSAN_CREATE()};
        (void)CUEMU_STACK_REGISTER(m + page, m + page + size);
    }
    return 0;
}

void cuemu_fiber_start(struct cuemu_fiber *f, void (*entry)(void), unsigned index)
{
#if CUEMU_ASAN
    if (f->dirty) /* frames of an abandoned kernel left their redzones poisoned */
        __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
#if defined(CUEMU_TSAN)
    if (f->dirty) { /* ... and their calls on TSan's shadow stack */
        __tsan_destroy_fiber(f->tsan);
        f->tsan = __tsan_create_fiber(0);
    }
#endif
    f->dirty = 0;
    /* Stagger stack tops by 64 bytes over 64 fibers so that the threads' frames do not
     * all map to the same L1 sets. */
    uintptr_t top = (uintptr_t)(f->stack_lo + f->stack_size) - (index % 64) * 64;
    top &= ~(uintptr_t)15;
    void **sp = (void **)top;
    /* Entry sees rsp = 8 mod 16, as after a call: a fake return address, entry as the
     * address cuemu_fiber_switch returns to, then six zero callee-saved registers. */
    *--sp = NULL;
    *--sp = (void *)entry;
    for (int i = 0; i < 6; i++)
        *--sp = NULL;
    f->sp = sp;
}

void cuemu_fiber_resume(struct cuemu_fiber *f)
{
#if defined(CUEMU_TSAN)
    if (!sched_tsan)
        sched_tsan = __tsan_get_current_fiber();
#endif
    TSAN_SWITCH(f);
#if CUEMU_ASAN
    find_sched_stack();
    __sanitizer_start_switch_fiber(&sched_fake, f->stack_lo, f->stack_size);
#endif
    cuemu_fiber_switch(&sched_sp, f->sp);
#if CUEMU_ASAN
    __sanitizer_finish_switch_fiber(sched_fake, NULL, NULL);
#endif
}

void cuemu_fiber_entered(void)
{
#if CUEMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}

void cuemu_fiber_transfer(struct cuemu_fiber *from, struct cuemu_fiber *to)
{
#if CUEMU_ASAN
    __sanitizer_start_switch_fiber(&from->asan_fake, to ? to->stack_lo : sched_bottom,
                                   to ? to->stack_size : sched_size);
#endif
    TSAN_SWITCH(to);
    cuemu_fiber_switch(&from->sp, to ? to->sp : sched_sp);
#if CUEMU_ASAN
    __sanitizer_finish_switch_fiber(from->asan_fake, NULL, NULL);
#endif
}

void cuemu_fiber_exit(struct cuemu_fiber *to)
{
    /* Not a local: under ASan a local whose address is taken gets redzones that would
     * stay poisoned on the stack, since this frame never returns. */
    static void *dead_sp;
#if CUEMU_ASAN
    /* NULL: this fiber's fake stack can go, it is never resumed */
    __sanitizer_start_switch_fiber(NULL, to ? to->stack_lo : sched_bottom,
                                   to ? to->stack_size : sched_size);
#endif
    TSAN_SWITCH(to);
    cuemu_fiber_switch(&dead_sp, to ? to->sp : sched_sp);
    __builtin_unreachable();
}
