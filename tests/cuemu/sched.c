/* Runs one block: every CUDA thread is a fiber; a pass runs each runnable thread in the
 * schedule's order until it blocks (barrier, warp op) or exits. A thread that blocks or
 * exits switches straight to the next runnable thread of the pass (one switch per
 * thread, not two through the scheduler); the last one returns to the scheduler.
 *
 * - A barrier is released when every live thread waits at it; exited threads do not
 *   hold it (PTX `exit` semantics). All waiting threads must be at the same call site.
 * - A warp op completes when every lane of its mask has posted it; the last lane to
 *   arrive computes all results. A lane in the mask that has exited, or lanes that
 *   disagree on the op or the mask, are errors.
 * - A pass in which nothing ran and no barrier could be released is a deadlock. */
#include "tests/cuemu/sched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/async_copy.h"
#include "tests/cuemu/emu_internal.h"
#include "tests/cuemu/fiber.h"
#include "tests/cuemu/tsan_model.h"

enum tstate { T_RUNNABLE, T_BARRIER, T_WARP, T_EXITED };

struct thread {
    struct cuemu_builtins b; /* cuemu_self points here while the thread runs */
    unsigned linear, lane;
    enum tstate state;
    enum cuemu_bar_kind bar_kind;
    const char *bar_file;
    int bar_line;
    struct cuemu_warp_arg *posted; /* the warp op it waits in, NULL otherwise */
};

const struct cuemu_builtins *cuemu_self;

static struct {
    struct thread *t;
    struct cuemu_fiber *fibers;
    unsigned *order;
    unsigned cap, n, live, arrived;
    unsigned pos; /* next index into order[] in the current pass */
    int bar_acc, bar_result;
    int failed;
    const struct cuemu_launch_desc *desc;
} blk;

static struct thread *cur; /* the thread running now */

/* Synchronisation objects of the TSan model (tsan_model.h); only their addresses count. */
static struct {
    char launch, end, bar[2], warp[32];
} hb;
static unsigned bar_gen; /* barriers released so far in this block */

static const char *const bar_names[] = {"__syncthreads", "__syncthreads_count",
                                        "__syncthreads_and", "__syncthreads_or"};

int cuemu_sched_reserve(unsigned n)
{
    if (cuemu_fiber_reserve(&blk.fibers, n) != 0 || cuemu_async_reserve(n) != 0)
        return -1;
    if (n > blk.cap) {
        struct thread *t = realloc(blk.t, n * sizeof *t);
        if (t)
            blk.t = t;
        unsigned *o = realloc(blk.order, n * sizeof *o);
        if (o)
            blk.order = o;
        if (!t || !o)
            return -1;
        blk.cap = n;
    }
    return 0;
}

void cuemu_outside_kernel(const char *what)
{
    fprintf(stderr, "cuemu: %s used outside a kernel launched with SWIN_LAUNCH\n", what);
    abort();
}

static struct thread *self(const char *what)
{
    if (!cur)
        cuemu_outside_kernel(what);
    return cur;
}

static void thread_name(char *buf, size_t size, const struct thread *t)
{
    snprintf(buf, size, "thread (%u,%u,%u) of block (%u,%u,%u) of %s", t->b.thread_idx.x,
             t->b.thread_idx.y, t->b.thread_idx.z, t->b.block_idx.x, t->b.block_idx.y,
             t->b.block_idx.z, blk.desc->name);
}

/* The next runnable thread of the current pass, or NULL at its end (or after a failure). */
static struct thread *next_runnable(void)
{
    while (blk.pos < blk.n && !blk.failed) {
        struct thread *t = &blk.t[blk.order[blk.pos++]];
        if (t->state == T_RUNNABLE)
            return t;
    }
    return NULL;
}

/* Makes t the running thread; returns its fiber. */
static struct cuemu_fiber *enter(struct thread *t)
{
    cur = t;
    cuemu_self = &t->b;
    return &blk.fibers[t->linear];
}

/* After a detector hit in error mode: leave the kernel; the scheduler abandons the block. */
static void __attribute__((noreturn)) fail_from_fiber(void)
{
    CUEMU_HB_RELEASE(&hb.end);
    blk.failed = 1;
    cur->state = T_EXITED;
    cuemu_fiber_exit(NULL);
}

/* The running thread blocks: run the next one; returns when this one is resumed. The
 * release covers a thread that never resumes because its block is abandoned. */
static void yield_current(void)
{
    CUEMU_HB_RELEASE(&hb.end);
    struct cuemu_fiber *me = &blk.fibers[cur->linear];
    struct thread *next = next_runnable();
    cuemu_fiber_transfer(me, next ? enter(next) : NULL);
}

