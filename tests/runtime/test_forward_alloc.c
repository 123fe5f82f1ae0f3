/* forward() allocates nothing: every heap allocation and every anonymous mapping made by the
 * process while a forward pass runs is counted, OpenBLAS's and libc's included, by defining
 * malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign, valloc and mmap in this
 * executable (they interpose on the shared libraries' calls) and forwarding to glibc's
 * allocator and the mmap system call.
 *
 *   test_forward_alloc MODEL     (an f=12 export)
 *
 * The model runs on the CPU backend at every SIMD level this CPU has, in float32 and in
 * bfloat16, once uncounted (first-call work of libraries) and once counted: 0 allocations at
 * the AVX2 level and above is the check; the baseline level, whose GEMMs are OpenBLAS's, is
 * reported. A counted plain malloc first shows that the counter sees allocations. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernels/cpu/cpu_backend.h"
#include "runtime/forward.h"
#include "kernels/cpu/model_bf16.h"
#include "runtime/api.h"
#include "tests/common/check.h"

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t a, size_t n);

static atomic_int counting;
static atomic_long counted;

/* Visible to the shared libraries (the build hides symbols by default). */
#define INTERPOSE __attribute__((visibility("default")))

static void note(void)
{
    if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&counted, 1);
}

INTERPOSE void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}
INTERPOSE void *calloc(size_t k, size_t n)
{
    note();
    return __libc_calloc(k, n);
}
INTERPOSE void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}
INTERPOSE void *memalign(size_t a, size_t n)
{
    note();
    return __libc_memalign(a, n);
}
INTERPOSE void *aligned_alloc(size_t a, size_t n)
{
    note();
    return __libc_memalign(a, n);
}
INTERPOSE void *valloc(size_t n)
{
    note();
    return __libc_memalign(4096, n);
}
INTERPOSE int posix_memalign(void **p, size_t a, size_t n)
{
    note();
    *p = __libc_memalign(a, n);
    return *p ? 0 : 12; /* ENOMEM */
}

/* Straight to the system call: a library may map memory before main (the CUDA runtime does). */
INTERPOSE void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    note();
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* Allocations made by one forward pass of m on be (after an uncounted one). */
static long counted_forward(struct swin_cpu_backend *be, const struct swin_model *m, swin_error *err)
{
    const int cube[3] = {m->cfg.cube[0], m->cfg.cube[1], m->cfg.cube[2]};
    struct swin_plan plan;
    swin_plan_init(&plan);
    struct swin_exec e = {.plan = &plan, .planning = true, .ops = &swin_cpu_ops, .be = be, .err = err};
    long made = -1;
    const size_t nin = (size_t)m->cfg.in_channels * cube[0] * cube[1] * cube[2];
    const size_t nout = (size_t)m->cfg.out_channels * cube[0] * cube[1] * cube[2];
    float *in = malloc(nin * sizeof *in), *out = malloc(nout * sizeof *out);
    char *arena = NULL;
    if (swin_forward(&e, m, cube, NULL, NULL) || swin_plan_solve(&plan, err) || !in || !out) goto done;
    arena =
        aligned_alloc(SWIN_PLAN_ALIGN, (plan.arena_bytes + SWIN_PLAN_ALIGN - 1) / SWIN_PLAN_ALIGN * SWIN_PLAN_ALIGN);
    for (size_t i = 0; i < nin; i++) in[i] = (float)(i % 97) / 97.0f;
    for (int pass = 0; pass < 2; pass++) {
        swin_plan_rewind(&plan);
        e = (struct swin_exec){.plan = &plan, .arena = arena, .ops = &swin_cpu_ops, .be = be, .err = err};
        atomic_store(&counted, 0);
        atomic_store(&counting, pass == 1);
        const swin_status st = swin_forward(&e, m, cube, in, out);
        atomic_store(&counting, 0);
        if (st) goto done;
    }
    made = atomic_load(&counted);
done:
    free(arena), free(in), free(out);
    swin_plan_release(&plan);
    return made;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_forward_alloc MODEL\n");
        return 2;
    }
    atomic_store(&counting, 1);
    free(malloc(16));
    atomic_store(&counting, 0);
    bool ok = check_true("the counter sees a malloc", atomic_load(&counted) == 1);
    /* allocations made inside a shared library: libc's opendir */
    atomic_store(&counted, 0);
    atomic_store(&counting, 1);
    DIR *dir = opendir(".");
    atomic_store(&counting, 0);
    if (dir) closedir(dir);
    ok &= check_true("the counter sees an allocation inside a shared library (opendir)", atomic_load(&counted) >= 1);
    swin_error err = {0};
    swin_model_t *m = NULL;
    struct swin_cpu_backend *be = NULL;
    if (swin_model_load(argv[1], &m, &err) || swin_cpu_backend_create(2, &be, &err)) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    struct swin_model *m16 = NULL;
    size_t bf16_bytes = 0;
    ok &= check_true("bfloat16 copy", swin_model_bf16_copy(m, SWIN_BF16_KEEP_DEFAULT, &m16, &bf16_bytes, &err) == 0);
    const enum swin_cpu_simd levels[] = {SWIN_CPU_SIMD_AVX512_BF16, SWIN_CPU_SIMD_AVX512, SWIN_CPU_SIMD_AVX2,
                                         SWIN_CPU_SIMD_BASELINE};
    for (size_t i = 0; ok && i < sizeof levels / sizeof *levels; i++) {
        if (swin_cpu_backend_set_simd(be, levels[i]) != levels[i]) {
            printf("note: this CPU lacks the %s level; not tested here\n", swin_cpu_simd_name(levels[i]));
            continue;
        }
        for (int p = 0; p < 2; p++) {
            swin_cpu_backend_set_bf16(be, p ? m16->flat : NULL, p ? bf16_bytes : 0);
            const long made = counted_forward(be, p ? m16 : m, &err);
            char what[128];
            snprintf(what, sizeof what, "forward at the %s level, %s: %ld allocations", swin_cpu_simd_name(levels[i]),
                     p ? "bf16" : "fp32", made);
            if (made < 0) ok &= check_true(what, false), fprintf(stderr, "  %s\n", err.msg);
            else if (levels[i] == SWIN_CPU_SIMD_BASELINE) printf("note: %s (OpenBLAS's GEMMs; not checked)\n", what);
            else ok &= check_true(what, made == 0);
        }
    }
    swin_cpu_backend_free(be);
    swin_model_bf16_free(m16);
    swin_model_free(m);
    return test_exit(ok);
}
