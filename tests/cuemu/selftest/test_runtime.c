/* The runtime API shim: the device memory registry (exact sizes, poison, high water,
 * capacity, freeze), range-checked copies and memsets, errors, streams, events, the
 * emulated device's properties, the launcher's configuration checks, kernel faults
 * (immediate or deferred, planted) and the stream-order detector. */
#include <stdint.h>
#include <string.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/k_block.h"

#define CALL_IS(expr, want) check_true(#expr, (expr) == (want))

static bool test_memory(void)
{
    bool ok = true;
    size_t base = cuemu_mem_in_use(), live = cuemu_mem_live_allocations();
    unsigned char *a = NULL, *b = NULL, host[300];
    ok &= CALL_IS(cudaMalloc((void **)&a, 300), cudaSuccess);
    ok &= CALL_IS(cudaMalloc((void **)&b, 100), cudaSuccess);
    ok &= check_true("pointers are 256-byte aligned", (uintptr_t)a % 256 == 0 && (uintptr_t)b % 256 == 0);
    ok &= check_true("in use counts exact sizes", cuemu_mem_in_use() == base + 400);
    ok &= check_true("live allocations", cuemu_mem_live_allocations() == live + 2);
    ok &= check_true("high water", cuemu_mem_high_water() >= base + 400);
    ok &= CALL_IS(cudaMemcpy(host, a, 300, cudaMemcpyDeviceToHost), cudaSuccess);
    int poisoned = 1;
    for (int i = 0; i < 300; i++)
        poisoned &= host[i] == 0xFF;
    ok &= check_true("new allocations read as 0xFF", poisoned);

    /* Range checks: one byte past the end, a host pointer where device memory is
     * expected (swapped arguments), and an unknown direction. */
    ok &= CALL_IS(cudaMemcpy(a, host, 301, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaGetLastError(), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaGetLastError(), cudaSuccess);
    ok &= CALL_IS(cudaMemcpy(a + 250, host, 51, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaMemcpy(host, a, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaMemcpy(a, b, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaMemcpy(a, b, 101, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaMemcpy(a, host, 10, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    ok &= CALL_IS(cudaMemset(b + 50, 0, 51), cudaErrorInvalidValue);

    /* Valid copies and memsets, including inferred directions. */
    for (int i = 0; i < 300; i++)
        host[i] = (unsigned char)i;
    ok &= CALL_IS(cudaMemcpy(a, host, 300, cudaMemcpyHostToDevice), cudaSuccess);
    ok &= CALL_IS(cudaMemcpy(b, a + 200, 100, cudaMemcpyDefault), cudaSuccess);
    ok &= CALL_IS(cudaMemset(b + 10, 7, 5), cudaSuccess);
    unsigned char back[100];
    ok &= CALL_IS(cudaMemcpy(back, b, 100, cudaMemcpyDefault), cudaSuccess);
    int same = 1;
    for (int i = 0; i < 100; i++)
        same &= back[i] == (i >= 10 && i < 15 ? 7 : (unsigned char)(200 + i));
    ok &= check_true("copy and memset contents", same);

    /* Frees: interior pointer, double free, NULL. */
    ok &= CALL_IS(cudaFree(a + 1), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaFree(a), cudaSuccess);
    ok &= CALL_IS(cudaFree(a), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaFree(NULL), cudaSuccess);
    ok &= CALL_IS(cudaFree(b), cudaSuccess);
    ok &= check_true("in use back to base", cuemu_mem_in_use() == base);
    ok &= check_true("high water kept", cuemu_mem_high_water() >= base + 400);
    cuemu_mem_reset_high_water();
    ok &= check_true("high water reset", cuemu_mem_high_water() == base);

    void *z = (void *)1;
    ok &= CALL_IS(cudaMalloc(&z, 0), cudaSuccess);
    ok &= check_true("cudaMalloc(0) gives NULL", z == NULL);
    (void)cudaGetLastError();
    return ok;
}

static bool test_capacity_and_freeze(void)
{
    bool ok = true;
    size_t base = cuemu_mem_in_use(), fr, total;
    void *p = NULL, *q = NULL;
    cuemu_mem_set_capacity(base + 1000);
    ok &= CALL_IS(cudaMemGetInfo(&fr, &total), cudaSuccess);
    ok &= check_true("cudaMemGetInfo reports the capacity", total == base + 1000 && fr == 1000);
    ok &= CALL_IS(cudaMalloc(&p, 1001), cudaErrorMemoryAllocation);
    ok &= CALL_IS(cudaGetLastError(), cudaErrorMemoryAllocation);
    ok &= CALL_IS(cudaMalloc(&p, 600), cudaSuccess);
    ok &= CALL_IS(cudaMalloc(&q, 401), cudaErrorMemoryAllocation);
    ok &= CALL_IS(cudaMalloc(&q, 400), cudaSuccess);
    ok &= CALL_IS(cudaFree(q), cudaSuccess);
    cuemu_mem_set_capacity(0);
    cuemu_mem_freeze(1);
    ok &= CALL_IS(cudaMalloc(&q, 16), cudaErrorNotPermitted);
    ok &= CALL_IS(cudaMallocHost(&q, 16), cudaErrorNotPermitted);
    cuemu_mem_freeze(0);
    ok &= CALL_IS(cudaMalloc(&q, 16), cudaSuccess);
    ok &= CALL_IS(cudaFree(q), cudaSuccess);
    ok &= CALL_IS(cudaFree(p), cudaSuccess);
    ok &= CALL_IS(cudaMallocHost(&q, 64), cudaSuccess);
    ok &= CALL_IS(cudaFree(q), cudaErrorInvalidValue); /* host memory is not cudaFree'd */
    ok &= CALL_IS(cudaFreeHost(q), cudaSuccess);
    (void)cudaGetLastError();
    return ok;
}

static bool test_errors(void)
{
    bool ok = true;
    ok &= check_true("error string", !strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument"));
    ok &= check_true("error name", !strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation"));
    ok &= check_true("success string", !strcmp(cudaGetErrorString(cudaSuccess), "no error"));
    ok &= CALL_IS(cudaSetDevice(1), cudaErrorInvalidDevice);
    ok &= CALL_IS(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    ok &= CALL_IS(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    ok &= CALL_IS(cudaGetLastError(), cudaErrorInvalidDevice);
    ok &= CALL_IS(cudaGetLastError(), cudaSuccess);
    int n = 0, dev = -1;
    ok &= CALL_IS(cudaGetDeviceCount(&n), cudaSuccess);
    ok &= CALL_IS(cudaGetDevice(&dev), cudaSuccess);
    ok &= check_true("one device, device 0", n == 1 && dev == 0);
    return ok;
}

static bool test_streams_events(void)
{
    bool ok = true;
    cudaStream_t s;
    cudaEvent_t e0, e1, never;
    int bogus = 0;
    ok &= CALL_IS(cudaStreamCreate(&s), cudaSuccess);
    ok &= CALL_IS(cudaEventCreate(&e0), cudaSuccess);
    ok &= CALL_IS(cudaEventCreate(&e1), cudaSuccess);
    ok &= CALL_IS(cudaEventCreate(&never), cudaSuccess);
    ok &= CALL_IS(cudaEventRecord(e0, s), cudaSuccess);
    void *p;
    ok &= CALL_IS(cudaMalloc(&p, 1 << 20), cudaSuccess);
    ok &= CALL_IS(cudaMemsetAsync(p, 1, 1 << 20, s), cudaSuccess);
    ok &= CALL_IS(cudaMemsetAsync(p, 1, 16, (cudaStream_t)(void *)&bogus), cudaErrorInvalidResourceHandle);
    ok &= CALL_IS(cudaEventRecord(e1, s), cudaSuccess);
    ok &= CALL_IS(cudaStreamSynchronize(s), cudaSuccess);
    ok &= CALL_IS(cudaEventSynchronize(e1), cudaSuccess);
    float ms = -1.0f;
    ok &= CALL_IS(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
    ok &= check_true("elapsed time is non-negative", ms >= 0.0f && ms < 10000.0f);
    ok &= CALL_IS(cudaEventElapsedTime(&ms, e0, never), cudaErrorInvalidResourceHandle);
    ok &= CALL_IS(cudaStreamWaitEvent(s, e1, 0), cudaSuccess);
    ok &= CALL_IS(cudaStreamSynchronize(0), cudaSuccess);
    ok &= CALL_IS(cudaDeviceSynchronize(), cudaSuccess);
    ok &= CALL_IS(cudaEventDestroy(e0), cudaSuccess);
    ok &= CALL_IS(cudaEventDestroy(e1), cudaSuccess);
    ok &= CALL_IS(cudaEventDestroy(never), cudaSuccess);
    ok &= CALL_IS(cudaStreamDestroy(s), cudaSuccess);
    ok &= CALL_IS(cudaFree(p), cudaSuccess);
    (void)cudaGetLastError();
    return ok;
}

static bool test_device_props(void)
{
    bool ok = true;
    struct cudaDeviceProp p;
    int v = 0;
    ok &= check_true("set target 80", cuemu_set_target(80) == 0);
    ok &= CALL_IS(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    ok &= check_true("sm_80 properties", p.major == 8 && p.minor == 0 && p.warpSize == 32 &&
                                             p.maxThreadsPerBlock == 1024 &&
                                             p.sharedMemPerBlock == 48 * 1024 &&
                                             p.sharedMemPerBlockOptin == 163 * 1024);
    ok &= CALL_IS(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
    ok &= check_true("optin attribute", v == 163 * 1024);
    ok &= check_true("set target 90", cuemu_set_target(90) == 0);
    ok &= CALL_IS(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
    ok &= check_true("sm_90 major", v == 9);
    ok &= CALL_IS(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    ok &= check_true("sm_90 optin", p.sharedMemPerBlockOptin == 227 * 1024 && p.multiProcessorCount == 132);
    ok &= check_true("unknown target refused", cuemu_set_target(75) != 0);
    ok &= CALL_IS(cudaGetDeviceProperties(&p, 3), cudaErrorInvalidDevice);
    cuemu_set_target(80);
    (void)cudaGetLastError();
    return ok;
}

/* The launcher refuses what the driver refuses, and the kernel then does not run. */
static bool test_launch_config(void)
{
    bool ok = true;
    int *flag, val;
    cudaStream_t s;
    ok &= CALL_IS(cudaMalloc((void **)&flag, sizeof(int)), cudaSuccess);
    ok &= CALL_IS(cudaStreamCreate(&s), cudaSuccess);
    int bogus = 0;
    struct {
        const char *what;
        dim3 g, b;
        size_t smem;
        cudaStream_t s;
        cudaError_t want;
    } cases[] = {
        {"1025 threads", {1, 1, 1}, {1025, 1, 1}, 0, 0, cudaErrorInvalidConfiguration},
        {"32x32x2 threads", {1, 1, 1}, {32, 32, 2}, 0, 0, cudaErrorInvalidConfiguration},
        {"block z 65", {1, 1, 1}, {1, 1, 65}, 0, 0, cudaErrorInvalidConfiguration},
        {"grid y 65536", {1, 65536, 1}, {32, 1, 1}, 0, 0, cudaErrorInvalidConfiguration},
        {"grid z 0", {1, 1, 0}, {32, 1, 1}, 0, 0, cudaErrorInvalidConfiguration},
        {"48 KiB + 1 dynamic smem without opt-in", {1, 1, 1}, {32, 1, 1}, 48 * 1024 + 1, 0, cudaErrorInvalidValue},
        {"bad stream", {1, 1, 1}, {32, 1, 1}, 0, (cudaStream_t)(void *)&bogus, cudaErrorInvalidResourceHandle},
        {"48 KiB dynamic smem", {1, 1, 1}, {32, 1, 1}, 48 * 1024, 0, cudaSuccess},
        {"1024 threads, 3D grid, stream", {2, 2, 2}, {16, 8, 8}, 0, s, cudaSuccess},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ok &= CALL_IS(cudaMemset(flag, 0xFF, sizeof(int)), cudaSuccess);
        cudaError_t e = kb_config(flag, cases[i].g, cases[i].b, cases[i].smem, cases[i].s);
        ok &= CALL_IS(cudaMemcpy(&val, flag, sizeof val, cudaMemcpyDeviceToHost), cudaSuccess);
        ok &= check_true(cases[i].what, e == cases[i].want && val == (e == cudaSuccess ? 1 : -1));
    }
    ok &= CALL_IS(kb_config_optin(300 * 1024), cudaErrorInvalidValue); /* above sm_80's 163 KiB */
    ok &= CALL_IS(cudaGetLastError(), cudaErrorInvalidValue); /* sticky until read, as in CUDA */
    ok &= CALL_IS(kb_config_optin(100 * 1024), cudaSuccess);
    ok &= CALL_IS(kb_config(flag, (dim3){1, 1, 1}, (dim3){32, 1, 1}, 100 * 1024, 0), cudaSuccess);
    ok &= CALL_IS(kb_config(flag, (dim3){1, 1, 1}, (dim3){32, 1, 1}, 100 * 1024 + 1, 0), cudaErrorInvalidValue);
    ok &= CALL_IS(cudaStreamDestroy(s), cudaSuccess);
    ok &= CALL_IS(cudaFree(flag), cudaSuccess);
    return ok;
}

static bool test_symbols(void)
{
    float table[16], out[16], back[16], want[16], *d_out;
    for (int i = 0; i < 16; i++) {
        table[i] = (float)i - 3.5f;
        want[i] = 2.0f * table[i];
    }
    bool ok = CALL_IS(cudaMalloc((void **)&d_out, sizeof out), cudaSuccess);
    ok &= CALL_IS(kb_constant_table(table, d_out, back), cudaSuccess);
    ok &= CALL_IS(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
    ok &= check_close("kernel reads the __constant__ table", out, want, 16, 0, 0);
    ok &= check_close("cudaMemcpyFromSymbol", back, table, 16, 0, 0);
    ok &= CALL_IS(cudaFree(d_out), cudaSuccess);
    return ok;
}

/* A planted fault (cuemu_inject_fault, as CUEMU_INJECT_FAULT): at its launch by default;
 * deferred, held to the next synchronising call, then sticky until cleared. */
static bool test_faults(void)
{
    int *flag = NULL, val = 0;
    cudaStream_t s;
    const dim3 one = {1, 1, 1}, warp = {32, 1, 1};
    bool ok = CALL_IS(cudaMalloc((void **)&flag, sizeof(int)), cudaSuccess);
    ok &= CALL_IS(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cuemu_inject_fault("config_kernel");
    ok &= CALL_IS(kb_config(flag, one, warp, 0, s), cudaErrorIllegalAddress);
    ok &= CALL_IS(cudaStreamSynchronize(s), cudaSuccess);
    ok &= CALL_IS(cudaGetLastError(), cudaSuccess); /* read by kb_config: not sticky */

    cuemu_set_fault_mode(CUEMU_FAULTS_DEFERRED);
    ok &= CALL_IS(cudaMemsetAsync(flag, 0, sizeof(int), s), cudaSuccess);
    ok &= CALL_IS(kb_config(flag, one, warp, 0, s), cudaSuccess); /* held */
    cuemu_inject_fault(NULL);
    ok &= CALL_IS(kb_config(flag, one, warp, 0, s), cudaSuccess); /* does not run */
    ok &= CALL_IS(cudaStreamSynchronize(s), cudaErrorIllegalAddress);
    ok &= CALL_IS(cudaGetLastError(), cudaErrorIllegalAddress);
    ok &= CALL_IS(cudaGetLastError(), cudaErrorIllegalAddress); /* sticky */
    ok &= CALL_IS(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    ok &= CALL_IS(kb_config(flag, one, warp, 0, s), cudaErrorIllegalAddress);
    ok &= CALL_IS(cudaMemcpy(&val, flag, sizeof val, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
    cuemu_clear_fault();
    ok &= CALL_IS(cudaGetLastError(), cudaSuccess);
    ok &= CALL_IS(cudaMemcpy(&val, flag, sizeof val, cudaMemcpyDeviceToHost), cudaSuccess);
    ok &= check_true("no kernel ran while the fault was held", val == 0);
    ok &= CALL_IS(kb_config(flag, one, warp, 0, s), cudaSuccess);
    ok &= CALL_IS(cudaStreamSynchronize(s), cudaSuccess);
    ok &= CALL_IS(cudaMemcpy(&val, flag, sizeof val, cudaMemcpyDeviceToHost), cudaSuccess);
    ok &= check_true("kernels run again after cuemu_clear_fault", val == 1);
    cuemu_set_fault_mode(CUEMU_FAULTS_IMMEDIATE);
    ok &= CALL_IS(cudaStreamDestroy(s), cudaSuccess);
    ok &= CALL_IS(cudaFree(flag), cudaSuccess);
    return ok;
}

/* Work on a non-blocking stream while a legacy-stream transfer to device memory that may
 * not have landed (pageable or device source, cudaMemset) is unsynchronised, and a
 * download while work on a non-blocking stream is. */
static bool stream_order_hit(const char *what, bool want, int *flag, cudaStream_t s)
{
    cuemu_clear_detector();
    kb_config(flag, (dim3){1, 1, 1}, (dim3){32, 1, 1}, 0, s);
    const bool hit = cuemu_last_detector() == CUEMU_DET_STREAM_ORDER;
    cudaDeviceSynchronize();
    return check_true(what, hit == want);
}

static bool test_stream_order(void)
{
    int *flag = NULL, *pinned = NULL, host = 0;
    cudaStream_t nb, blocking;
    bool ok = CALL_IS(cudaMalloc((void **)&flag, sizeof(int)), cudaSuccess);
    ok &= CALL_IS(cudaMallocHost((void **)&pinned, sizeof(int)), cudaSuccess);
    ok &= CALL_IS(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking), cudaSuccess);
    ok &= CALL_IS(cudaStreamCreate(&blocking), cudaSuccess);
    cuemu_set_detect_mode(CUEMU_DETECT_ERROR);
    cudaMemcpy(flag, &host, sizeof host, cudaMemcpyHostToDevice);
    ok &= stream_order_hit("pageable upload, then a non-blocking stream: reported", true, flag, nb);
    cudaMemcpy(flag, &host, sizeof host, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    ok &= stream_order_hit("pageable upload, synchronised: quiet", false, flag, nb);
    cudaMemcpy(flag, &host, sizeof host, cudaMemcpyHostToDevice);
    ok &= stream_order_hit("pageable upload, then a blocking stream: quiet", false, flag, blocking);
    cudaMemcpy(flag, pinned, sizeof host, cudaMemcpyHostToDevice);
    ok &= stream_order_hit("pinned upload (complete on return): quiet", false, flag, nb);
    cudaMemset(flag, 0, sizeof host);
    ok &= stream_order_hit("cudaMemset, then a non-blocking stream: reported", true, flag, nb);
    cudaMemcpyAsync(flag, &host, sizeof host, cudaMemcpyHostToDevice, nb);
    ok &= stream_order_hit("upload on the same stream: quiet", false, flag, nb);
    cudaMemset(flag, 0, sizeof host);
    cudaMemcpy(&host, flag, sizeof host, cudaMemcpyDeviceToHost);
    ok &= stream_order_hit("a download waits for the legacy stream: quiet", false, flag, nb);

    /* the other direction: a download does not wait for a non-blocking stream */
    cudaEvent_t ev;
    ok &= CALL_IS(cudaEventCreate(&ev), cudaSuccess);
    const struct {
        const char *what;
        int sync; /* 0 none, 1 stream, 2 event recorded after the work, 3 event before it */
        bool want;
    } reads[] = {{"download after non-blocking work: reported", 0, true},
                 {"download after cudaStreamSynchronize: quiet", 1, false},
                 {"download after an event synchronisation: quiet", 2, false},
                 {"download after an event recorded before the work: reported", 3, true}};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        cuemu_clear_detector();
        if (reads[i].sync == 3) cudaEventRecord(ev, nb);
        kb_config(flag, (dim3){1, 1, 1}, (dim3){32, 1, 1}, 0, nb);
        if (reads[i].sync == 2) cudaEventRecord(ev, nb);
        if (reads[i].sync == 1) cudaStreamSynchronize(nb);
        if (reads[i].sync >= 2) cudaEventSynchronize(ev);
        cudaMemcpy(&host, flag, sizeof host, cudaMemcpyDeviceToHost);
        ok &= check_true(reads[i].what, (cuemu_last_detector() == CUEMU_DET_STREAM_ORDER) == reads[i].want);
        cudaDeviceSynchronize();
    }
    ok &= CALL_IS(cudaEventDestroy(ev), cudaSuccess);
    cuemu_set_detect_mode(CUEMU_DETECT_ABORT);
    cuemu_clear_detector();
    ok &= CALL_IS(cudaStreamDestroy(nb), cudaSuccess);
    ok &= CALL_IS(cudaStreamDestroy(blocking), cudaSuccess);
    ok &= CALL_IS(cudaFreeHost(pinned), cudaSuccess);
    ok &= CALL_IS(cudaFree(flag), cudaSuccess);
    return ok;
}

/* Two pinned buffers copied up in turn, as pack_input does: quiet while each is refilled
 * only after the event behind its last copy (or its stream) was waited for; reported when
 * one is copied out again without that wait. */
static bool test_pinned_reuse(void)
{
    int *dev = NULL, *pin[2] = {NULL, NULL};
    cudaStream_t s;
    cudaEvent_t read[2];
    bool ok = CALL_IS(cudaMalloc((void **)&dev, sizeof(int)), cudaSuccess);
    for (int b = 0; b < 2; b++) {
        ok &= CALL_IS(cudaMallocHost((void **)&pin[b], sizeof(int)), cudaSuccess);
        ok &= CALL_IS(cudaEventCreateWithFlags(&read[b], cudaEventDisableTiming), cudaSuccess);
    }
    ok &= CALL_IS(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cuemu_set_detect_mode(CUEMU_DETECT_ERROR);
    cuemu_clear_detector();
    for (int i = 0; i < 4; i++) {
        cudaEventSynchronize(read[i % 2]);
        cudaMemcpyAsync(dev, pin[i % 2], sizeof(int), cudaMemcpyHostToDevice, s);
        cudaEventRecord(read[i % 2], s);
    }
    ok &= check_true("two pinned buffers in turn, each after its event: quiet", cuemu_last_detector() == CUEMU_DET_NONE);
    cudaMemcpyAsync(dev, pin[0], sizeof(int), cudaMemcpyHostToDevice, s);
    ok &= check_true("a pinned buffer copied out again before its last copy was waited for: reported",
                     cuemu_last_detector() == CUEMU_DET_PINNED_REUSE);
    cuemu_clear_detector();
    cudaStreamSynchronize(s);
    cudaMemcpyAsync(dev, pin[0], sizeof(int), cudaMemcpyHostToDevice, s);
    ok &= check_true("after the stream was synchronised: quiet", cuemu_last_detector() == CUEMU_DET_NONE);
    cudaStreamSynchronize(s);
    cuemu_set_detect_mode(CUEMU_DETECT_ABORT);
    cuemu_clear_detector();
    ok &= CALL_IS(cudaStreamDestroy(s), cudaSuccess);
    for (int b = 0; b < 2; b++) {
        ok &= CALL_IS(cudaEventDestroy(read[b]), cudaSuccess);
        ok &= CALL_IS(cudaFreeHost(pin[b]), cudaSuccess);
    }
    ok &= CALL_IS(cudaFree(dev), cudaSuccess);
    return ok;
}

/* Run with CUEMU_DEVICE_MEM=64M CUEMU_TARGET=sm_90: the environment configures the device. */
static bool test_environment(void)
{
    size_t fr, total;
    void *p = NULL;
    struct cudaDeviceProp prop;
    bool ok = CALL_IS(cudaMemGetInfo(&fr, &total), cudaSuccess);
    ok &= check_true("CUEMU_DEVICE_MEM=64M sets the capacity", total == (size_t)64 << 20);
    ok &= CALL_IS(cudaMalloc(&p, (size_t)65 << 20), cudaErrorMemoryAllocation);
    ok &= CALL_IS(cudaMalloc(&p, (size_t)63 << 20), cudaSuccess);
    ok &= CALL_IS(cudaFree(p), cudaSuccess);
    ok &= CALL_IS(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    ok &= check_true("CUEMU_TARGET=sm_90 sets the device", prop.major == 9 && prop.totalGlobalMem == total);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "environment"))
        return test_exit(test_environment());
    bool ok = true;
    ok &= test_memory();
    ok &= test_capacity_and_freeze();
    ok &= test_errors();
    ok &= test_streams_events();
    ok &= test_device_props();
    ok &= test_launch_config();
    ok &= test_symbols();
    ok &= test_faults();
    ok &= test_stream_order();
    ok &= test_pinned_reuse();
    ok &= check_true("no device memory left", cuemu_mem_live_allocations() == 0);
    return test_exit(ok);
}
