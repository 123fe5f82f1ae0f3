#include "bench/ops/cpu_peak.h"

#include <immintrin.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct cpu_peak cpu_peak_estimate(int threads)
{
    struct cpu_peak p = {0};
    p.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > 0 && threads < p.cores) p.cores = threads;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int avx512 = 0, avx2 = 0, fma = 0, family = 0, amd = 0;
    strcpy(p.cpu, "?");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "cpu MHz", 7) && p.mhz == 0) p.mhz = atof(strchr(line, ':') + 1);
        else if (!strncmp(line, "cpu family", 10) && !family) family = atoi(strchr(line, ':') + 1);
        else if (!strncmp(line, "vendor_id", 9)) amd = strstr(line, "AuthenticAMD") != NULL;
        else if (!strncmp(line, "model name", 10) && !strcmp(p.cpu, "?")) {
            snprintf(p.cpu, sizeof p.cpu, "%s", strchr(line, ':') + 2);
            p.cpu[strcspn(p.cpu, "\n")] = 0;
        } else if (!strncmp(line, "flags", 5)) {
            avx512 = strstr(line, " avx512f") != NULL;
            avx2 = strstr(line, " avx2") != NULL;
            fma = strstr(line, " fma") != NULL;
            break;
        }
    }
    if (f) fclose(f);
    /* fp32 lanes per FMA instruction by ISA, 2 FMA pipes per core (Intel since Haswell, AMD
     * since Zen 2), 2 FLOPs per FMA. AMD family 25 (Zen 3/4) has 256-bit FMA datapaths: a
     * 512-bit FMA takes both halves, so AVX-512 gives no more lanes per cycle there. */
    int lanes = avx512 ? 16 : (avx2 && fma) ? 8 : 4;
    const char *isa = avx512 ? "avx512f" : (avx2 && fma) ? "avx2+fma" : "sse";
    int pipe_lanes = lanes;
    const char *note = "";
    if (avx512 && amd && family == 25) {
        pipe_lanes = 8;
        note = "; AMD family 25 (Zen 3/4) executes 512-bit FMAs on 256-bit datapaths, so 8 lanes per pipe";
    }
    int fma_mul = (avx2 && fma) || avx512 ? 2 : 1; /* without FMA: separate mul and add, 1 flop each */
    p.flops_per_cycle = 2 /* pipes */ * pipe_lanes * fma_mul;
    p.gflops = p.cores * p.mhz * 1e-3 * p.flops_per_cycle;
    snprintf(p.basis, sizeof p.basis,
             "%d cores x %.0f MHz (cpu MHz in /proc/cpuinfo, not the boost clock) x %d FLOP/cycle "
             "(%s: 2 FMA pipes x %d fp32 lanes x 2 FLOP per FMA%s)",
             p.cores, p.mhz, p.flops_per_cycle, isa, pipe_lanes, note);
    return p;
}

#define FMA_ITERS 100000000L /* ~0.15 s per thread at 3 GHz */

/* Ten independent accumulators in named registers (an array may stay in memory at -O2). */
#define FMA10(fma)                                                                                  \
    do {                                                                                            \
        a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);             \
        a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);             \
        a8 = fma(a8, m, c), a9 = fma(a9, m, c);                                                     \
    } while (0)

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(long iters)
{
    __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2), a3 = _mm256_set1_ps(3),
           a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5), a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7),
           a8 = _mm256_set1_ps(8), a9 = _mm256_set1_ps(9);
    for (long n = 0; n < iters; n++) FMA10(_mm256_fmadd_ps);
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(_mm256_add_ps(a6, a7), _mm256_add_ps(a8, a9))));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx512f"))) static float fma_loop_avx512(long iters)
{
    __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3),
           a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7),
           a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9);
    for (long n = 0; n < iters; n++) FMA10(_mm512_fmadd_ps);
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(_mm512_add_ps(a6, a7), _mm512_add_ps(a8, a9))));
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512bf16"))) static float dpbf16_loop(long iters)
{
    const __m512bh m = (__m512bh)_mm512_set1_epi32(0x3f803f80), c = (__m512bh)_mm512_set1_epi32(0x33d633d6);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3),
           a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7),
           a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9);
#define DPBF16(acc, x, y) _mm512_dpbf16_ps(acc, x, y)
    for (long n = 0; n < iters; n++) {
        a0 = DPBF16(a0, m, c), a1 = DPBF16(a1, m, c), a2 = DPBF16(a2, m, c), a3 = DPBF16(a3, m, c);
        a4 = DPBF16(a4, m, c), a5 = DPBF16(a5, m, c), a6 = DPBF16(a6, m, c), a7 = DPBF16(a7, m, c);
        a8 = DPBF16(a8, m, c), a9 = DPBF16(a9, m, c);
    }
