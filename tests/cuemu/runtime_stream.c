/* Streams and events. Work runs synchronously when issued, so streams only need to be
 * valid handles; events record a wall-clock time for cudaEventElapsedTime. The
 * synchronising calls deliver a deferred kernel fault (runtime_fault.c). What the order
 * of real streams would break is detected instead (CUEMU_DET_STREAM_ORDER): work on a
 * non-blocking stream while a legacy-stream transfer the host may have seen return early
 * is not yet synchronised, and a blocking copy from device memory (legacy stream) while
 * work on a non-blocking stream is. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tests/cuemu/emu_internal.h"

#define STREAM_MAGIC 0x5354524Du /* "STRM" */
#define EVENT_MAGIC 0x45564E54u  /* "EVNT" */

/* Created streams count the work issued on them (work) and how much of it the host has
 * waited for (synced); an event remembers its stream's count at record time. */
struct CUstream_st {
    unsigned magic;
    unsigned flags;
    unsigned long long id, work, synced;
    struct CUstream_st *next; /* live streams */
};
struct CUevent_st {
    unsigned magic;
    int recorded;
    double ms; /* CLOCK_MONOTONIC at record time */
    unsigned long long stream_id, work;
};

static struct CUstream_st *streams;
static unsigned long long next_id = 1;

int cuemu_stream_valid(cudaStream_t s)
{
    /* 0 is the legacy default stream; 0x1 and 0x2 are cudaStreamLegacy and
     * cudaStreamPerThread. */
    return (uintptr_t)s <= 2 || s->magic == STREAM_MAGIC;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    if (!s || flags > cudaStreamNonBlocking)
        return cuemu_set_error(cudaErrorInvalidValue);
    *s = malloc(sizeof **s);
    if (!*s)
        return cuemu_set_error(cudaErrorMemoryAllocation);
    **s = (struct CUstream_st){STREAM_MAGIC, flags, next_id++, 0, 0, streams};
    streams = *s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if ((uintptr_t)s <= 2 || s->magic != STREAM_MAGIC)
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    struct CUstream_st **p = &streams;
    while (*p != s)
        p = &(*p)->next;
    *p = s->next;
    s->magic = 0;
    free(s);
    return cudaSuccess;
}

/* --- legacy-stream work that a non-blocking stream does not wait for --- */

static struct {
    int pending;
    const char *fn;
    const void *dst;
    size_t bytes;
} legacy;

void cuemu_legacy_work(const char *fn, const void *dst, size_t bytes)
{
    if (legacy.pending)
        return; /* the first unordered one is named */
    legacy.pending = 1;
    legacy.fn = fn;
    legacy.dst = dst;
    legacy.bytes = bytes;
}

void cuemu_legacy_done(void)
{
    legacy.pending = 0;
}

static int is_legacy(cudaStream_t s)
{
    return (uintptr_t)s <= 1; /* 0 and cudaStreamLegacy */
}

static int non_blocking(const struct CUstream_st *s)
{
    return (uintptr_t)s > 2 && (s->flags & cudaStreamNonBlocking);
}

void cuemu_stream_work(cudaStream_t s, const char *what)
{
    if ((uintptr_t)s > 2)
        s->work++;
    if (!legacy.pending || !non_blocking(s))
        return;
    cuemu_detect(CUEMU_DET_STREAM_ORDER,
                 "%s on a non-blocking stream may run before the %s to [%p, +%zu) lands: that call can return "
                 "before its transfer completes, and a non-blocking stream does not wait for the legacy "
                 "stream; synchronise (cudaDeviceSynchronize) or use cudaMemcpyAsync on the same stream",
                 what, legacy.fn, legacy.dst, legacy.bytes);
    legacy.pending = 0; /* one report per unordered transfer */
}

void cuemu_stream_read_check(const char *fn, const void *src, size_t bytes)
{
    for (const struct CUstream_st *s = streams; s; s = s->next)
        if (non_blocking(s) && s->work > s->synced) {
            cuemu_detect(CUEMU_DET_STREAM_ORDER,
                         "%s reads [%p, +%zu) on the legacy stream while work on a non-blocking stream is not "
                         "synchronised: it does not wait for that work; synchronise that stream first",
                         fn, src, bytes);
            return;
        }
}

void cuemu_stream_position(cudaStream_t s, unsigned long long *id, unsigned long long *work)
{
    const int created = (uintptr_t)s > 2;
    *id = created ? s->id : 0;
    *work = created ? s->work : 0;
}

int cuemu_stream_waited(unsigned long long id, unsigned long long work)
{
    for (const struct CUstream_st *s = streams; s; s = s->next)
        if (s->id == id)
            return s->synced >= work;
    return 1;
}

void cuemu_streams_done(void)
{
    for (struct CUstream_st *s = streams; s; s = s->next)
        s->synced = s->work;
    cuemu_legacy_done();
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!cuemu_stream_valid(s))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    if (is_legacy(s))
        cuemu_legacy_done();
    else if ((uintptr_t)s > 2)
        s->synced = s->work;
    return cuemu_fault_sync();
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    return cudaStreamSynchronize(s);
}

static int event_valid(cudaEvent_t e)
{
    return e && e->magic == EVENT_MAGIC;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    if (!cuemu_stream_valid(s) || !event_valid(e))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    if (!e)
        return cuemu_set_error(cudaErrorInvalidValue);
    *e = calloc(1, sizeof **e);
    if (!*e)
        return cuemu_set_error(cudaErrorMemoryAllocation);
    (*e)->magic = EVENT_MAGIC;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!event_valid(e))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    e->magic = 0;
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (!event_valid(e) || !cuemu_stream_valid(s))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    e->recorded = 1;
    e->stream_id = (uintptr_t)s > 2 ? s->id : 0;
    e->work = (uintptr_t)s > 2 ? s->work : 0;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!event_valid(e))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (e->recorded && s->id == e->stream_id && s->synced < e->work)
            s->synced = e->work;
    return cuemu_fault_sync();
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    return cudaEventSynchronize(e);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return cuemu_set_error(cudaErrorInvalidValue);
    if (!event_valid(start) || !event_valid(end))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded)
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}
