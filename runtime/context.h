/* A context on a backend the caller opened: swin_context_create is swin_backend_open
 * (runtime/backend.h) and this; a test opens a backend of its own by name
 * (swin_backend_open_named) and makes a context on it the same way. */
#ifndef SWIN_CONTEXT_H
#define SWIN_CONTEXT_H

#include "core/ring_geom.h"
#include "runtime/api.h"
#include "runtime/backend.h"
#include "runtime/plan.h"

struct swin_context {
    const struct swin_model *model;
    int cube[3];
    struct swin_plan plan;
    char *arena;
    struct swin_backend_ctx backend;
    swin_plan_info info;
    size_t mem_limit;              /* swin_context_params.mem_limit: 0 = none */
    void *ring;                    /* a volume's ring while it is blended on the backend (runtime/context_ring.h) */
    struct swin_ring_geom ring_geom;
    size_t ring_bytes;
};

/* A volume's ring for a plan: the grid its cubes slide over, their overlap, and what its
 * finished planes give back (core/ring_geom.h). */
struct swin_ring_request {
    int64_t grid[3];
    double overlap;
    int label_bytes;
    bool probs;
};

/* swin_model_plan for the cubes of a volume blended on the backend: the plan also counts the
 * ring of rq (plan info .ring_bytes, in .total_bytes; 0 on a backend that blends on the host)
 * and a memory limit refuses it, naming what would fit (a smaller cube, --half, blending on
 * the host). */
swin_status swin_model_plan_ring(const swin_model_t *m, const swin_context_params *p, const struct swin_ring_request *rq,
                                 swin_plan_info *out, swin_error *err);

/* swin_context_create for the cube `cube` (valid for m) on b, opened plan-only for m and p:
 * plans once, checks p->mem_limit, and only then starts b and allocates the arena. Takes b
 * over (closed on failure; *b is left closed either way). */
swin_status swin_context_create_on(const swin_model_t *m, const swin_context_params *p, const int cube[3],
                                   struct swin_backend_ctx *b, swin_context_t **out, swin_error *err);

#endif
