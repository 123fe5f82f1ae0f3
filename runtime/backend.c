#include "runtime/backend.h"
#include "core/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend_registry.h"
#include "runtime/plan.h"

/* The backends of the public enum: each one's registry name and the precision it refuses. */
static const struct public_backend {
    const char *name;
    swin_precision refused;
} public_backends[] = {
    [SWIN_BACKEND_CPU] = {"cpu", SWIN_PRECISION_FP16},
    [SWIN_BACKEND_CUDA] = {"cuda", SWIN_PRECISION_BF16},
};

/* Why kind refuses its precision, said whether or not this build has the backend. */
static swin_status refuse_precision(swin_backend kind, swin_error *err)
{
    const char *precision = swin_setting(SWIN_SETTING_PRECISION), *backend = swin_setting(SWIN_SETTING_BACKEND);
    if (kind == SWIN_BACKEND_CPU)
        return swin_error_set(err, SWIN_ERR_ARG, "half precision is a CUDA backend mode; the CPU backend runs float32 or "
                              "bfloat16 (use %s fp32 or bf16, or %s cuda or auto)", precision, backend);
    return swin_error_set(err, SWIN_ERR_ARG, "bfloat16 is a CPU backend mode; the CUDA backend runs float32 or float16 "
                          "(use %s fp32 or fp16, or %s cpu)", precision, backend);
}

/* What to say when this build lacks kind. */
static swin_status absent(swin_backend kind, swin_error *err)
{
    if (kind == SWIN_BACKEND_CPU) return swin_error_set(err, SWIN_ERR_BACKEND, "this build has no CPU backend");
    return swin_error_set(err, SWIN_ERR_BACKEND, "this build has no CUDA backend (it was built without the CUDA "
                          "toolkit); use the CPU backend (%s cpu or auto)", swin_setting(SWIN_SETTING_BACKEND));
}

static enum swin_numerics numerics_of(swin_precision p)
{
    return p == SWIN_PRECISION_FP16   ? SWIN_NUMERICS_FP16
           : p == SWIN_PRECISION_BF16 ? SWIN_NUMERICS_BF16
                                      : SWIN_NUMERICS_FP32;
}

/* The CPU backend's names of the levels of swin_cpu_isa (AUTO: none, its best). */
static const char *const cpu_isa_names[] = {
    [SWIN_CPU_ISA_AUTO] = NULL,         [SWIN_CPU_ISA_BASELINE] = "baseline",       [SWIN_CPU_ISA_AVX2] = "avx2",
    [SWIN_CPU_ISA_AVX512] = "avx512", [SWIN_CPU_ISA_AVX512_BF16] = "avx512bf16",
};
enum { CPU_ISA_LEVELS = sizeof cpu_isa_names / sizeof *cpu_isa_names };

/* The cap the CPU backend gets: p->cpu_isa, or with AUTO the environment's SWINRUN_CPU_ISA
 * when set (NULL: none). */
static swin_status cpu_isa_cap(const swin_context_params *p, const char **isa, swin_error *err)
{
    *isa = NULL;
    if ((int)p->cpu_isa < SWIN_CPU_ISA_AUTO || (int)p->cpu_isa >= CPU_ISA_LEVELS)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown CPU instruction-set level %d", (int)p->cpu_isa);
    if (p->cpu_isa != SWIN_CPU_ISA_AUTO) {
        *isa = cpu_isa_names[p->cpu_isa];
        return SWIN_OK;
    }
    const char *env = getenv("SWINRUN_CPU_ISA");
    if (!env || !env[0]) return SWIN_OK;
    for (int i = SWIN_CPU_ISA_BASELINE; i < CPU_ISA_LEVELS; i++)
        if (!strcmp(env, cpu_isa_names[i])) {
            *isa = cpu_isa_names[i];
            return SWIN_OK;
        }
    return swin_error_set(err, SWIN_ERR_ARG,
                          "SWINRUN_CPU_ISA=%.40s: the levels are baseline, avx2, avx512 and avx512bf16 (or unset it)",
                          env);
}

static swin_status open_iface(const struct swin_backend_iface *iface, swin_backend kind, swin_precision precision,
                              const struct swin_model *m, const swin_context_params *p, struct swin_backend_ctx *b,
                              swin_error *err)
{
    const char *isa = NULL;
    swin_status st = cpu_isa_cap(p, &isa, err);
    if (st) return st;
    const struct swin_backend_params bp = {.model = m,
                                           .numerics = numerics_of(precision),
                                           .threads = p->threads,
                                           .device = p->device,
                                           .isa = isa};
    *b = (struct swin_backend_ctx){.iface = iface, .kind = kind, .precision = precision};
    st = iface->create(&bp, &b->inst, err);
    if (!st && m->cfg.norm_groups && !b->inst.ops->groupnorm_act) {
        iface->free(&b->inst);
        st = swin_error_set(err, SWIN_ERR_ARG,
                            "the %s backend does not run group norm (this model was built with norm_name='group'): "
                            "run it with %s cpu",
                            iface->name, swin_setting(SWIN_SETTING_BACKEND));
    }
    if (st) *b = (struct swin_backend_ctx){0};
    return st;
}

swin_status swin_backend_open_named(const char *name, swin_backend kind, const struct swin_model *m,
                                    const swin_context_params *p, struct swin_backend_ctx *b, swin_error *err)
{
    *b = (struct swin_backend_ctx){0};
    const struct swin_backend_iface *iface = swin_backend_find(name);
    if (!iface) return swin_error_set(err, SWIN_ERR_BACKEND, "this build has no backend \"%s\"", name);
    if (!iface->supports_precision(numerics_of(p->precision)))
        return swin_error_set(err, SWIN_ERR_ARG, "the %s backend does not run %s", name,
                              swin_precision_name(p->precision));
    swin_status st = open_iface(iface, kind, p->precision, m, p, b, err);
    if (!st) snprintf(b->reason, sizeof b->reason, "requested");
    return st;
}

