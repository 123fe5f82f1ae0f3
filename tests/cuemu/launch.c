/* The launcher: validates a configuration as the driver does, then runs the grid one
 * block at a time, poisoning shared memory (0xFF: NaN for floats, -1 for integers)
 * before each block. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"
#include "tests/cuemu/sched.h"

/* Static __shared__ variables live in section cuemu_shared (see cuemu.h); the linker
 * defines these bounds when any exists. ASan builds keep them out of the section. */
extern char __start_cuemu_shared[] __attribute__((weak));
extern char __stop_cuemu_shared[] __attribute__((weak));

static void *dyn_smem;

/* CUEMU_DYN_SMEM_OFFSET: bytes by which the dynamic shared memory base is moved off its
 * 128-byte alignment (default 0), to show which kernels depend on that alignment. */
static size_t dyn_smem_offset(void)
{
    static size_t offset = SIZE_MAX;
    if (offset == SIZE_MAX) {
        const char *e = getenv("CUEMU_DYN_SMEM_OFFSET");
        offset = e ? strtoull(e, NULL, 0) % 128 : 0;
    }
    return offset;
}

void *cuemu_dynamic_smem(void)
{
    if (!cuemu_self)
        cuemu_outside_kernel("SWIN_DYN_SMEM");
    return dyn_smem;
}

/* --- cudaFuncSetAttribute: per-kernel dynamic shared memory opt-in --- */

#define MAX_FUNCS 256
static struct {
    const void *func;
    size_t max_dyn_smem;
} funcs[MAX_FUNCS];
static unsigned nfuncs;

#define DEFAULT_DYN_SMEM (48u * 1024)

/* Max dynamic shared memory cudaFuncSetAttribute allowed for the kernel. */
static size_t func_max_dynamic_smem(const void *kernel)
{
    for (unsigned i = 0; i < nfuncs; i++)
        if (funcs[i].func == kernel)
            return funcs[i].max_dyn_smem;
    return DEFAULT_DYN_SMEM;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (!func)
        return cuemu_set_error(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return value >= -1 && value <= 100 ? cudaSuccess : cuemu_set_error(cudaErrorInvalidValue);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
        return cuemu_set_error(cudaErrorNotSupported);
    if (value < 0 || (size_t)value > cuemu_target()->smem_optin)
        return cuemu_set_error(cudaErrorInvalidValue);
    unsigned i = 0;
    while (i < nfuncs && funcs[i].func != func)
        i++;
    if (i == MAX_FUNCS)
        return cuemu_set_error(cudaErrorNotSupported);
    if (i == nfuncs)
        nfuncs++;
    funcs[i].func = func;
    funcs[i].max_dyn_smem = (size_t)value;
    return cudaSuccess;
}

/* --- validation --- */

static cudaError_t validate(const struct cuemu_launch_desc *d)
{
    dim3 g = d->grid, b = d->block;
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
        return cudaErrorInvalidConfiguration;
    if (b.x > 1024 || b.y > 1024 || b.z > 64 || (uint64_t)b.x * b.y * b.z > 1024)
        return cudaErrorInvalidConfiguration;
    if (g.x > 0x7FFFFFFFu || g.y > 65535 || g.z > 65535)
        return cudaErrorInvalidConfiguration;
    if (!cuemu_stream_valid(d->stream))
        return cudaErrorInvalidResourceHandle;
    /* More than 48 KiB of dynamic shared memory needs the per-kernel opt-in. */
    if (d->smem > func_max_dynamic_smem(d->kernel) || d->smem > cuemu_target()->smem_optin)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* Linear index of the i-th block to run, in the schedule's order. */
static size_t *block_order(size_t n)
{
    size_t *o = malloc(n * sizeof *o);
    if (!o)
        return NULL;
    enum cuemu_schedule s = cuemu_schedule_kind();
    for (size_t i = 0; i < n; i++)
        o[i] = s == CUEMU_SCHED_REVERSE ? n - 1 - i : i;
    if (s == CUEMU_SCHED_RANDOM)
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)(cuemu_schedule_rand() % (i + 1)), t = o[i];
            o[i] = o[j];
            o[j] = t;
        }
    return o;
}

cudaError_t cuemu_launch(const struct cuemu_launch_desc *d)
{
    if (cuemu_self) {
        fprintf(stderr, "cuemu: %s launched from inside a kernel (dynamic parallelism is "
                        "not emulated)\n", d->name);
        abort();
    }
    cudaError_t err = cuemu_fault_sticky();
    if (err == cudaSuccess)
        err = validate(d);
    if (err != cudaSuccess)
        return cuemu_set_error(err);
    if (cuemu_fault_lost()) /* a held fault: the context is lost, nothing runs */
        return cudaSuccess;
    cuemu_stream_work(d->stream, d->name);
    if (cuemu_fault_injected(d->name))
        return cuemu_fault_raise(cudaErrorIllegalAddress);
    size_t shared_bytes = (size_t)((uintptr_t)__stop_cuemu_shared - (uintptr_t)__start_cuemu_shared);
    size_t nblocks = (size_t)d->grid.x * d->grid.y * d->grid.z;
    size_t *order = block_order(nblocks);
    /* Exact size, so that ASan sees the first byte past the end; 128-byte aligned like the
     * device's dynamic shared memory (swin_launch.h; wmma fragments in it need 32), unless
     * CUEMU_DYN_SMEM_OFFSET moves it. */
    const size_t offset = dyn_smem_offset();
    void *dyn_block = NULL;
    if (!order || cuemu_sched_reserve(d->block.x * d->block.y * d->block.z) != 0 ||
        (d->smem && posix_memalign(&dyn_block, 128, offset + d->smem) != 0)) {
        free(order);
        return cuemu_set_error(cudaErrorMemoryAllocation);
    }
    dyn_smem = dyn_block ? (char *)dyn_block + offset : NULL;
    for (size_t i = 0; i < nblocks && err == cudaSuccess; i++) {
        size_t b = order[i];
        uint3 idx = {(unsigned)(b % d->grid.x), (unsigned)(b / d->grid.x % d->grid.y),
                     (unsigned)(b / ((size_t)d->grid.x * d->grid.y))};
        if (shared_bytes) {
            memset(__start_cuemu_shared, 0xFF, shared_bytes);
            CUEMU_POISONED(__start_cuemu_shared, shared_bytes);
        }
        if (dyn_smem) {
            memset(dyn_smem, 0xFF, d->smem);
            CUEMU_POISONED(dyn_smem, d->smem);
        }
        if (cuemu_sched_run_block(d, idx) != 0)
            err = cudaErrorLaunchFailure;
    }
    free(dyn_block);
    dyn_smem = NULL;
    free(order);
    return err == cudaSuccess ? cudaSuccess : cuemu_fault_raise(err);
}
