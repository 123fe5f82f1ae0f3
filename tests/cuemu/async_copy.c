/* Asynchronous copies (cuemu_async_* in cuemu_abi.h, tests/cuemu/pipeline.h): each CUDA
 * thread keeps its copies in flight in issue order, each tagged with its batch number
 * (the number of commits the thread had made when it issued the copy). A wait performs
 * the covered copies and drops them. The scheduler calls the barrier and exit checks. */
#include "tests/cuemu/async_copy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"
#include "tests/cuemu/sched.h"

struct copy {
    unsigned char *dst;
    const unsigned char *src;
    unsigned size, src_bytes;
    unsigned long long batch;
    const char *file;
    int line;
};

/* lo, hi: the smallest start and largest end among the copies in flight, so that a copy
 * landing outside [lo, hi) (a ring buffer's next stage, the next element of a row) skips
 * the overlap scan. */
struct thread_copies {
    struct copy *c;
    unsigned n, cap;
    unsigned long long commits;
    const unsigned char *lo, *hi;
};

static struct thread_copies *per;
static unsigned per_cap;

int cuemu_async_reserve(unsigned n)
{
    if (n <= per_cap)
        return 0;
    struct thread_copies *p = realloc(per, n * sizeof *p);
    if (!p)
        return -1;
    memset(p + per_cap, 0, (n - per_cap) * sizeof *p);
    per = p;
    per_cap = n;
    return 0;
}

void cuemu_async_begin_block(unsigned n)
{
    for (unsigned i = 0; i < n && i < per_cap; i++) {
        per[i].n = 0;
        per[i].commits = 0;
    }
}

static int overlaps(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
    return a < b + nb && b < a + na;
}

void cuemu_async_copy(void *dst, const void *src, size_t size, size_t zfill, const char *file, int line)
{
    struct thread_copies *t = &per[cuemu_sched_current("__pipeline_memcpy_async")];
    const char *fn = "__pipeline_memcpy_async";
    if (size != 4 && size != 8 && size != 16)
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line, "%s: size %zu is not 4, 8 or 16", fn, size);
    if (zfill > size)
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line, "%s: zfill %zu exceeds the size %zu", fn, zfill, size);
    if ((uintptr_t)dst % size || (uintptr_t)src % size)
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line,
                         "%s: dst %p or src %p is not aligned to the size %zu", fn, dst, src, size);
    if (cuemu_mem_is_device_ptr(dst))
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line, "%s: dst %p is device memory, not shared memory", fn,
                         dst);
    /* A zero-fill copy reads nothing, but its address must still lie inside an
     * allocation (compute-sanitizer may flag it otherwise), and it catches wild pointers. */
    const size_t src_bytes = size - zfill;
    if (!cuemu_mem_is_device_range(src, src_bytes ? src_bytes : 1))
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line, "%s: src [%p, +%zu) is not inside a device allocation%s",
                         fn, src, src_bytes, src_bytes ? "" : " (a zero-fill copy: point it at its tensor)");
    const unsigned char *d = dst;
    if (t->n && overlaps(t->lo, (size_t)(t->hi - t->lo), d, size))
        for (unsigned i = 0; i < t->n; i++)
            if (overlaps(t->c[i].dst, t->c[i].size, dst, size))
                cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line,
                                 "%s: dst %p overlaps the copy issued at %s:%d that is still in flight", fn, dst,
                                 t->c[i].file, t->c[i].line);
    if (t->n == t->cap) {
        unsigned cap = t->cap ? 2 * t->cap : 16;
        struct copy *c = realloc(t->c, cap * sizeof *c);
        if (!c)
            cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line, "%s: out of host memory", fn);
        t->c = c;
        t->cap = cap;
    }
    if (!t->n || d < t->lo)
        t->lo = d;
    if (!t->n || d + size > t->hi)
        t->hi = d + size;
    t->c[t->n++] = (struct copy){dst, src, (unsigned)size, (unsigned)src_bytes, t->commits, file, line};
    memset(dst, 0xFF, size);
    CUEMU_POISONED(dst, size);
}

void cuemu_async_commit(void)
{
    per[cuemu_sched_current("__pipeline_commit")].commits++;
}

void cuemu_async_wait_prior(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    struct thread_copies *t = &per[cuemu_sched_current("__pipeline_wait_prior")];
    unsigned kept = 0;
    for (unsigned i = 0; i < t->n; i++) {
        struct copy *c = &t->c[i];
        /* Batch b is among the n most recent committed ones when b + n >= commits;
         * the open batch (b == commits) is never covered. */
        if (c->batch + n >= t->commits) {
            if (!kept || c->dst < t->lo)
                t->lo = c->dst;
            if (!kept || c->dst + c->size > t->hi)
                t->hi = c->dst + c->size;
            t->c[kept++] = *c;
            continue;
        }
        memcpy(c->dst, c->src, c->src_bytes);
        memset(c->dst + c->src_bytes, 0, c->size - c->src_bytes);
    }
    t->n = kept;
}

void cuemu_async_at_barrier(unsigned linear, const char *barrier, const char *file, int line)
{
    const struct thread_copies *t = &per[linear];
    for (unsigned i = 0; i < t->n; i++)
        if (t->c[i].batch == t->commits)
            cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, file, line,
                             "%s reached with the copy issued at %s:%d not committed (no wait can cover it)",
                             barrier, t->c[i].file, t->c[i].line);
}

void cuemu_async_at_exit(unsigned linear)
{
    const struct thread_copies *t = &per[linear];
    if (t->n)
        cuemu_sched_fail(CUEMU_DET_ASYNC_COPY, t->c[0].file, t->c[0].line,
                         "the thread exits with %u asynchronous copies never waited for (the first issued here)",
                         t->n);
}