static swin_status open_public(swin_backend kind, const struct swin_model *m, const swin_context_params *p,
                               struct swin_backend_ctx *b, swin_error *err)
{
    const struct public_backend *pb = &public_backends[kind];
    if (p->precision == pb->refused) return refuse_precision(kind, err);
    if (!swin_backend_find(pb->name)) return absent(kind, err);
    return swin_backend_open_named(pb->name, kind, m, p, b, err);
}

/* AUTO's CPU, which runs fp16 requests as float32 (plan info .precision FP32). */
static swin_status open_auto_cpu(const struct swin_model *m, const swin_context_params *p, const char *why,
                                 struct swin_backend_ctx *b, swin_error *err)
{
    const struct swin_backend_iface *cpu = swin_backend_find(public_backends[SWIN_BACKEND_CPU].name);
    if (!cpu) return absent(SWIN_BACKEND_CPU, err);
    swin_status st = open_iface(cpu, SWIN_BACKEND_CPU, SWIN_PRECISION_FP32, m, p, b, err);
    if (!st) snprintf(b->reason, sizeof b->reason, "%s", why);
    return st;
}

/* CUDA when its device is usable and CUDA opens, else the CPU. Planning only asks whether
 * the device exists; a run's start opens it (swin_backend_fall_back when that fails). A
 * backend that fails to open says why in the reason (at most 120 characters of the cause:
 * the reason holds 160). */
static swin_status open_auto(const struct swin_model *m, const swin_context_params *p, struct swin_backend_ctx *b,
                             swin_error *err)
{
    if (p->precision == SWIN_PRECISION_BF16) {
        swin_status st = open_public(SWIN_BACKEND_CPU, m, p, b, err);
        if (!st) snprintf(b->reason, sizeof b->reason, "auto: bf16 is a CPU backend mode");
        return st;
    }
    char why[160] = "auto: this build has no CUDA backend";
    const struct swin_backend_iface *cuda = swin_backend_find(public_backends[SWIN_BACKEND_CUDA].name);
    swin_error cuda_err = {0};
    if (cuda && !cuda->usable(p->device)) snprintf(why, sizeof why, "auto: no usable CUDA device %d", p->device);
    else if (cuda && open_iface(cuda, SWIN_BACKEND_CUDA, p->precision, m, p, b, &cuda_err) == SWIN_OK) {
        snprintf(b->reason, sizeof b->reason, "auto: CUDA device %d is usable", p->device);
        b->may_fall_back = true;
        return SWIN_OK;
    } else if (cuda) snprintf(why, sizeof why, "auto: CUDA device %d did not open (%.120s)", p->device, cuda_err.msg);
    return open_auto_cpu(m, p, why, b, err);
}

swin_status swin_backend_open(const struct swin_model *m, const swin_context_params *p, struct swin_backend_ctx *b,
                              swin_error *err)
{
    *b = (struct swin_backend_ctx){0};
    if (p->threads < 0 || p->threads > SWIN_THREADS_MAX)
        return swin_error_set(err, SWIN_ERR_ARG, "threads %d: it must be 0..%d (0 = every core)", p->threads,
                              SWIN_THREADS_MAX);
    if (p->device < 0 || p->device > SWIN_DEVICE_MAX)
        return swin_error_set(err, SWIN_ERR_ARG, "CUDA device %d: the index must be 0..%d", p->device, SWIN_DEVICE_MAX);
    if (p->precision != SWIN_PRECISION_FP32 && p->precision != SWIN_PRECISION_FP16 &&
        p->precision != SWIN_PRECISION_BF16)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown precision %d (fp32, fp16 or bf16)", (int)p->precision);
    switch (p->backend) {
    case SWIN_BACKEND_CPU:
    case SWIN_BACKEND_CUDA: return open_public(p->backend, m, p, b, err);
    case SWIN_BACKEND_AUTO: return open_auto(m, p, b, err);
    }
    return swin_error_set(err, SWIN_ERR_ARG, "unknown backend %d", (int)p->backend);
}

swin_status swin_backend_start(struct swin_backend_ctx *b, swin_error *err)
{
    return b->iface->start(&b->inst, err);
}

swin_status swin_backend_fall_back(struct swin_backend_ctx *b, const char *why, swin_error *err)
{
    const struct swin_backend_params bp = b->inst.params;
    swin_context_params p = {.threads = bp.threads, .device = bp.device};
    for (int i = SWIN_CPU_ISA_BASELINE; i < CPU_ISA_LEVELS; i++)
        if (bp.isa && !strcmp(bp.isa, cpu_isa_names[i])) p.cpu_isa = (swin_cpu_isa)i;
    char reason[160];
    snprintf(reason, sizeof reason, "auto: CUDA device %d did not open (%.120s)", bp.device, why);
    swin_backend_close(b);
    return open_auto_cpu(bp.model, &p, reason, b, err);
}

void swin_backend_close(struct swin_backend_ctx *b)
{
    if (b->iface) b->iface->free(&b->inst);
    *b = (struct swin_backend_ctx){0};
}

swin_status swin_backend_arena_alloc(struct swin_backend_ctx *b, size_t bytes, void **arena, swin_error *err)
{
    return b->iface->arena_alloc(&b->inst, bytes ? bytes : SWIN_PLAN_ALIGN, SWIN_PLAN_ALIGN, arena, err);
}

void swin_backend_arena_free(struct swin_backend_ctx *b, void *arena)
{
    if (arena) b->iface->arena_free(&b->inst, arena);
}
