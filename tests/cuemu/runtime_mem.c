/* Device memory: exact-size host allocations filled with 0xFF, kept in a registry sorted
 * by address so that copies, memsets and library calls can be range-checked, with
 * usage, high-water mark, an optional capacity and a freeze switch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"

struct alloc {
    char *p;
    size_t size;
    int host; /* cudaMallocHost memory: registered, but not device memory */
    /* host: the stream (id, work count) of the last cudaMemcpyAsync out of it, 0 if none */
    unsigned long long copy_stream, copy_work;
};

static struct alloc *allocs;
static size_t nallocs, cap_allocs;
static size_t in_use, high_water, n_device;
static size_t capacity = SIZE_MAX; /* SIZE_MAX: not read from CUEMU_DEVICE_MEM yet */
static int frozen;

size_t cuemu_mem_capacity(void)
{
    if (capacity == SIZE_MAX) {
        const char *e = getenv("CUEMU_DEVICE_MEM");
        capacity = e ? cuemu_parse_size(e) : 0;
    }
    return capacity;
}

void cuemu_mem_set_capacity(size_t bytes) { capacity = bytes; }
void cuemu_mem_freeze(int on) { frozen = on; }
size_t cuemu_mem_in_use(void) { return in_use; }
size_t cuemu_mem_high_water(void) { return high_water; }
void cuemu_mem_reset_high_water(void) { high_water = in_use; }
size_t cuemu_mem_live_allocations(void) { return n_device; }

/* Index of the first allocation whose start is > p. */
static size_t upper(const void *p)
{
    size_t lo = 0, hi = nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)allocs[mid].p <= (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The allocation containing p, or NULL. */
static struct alloc *containing(const void *p)
{
    size_t i = upper(p);
    if (i == 0)
        return NULL;
    struct alloc *a = &allocs[i - 1];
    return (uintptr_t)p - (uintptr_t)a->p < a->size ? a : NULL;
}

int cuemu_mem_is_device_ptr(const void *p)
{
    const struct alloc *a = containing(p);
    return a && !a->host;
}

int cuemu_mem_is_device_range(const void *p, size_t bytes)
{
    const struct alloc *a = containing(p);
    return a && !a->host && bytes <= a->size - (size_t)((const char *)p - a->p);
}

static void report_leaks(void)
{
    if (n_device)
        fprintf(stderr, "cuemu: %zu device allocations (%zu bytes) not freed at exit\n",
                n_device, in_use);
}

static int insert(char *p, size_t size, int host)
{
    static int registered;
    if (!registered)
        registered = !atexit(report_leaks);
    if (nallocs == cap_allocs) {
        size_t c = cap_allocs ? 2 * cap_allocs : 64;
        struct alloc *a = realloc(allocs, c * sizeof *a);
        if (!a)
            return -1;
        allocs = a;
        cap_allocs = c;
    }
    size_t i = upper(p);
    memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof *allocs);
    allocs[i] = (struct alloc){.p = p, .size = size, .host = host};
    nallocs++;
    return 0;
}

static cudaError_t alloc(void **ptr, size_t size, int host)
{
    if (!ptr)
        return cuemu_set_error(cudaErrorInvalidValue);
    *ptr = NULL;
    if (frozen) {
        cuemu_report(CUEMU_DET_NONE, "allocation of %zu bytes while allocations are frozen", size);
        return cuemu_set_error(cudaErrorNotPermitted);
    }
    if (size == 0)
        return cudaSuccess;
    size_t cap = cuemu_mem_capacity();
    if (!host && cap && (size > cap || in_use > cap - size))
        return cuemu_set_error(cudaErrorMemoryAllocation);
    void *p;
    if (posix_memalign(&p, 256, size) != 0)
        return cuemu_set_error(cudaErrorMemoryAllocation);
    if (insert(p, size, host) != 0) {
        free(p);
        return cuemu_set_error(cudaErrorMemoryAllocation);
    }
    memset(p, 0xFF, size); /* uninitialised device memory reads as NaN / -1 */
    CUEMU_POISONED(p, size);
    if (!host) {
        in_use += size;
        n_device++;
        if (in_use > high_water)
            high_water = in_use;
    }
    *ptr = p;
    return cudaSuccess;
}

static cudaError_t release(void *p, int host, const char *fn)
{
    if (!p)
        return cudaSuccess;
    struct alloc *a = containing(p);
    if (!a || a->p != (char *)p || a->host != host) {
        cuemu_report(CUEMU_DET_MEMORY_RANGE, "%s(%p): not the start of a live %s allocation",
                     fn, p, host ? "host" : "device");
        return cuemu_set_error(cudaErrorInvalidValue);
    }
    if (!host) {
        in_use -= a->size;
        n_device--;
    }
    size_t i = (size_t)(a - allocs);
    memmove(&allocs[i], &allocs[i + 1], (nallocs - i - 1) * sizeof *allocs);
    nallocs--;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size) { return alloc(ptr, size, 0); }
cudaError_t cudaFree(void *p) { return release(p, 0, "cudaFree"); }
cudaError_t cudaMallocHost(void **ptr, size_t size) { return alloc(ptr, size, 1); }
cudaError_t cudaFreeHost(void *p) { return release(p, 1, "cudaFreeHost"); }

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (!free_bytes || !total)
        return cuemu_set_error(cudaErrorInvalidValue);
    size_t cap = cuemu_mem_capacity();
    *total = cap ? cap : (size_t)80 << 30;
    *free_bytes = *total > in_use ? *total - in_use : 0;
    return cudaSuccess;
}

/* Checks one side of a copy: device sides must lie inside one live allocation, host
 * sides must not be device memory (a swapped source and destination). */
