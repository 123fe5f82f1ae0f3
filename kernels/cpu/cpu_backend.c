/* The CPU backend context: a persistent thread pool, the error message, the op table.
 *
 * Pool: nthreads - 1 workers wait for `generation` to move; swin_cpu_run publishes (fn, arg),
 * bumps `generation`, runs fn as tid 0 on the caller, then waits until `pending` (the workers
 * still running) is 0. Both waits spin for a short while (SPIN_ROUNDS pauses, some 0.1-0.3 ms)
 * before they sleep on a condition variable: a forward pass runs hundreds of tasks back to
 * back, and waking a sleeping thread (a futex, and in a VM often an idle vCPU) costs tens of
 * microseconds each time. Ops split their work with static ranges or swin_cpu_claim. */
#define _GNU_SOURCE   /* sched_getaffinity */
#include "kernels/cpu/cpu_internal.h"

#include <sched.h>

#include <cblas.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SPIN_PAUSE() _mm_pause()
#else
#define SPIN_PAUSE() ((void)0)
#endif

#define SPIN_ROUNDS 4096

/* The generation after `seen` (or `seen` once quit is set): spins, then sleeps. */
static unsigned long next_generation(struct swin_cpu_backend *be, unsigned long seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        const unsigned long g = atomic_load_explicit(&be->generation, memory_order_acquire);
        if (g != seen || atomic_load_explicit(&be->quit, memory_order_relaxed)) return g;
        SPIN_PAUSE();
    }
    pthread_mutex_lock(&be->mu);
    be->sleepers++;
    unsigned long g;
    while ((g = atomic_load_explicit(&be->generation, memory_order_acquire)) == seen && !atomic_load(&be->quit))
        pthread_cond_wait(&be->wake, &be->mu);
    be->sleepers--;
    pthread_mutex_unlock(&be->mu);
    return g;
}

static void *worker_main(void *p)
{
    struct swin_cpu_worker *w = p;
    struct swin_cpu_backend *be = w->be;
    unsigned long seen = 0;
    for (;;) {
        seen = next_generation(be, seen);
        if (atomic_load(&be->quit)) break;
        be->fn(be->arg, w->tid, be->nthreads);
        if (atomic_fetch_sub_explicit(&be->pending, 1, memory_order_acq_rel) == 1) {
            /* under mu: the caller checks `pending` under it before it sleeps */
            pthread_mutex_lock(&be->mu);
            pthread_cond_signal(&be->done);
            pthread_mutex_unlock(&be->mu);
        }
    }
    return NULL;
}

void swin_cpu_run(struct swin_cpu_backend *be, swin_cpu_task_fn fn, void *arg)
{
    if (be->nthreads == 1) {
        fn(arg, 0, 1);
        return;
    }
    /* every worker is past the previous task: they read fn and arg only after the bump */
    be->fn = fn;
    be->arg = arg;
    atomic_store_explicit(&be->pending, be->nthreads - 1, memory_order_relaxed);
    pthread_mutex_lock(&be->mu);
    atomic_fetch_add_explicit(&be->generation, 1, memory_order_release);
    if (be->sleepers) pthread_cond_broadcast(&be->wake);
    pthread_mutex_unlock(&be->mu);
    fn(arg, 0, be->nthreads);
    for (int i = 0; i < SPIN_ROUNDS && atomic_load_explicit(&be->pending, memory_order_acquire) > 0; i++) SPIN_PAUSE();
    if (atomic_load_explicit(&be->pending, memory_order_acquire) > 0) {
        pthread_mutex_lock(&be->mu);
        while (atomic_load_explicit(&be->pending, memory_order_acquire) > 0) pthread_cond_wait(&be->done, &be->mu);
        pthread_mutex_unlock(&be->mu);
    }
}

int swin_cpu_fail(struct swin_cpu_backend *be, swin_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->err, sizeof be->err, fmt, ap);
    va_end(ap);
    return (int)status;
}

const char *swin_cpu_last_error(void *bev)
{
    struct swin_cpu_backend *be = bev;
    return be->err;
}

static void cpu_set_error(void *bev, const char *msg) { swin_cpu_fail(bev, SWIN_OK, "%s", msg); }

