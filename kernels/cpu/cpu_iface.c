/* The CPU backend behind the backend interface: float32, or bfloat16 GEMM weights from a
 * bfloat16 copy of the model that start makes (a plan needs its size alone); a context
 * without its thread pool until start; the arena in host memory. */
#include "kernels/cpu/cpu_iface.h"
#include "core/settings.h"

#include <stdlib.h>

#include "core/big_alloc.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/model_bf16.h"

static bool cpu_supports_precision(enum swin_numerics n)
{
    return n == SWIN_NUMERICS_FP32 || n == SWIN_NUMERICS_BF16;
}

static bool cpu_usable(int device)
{
    (void)device;
    return true;
}

static swin_status cpu_create(const struct swin_backend_params *p, struct swin_backend_inst *b, swin_error *err)
{
    enum swin_cpu_simd cap = SWIN_CPU_SIMD_AVX512_BF16;
    if (p->isa && p->isa[0] && !swin_cpu_simd_parse(p->isa, &cap))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "CPU instruction set \"%s\": the levels are baseline, avx2, avx512 and avx512bf16", p->isa);
    struct swin_cpu_backend *cpu = NULL;
    swin_status st = swin_cpu_backend_create_for_plan(p->threads, &cpu, err);
    if (st) return st;
    const enum swin_cpu_simd level = swin_cpu_backend_set_simd(cpu, cap);
    const bool bf16 = p->numerics == SWIN_NUMERICS_BF16;
    if (bf16) swin_cpu_backend_plan_bf16(cpu);
    *b = (struct swin_backend_inst){
        .params = *p,
        .be = cpu,
        .ops = &swin_cpu_ops,
        .model = p->model,
        .weight_bytes = bf16 ? swin_model_bf16_bytes(p->model, SWIN_BF16_KEEP_DEFAULT) : p->model->flat_bytes,
        .threads = swin_cpu_backend_threads(cpu),
        .precision_note = bf16 ? swin_cpu_bf16_note(cpu) : "",
        .isa = swin_cpu_simd_name(level),
        .isa_best = swin_cpu_simd_name(swin_cpu_simd_of_cpu()),
    };
    return SWIN_OK;
}

static swin_status cpu_start(struct swin_backend_inst *b, swin_error *err)
{
    swin_status st = swin_cpu_backend_start(b->be, err);
    if (st || b->params.numerics != SWIN_NUMERICS_BF16) return st;
    struct swin_model *copy = NULL;
    size_t bf16_bytes = 0;
    if ((st = swin_model_bf16_copy(b->params.model, SWIN_BF16_KEEP_DEFAULT, &copy, &bf16_bytes, err))) return st;
    swin_cpu_backend_set_bf16(b->be, copy->flat, bf16_bytes);
    b->own = copy;
    b->model = copy;
    return SWIN_OK;
}

static void cpu_free(struct swin_backend_inst *b)
{
    swin_model_bf16_free(b->own);
    swin_cpu_backend_free(b->be);
    *b = (struct swin_backend_inst){0};
}

static swin_status cpu_arena_alloc(struct swin_backend_inst *b, size_t bytes, size_t align, void **arena,
                                   swin_error *err)
{
    *arena = swin_big_alloc(bytes, align);
    if (!*arena)
        return swin_error_set(err, SWIN_ERR_NOMEM,
                              "out of host memory for the %.1f MiB activation arena: free some, or use a smaller "
                              "cube (%s)",
                              (double)bytes / (1024.0 * 1024.0), swin_setting(SWIN_SETTING_CUBE));
    return SWIN_OK;
}

static void cpu_arena_free(struct swin_backend_inst *b, void *arena)
{
    swin_big_free(arena);
}

const struct swin_backend_iface swin_cpu_backend_iface = {
    .name = "cpu",
    .supports_precision = cpu_supports_precision,
    .usable = cpu_usable,
    .create = cpu_create,
    .start = cpu_start,
    .free = cpu_free,
    .arena_alloc = cpu_arena_alloc,
    .arena_free = cpu_arena_free,
};
