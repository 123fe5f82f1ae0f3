/* The whole forward pass (runtime/forward.c, plan then run) on the CUDA backend, emulated,
 * against the same forward pass on the CPU backend: a random f=12 model (depths 2, heads
 * 3/6/12/24, window 7, 1 -> 3 channels) on a 32^3 cube, which exercises shifted and
 * padded windows (stage L 16 and 8), shrunk windows (L 4 and 2), every decoder, the
 * concat views, the planned arena and workspaces in device memory. It is also the
 * reference for wiring --backend cuda into runtime/api.c (see kernels/cuda/README.md).
 * The CUDA run happens with the emulator's allocations frozen (any cudaMalloc inside an
 * op fails the pass), and the emulated device high-water mark must equal weights +
 * context scratch + planned arena exactly. Built with CT_REAL_GPU (nvcc build) it runs on
 * a real device without those two emulator checks, and exits 77 (skip) without one.
 * Tolerance: 1e-4 relative to max(1, max|logit|). About 50 ops, most ending in an
 * instance norm or layer norm that rescales their fp32 rounding differences (summation
 * order of GEMMs with K up to 27 * 24, fp32 vs double norm statistics). Measured: 4.9e-6
 * absolute on logits of magnitude ~5 (1e-6 relative). 1e-4 leaves a 20x margin and still
 * catches any indexing error, which changes logits by O(1).
 * Half mode (CT_DTYPE=f16, CTest cuda_forward_half): the CUDA backend stores weights and
 * activations as float16, and is compared with the same float32 CPU pass (weights not
 * rounded: this is the user-visible difference of --half). Criterion of the issue: logits
 * within 1e-2 of max(1, max|logit|), and at least 99.5 % of voxels with the same argmax
 * label; the high-water check then counts float16 weights and arena.
 * cuda_forward_half_hd16: the same in half mode with f = 16 and heads 1/2/4/8, so every
 * stage's head dim is 16 and the window attention runs on tensor cores
 * (window_attention_wmma.cuh) end to end.
 * With SWIN_CUDA_CHUNK_BYTES set (cuda_forward_chunked), the CUDA backend runs attention,
 * MLP and patch merge over several chunks each, and the test fails unless some call of
 * each of the three ran over at least 2 (the counts are printed either way). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#ifndef CT_REAL_GPU
#include "tests/cuemu/cuemu_api.h"
#endif
#include "runtime/exec.h"
#include "runtime/forward.h"
#include "runtime/plan.h"
#include "tests/common/check.h"
#include "tests/common/random_model.h"

/* Plans and runs forward() on one backend; the arena comes from alloc_arena. With
 * `freeze`, device allocations are an error during the run (emulator switch). The
 * planned arena size goes to *arena_bytes. */
static bool run_forward(const char *name, const struct swin_ops *ops, void *be, const struct swin_model *m,
                        const int cube[3], const float *in, float *out, void *(*alloc_arena)(void *, size_t),
                        void (*free_arena)(void *, void *), bool freeze, size_t *arena_bytes)
{
    swin_error err = {0};
    struct swin_plan plan;
    swin_plan_init(&plan);
    struct swin_exec e = {.plan = &plan, .planning = true, .ops = ops, .be = be, .err = &err};
    swin_status st = swin_forward(&e, m, cube, NULL, NULL);
    if (!st) st = swin_plan_solve(&plan, &err);
    void *arena = NULL;
    if (!st) {
        fprintf(stderr, "%s: arena %.1f MiB\n", name, plan.arena_bytes / 1048576.0);
        arena = alloc_arena(be, plan.arena_bytes);
        if (!arena) st = swin_error_set(&err, SWIN_ERR_NOMEM, "arena allocation failed");
    }
    if (!st) {
        *arena_bytes = plan.arena_bytes;
        swin_plan_rewind(&plan);
        e = (struct swin_exec){.plan = &plan, .arena = arena, .ops = ops, .be = be, .err = &err};
#ifndef CT_REAL_GPU
        if (freeze) cuemu_mem_freeze(1);
#endif
        st = swin_forward(&e, m, cube, in, out);
#ifndef CT_REAL_GPU
        if (freeze) cuemu_mem_freeze(0);
#endif
    }
    if (arena) free_arena(be, arena);
    swin_plan_release(&plan);
    if (st) fprintf(stderr, "FAIL %s forward: %s\n", name, err.msg);
    return st == SWIN_OK;
}

static void *cpu_arena(void *be, size_t bytes)
{
    return aligned_alloc(SWIN_PLAN_ALIGN, bytes ? bytes : SWIN_PLAN_ALIGN);
}
static void cpu_arena_free(void *be, void *a) { free(a); }
static void *gpu_arena(void *be, size_t bytes)
{
    swin_error err = {0};
    void *a = swin_cuda_arena_alloc(be, bytes, &err);
    if (!a) fprintf(stderr, "%s\n", err.msg);
    return a;
}
static void gpu_arena_free(void *be, void *a) { swin_cuda_arena_free(be, a); }

