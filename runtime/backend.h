/* The compute backend of a context: the public choice (swin_context_params .backend and
 * .precision, AUTO's rule) resolved to a backend of the registry (runtime/backend_registry.h)
 * and opened through the backend interface (kernels/backend.h). */
#ifndef SWIN_BACKEND_H
#define SWIN_BACKEND_H

#include <stdbool.h>

#include "core/model.h"
#include "kernels/backend.h"
#include "runtime/api.h"

struct swin_backend_ctx {
    const struct swin_backend_iface *iface; /* NULL: nothing open */
    struct swin_backend_inst inst;          /* plan-only until swin_backend_start */
    swin_backend kind;                      /* what plan info reports: SWIN_BACKEND_CPU or SWIN_BACKEND_CUDA */
    swin_precision precision;               /* what it runs (AUTO on the CPU runs FP16 requests as FP32) */
    bool may_fall_back;                     /* AUTO chose CUDA: the CPU when it does not start */
    char reason[160];                       /* why this backend (swin_plan_info.backend_reason) */
};

/* Checks p's threads, device and precision and opens plan-only (no thread, no device, no
 * weights) the backend p->backend asks for, in precision p->precision: the CPU, CUDA, or for
 * AUTO CUDA when its device is usable (not opened yet), else the CPU, saying why in
 * b->reason. m must outlive b. */
swin_status swin_backend_open(const struct swin_model *m, const swin_context_params *p, struct swin_backend_ctx *b,
                              swin_error *err);
/* Opens plan-only the registry's backend `name` in p's precision, threads and device, as
 * requested (b->reason "requested"; b->kind = kind): for a backend the public enum does not
 * name. SWIN_ERR_BACKEND when the build has none of that name, SWIN_ERR_ARG when it does not
 * run the precision. */
swin_status swin_backend_open_named(const char *name, swin_backend kind, const struct swin_model *m,
                                    const swin_context_params *p, struct swin_backend_ctx *b, swin_error *err);
/* Starts b: its threads, device and weight copy (b->inst.model may then be its own copy). */
swin_status swin_backend_start(struct swin_backend_ctx *b, swin_error *err);
/* For b->may_fall_back, once b failed to start because of `why`: closes it and opens the CPU
 * plan-only in its place, the reason saying why. */
swin_status swin_backend_fall_back(struct swin_backend_ctx *b, const char *why, swin_error *err);
/* Releases b (open or started; NULL iface: nothing to release). */
void swin_backend_close(struct swin_backend_ctx *b);

/* The one arena allocation of a started b (host for the CPU, device for CUDA), SWIN_PLAN_ALIGN aligned. */
swin_status swin_backend_arena_alloc(struct swin_backend_ctx *b, size_t bytes, void **arena, swin_error *err);
void swin_backend_arena_free(struct swin_backend_ctx *b, void *arena);

#endif
