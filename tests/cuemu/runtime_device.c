/* The emulated device: one GPU of the configured target (sm_80 or sm_90). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"

/* Limits from the CUDA Programming Guide's compute-capability table and the A100/H100
 * SXM data sheets: opt-in shared memory per block 163/227 KiB, per SM 164/228 KiB. */
static const struct cuemu_target targets[] = {
    {80, 163 * 1024, 164 * 1024, 108, 40 << 20, "cuemu emulated sm_80 (A100-like)"},
    {90, 227 * 1024, 228 * 1024, 132, 50 << 20, "cuemu emulated sm_90 (H100-like)"},
};
static const struct cuemu_target *target;

int cuemu_set_target(int sm)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (targets[i].sm == sm) {
            target = &targets[i];
            return 0;
        }
    return -1;
}

const struct cuemu_target *cuemu_target(void)
{
    if (!target) {
        const char *e = getenv("CUEMU_TARGET");
        if (!e || cuemu_set_target(atoi(e + (strncmp(e, "sm_", 3) ? 0 : 3))) != 0)
            target = &targets[0];
    }
    return target;
}

size_t cuemu_parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    return end == s || *end ? 0 : (size_t)v;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return cuemu_set_error(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : cuemu_set_error(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return cuemu_set_error(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

/* Kernels run synchronously, so there is never outstanding work; only a deferred fault
 * (runtime_fault.c) to deliver. */
cudaError_t cudaDeviceSynchronize(void)
{
    cuemu_streams_done();
    return cuemu_fault_sync();
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (!p)
        return cuemu_set_error(cudaErrorInvalidValue);
    if (device != 0)
        return cuemu_set_error(cudaErrorInvalidDevice);
    const struct cuemu_target *t = cuemu_target();
    size_t cap = cuemu_mem_capacity();
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", t->name);
    p->totalGlobalMem = cap ? cap : (size_t)80 << 30;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = t->smem_optin;
    p->sharedMemPerMultiprocessor = t->smem_per_sm;
    p->reservedSharedMemPerBlock = 1024;
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->memPitch = (size_t)1 << 31;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7FFFFFFF;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 64 * 1024;
    p->major = t->sm / 10;
    p->minor = t->sm % 10;
    p->multiProcessorCount = t->sms;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->l2CacheSize = t->l2_bytes;
    p->memoryBusWidth = 5120;
    p->concurrentKernels = 1;
    p->unifiedAddressing = 1;
    p->asyncEngineCount = 2;
    p->cooperativeLaunch = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    struct cudaDeviceProp p;
    if (!value)
        return cuemu_set_error(cudaErrorInvalidValue);
    cudaError_t err = cudaGetDeviceProperties(&p, device);
    if (err != cudaSuccess)
        return err;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
        *value = (int)p.sharedMemPerMultiprocessor;
        break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    default: return cuemu_set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}
