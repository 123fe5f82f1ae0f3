#include "runtime/backend.h"

#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/model_bf16.h"
#include "runtime/plan.h"
#ifdef SWIN_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

/* BF16 converts the weights only when the backend will run (need_device): a plan needs
 * their size alone. */
static swin_status open_cpu(const struct swin_model *m, const swin_context_params *p, bool need_device,
                            struct swin_backend_ctx *b, swin_error *err)
{
    struct swin_cpu_backend *cpu = NULL;
    swin_status st = swin_cpu_backend_create(p->threads, &cpu, err);
    if (st) return st;
    *b = (struct swin_backend_ctx){.kind = SWIN_BACKEND_CPU, .ops = &swin_cpu_ops, .be = cpu, .weight_bytes = m->flat_bytes,
                          .precision_note = ""};
    if (p->precision != SWIN_PRECISION_BF16) return SWIN_OK;
    b->precision = SWIN_PRECISION_BF16;
    b->precision_note = swin_cpu_bf16_note(cpu);
    b->weight_bytes = swin_model_bf16_bytes(m, SWIN_BF16_KEEP_DEFAULT);
    size_t bf16_bytes = 0;
    if (need_device && (st = swin_model_bf16_copy(m, SWIN_BF16_KEEP_DEFAULT, &b->weights, &bf16_bytes, err))) {
        swin_cpu_backend_free(cpu);
        *b = (struct swin_backend_ctx){0};
        return st;
    }
    swin_cpu_backend_set_bf16(cpu, b->weights ? b->weights->flat : NULL, bf16_bytes);
    return SWIN_OK;
}

#ifdef SWIN_HAVE_CUDA
static swin_status open_cuda(const struct swin_model *m, const swin_context_params *p, bool need_device,
                             struct swin_backend_ctx *b, swin_error *err)
{
    struct swin_cuda_backend *cuda = NULL;
    const bool half = p->precision == SWIN_PRECISION_FP16;
    const enum swin_dtype dtype = half ? SWIN_F16 : SWIN_F32;
    if (need_device) {
        swin_status st = swin_cuda_backend_create(p->device, m, dtype, &cuda, err);
        if (st) return st;
    }
    *b = (struct swin_backend_ctx){.kind = SWIN_BACKEND_CUDA, .precision = p->precision, .precision_note = "",
                          .ops = swin_cuda_ops_for(dtype), .be = cuda,
                          .weight_bytes = swin_cuda_weight_bytes(m, dtype),
                          .context_bytes = swin_cuda_context_bytes(cuda)};
    return SWIN_OK;
}
#endif

