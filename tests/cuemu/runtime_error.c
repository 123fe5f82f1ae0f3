/* cudaGetLastError and friends, error strings, and the detector state. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"

static cudaError_t last_error = cudaSuccess;

cudaError_t cuemu_set_error(cudaError_t err)
{
    if (err != cudaSuccess)
        last_error = err;
    return err;
}

/* A delivered deferred fault (runtime_fault.c) is sticky: never cleared here. */
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return cuemu_fault_sticky() != cudaSuccess ? cuemu_fault_sticky() : e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return cuemu_fault_sticky() != cudaSuccess ? cuemu_fault_sticky() : last_error;
}

/* The codes the emulator returns, with CUDA's names and messages. */
static const struct {
    cudaError_t code;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
     "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
};

static int find(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e)
            return (int)i;
    return -1;
}

const char *cudaGetErrorString(cudaError_t e)
{
    int i = find(e);
    return i < 0 ? "unrecognized error code" : errors[i].text;
}

const char *cudaGetErrorName(cudaError_t e)
{
    int i = find(e);
    return i < 0 ? "cudaErrorUnknown" : errors[i].name;
}

/* --- detectors --- */

static int mode = -1; /* enum cuemu_detect_mode, -1 until read from CUEMU_DETECT */
static enum cuemu_detector last_det;
static unsigned hits;

void cuemu_set_detect_mode(enum cuemu_detect_mode m)
{
    mode = (int)m;
}

enum cuemu_detector cuemu_last_detector(void)
{
    return last_det;
}

unsigned cuemu_detector_hits(void)
{
    return hits;
}

void cuemu_clear_detector(void)
{
    last_det = CUEMU_DET_NONE;
    hits = 0;
}

static void vreport(enum cuemu_detector det, const char *fmt, va_list ap)
{
    fputs("cuemu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    last_det = det;
    hits++;
}

void cuemu_report(enum cuemu_detector det, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(det, fmt, ap);
    va_end(ap);
}

void cuemu_detect(enum cuemu_detector det, const char *fmt, ...)
{
    if (mode < 0) {
        const char *e = getenv("CUEMU_DETECT");
        mode = e && !strcmp(e, "error") ? CUEMU_DETECT_ERROR : CUEMU_DETECT_ABORT;
    }
    va_list ap;
    va_start(ap, fmt);
    vreport(det, fmt, ap);
    va_end(ap);
    if (mode == CUEMU_DETECT_ABORT)
        abort();
}