int swin_cpu_backend_threads(const struct swin_cpu_backend *be) { return be->nthreads; }

enum swin_cpu_simd swin_cpu_simd_of_cpu(void)
{
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return __builtin_cpu_supports("avx512bf16") ? SWIN_CPU_SIMD_AVX512_BF16 : SWIN_CPU_SIMD_AVX512;
    return avx2 ? SWIN_CPU_SIMD_AVX2 : SWIN_CPU_SIMD_BASELINE;
}

enum swin_cpu_simd swin_cpu_backend_set_simd(struct swin_cpu_backend *be, enum swin_cpu_simd max)
{
    const enum swin_cpu_simd cpu = swin_cpu_simd_of_cpu();
    be->simd = max < cpu ? max : cpu;
    return be->simd;
}

static const char *const simd_names[] = {"baseline", "avx2", "avx512", "avx512bf16"}; /* by enum swin_cpu_simd */

const char *swin_cpu_simd_name(enum swin_cpu_simd level)
{
    return level >= SWIN_CPU_SIMD_BASELINE && level <= SWIN_CPU_SIMD_AVX512_BF16 ? simd_names[level] : "?";
}

bool swin_cpu_simd_parse(const char *name, enum swin_cpu_simd *level)
{
    for (int i = SWIN_CPU_SIMD_BASELINE; i <= SWIN_CPU_SIMD_AVX512_BF16; i++)
        if (!strcmp(name, simd_names[i])) {
            *level = (enum swin_cpu_simd)i;
            return true;
        }
    return false;
}

void swin_cpu_backend_set_conv_choice(struct swin_cpu_backend *be, enum swin_cpu_conv_choice choice)
{
    be->conv_choice = choice;
}

void swin_cpu_backend_set_wino_phases(struct swin_cpu_backend *be, struct swin_cpu_wino_phases *p)
{
    be->wino_phases = p;
}

void swin_cpu_backend_plan_bf16(struct swin_cpu_backend *be) { be->bf16_planned = true; }

void swin_cpu_backend_set_bf16(struct swin_cpu_backend *be, const void *lo, size_t bytes)
{
    be->bf16_lo = (uintptr_t)lo;
    be->bf16_hi = (uintptr_t)lo + (lo ? bytes : 0);
}

const char *swin_cpu_bf16_note(const struct swin_cpu_backend *be)
{
    if (be->simd >= SWIN_CPU_SIMD_AVX512_BF16)
        return "bfloat16 GEMMs on vdpbf16ps (AVX512_BF16); Winograd and per-tap convs widen the weights for FMA";
    __builtin_cpu_init();
    if (be->simd >= SWIN_CPU_SIMD_AVX2)
        return __builtin_cpu_supports("avx512bf16")
                   ? "bfloat16 widened to float32 for FMA (the level is capped below this CPU's AVX512_BF16)"
                   : "bfloat16 widened to float32 for FMA (this CPU has no AVX512_BF16 dot products)";
    return "bfloat16 widened to float32, scalar loops (this CPU has no AVX2)";
}

static void pool_stop(struct swin_cpu_backend *be)
{
    pthread_mutex_lock(&be->mu);
    atomic_store(&be->quit, true);
    pthread_cond_broadcast(&be->wake);
    pthread_mutex_unlock(&be->mu);
    for (int i = 0; i < be->started; i++) pthread_join(be->workers[i], NULL);
}

swin_status swin_cpu_backend_create_for_plan(int threads, struct swin_cpu_backend **out, swin_error *err)
{
    if (!out) return swin_error_set(err, SWIN_ERR_ARG, "swin_cpu_backend_create: out is NULL");
    *out = NULL;
    if (threads < 0)
        return swin_error_set(err, SWIN_ERR_ARG, "swin_cpu_backend_create: threads %d is negative (0 = all cores)",
                              threads);
    if (threads == 0) {
        /* the CPUs this process may run on (a container's cpuset), else all online ones */
        cpu_set_t set;
        long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : (int)n;
    }
    struct swin_cpu_backend *be = calloc(1, sizeof *be);
    if (!be) return swin_error_set(err, SWIN_ERR_NOMEM, "swin_cpu_backend_create: out of host memory");
    be->nthreads = threads;
    pthread_mutex_init(&be->mu, NULL);
    pthread_cond_init(&be->wake, NULL);
    pthread_cond_init(&be->done, NULL);
    be->simd = swin_cpu_simd_of_cpu();
    be->conv_choice = SWIN_CPU_CONV_BY_SHAPE;
    be->stream_bytes = SWIN_CPU_STREAM_BYTES;
    *out = be;
    return SWIN_OK;
}