swin_status swin_backend_open(const struct swin_model *m, const swin_context_params *p, bool need_device,
                         struct swin_backend_ctx *b, swin_error *err)
{
    *b = (struct swin_backend_ctx){0};
    swin_status st;
    if (p->threads < 0 || p->threads > SWIN_THREADS_MAX)
        return swin_error_set(err, SWIN_ERR_ARG, "threads %d: it must be 0..%d (0 = every core)", p->threads,
                              SWIN_THREADS_MAX);
    if (p->device < 0 || p->device > SWIN_DEVICE_MAX)
        return swin_error_set(err, SWIN_ERR_ARG, "CUDA device %d: the index must be 0..%d", p->device,
                              SWIN_DEVICE_MAX);
    if (p->precision != SWIN_PRECISION_FP32 && p->precision != SWIN_PRECISION_FP16 &&
        p->precision != SWIN_PRECISION_BF16)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown precision %d (fp32, fp16 or bf16)", (int)p->precision);
    switch (p->backend) {
    case SWIN_BACKEND_CPU:
        if (p->precision == SWIN_PRECISION_FP16)
            return swin_error_set(err, SWIN_ERR_ARG,
                                  "half precision is a CUDA backend mode; the CPU backend runs float32 or "
                                  "bfloat16 (use --precision fp32 or bf16, or --backend cuda or auto)");
        if ((st = open_cpu(m, p, need_device, b, err))) return st;
        snprintf(b->reason, sizeof b->reason, "requested");
        return SWIN_OK;
    case SWIN_BACKEND_CUDA:
        if (p->precision == SWIN_PRECISION_BF16)
            return swin_error_set(err, SWIN_ERR_ARG,
                                  "bfloat16 is a CPU backend mode; the CUDA backend runs float32 or float16 "
                                  "(use --precision fp32 or fp16, or --backend cpu)");
#ifdef SWIN_HAVE_CUDA
        if ((st = open_cuda(m, p, need_device, b, err))) return st;
        snprintf(b->reason, sizeof b->reason, "requested");
        return SWIN_OK;
#else
        return swin_error_set(err, SWIN_ERR_BACKEND,
                              "this build has no CUDA backend (it was built without the CUDA toolkit); "
                              "use the CPU backend (--backend cpu or auto)");
#endif
    case SWIN_BACKEND_AUTO: {
        char why[160] = "auto: this build has no CUDA backend";
        if (p->precision == SWIN_PRECISION_BF16) {
            if ((st = open_cpu(m, p, need_device, b, err))) return st;
            snprintf(b->reason, sizeof b->reason, "auto: bf16 is a CPU backend mode");
            return SWIN_OK;
        }
#ifdef SWIN_HAVE_CUDA
        /* Planning only asks whether the device exists; a run also opens it (uploads weights).
         * A device that exists but fails to open says why in the reason (at most 120
         * characters of the cause: the reason holds 160). */
        swin_error cuda_err = {0};
        if (!swin_cuda_device_usable(p->device))
            snprintf(why, sizeof why, "auto: no usable CUDA device %d", p->device);
        else if (open_cuda(m, p, need_device, b, &cuda_err) == SWIN_OK) {
            snprintf(b->reason, sizeof b->reason, "auto: CUDA device %d is usable", p->device);
            return SWIN_OK;
        } else
            snprintf(why, sizeof why, "auto: CUDA device %d did not open (%.120s)", p->device, cuda_err.msg);
#endif
        /* the CPU runs fp16 requests as float32 (plan info .precision FP32) */
        swin_context_params q = *p;
        q.precision = SWIN_PRECISION_FP32;
        if ((st = open_cpu(m, &q, need_device, b, err))) return st;
        snprintf(b->reason, sizeof b->reason, "%s", why);
        return SWIN_OK;
    }
    }
    return swin_error_set(err, SWIN_ERR_ARG, "unknown backend %d", (int)p->backend);
}

void swin_backend_close(struct swin_backend_ctx *b)
{
    swin_model_bf16_free(b->weights);
    b->weights = NULL;
    if (!b->be) return;
    if (b->kind == SWIN_BACKEND_CPU) swin_cpu_backend_free(b->be);
#ifdef SWIN_HAVE_CUDA
    else swin_cuda_backend_free(b->be);
#endif
    b->be = NULL;
}

swin_status swin_backend_arena_alloc(struct swin_backend_ctx *b, size_t bytes, void **arena, swin_error *err)
{
    if (!bytes) bytes = SWIN_PLAN_ALIGN;
#ifdef SWIN_HAVE_CUDA
    if (b->kind == SWIN_BACKEND_CUDA) {
        *arena = swin_cuda_arena_alloc(b->be, bytes, err);
        return *arena ? SWIN_OK : (err ? err->status : SWIN_ERR_NOMEM);
    }
#endif
    *arena = aligned_alloc(SWIN_PLAN_ALIGN, (bytes + SWIN_PLAN_ALIGN - 1) / SWIN_PLAN_ALIGN * SWIN_PLAN_ALIGN);
    if (!*arena)
        return swin_error_set(err, SWIN_ERR_NOMEM,
                              "out of host memory for the %.1f MiB activation arena: free some, or use a smaller "
                              "window (--cube)",
                              (double)bytes / (1024.0 * 1024.0));
    return SWIN_OK;
}

void swin_backend_arena_free(struct swin_backend_ctx *b, void *arena)
{
    if (!arena) return;
#ifdef SWIN_HAVE_CUDA
    if (b->kind == SWIN_BACKEND_CUDA) {
        swin_cuda_arena_free(b->be, arena);
        return;
    }
#endif
    free(arena);
}
