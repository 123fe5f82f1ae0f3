/* The emulator's own detectors: each broken kernel must make its detector fire (the
 * launch fails with cudaErrorLaunchFailure and the detector is named), its correct twin
 * must stay quiet, and the emulator must keep working afterwards. Also: a missing
 * __syncthreads shows as schedule-dependent results, uninitialised shared memory as
 * NaN, wmma misuse as kernel-check reports, and the default mode aborts. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cuemu/cuemu_api.h"
#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_detect.h"
#include "tests/cuemu/selftest/k_wmma.h"

static int *d_out;

/* Runs a broken launch; true when it failed with the expected detector. */
static bool fires(const char *what, cudaError_t (*launch)(void), enum cuemu_detector want)
{
    cuemu_clear_detector();
    cudaError_t e = launch();
    enum cuemu_detector got = cuemu_last_detector();
    if (e != cudaErrorLaunchFailure || got != want)
        fprintf(stderr, "  %s: launch returned %s, detector %d (want %d)\n", what, cudaGetErrorName(e), got, want);
    return check_true(what, e == cudaErrorLaunchFailure && got == want);
}

/* Runs a correct launch; true when it succeeded with no detector hit. */
static bool quiet(const char *what, cudaError_t (*launch)(void))
{
    cuemu_clear_detector();
    cudaError_t e = launch();
    return check_true(what, e == cudaSuccess && cuemu_detector_hits() == 0);
}

static cudaError_t barrier_divergent(void) { return kd_barrier(d_out, 1); }
static cudaError_t barrier_uniform(void) { return kd_barrier(d_out, 0); }
static cudaError_t exited_broken(void) { return kd_exited_lane(d_out, 1); }
static cudaError_t exited_correct(void) { return kd_exited_lane(d_out, 0); }
static cudaError_t mask_mismatch(void) { return kd_mask_mismatch(d_out); }
static cudaError_t op_mismatch(void) { return kd_op_mismatch(d_out); }
static cudaError_t not_in_mask(void) { return kd_not_in_mask(d_out); }
static cudaError_t deadlock(void) { return kd_deadlock(d_out); }

static bool test_scheduler_detectors(void)
{
    bool ok = true;
    cuemu_set_detect_mode(CUEMU_DETECT_ERROR);
    ok &= fires("threads at different barriers", barrier_divergent, CUEMU_DET_BARRIER_DIVERGENCE);
    ok &= quiet("threads at one barrier", barrier_uniform);
    ok &= fires("shuffle naming exited lanes", exited_broken, CUEMU_DET_WARP_EXITED_LANE);
    ok &= quiet("shuffle over the live lanes", exited_correct);
    ok &= fires("lanes with different masks", mask_mismatch, CUEMU_DET_WARP_MISMATCH);
    ok &= fires("lanes at different warp ops", op_mismatch, CUEMU_DET_WARP_MISMATCH);
    ok &= fires("lane outside its own mask", not_in_mask, CUEMU_DET_WARP_BAD_MASK);
    ok &= fires("deadlock between __syncwarp and __syncthreads", deadlock, CUEMU_DET_DEADLOCK);
    ok &= quiet("still working after detector hits", barrier_uniform);
    return ok;
}

/* A missing barrier: the result depends on the schedule; with the barrier it does not. */
static bool test_missing_barrier(void)
{
    enum { N = 64 };
    float in[N], fwd[N], rev[N], want[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)i + 0.5f;
    for (int i = 0; i < N; i++)
        want[i] = in[(i + 1) % N];
    float *din = emu_upload(in, sizeof in), *dres = emu_alloc(sizeof fwd);
    bool ok = true;
    for (int barrier = 1; barrier >= 0; barrier--) {
        cuemu_set_schedule(CUEMU_SCHED_FORWARD, 0);
        ok &= check_true("neighbour forward", kd_neighbour(din, dres, N, barrier) == cudaSuccess);
        emu_download(fwd, dres, sizeof fwd);
        cuemu_set_schedule(CUEMU_SCHED_REVERSE, 0);
        ok &= check_true("neighbour reverse", kd_neighbour(din, dres, N, barrier) == cudaSuccess);
        emu_download(rev, dres, sizeof rev);
        int differ = memcmp(fwd, rev, sizeof fwd) != 0;
        if (barrier) {
            ok &= check_close("with the barrier, forward schedule", fwd, want, N, 0, 0);
            ok &= check_close("with the barrier, reverse schedule", rev, want, N, 0, 0);
        } else {
            ok &= check_true("without the barrier, forward and reverse schedules disagree", differ);
        }
    }
    cuemu_set_schedule(CUEMU_SCHED_FORWARD, 0);
    emu_free(din), emu_free(dres);
    return ok;
}

/* Unwritten shared memory is 0xFF poison: a sum over it is NaN. */
static bool test_uninit_shared(void)
{
    enum { N = 200 };
    float in[N], sum = 0.0f, got;
    for (int i = 0; i < N; i++) {
        in[i] = 1.0f;
        sum += in[i];
    }
    float *din = emu_upload(in, sizeof in), *dres = emu_alloc(sizeof got);
    bool ok = check_true("uninit launch", kd_uninit_sum(din, dres, N, 0) == cudaSuccess);
    emu_download(&got, dres, sizeof got);
    ok &= check_true("a sum over unwritten shared memory is NaN", isnan(got));
    ok &= check_true("zero-filled launch", kd_uninit_sum(din, dres, N, 1) == cudaSuccess);
    emu_download(&got, dres, sizeof got);
    ok &= check_close("a sum over zero-filled shared memory", &got, &sum, 1, 0, 0);
    emu_free(din), emu_free(dres);
    return ok;
}

static bool test_wmma_checks(void)
{
    float *c = emu_alloc(300 * sizeof(float)), *res = emu_alloc(256 * sizeof(float));
    void *a = emu_alloc(256 * 2), *b = emu_alloc(256 * 2);
    cudaMemset(a, 0, 256 * 2);
    cudaMemset(b, 0, 256 * 2);
    cuemu_set_detect_mode(CUEMU_DETECT_ERROR);
    cuemu_clear_detector();
    bool ok = check_true("wmma load from a misaligned pointer",
                         kwm_misaligned_load(c, res) == cudaErrorLaunchFailure &&
                         cuemu_last_detector() == CUEMU_DET_KERNEL_CHECK);
    cuemu_clear_detector();
    ok &= check_true("wmma fragment changed by position",
                     kwm_poke_fragment(a, b, res) == cudaErrorLaunchFailure &&
                     cuemu_last_detector() == CUEMU_DET_KERNEL_CHECK);
    emu_free(c), emu_free(res), emu_free(a), emu_free(b);
    return ok;
}

/* In the default mode a detector hit aborts the process (here, a child). */
static bool test_abort_mode(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        cuemu_set_detect_mode(CUEMU_DETECT_ABORT);
        kd_barrier(d_out, 1);
        _exit(0); /* not reached when the detector aborts */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return check_true("abort mode: the divergent barrier kills the process with SIGABRT",
                      WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

int main(void)
{
    d_out = emu_alloc(64 * sizeof(int));
    bool ok = true;
    ok &= test_scheduler_detectors();
    ok &= test_missing_barrier();
    ok &= test_uninit_shared();
    ok &= test_wmma_checks();
    ok &= test_abort_mode();
    emu_free(d_out);
    return test_exit(ok);
}