swin_status swin_cpu_backend_start(struct swin_cpu_backend *be, swin_error *err)
{
    const int threads = be->nthreads;
    struct swin_cpu_worker *slots = calloc((size_t)threads, sizeof *slots);
    be->workers = calloc((size_t)threads, sizeof *be->workers);
    be->red = calloc((size_t)SWIN_CPU_RED_SLOTS * SWIN_CPU_RED_CH, sizeof *be->red);
    if (!slots || !be->workers || !be->red) {
        free(slots);
        return swin_error_set(err, SWIN_ERR_NOMEM, "swin_cpu_backend_create: out of host memory");
    }
    /* slots[0] is unused: tid 0 is the caller. */
    for (int i = 1; i < threads; i++) {
        slots[i].be = be;
        slots[i].tid = i;
        if (pthread_create(&be->workers[i - 1], NULL, worker_main, &slots[i]) != 0) {
            pool_stop(be);
            be->started = 0; /* joined: swin_cpu_backend_free joins none again */
            free(slots);
            return swin_error_set(err, SWIN_ERR_BACKEND,
                                  "swin_cpu_backend_create: could not start worker thread %d of %d", i, threads);
        }
        be->started++;
    }
    be->slots = slots;
    /* The pool splits the work; each GEMM call runs on the thread that makes it. */
    openblas_set_num_threads(1);
    return SWIN_OK;
}

swin_status swin_cpu_backend_create(int threads, struct swin_cpu_backend **out, swin_error *err)
{
    swin_status st = swin_cpu_backend_create_for_plan(threads, out, err);
    if (!st && (st = swin_cpu_backend_start(*out, err))) {
        swin_cpu_backend_free(*out);
        *out = NULL;
    }
    return st;
}

void swin_cpu_backend_free(struct swin_cpu_backend *be)
{
    if (!be) return;
    pool_stop(be);
    pthread_mutex_destroy(&be->mu);
    pthread_cond_destroy(&be->wake);
    pthread_cond_destroy(&be->done);
    free(be->workers);
    free(be->slots);
    free(be->red);
    free(be);
}

const struct swin_ops swin_cpu_ops = {
    .name = "cpu",
    .act_dtype = SWIN_F32,
    .last_error = swin_cpu_last_error,
    .set_error = cpu_set_error,
    .pack_input = swin_cpu_pack_input,
    .unpack_output = swin_cpu_unpack_output,
    .copy = swin_cpu_copy,
    .conv3d = swin_cpu_conv3d,
    .conv3d_ws = swin_cpu_conv3d_ws,
    .conv3d_stats_bytes = swin_cpu_conv3d_stats_bytes,
    .conv3d_normed_input = swin_cpu_conv3d_normed_input,
    .conv_transpose2 = swin_cpu_conv_transpose2,
    .instnorm_act = swin_cpu_instnorm_act,
    .groupnorm_act = swin_cpu_groupnorm_act,
    .instnorm_act_narrow_shortcut = swin_cpu_instnorm_act_narrow_shortcut,
    .instnorm_act_conv1x1 = swin_cpu_instnorm_act_conv1x1,
    .layernorm = swin_cpu_layernorm,
    .swin_attention = swin_cpu_swin_attention,
    .swin_attention_ws = swin_cpu_swin_attention_ws,
    .swin_mlp = swin_cpu_swin_mlp,
    .swin_mlp_ws = swin_cpu_swin_mlp_ws,
    .patch_merge = swin_cpu_patch_merge,
    .patch_merge_ws = swin_cpu_patch_merge_ws,
};
