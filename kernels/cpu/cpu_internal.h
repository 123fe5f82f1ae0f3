/* Internals shared by the CPU op files: the backend context, the thread pool, error
 * recording, workspace carving and the per-op entry points that swin_cpu_ops lists. */
#ifndef SWIN_CPU_INTERNAL_H
#define SWIN_CPU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_backend.h"

/* The reduction buffer (instnorm statistics): SWIN_CPU_RED_SLOTS slots of SWIN_CPU_RED_CH
 * doubles, one slot per fixed chunk of the voxels whatever the thread count, reduced in slot
 * order: the sums, and so the results, do not depend on --threads. */
#define SWIN_CPU_RED_CH 256
#define SWIN_CPU_RED_SLOTS 64
/* Alignment of every workspace slice, bytes. */
#define SWIN_CPU_ALIGN 64

/* A task runs on every pool thread: fn(arg, tid, nthreads), tid 0 is the caller. */
typedef void (*swin_cpu_task_fn)(void *arg, int tid, int nthreads);

/* Each worker learns its tid from its own slot. */
struct swin_cpu_worker {
    struct swin_cpu_backend *be;
    int tid;
};

/* Conv outputs this large go to memory whatever the stores do (twice the 32 MiB L3 of the Zen 5
 * they were measured on), so the Winograd output transform writes them with non-temporal
 * stores: a normal store first reads each line in from memory (bench/results/cpu_speed/zen5). */
#define SWIN_CPU_STREAM_BYTES ((size_t)64 << 20)

struct swin_cpu_backend {
    int nthreads;                 /* including the caller */
    pthread_t *workers;           /* nthreads - 1 */
    struct swin_cpu_worker *slots; /* nthreads, slot i for tid i */
    int started;                  /* workers successfully created */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_ulong generation;      /* bumped once per task */
    atomic_int pending;           /* workers still running the current task */
    atomic_bool quit;
    int sleepers;                 /* workers waiting on `wake` (under mu) */
    swin_cpu_task_fn fn;
    void *arg;
    double *red;                  /* (SWIN_CPU_RED_SLOTS, SWIN_CPU_RED_CH) reduction partials */
    enum swin_cpu_simd simd;      /* kernels in use: the CPU's best unless capped */
    enum swin_cpu_conv_choice conv_choice; /* swin_cpu_backend_set_conv_choice */
    bool bf16_planned;            /* swin_cpu_backend_plan_bf16: workspace queries cover bfloat16 weights
                                     whatever the range says */
    uintptr_t bf16_lo, bf16_hi;   /* GEMM weights starting in [lo, hi) are bfloat16
                                     (swin_cpu_backend_set_bf16); lo == hi: none */
    struct swin_cpu_wino_phases *wino_phases; /* swin_cpu_backend_set_wino_phases; NULL: not timed */
    size_t stream_bytes;          /* conv outputs of at least this many bytes are stored past the
                                     caches (SWIN_CPU_STREAM_BYTES; winograd.h) */
    char err[SWIN_ERROR_MSG_MAX];
};

/* Whether a kernel writing out stores its full vectors past the caches (non-temporal, each
 * thread fencing its own before the op returns): out holds at least be->stream_bytes and its
 * start and pitch are aligned to 64 bytes, so every full vector is aligned. */
static inline bool swin_cpu_out_streams(const struct swin_cpu_backend *be, struct swin_vol out)
{
    const size_t bytes = swin_vol_voxels(out) * (size_t)out.pitch * sizeof(float);
    return bytes >= be->stream_bytes && (uintptr_t)swin_vol_f32(out) % 64 == 0 && out.pitch % 16 == 0;
}

/* Runs fn on all threads and returns when every thread has finished. */
void swin_cpu_run(struct swin_cpu_backend *be, swin_cpu_task_fn fn, void *arg);

/* Dynamic scheduling: claims the next chunk [*b, *e) of [0, n); false when none is left. */
static inline bool swin_cpu_claim(atomic_long *next, long n, long chunk, long *b, long *e)
{
    long s = atomic_fetch_add(next, chunk);
    if (s >= n) return false;
    *b = s;
    *e = s + chunk < n ? s + chunk : n;
    return true;
}

/* Records a message in be->err and returns status. */
int swin_cpu_fail(struct swin_cpu_backend *be, swin_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));


/* Workspace carving: every slice starts SWIN_CPU_ALIGN-aligned. A layout is described by
 * its slice sizes; swin_cpu_ws_bytes adds the rounding and the slack for an unaligned ws. */