static int side_ok(const void *p, size_t count, int device, const char *fn, const char *which)
{
    if (device ? cuemu_mem_is_device_range(p, count) : !cuemu_mem_is_device_ptr(p))
        return 1;
    cuemu_report(CUEMU_DET_MEMORY_RANGE, "%s: %s %p (+%zu bytes) is %s", fn, which, p, count,
                 device ? "not inside one live device allocation" : "device memory, not host memory");
    return 0;
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                        const char *fn)
{
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cuemu_set_error(cudaErrorInvalidValue);
    int dst_dev, src_dev;
    switch (kind) {
    case cudaMemcpyHostToHost: dst_dev = 0; src_dev = 0; break;
    case cudaMemcpyHostToDevice: dst_dev = 1; src_dev = 0; break;
    case cudaMemcpyDeviceToHost: dst_dev = 0; src_dev = 1; break;
    case cudaMemcpyDeviceToDevice: dst_dev = 1; src_dev = 1; break;
    case cudaMemcpyDefault:
        dst_dev = cuemu_mem_is_device_ptr(dst);
        src_dev = cuemu_mem_is_device_ptr(src);
        break;
    default: return cuemu_set_error(cudaErrorInvalidMemcpyDirection);
    }
    if (!side_ok(dst, count, dst_dev, fn, "destination") || !side_ok(src, count, src_dev, fn, "source"))
        return cuemu_set_error(cudaErrorInvalidValue);
    memmove(dst, src, count);
    return cudaSuccess;
}

/* The stream order of cudaMemcpy (legacy stream): it does not wait for non-blocking
 * streams; a copy to host memory waits for the legacy stream, one to device memory from
 * pageable host memory or from device memory may return before it lands. */
static void blocking_copy_order(void *dst, const void *src, size_t count)
{
    const struct alloc *s = containing(src);
    if (s && !s->host)
        cuemu_stream_read_check("cudaMemcpy", src, count);
    if (!cuemu_mem_is_device_ptr(dst))
        cuemu_legacy_done();
    else if (!s || !s->host)
        cuemu_legacy_work("cudaMemcpy", dst, count);
}

/* Blocking: delivers a deferred kernel fault (runtime_fault.c) instead of copying. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    cudaError_t err = cuemu_fault_sync();
    if (err == cudaSuccess && (err = copy(dst, src, count, kind, "cudaMemcpy")) == cudaSuccess && count)
        blocking_copy_order(dst, src, count);
    return err;
}

/* An asynchronous copy out of pinned memory: the last one out of the same allocation must
 * have been waited for, or the host may have rewritten what the device still reads. */
static void pinned_source(const void *src, cudaStream_t stream)
{
    struct alloc *a = containing(src);
    if (!a || !a->host)
        return;
    if (a->copy_work && !cuemu_stream_waited(a->copy_stream, a->copy_work))
        cuemu_detect(CUEMU_DET_PINNED_REUSE,
                     "cudaMemcpyAsync out of pinned [%p, +%zu) while its last asynchronous copy is not waited for: "
                     "on a GPU the host may have rewritten the buffer before the device read it; synchronise the "
                     "event recorded behind that copy (or its stream) before refilling the buffer",
                     (void *)a->p, a->size);
    cuemu_stream_position(stream, &a->copy_stream, &a->copy_work);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    if (!cuemu_stream_valid(stream))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    if (cuemu_fault_sticky() != cudaSuccess)
        return cuemu_set_error(cuemu_fault_sticky());
    cuemu_stream_work(stream, "cudaMemcpyAsync");
    pinned_source(src, stream);
    cudaError_t err = copy(dst, src, count, kind, "cudaMemcpyAsync");
    if (err == cudaSuccess && count && (uintptr_t)stream <= 1 && cuemu_mem_is_device_ptr(dst))
        cuemu_legacy_work("cudaMemcpyAsync", dst, count);
    return err;
}

static cudaError_t fill(void *dev, int value, size_t count, const char *fn)
{
    if (count == 0)
        return cudaSuccess;
    if (!side_ok(dev, count, 1, fn, "destination"))
        return cuemu_set_error(cudaErrorInvalidValue);
    memset(dev, value, count);
    return cudaSuccess;
}

/* cudaMemset is asynchronous to the host: legacy-stream work that may not have landed. */
cudaError_t cudaMemset(void *dev, int value, size_t count)
{
    cudaError_t err = fill(dev, value, count, "cudaMemset");
    if (err == cudaSuccess && count)
        cuemu_legacy_work("cudaMemset", dev, count);
    return err;
}

cudaError_t cudaMemsetAsync(void *dev, int value, size_t count, cudaStream_t stream)
{
    if (!cuemu_stream_valid(stream))
        return cuemu_set_error(cudaErrorInvalidResourceHandle);
    cuemu_stream_work(stream, "cudaMemsetAsync");
    cudaError_t err = fill(dev, value, count, "cudaMemsetAsync");
    if (err == cudaSuccess && count && (uintptr_t)stream <= 1)
        cuemu_legacy_work("cudaMemsetAsync", dev, count);
    return err;
}

/* __device__ and __constant__ variables are ordinary globals in the emulated build. */
cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    if (!symbol || (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
                    kind != cudaMemcpyDefault))
        return cuemu_set_error(cudaErrorInvalidValue);
    memmove((char *)(uintptr_t)symbol + offset, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind)
{
    if (!symbol || (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
                    kind != cudaMemcpyDefault))
        return cuemu_set_error(cudaErrorInvalidValue);
    memmove(dst, (const char *)symbol + offset, count);
    return cudaSuccess;
}

cudaError_t cudaGetSymbolAddress(void **dev, const void *symbol)
{
    if (!dev || !symbol)
        return cuemu_set_error(cudaErrorInvalidValue);
    *dev = (void *)(uintptr_t)symbol;
    return cudaSuccess;
}
