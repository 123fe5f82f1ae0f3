/* Opening a compute backend (CPU or CUDA) behind the op table, and its arena. */
#ifndef SWIN_BACKEND_H
#define SWIN_BACKEND_H

#include <stdbool.h>

#include "kernels/ops.h"
#include "core/model.h"
#include "runtime/swinrun.h"

struct swin_backend_ctx {
    swin_backend kind;           /* SWIN_BACKEND_CPU or SWIN_BACKEND_CUDA */
    swin_precision precision;    /* FP16: CUDA half mode (ops->act_dtype == SWIN_F16); BF16: CPU */
    const char *precision_note;  /* plan info's precision_note */
    struct swin_model *weights;  /* BF16: the backend's copy of the model (kernels/cpu/model_bf16.h)
                                    that forward() runs; NULL otherwise (the caller's model) */
    const struct swin_ops *ops;
    void *be;                    /* the backend context; NULL for a CUDA plan without a device */
    size_t weight_bytes;         /* the backend's copy of the weights */
    size_t context_bytes;        /* its fixed scratch besides weights and arena */
    char reason[160];            /* why this backend (swin_plan_info.backend_reason) */
};

/* Opens the backend p->backend asks for, in precision p->precision. With need_device
 * false (planning only), CUDA needs no GPU: its workspace queries are pure functions of shapes. AUTO takes CUDA when
 * a device opens, else the CPU, and says why in b->reason. */
swin_status swin_backend_open(const struct swin_model *m, const swin_context_params *p, bool need_device,
                         struct swin_backend_ctx *b, swin_error *err);
void swin_backend_close(struct swin_backend_ctx *b);

/* The one arena allocation (host for the CPU, device for CUDA), SWIN_PLAN_ALIGN aligned. */
swin_status swin_backend_arena_alloc(struct swin_backend_ctx *b, size_t bytes, void **arena, swin_error *err);
void swin_backend_arena_free(struct swin_backend_ctx *b, void *arena);

#endif
