/* The backend interface: what every compute backend fills once, in its own folder under
 * kernels/ (struct swin_backend_iface), and what the runtime finds in the registry by name
 * (runtime/backend_registry.h). The op table itself is struct swin_ops (kernels/ops.h).
 *
 *   struct swin_backend_inst b;
 *   iface->create(&params, &b, &err);       // plan-only: no thread, no device, no weights
 *   ... plan with b.ops and b.be (the *_ws queries) ...
 *   iface->start(&b, &err);                 // threads, device, the backend's weight copy
 *   iface->arena_alloc(&b, plan_bytes, 256, &arena, &err);
 *   ... run b.ops on b.be, with the weights of b.model ...
 *   iface->arena_free(&b, arena);
 *   iface->free(&b);
 *
 * Lifecycle: create makes an instance that answers the op table's workspace queries and
 * says its byte counts, but starts no thread, opens no device and holds no weights: a memory
 * plan (and a memory limit's search for a cube that fits) costs no more than the plan.
 * start makes it run; ops must not be called before. free ends either state. One instance
 * is used by one thread at a time. Functions return a status and fill err; none prints. */
#ifndef SWIN_BACKEND_IFACE_H
#define SWIN_BACKEND_IFACE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/model.h"
#include "core/status.h"
#include "kernels/ops.h"

/* What a backend stores and computes in: the values of the public swin_precision
 * (runtime/swinrun.h), which this layer cannot include. */
enum swin_numerics {
    SWIN_NUMERICS_FP32 = 0, /* float32 weights and activations */
    SWIN_NUMERICS_FP16 = 1, /* float16 storage, float32 arithmetic */
    SWIN_NUMERICS_BF16 = 2, /* bfloat16 GEMM weights, float32 activations and accumulation */
};

/* What an instance is created with. */
struct swin_backend_params {
    const struct swin_model *model; /* the float32 weights, as loaded; outlives the instance */
    enum swin_numerics numerics;    /* one that supports_precision accepts */
    int threads;                    /* host threads its ops may use; 0 = every core */
    int device;                     /* device index, for a backend with devices */
    const char *isa;                /* the highest instruction-set level its kernels may use, by the
                                       backend's own name for it (CPU: "avx2", ...; a backend without
                                       levels ignores it); NULL: its best */
};

/* One instance: create fills it, start may change `model` (to the backend's own copy). */
struct swin_backend_inst {
    struct swin_backend_params params; /* what it was created with */
    void *be;                          /* the backend's context: what its ops take */
    const struct swin_ops *ops;        /* its op table for params.numerics */
    const struct swin_model *model;    /* the weights forward() passes to the ops */
    size_t weight_bytes;               /* its copy of the weights, in its storage */
    size_t context_bytes;              /* its fixed scratch besides weights and arena */
    int threads;                       /* host threads its ops run on; 0: they run on a device */
    const char *precision_note;        /* how it runs params.numerics, for the plan; "" if nothing to say */
    const char *isa, *isa_best;        /* the level its kernels run at, and the best the host has; "" if none */
    void *own;                         /* what else the backend keeps (e.g. its weight copy) */
};

struct swin_backend_iface {
    const char *name; /* the registry's key: "cpu", "cuda" */

    /* Capability: whether the backend runs `n`. */
    bool (*supports_precision)(enum swin_numerics n);
    /* Whether it could start on device index `device` now (the device exists and its driver
     * answers), opening nothing; true for a backend without devices. */
    bool (*usable)(int device);

    /* Lifecycle. create fills *b plan-only (on failure there is nothing to free); start
     * starts it, once (after a failed start, only free); free releases it (either state). */
    swin_status (*create)(const struct swin_backend_params *p, struct swin_backend_inst *b, swin_error *err);
    swin_status (*start)(struct swin_backend_inst *b, swin_error *err);
    void (*free)(struct swin_backend_inst *b);

    /* Memory. The one activation arena of a started instance: bytes (> 0) at an address
     * that is a multiple of align (a power of two, at most 256); SWIN_ERR_NOMEM when it
     * does not fit. */
    swin_status (*arena_alloc)(struct swin_backend_inst *b, size_t bytes, size_t align, void **arena, swin_error *err);
    void (*arena_free)(struct swin_backend_inst *b, void *arena);
};

#endif
