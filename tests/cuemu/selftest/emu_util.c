#include "tests/cuemu/selftest/emu_util.h"

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

static void must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "test setup: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

void *emu_alloc(size_t bytes)
{
    void *p = NULL;
    must(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

void *emu_upload(const void *host, size_t bytes)
{
    void *p = emu_alloc(bytes);
    must(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    return p;
}

void emu_download(void *host, const void *dev, size_t bytes)
{
    must(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

void emu_free(void *dev)
{
    must(cudaFree(dev), "cudaFree");
}
