/* Asynchronous copies (tests/cuemu/pipeline.h): a correct 3-stage pipeline with zero-fill
 * gives exactly the sums of a plain loop; reading a stage before its wait reads the
 * poison (NaN) the copy leaves until its wait (in the threads the schedule runs first); a copy never waited for, copies reaching
 * a barrier uncommitted, a misaligned source, a bad size, a destination in device memory,
 * a destination still in flight and a zero-fill copy whose address lies outside the
 * allocation each make the async-copy detector fail the launch (at the next
 * synchronisation when faults are deferred). */
#include <math.h>
#include <stdio.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_pipeline.h"

enum { THREADS = 64, STEPS = 7 };

static float *d_in, *d_out;

static bool fires(const char *what, enum kp_mode mode)
{
    cuemu_clear_detector();
    cudaError_t e = kp_pipeline(d_in, d_out, STEPS, mode);
    enum cuemu_detector got = cuemu_last_detector();
    if (e != cudaErrorLaunchFailure || got != CUEMU_DET_ASYNC_COPY)
        fprintf(stderr, "  %s: launch returned %s, detector %d\n", what, cudaGetErrorName(e), got);
    return check_true(what, e == cudaErrorLaunchFailure && got == CUEMU_DET_ASYNC_COPY);
}

int main(void)
{
    static float in[STEPS * THREADS * 4];
    float out[THREADS * 4], want[THREADS];
    for (int i = 0; i < STEPS * THREADS * 4; i++)
        in[i] = (float)(i % 97) * 0.25f + 1.0f;
    for (int t = 0; t < THREADS; t++) {
        const int u = (t + 1) % THREADS;
        double s = 0.0;
        for (int st = 0; st < STEPS; st++)
            if (!(st % 2 == 1 && u % 4 == 0))
                for (int j = 0; j < 4; j++)
                    s += in[(st * THREADS + u) * 4 + j];
        want[t] = (float)s; /* sums of quarter-integers below 2^20: exact in float */
    }
    d_in = emu_upload(in, sizeof in);
    d_out = emu_alloc(sizeof out);
    cuemu_set_detect_mode(CUEMU_DETECT_ERROR);

    bool ok = true;
    cuemu_clear_detector();
    ok &= check_true("correct pipeline runs", kp_pipeline(d_in, d_out, STEPS, KP_CORRECT) == cudaSuccess &&
                                                  cuemu_detector_hits() == 0);
    emu_download(out, d_out, THREADS * sizeof(float));
    int exact = 0;
    for (int t = 0; t < THREADS; t++)
        exact += out[t] == want[t];
    ok &= check_true("correct pipeline: exact sums with zero-fill", exact == THREADS);

    ok &= check_true("reading before the wait runs", kp_pipeline(d_in, d_out, STEPS, KP_READ_EARLY) == cudaSuccess);
    emu_download(out, d_out, THREADS * sizeof(float));
    int nan = 0;
    for (int t = 0; t < THREADS; t++)
        nan += isnan(out[t]);
    /* Which reads precede the neighbour's wait depends on the schedule, as on a GPU. */
    ok &= check_true("reading before the wait reads poison (NaN)", nan >= 1);

    ok &= fires("a copy never waited for", KP_NEVER_WAITED);
    ok &= fires("copies uncommitted at a barrier", KP_UNCOMMITTED);
    ok &= fires("misaligned source", KP_MISALIGNED);
    ok &= fires("12-byte copy", KP_BAD_SIZE);
    ok &= fires("destination in device memory", KP_DEVICE_DST);
    ok &= fires("destination still in flight", KP_DST_IN_FLIGHT);
    ok &= fires("zero-fill copy from outside the allocation", KP_ZFILL_OUTSIDE);

    /* Deferred faults: the launch succeeds, the next synchronisation reports the hit. */
    cuemu_set_fault_mode(CUEMU_FAULTS_DEFERRED);
    cuemu_clear_detector();
    ok &= check_true("deferred: the faulting launch returns success",
                     kp_pipeline(d_in, d_out, STEPS, KP_BAD_SIZE) == cudaSuccess && cuemu_detector_hits() == 1);
    ok &= check_true("deferred: the next synchronisation returns the fault",
                     cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    cuemu_clear_fault();
    cuemu_set_fault_mode(CUEMU_FAULTS_IMMEDIATE);

    cuemu_clear_detector();
    ok &= check_true("still working after detector hits",
                     kp_pipeline(d_in, d_out, STEPS, KP_CORRECT) == cudaSuccess && cuemu_detector_hits() == 0);
    emu_free(d_in);
    emu_free(d_out);
    return test_exit(ok);
}