/* Fraction of voxels whose argmax over the c channels of (c, n) logits agrees. */
static double label_agreement(const float *a, const float *b, int c, size_t n)
{
    size_t same = 0;
    for (size_t v = 0; v < n; v++) {
        int la = 0, lb = 0;
        for (int k = 1; k < c; k++) {
            if (a[k * n + v] > a[la * n + v]) la = k;
            if (b[k * n + v] > b[lb * n + v]) lb = k;
        }
        same += la == lb;
    }
    return (double)same / (double)n;
}

int main(void)
{
    /* CT_FEATURE=f and CT_HEADS=h0,h1,h2,h3 change the model (cuda_forward_half_hd16). */
    const char *fe = getenv("CT_FEATURE"), *he = getenv("CT_HEADS");
    const int f = fe ? atoi(fe) : 12, cube[3] = {32, 32, 32};
    int heads[4];
    const bool own_heads = he && sscanf(he, "%d,%d,%d,%d", &heads[0], &heads[1], &heads[2], &heads[3]) == 4;
    struct test_model_builder b = {.cap = test_random_model_cap(f), .rng = {0xf0f0}};
    b.flat = aligned_alloc(256, b.cap);
    struct swin_model m;
    test_random_model_heads(&m, &b, f, own_heads ? heads : NULL);
    fprintf(stderr, "random f=%d model, heads %d/%d/%d/%d: %.1f MiB of weights\n", f, m.cfg.heads[0], m.cfg.heads[1],
            m.cfg.heads[2], m.cfg.heads[3], m.flat_bytes / 1048576.0);

    const size_t nin = (size_t)cube[0] * cube[1] * cube[2], nout = nin * m.cfg.out_channels;
    float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *got = malloc(nout * sizeof(float));
    test_rng r = {99};
    test_fill_uniform(&r, in, nin, -1.0f, 1.0f);

    swin_error err = {0};
    struct swin_cpu_backend *cpu = NULL;
    struct swin_cuda_backend *gpu = NULL;
    if (swin_cpu_backend_create(1, &cpu, &err)) {
        fprintf(stderr, "FAIL cpu backend: %s\n", err.msg);
        return 1;
    }
    const char *dt = getenv("CT_DTYPE");
    const enum swin_dtype dtype = dt && !strcmp(dt, "f16") ? SWIN_F16 : SWIN_F32;
    swin_status st = swin_cuda_backend_create(0, &m, dtype, &gpu, &err);
#ifdef CT_REAL_GPU
    if (st == SWIN_ERR_BACKEND) {
        fprintf(stderr, "SKIP no usable CUDA device: %s\n", err.msg);
        return 77;
    }
#endif
    if (st) {
        fprintf(stderr, "FAIL cuda backend: %s\n", err.msg);
        return 1;
    }
    size_t cpu_bytes = 0, gpu_bytes = 0;
    bool ok = run_forward("cpu", &swin_cpu_ops, cpu, &m, cube, in, ref, cpu_arena, cpu_arena_free, false, &cpu_bytes);
    ok = ok && run_forward(dtype == SWIN_F16 ? "cuda half" : "cuda", swin_cuda_ops_for(dtype), gpu, &m, cube, in, got,
                           gpu_arena, gpu_arena_free, true, &gpu_bytes);
    if (ok) {
        ok = check_close_scaled(dtype == SWIN_F16 ? "logits, CUDA half (emulated) vs CPU float32 forward"
                                                  : "logits, CUDA (emulated) vs CPU forward",
                                got, ref, nout, dtype == SWIN_F16 ? 1e-2 : 1e-4);
        const double agree = label_agreement(got, ref, m.cfg.out_channels, nin);
        char what[120];
        snprintf(what, sizeof what, "same argmax label on %.4f %% of voxels (need >= 99.5 %%)", 100.0 * agree);
        ok &= check_true(what, agree >= 0.995);
    }
    static const char *const chunked[SWIN_CUDA_CHUNKED_OPS] = {"swin_attention", "swin_mlp", "patch_merge"};
    for (int op = 0; op < SWIN_CUDA_CHUNKED_OPS; op++) {
        const struct swin_cuda_chunk_count c = swin_cuda_backend_chunk_count(gpu, (enum swin_cuda_chunked_op)op);
        char what[200];
        snprintf(what, sizeof what, "%s: %lld calls over %lld to %lld chunks (budget %zu bytes)", chunked[op], c.calls,
                 c.fewest, c.most, swin_cuda_backend_chunk_bytes(gpu));
        ok &= check_true(what, c.calls > 0 && (!getenv("SWIN_CUDA_CHUNK_BYTES") || c.most >= 2));
    }
#ifndef CT_REAL_GPU
    const size_t expect = swin_cuda_weight_bytes(&m, dtype) + swin_cuda_context_bytes(NULL) + gpu_bytes;
    char msg[200];
    snprintf(msg, sizeof msg, "device high-water %zu bytes = weights + context scratch + arena (%zu)",
             cuemu_mem_high_water(), expect);
    ok &= check_true(msg, cuemu_mem_high_water() == expect);
#endif
    swin_cuda_backend_free(gpu);
    swin_cpu_backend_free(cpu);
    free(in);
    free(ref);
    free(got);
    free(b.flat);
    return test_exit(ok);
}
