/* Cost of one __syncthreads() in the CUDA emulator (tests/cuemu) for one block.
 *
 *   build-emu/tests/cuemu/selftest/bench_emu_syncthreads [threads] [barriers]
 *
 * Times a block of `threads` (default 256) that passes `barriers` (default 20000)
 * barriers, minus the same launch with no barrier loop, divided by `barriers`. Under
 * the emulator this is the scheduler's cost (two fiber switches per thread per
 * barrier); on a GPU it would be a few cycles, so numbers are for the emulator only.
 * Prints wall time (cudaEvent) and process CPU time: on a loaded machine the CPU time is
 * the one to quote. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime.h>

#include "kernels/cuda/swin_launch.h"

__global__ void barriers(int n, int *out)
{
    int acc = threadIdx.x;
    for (int i = 0; i < n; i++) {
        acc += i;
        __syncthreads();
    }
    if (acc == -1) /* never true: keeps the loop */
        *out = acc;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Returns the wall time of one launch; adds its CPU time to *cpu. */
static double launch_ms(int threads, int n, int *out, double *cpu)
{
    cudaEvent_t start, stop;
    double c0 = cpu_ms();
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, 0);
    SWIN_LAUNCH(barriers, 1, threads)(n, out);
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    *cpu = cpu_ms() - c0;
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 256, n = argc > 2 ? atoi(argv[2]) : 20000;
    int *out;
    if (cudaMalloc(&out, sizeof(int)) != cudaSuccess)
        return 1;
    double wall = 1e30, wall0 = 1e30, cpu = 1e30, cpu0 = 1e30, c;
    for (int rep = 0; rep < 5; rep++) { /* best of 5 against noise from other processes */
        double t = launch_ms(threads, 0, out, &c);
        wall0 = t < wall0 ? t : wall0;
        cpu0 = c < cpu0 ? c : cpu0;
        t = launch_ms(threads, n, out, &c);
        wall = t < wall ? t : wall;
        cpu = c < cpu ? c : cpu;
    }
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    double per_wall = (wall - wall0) * 1e6 / n, per_cpu = (cpu - cpu0) * 1e6 / n; /* ns */
    printf("__syncthreads, %d threads, %d barriers: %.0f ns per barrier wall (%.1f ns per "
           "thread), %.0f ns CPU (%.1f ns per thread); launch without barriers %.3f ms\n",
           threads, n, per_wall, per_wall / threads, per_cpu, per_cpu / threads, wall0);
    cudaFree(out);
    return 0;
}