int cuemu_syncthreads(enum cuemu_bar_kind kind, int pred, const char *file, int line)
{
    struct thread *t = self(bar_names[kind]);
    cuemu_async_at_barrier(t->linear, bar_names[kind], file, line);
    t->state = T_BARRIER;
    t->bar_kind = kind;
    t->bar_file = file;
    t->bar_line = line;
    blk.bar_acc += pred != 0;
    blk.arrived++;
    unsigned gen = bar_gen;
    CUEMU_HB_RELEASE(&hb.bar[gen & 1]);
    yield_current();
    CUEMU_HB_ACQUIRE(&hb.bar[gen & 1]);
    /* The next barrier cannot be released before every thread has read this result. */
    return blk.bar_result;
}

/* Called when every live thread waits at a barrier. */
static int release_barrier(void)
{
    const struct thread *ref = NULL;
    for (unsigned i = 0; i < blk.n; i++) {
        const struct thread *t = &blk.t[i];
        if (t->state != T_BARRIER)
            continue;
        if (!ref) {
            ref = t;
        } else if (t->bar_kind != ref->bar_kind || t->bar_line != ref->bar_line ||
                   (t->bar_file != ref->bar_file && strcmp(t->bar_file, ref->bar_file) != 0)) {
            char a[160], b[160];
            thread_name(a, sizeof a, ref);
            thread_name(b, sizeof b, t);
            cuemu_detect(CUEMU_DET_BARRIER_DIVERGENCE,
                         "threads wait at different barriers:\n  %s at %s (%s:%d)\n"
                         "  %s at %s (%s:%d)",
                         a, bar_names[ref->bar_kind], ref->bar_file, ref->bar_line, b,
                         bar_names[t->bar_kind], t->bar_file, t->bar_line);
            return -1;
        }
    }
    switch (ref->bar_kind) {
    case CUEMU_BAR_SYNC: blk.bar_result = 0; break;
    case CUEMU_BAR_COUNT: blk.bar_result = blk.bar_acc; break;
    case CUEMU_BAR_AND: blk.bar_result = (unsigned)blk.bar_acc == blk.arrived; break;
    case CUEMU_BAR_OR: blk.bar_result = blk.bar_acc != 0; break;
    }
    blk.bar_acc = 0;
    blk.arrived = 0;
    bar_gen++;
    for (unsigned i = 0; i < blk.n; i++)
        if (blk.t[i].state == T_BARRIER)
            blk.t[i].state = T_RUNNABLE;
    return 0;
}

static unsigned existing_lanes(unsigned warp_base)
{
    unsigned left = blk.n - warp_base;
    return left >= 32 ? ~0u : (1u << left) - 1;
}

/* If every lane of me's group has posted, checks that they agree, computes the results
 * and releases the others. Returns 1 when done, 0 when some lane has not arrived. */
static int try_complete(struct thread *me)
{
    const struct cuemu_warp_arg *a = me->posted;
    struct thread *w = &blk.t[me->linear - me->lane];
    struct cuemu_warp_arg *lanes[32] = {0};
    char who[160];
    for (unsigned l = 0; l < 32; l++) {
        if (!(a->mask >> l & 1))
            continue;
        if (w[l].state == T_EXITED) {
            thread_name(who, sizeof who, me);
            cuemu_detect(CUEMU_DET_WARP_EXITED_LANE,
                         "%s at %s:%d: %s has mask 0x%08x but lane %u has exited", who,
                         a->file, a->line, a->what, a->mask, l);
            fail_from_fiber();
        }
        if (!w[l].posted)
            return 0;
        lanes[l] = w[l].posted;
    }
    for (unsigned l = 0; l < 32; l++) {
        const struct cuemu_warp_arg *b = lanes[l];
        /* PTX lets the lanes reach the op from different call sites; the op, mask,
         * width and operand size must agree. */
        if (b && (b->kind != a->kind || b->mask != a->mask || b->width != a->width ||
                  b->size != a->size)) {
            thread_name(who, sizeof who, me);
            cuemu_detect(CUEMU_DET_WARP_MISMATCH,
                         "lanes of one warp disagree (%s):\n  lane %u: %s mask 0x%08x "
                         "width %d at %s:%d\n  lane %u: %s mask 0x%08x width %d at %s:%d",
                         who, me->lane, a->what, a->mask, a->width, a->file, a->line, l,
                         b->what, b->mask, b->width, b->file, b->line);
            fail_from_fiber();
        }
    }
    int orders = a->kind == CUEMU_WARP_SYNC || a->kind == CUEMU_WARP_CUSTOM;
    if (orders) /* every lane released before posting */
        CUEMU_HB_ACQUIRE(&hb.warp[me->linear / 32]);
    const char *err = a->kind == CUEMU_WARP_CUSTOM ? a->compute(lanes, a->mask)
                                                   : cuemu_warp_compute(lanes, a->mask);
    if (orders)
        CUEMU_HB_RELEASE(&hb.warp[me->linear / 32]);
    if (err) {
        thread_name(who, sizeof who, me);
        cuemu_detect(CUEMU_DET_KERNEL_CHECK, "%s at %s:%d (%s): %s", a->what, a->file,
                     a->line, who, err);
        fail_from_fiber();
    }
    for (unsigned l = 0; l < 32; l++) {
        if (!lanes[l])
            continue;
        w[l].posted = NULL;
        if (&w[l] != me)
            w[l].state = T_RUNNABLE;
    }
    return 1;
}