#undef DPBF16
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(_mm512_add_ps(a6, a7), _mm512_add_ps(a8, a9))));
    return _mm512_reduce_add_ps(s);
}

static const struct {
    const char *name;
    double flops_per_instr;
    long iters;
} units[CPU_UNITS] = {
    [CPU_FMA256] = {"fma256", 16, FMA_ITERS},
    [CPU_FMA512] = {"fma512", 32, FMA_ITERS / 2},
    [CPU_DPBF16] = {"dpbf16", 64, FMA_ITERS / 4},
};

const char *cpu_unit_name(enum cpu_unit u) { return u >= 0 && u < CPU_UNITS ? units[u].name : "?"; }

struct unit_arg {
    enum cpu_unit unit;
    float sink;
};

static void *unit_thread(void *p)
{
    struct unit_arg *a = p;
    const long n = units[a->unit].iters;
    a->sink = a->unit == CPU_DPBF16 ? dpbf16_loop(n) : a->unit == CPU_FMA512 ? fma_loop_avx512(n) : fma_loop_avx2(n);
    return NULL;
}

double cpu_unit_gflops(int nthreads, enum cpu_unit u)
{
    __builtin_cpu_init();
    const bool has = __builtin_cpu_supports("fma") &&
                     (u == CPU_FMA256   ? __builtin_cpu_supports("avx2")
                      : u == CPU_FMA512 ? __builtin_cpu_supports("avx512f")
                      : u == CPU_DPBF16 ? __builtin_cpu_supports("avx512bf16")
                                        : false);
    if (!has) return 0.0;
    pthread_t th[256];
    struct unit_arg args[256];
    if (nthreads > 256) nthreads = 256;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nthreads; i++) {
        args[i] = (struct unit_arg){.unit = u};
        pthread_create(&th[i], NULL, unit_thread, &args[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return (double)nthreads * units[u].iters * 10 * units[u].flops_per_instr / t * 1e-9;
}

#define STREAM_FLOATS (32L << 20) /* 128 MiB per buffer and thread */

struct stream_arg {
    float *src, *dst;
    int copy;
    double seconds;
    float sink;
};

__attribute__((target("avx2,fma"))) static void *stream_thread(void *p)
{
    struct stream_arg *a = p;
    double best = 1e30;
    for (int pass = 0; pass < 4; pass++) {  /* pass 0 faults the pages in, untimed */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (long i = 0; i < STREAM_FLOATS; i += 32) {
            const __m256 v0 = _mm256_load_ps(a->src + i), v1 = _mm256_load_ps(a->src + i + 8);
            const __m256 v2 = _mm256_load_ps(a->src + i + 16), v3 = _mm256_load_ps(a->src + i + 24);
            if (a->copy) {
                _mm256_store_ps(a->dst + i, v0), _mm256_store_ps(a->dst + i + 8, v1);
                _mm256_store_ps(a->dst + i + 16, v2), _mm256_store_ps(a->dst + i + 24, v3);
            } else {
                s0 = _mm256_add_ps(s0, v0), s1 = _mm256_add_ps(s1, v1);
                s2 = _mm256_add_ps(s2, v2), s3 = _mm256_add_ps(s3, v3);
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        float out[8];
        _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
        a->sink += out[0] + (a->copy ? a->dst[pass] : 0.0f);
        const double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (pass > 0 && t < best) best = t;
    }
    a->seconds = best;
    return NULL;
}

double cpu_stream_gbps(int nthreads, int copy)
{
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return 0.0;
    if (nthreads > 256) nthreads = 256;
    pthread_t th[256];
    struct stream_arg args[256];
    double gbps = 0.0;
    int made = 0;
    for (; made < nthreads; made++) {
        args[made] = (struct stream_arg){.copy = copy};
        args[made].src = aligned_alloc(64, STREAM_FLOATS * sizeof(float));
        args[made].dst = copy ? aligned_alloc(64, STREAM_FLOATS * sizeof(float)) : NULL;
        if (!args[made].src || (copy && !args[made].dst)) {
            free(args[made].src), free(args[made].dst);
            break;
        }
        for (long i = 0; i < STREAM_FLOATS; i++) args[made].src[i] = (float)(i & 1023);
    }
    if (made == nthreads) {
        for (int i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, stream_thread, &args[i]);
        for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < nthreads; i++)
            gbps += (double)STREAM_FLOATS * sizeof(float) * (copy ? 2 : 1) / args[i].seconds * 1e-9;
    }
    for (int i = 0; i < made; i++) free(args[i].src), free(args[i].dst);
    return gbps;
}
