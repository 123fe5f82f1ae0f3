/* This machine's fp32 peak, for bench_cpu_ops: an estimate from /proc/cpuinfo, and the
 * throughput of register-only FMA chains measured on every thread (the estimate checked at
 * the real clock, lowered by whatever else runs). */
#ifndef BENCH_CPU_PEAK_H
#define BENCH_CPU_PEAK_H

struct cpu_peak {
    int cores;             /* online cores, capped at the thread count */
    double mhz;            /* "cpu MHz" of /proc/cpuinfo, not the boost clock */
    int flops_per_cycle;   /* per core */
    double gflops;         /* cores x MHz x FLOP/cycle */
    char basis[400];       /* that product in words */
    char cpu[128];         /* model name */
};

struct cpu_peak cpu_peak_estimate(int threads);

/* GFLOP/s of nthreads threads each running independent AVX2 (avx512 = 0) or AVX-512 FMA
 * chains; 0 where the CPU lacks the instruction set. */
double cpu_fma_gflops(int nthreads, int avx512);

/* Memory bandwidth in GB/s (1e9 bytes) of nthreads threads, each streaming its own 128 MiB
 * (far past the caches) with AVX2: `copy` reads one buffer and writes another (bytes read +
 * bytes written), else it only reads (a sum). The best of 3 passes. 0 without AVX2 or memory. */
double cpu_stream_gbps(int nthreads, int copy);

#endif