/* Checks a warp op's own arguments; fails the launch when they are wrong. */
static void check_warp_args(const struct thread *me, const struct cuemu_warp_arg *a)
{
    unsigned exist = existing_lanes(me->linear - me->lane);
    int width_ok = a->width >= 1 && a->width <= 32 && !(a->width & (a->width - 1));
    if ((a->mask >> me->lane & 1) && !(a->mask & ~exist) && width_ok)
        return;
    char who[160];
    thread_name(who, sizeof who, me);
    if (!(a->mask >> me->lane & 1))
        cuemu_detect(CUEMU_DET_WARP_BAD_MASK, "%s at %s:%d: lane %u (%s) is not in its mask 0x%08x",
                     a->what, a->file, a->line, me->lane, who, a->mask);
    else if (a->mask & ~exist)
        cuemu_detect(CUEMU_DET_WARP_EXITED_LANE,
                     "%s at %s:%d (%s): mask 0x%08x names lanes that do not exist (the "
                     "warp has lanes 0x%08x)", a->what, a->file, a->line, who, a->mask, exist);
    else
        cuemu_detect(CUEMU_DET_WARP_BAD_MASK, "%s at %s:%d (%s): width %d is not a power of "
                     "two in 1..32", a->what, a->file, a->line, who, a->width);
    fail_from_fiber();
}

void cuemu_warp_op(struct cuemu_warp_arg *a)
{
    struct thread *me = self(a->what);
    check_warp_args(me, a);
    int orders = a->kind == CUEMU_WARP_SYNC || a->kind == CUEMU_WARP_CUSTOM;
    if (orders)
        CUEMU_HB_RELEASE(&hb.warp[me->linear / 32]);
    me->posted = a;
    if (!try_complete(me)) {
        me->state = T_WARP;
        yield_current();
        if (orders)
            CUEMU_HB_ACQUIRE(&hb.warp[me->linear / 32]);
    }
}

unsigned cuemu_activemask(void)
{
    struct thread *me = self("__activemask");
    const struct thread *w = &blk.t[me->linear - me->lane];
    unsigned m = 0, exist = existing_lanes(me->linear - me->lane);
    for (unsigned l = 0; l < 32; l++)
        if ((exist >> l & 1) && w[l].state != T_EXITED)
            m |= 1u << l;
    return m;
}

unsigned cuemu_lane_id(void)
{
    return self("lane id")->lane;
}

/* A thread is leaving: no lane may be waiting for it in a warp op. */
static void check_exit(struct thread *t)
{
    const struct thread *w = &blk.t[t->linear - t->lane];
    unsigned exist = existing_lanes(t->linear - t->lane);
    for (unsigned l = 0; l < 32; l++) {
        const struct cuemu_warp_arg *a = (exist >> l & 1) ? w[l].posted : NULL;
        if (a && (a->mask >> t->lane & 1)) {
            char who[160];
            thread_name(who, sizeof who, t);
            cuemu_detect(CUEMU_DET_WARP_EXITED_LANE,
                         "%s exits while lane %u waits for it in %s (mask 0x%08x) at %s:%d",
                         who, l, a->what, a->mask, a->file, a->line);
            fail_from_fiber();
        }
    }
}

static void thread_entry(void)
{
    cuemu_fiber_entered();
    CUEMU_HB_ACQUIRE(&hb.launch);
    blk.desc->body(blk.desc->ctx);
    CUEMU_HB_RELEASE(&hb.end);
    check_exit(cur);
    cuemu_async_at_exit(cur->linear);
    cur->state = T_EXITED;
    blk.live--;
    struct thread *next = next_runnable();
    cuemu_fiber_exit(next ? enter(next) : NULL);
}

