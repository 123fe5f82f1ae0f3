/* The planted backend "cpu-portable": the CPU op table at its portable level (no AVX2 or
 * AVX-512 kernels: im2col + OpenBLAS, 4-lane vectors), float32 only, filled in from the CPU
 * backend's own header (kernels/cpu/cpu_backend.h) as a new backend in kernels/<name>/ fills
 * the interface from its own. */
#include <stdlib.h>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"

static bool portable_supports_precision(enum swin_numerics n)
{
    return n == SWIN_NUMERICS_FP32;
}

static bool portable_usable(int device)
{
    (void)device;
    return true;
}

static swin_status portable_create(const struct swin_backend_params *p, struct swin_backend_inst *b, swin_error *err)
{
    struct swin_cpu_backend *cpu = NULL;
    swin_status st = swin_cpu_backend_create_for_plan(p->threads, &cpu, err);
    if (st) return st;
    swin_cpu_backend_set_simd(cpu, SWIN_CPU_SIMD_BASELINE);
    *b = (struct swin_backend_inst){
        .params = *p,
        .be = cpu,
        .ops = &swin_cpu_ops,
        .model = p->model,
        .weight_bytes = p->model->flat_bytes,
        .threads = swin_cpu_backend_threads(cpu),
        .precision_note = "",
    };
    return SWIN_OK;
}

static swin_status portable_start(struct swin_backend_inst *b, swin_error *err)
{
    return swin_cpu_backend_start(b->be, err);
}

static void portable_free(struct swin_backend_inst *b)
{
    swin_cpu_backend_free(b->be);
    *b = (struct swin_backend_inst){0};
}

static swin_status portable_arena_alloc(struct swin_backend_inst *b, size_t bytes, size_t align, void **arena,
                                        swin_error *err)
{
    *arena = aligned_alloc(align, (bytes + align - 1) / align * align);
    return *arena ? SWIN_OK : swin_error_set(err, SWIN_ERR_NOMEM, "cpu-portable: no memory for the arena");
}

static void portable_arena_free(struct swin_backend_inst *b, void *arena)
{
    free(arena);
}

const struct swin_backend_iface swin_planted_backend_iface = {
    .name = "cpu-portable",
    .supports_precision = portable_supports_precision,
    .usable = portable_usable,
    .create = portable_create,
    .start = portable_start,
    .free = portable_free,
    .arena_alloc = portable_arena_alloc,
    .arena_free = portable_arena_free,
};
