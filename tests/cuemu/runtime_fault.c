/* Kernel faults: when a kernel's failure becomes visible to the host (CUEMU_FAULTS), and
 * planted faults (CUEMU_INJECT_FAULT).
 *
 * Immediate (default): the launch that faulted returns the error and records it for
 * cudaGetLastError, which clears it; the emulator goes on.
 * Deferred, as on hardware: the launch returns cudaSuccess and the fault is held; later
 * launches do not run (the context is lost). The next synchronising call delivers it:
 * from then on the error is sticky, returned by every synchronising call, launch and
 * copy, and by cudaGetLastError / cudaPeekAtLastError without being cleared, until
 * cuemu_clear_fault (what cudaDeviceReset does to the error state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"

static int mode = -1; /* enum cuemu_fault_mode; -1 until read from CUEMU_FAULTS */
static cudaError_t held;
static int delivered;
static int inject_read;
static char inject[128];

void cuemu_set_fault_mode(enum cuemu_fault_mode m)
{
    mode = (int)m;
}

static enum cuemu_fault_mode fault_mode(void)
{
    if (mode < 0) {
        const char *e = getenv("CUEMU_FAULTS");
        mode = CUEMU_FAULTS_IMMEDIATE;
        if (e && !strcmp(e, "deferred"))
            mode = CUEMU_FAULTS_DEFERRED;
        else if (e && *e && strcmp(e, "immediate"))
            fprintf(stderr, "cuemu: CUEMU_FAULTS=%s not understood (immediate, deferred); using immediate\n", e);
    }
    return (enum cuemu_fault_mode)mode;
}

void cuemu_inject_fault(const char *kernel_substring)
{
    inject_read = 1;
    snprintf(inject, sizeof inject, "%s", kernel_substring ? kernel_substring : "");
}

void cuemu_clear_fault(void)
{
    held = cudaSuccess;
    delivered = 0;
    cudaGetLastError();
}

int cuemu_fault_injected(const char *kernel_name)
{
    if (!inject_read) {
        const char *e = getenv("CUEMU_INJECT_FAULT");
        cuemu_inject_fault(e);
    }
    if (!inject[0] || !strstr(kernel_name, inject))
        return 0;
    fprintf(stderr, "cuemu: illegal address planted in %s (fault injection: \"%s\")\n", kernel_name, inject);
    return 1;
}

cudaError_t cuemu_fault_raise(cudaError_t fault)
{
    if (fault_mode() == CUEMU_FAULTS_IMMEDIATE)
        return cuemu_set_error(fault);
    if (held == cudaSuccess)
        held = fault;
    return cudaSuccess;
}

int cuemu_fault_lost(void)
{
    return held != cudaSuccess;
}

cudaError_t cuemu_fault_sticky(void)
{
    return delivered ? held : cudaSuccess;
}

cudaError_t cuemu_fault_sync(void)
{
    if (held == cudaSuccess)
        return cudaSuccess;
    delivered = 1;
    return cuemu_set_error(held);
}