static void report_deadlock(void)
{
    static const char *const names[] = {"runnable", "at a barrier", "in a warp op", "exited"};
    char buf[4096];
    size_t len = 0;
    unsigned shown = 0;
    for (unsigned i = 0; i < blk.n && shown < 8; i++) {
        const struct thread *t = &blk.t[i];
        if (t->state == T_EXITED)
            continue;
        char who[160];
        thread_name(who, sizeof who, t);
        if (t->state == T_BARRIER)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "\n  %s: %s %s at %s:%d", who,
                                    names[t->state], bar_names[t->bar_kind], t->bar_file,
                                    t->bar_line);
        else
            len += (size_t)snprintf(buf + len, sizeof buf - len,
                                    "\n  %s: %s %s (mask 0x%08x) at %s:%d", who,
                                    names[t->state], t->posted->what, t->posted->mask,
                                    t->posted->file, t->posted->line);
        shown++;
        if (len >= sizeof buf)
            break;
    }
    cuemu_detect(CUEMU_DET_DEADLOCK, "deadlock: %u live threads, none can run (first %u shown):%s",
                 blk.live, shown, buf);
}

static void shuffle_order(void)
{
    for (unsigned i = blk.n - 1; i > 0; i--) {
        unsigned j = (unsigned)(cuemu_schedule_rand() % (i + 1));
        unsigned tmp = blk.order[i];
        blk.order[i] = blk.order[j];
        blk.order[j] = tmp;
    }
}

static void init_block(const struct cuemu_launch_desc *d, uint3 block_idx)
{
    enum cuemu_schedule sched = cuemu_schedule_kind();
    blk.desc = d;
    blk.n = d->block.x * d->block.y * d->block.z;
    blk.live = blk.n;
    blk.arrived = 0;
    blk.bar_acc = 0;
    blk.failed = 0;
    for (unsigned i = 0; i < blk.n; i++) {
        struct thread *t = &blk.t[i];
        t->b.thread_idx = (uint3){i % d->block.x, i / d->block.x % d->block.y,
                                  i / (d->block.x * d->block.y)};
        t->b.block_idx = block_idx;
        t->b.block_dim = d->block;
        t->b.grid_dim = d->grid;
        t->linear = i;
        t->lane = i % 32;
        t->state = T_RUNNABLE;
        t->posted = NULL;
        cuemu_fiber_start(&blk.fibers[i], thread_entry, i);
        blk.order[i] = sched == CUEMU_SCHED_REVERSE ? blk.n - 1 - i : i;
    }
    cuemu_async_begin_block(blk.n);
}

int cuemu_sched_run_block(const struct cuemu_launch_desc *d, uint3 block_idx)
{
    int random = cuemu_schedule_kind() == CUEMU_SCHED_RANDOM;
    init_block(d, block_idx);
    bar_gen = 0;
    CUEMU_HB_RELEASE(&hb.launch); /* after launch.c poisoned shared memory */
    for (;;) {
        int ran = 0;
        if (random)
            shuffle_order();
        blk.pos = 0;
        for (struct thread *t; (t = next_runnable());) {
            ran = 1;
            cuemu_fiber_resume(enter(t)); /* returns at the end of the pass */
        }
        if (blk.failed || blk.live == 0)
            break;
        if (blk.arrived == blk.live) {
            if (release_barrier() != 0)
                blk.failed = 1;
        } else if (!ran) {
            report_deadlock();
            blk.failed = 1;
        }
    }
    cur = NULL;
    cuemu_self = NULL;
    CUEMU_HB_ACQUIRE(&hb.end);
    if (!blk.failed)
        return 0;
    for (unsigned i = 0; i < blk.n; i++)
        blk.fibers[i].dirty = 1;
    return -1;
}

static void vkernel_error(enum cuemu_detector det, const char *file, int line, const char *fmt, va_list ap)
{
    char msg[512], who[160] = "host code";
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (cur)
        thread_name(who, sizeof who, cur);
    cuemu_detect(det, "%s at %s:%d: %s", who, file, line, msg);
    if (cur)
        fail_from_fiber();
}

void cuemu_kernel_error(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkernel_error(CUEMU_DET_KERNEL_CHECK, file, line, fmt, ap);
    va_end(ap);
}

void cuemu_sched_fail(enum cuemu_detector det, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkernel_error(det, file, line, fmt, ap);
    va_end(ap);
}

unsigned cuemu_sched_current(const char *what)
{
    return self(what)->linear;
}
