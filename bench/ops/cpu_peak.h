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

/* The instructions a kernel's products run on, each with its own peak. */
enum cpu_unit {
    CPU_FMA256,  /* vfmadd 8 x float32 (AVX2 + FMA): 16 FLOP per instruction */
    CPU_FMA512,  /* vfmadd 16 x float32 (AVX-512): 32 FLOP */
    CPU_DPBF16,  /* vdpbf16ps 16 x 2 bfloat16 products into float32 (AVX512_BF16): 64 FLOP */
    CPU_UNITS,
};
const char *cpu_unit_name(enum cpu_unit u);

/* GFLOP/s (2 per multiply-add) of nthreads threads each running independent chains of the
 * unit's instruction in registers; 0 where the CPU lacks it. */
double cpu_unit_gflops(int nthreads, enum cpu_unit u);

/* Memory bandwidth in GB/s (1e9 bytes) of nthreads threads, each streaming its own 128 MiB
 * (far past the caches) with AVX2: `copy` reads one buffer and writes another (bytes read +
 * bytes written), else it only reads (a sum). The best of 3 passes. 0 without AVX2 or memory. */
double cpu_stream_gbps(int nthreads, int copy);

#endif