static inline size_t swin_cpu_round(size_t bytes)
{
    return (bytes + SWIN_CPU_ALIGN - 1) / SWIN_CPU_ALIGN * SWIN_CPU_ALIGN;
}
static inline char *swin_cpu_align_ptr(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (char *)((u + SWIN_CPU_ALIGN - 1) / SWIN_CPU_ALIGN * SWIN_CPU_ALIGN);
}

/* Op entry points (one file each). */
const char *swin_cpu_last_error(void *be);
int swin_cpu_pack_input(void *be, struct swin_vol out, const float *host_cdhw);
int swin_cpu_copy(void *be, struct swin_vol out, struct swin_vol in);
int swin_cpu_unpack_output(void *be, float *host_cdhw, struct swin_vol in);
int swin_cpu_conv3d(void *be, struct swin_vol out, void *stats, struct swin_vol in, const float *w,
                    const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes);
size_t swin_cpu_conv3d_ws(void *be, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride,
                          int pad, bool stats);
/* The bytes of norm/in_stats.h where out's conv can run Winograd F(4x4x4), else 0. */
size_t swin_cpu_conv3d_stats_bytes(void *be, struct swin_vol out);
/* ops.h conv3d_normed_input: the norm folded into Winograd F(4x4x4)'s input transform, or
 * instnorm_act in place on in, then conv3d, where the conv runs another kernel. */
int swin_cpu_conv3d_normed_input(void *be, struct swin_vol out, void *stats, struct swin_vol in, const void *in_stats,
                                 const float *gamma, const float *beta, const float *w, const float *bias, void *ws,
                                 size_t ws_bytes);
/* The im2col + GEMM workspace (conv3d_direct.c), and the per-tap GEMMs whatever the shape rule
 * says with their workspace (conv3d_taps.c; SWIN_ERR_ARG below the AVX2 level or with a short
 * workspace). */
size_t swin_cpu_conv3d_direct_ws(void *be, struct swin_vol out, struct swin_vol in, int k);
int swin_cpu_conv3d_taps(void *be, struct swin_vol out, struct swin_vol in, const float *w, const float *bias, int k,
                         int stride, int pad, void *ws, size_t ws_bytes);
size_t swin_cpu_conv3d_taps_ws(void *be, struct swin_vol out, struct swin_vol in);
int swin_cpu_conv_transpose2(void *be, struct swin_vol out, struct swin_vol in, const float *w);
int swin_cpu_instnorm_act(void *be, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                          const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_cpu_groupnorm_act(void *be, struct swin_vol x, const void *stats, int groups, const float *gamma,
                           const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_cpu_instnorm_act_narrow_shortcut(void *be, struct swin_vol x, const void *stats, const float *gamma,
                                          const float *beta, struct swin_vol src, const float *w,
                                          const float *res_gamma, const float *res_beta);
int swin_cpu_instnorm_act_conv1x1(void *be, struct swin_vol out, struct swin_vol x, const void *stats,
                                  bool normalize, const float *gamma, const float *beta,
                                  const struct swin_residual *residual, bool lrelu, const float *w, const float *bias);
/* instnorm_act's normalisation of x (stats: kept by conv3d, or NULL) as per-channel
 * coefficients, IN(x) * gamma + beta = (x - mean[c]) * scale[c] + shift[c] (mean_lo folded
 * into shift); x.c floats each. */
void swin_cpu_instnorm_prologue(struct swin_cpu_backend *be, struct swin_vol x, const void *stats, const float *gamma,
                                const float *beta, float *mean, float *scale, float *shift);
int swin_cpu_layernorm(void *be, struct swin_vol out, struct swin_vol in, const float *gamma,
                       const float *beta);
int swin_cpu_swin_attention(void *be, struct swin_vol x, const struct swin_block_w *blk,
                            const struct swin_window_geom *g, void *ws, size_t ws_bytes);
size_t swin_cpu_swin_attention_ws(void *be, struct swin_vol x, const struct swin_window_geom *g);
int swin_cpu_swin_mlp(void *be, struct swin_vol x, const struct swin_block_w *blk, int hidden,
                      void *ws, size_t ws_bytes);
size_t swin_cpu_swin_mlp_ws(void *be, struct swin_vol x, int hidden);
int swin_cpu_patch_merge(void *be, struct swin_vol out, struct swin_vol in,
                         const swin_merge_order order, const float *norm_w, const float *norm_b,
                         const float *red_w, void *ws, size_t ws_bytes);
size_t swin_cpu_patch_merge_ws(void *be, struct swin_vol out, struct swin_vol in);

#endif
