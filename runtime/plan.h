/* The static memory planner.
 *
 * forward() runs twice through the same code. In plan mode every activation and every
 * op workspace is only declared: plan_alloc() records its size and the event at which it
 * becomes live, plan_free() the event at which it dies. plan_solve() then gives each
 * tensor an offset in one arena (greedy best fit among the gaps left by tensors whose
 * lifetimes overlap, trying a few placement orders — by size, size x lifetime, lifetime,
 * birth — and keeping the smallest arena) and reports the lower bound: the largest sum of
 * bytes live at one event. In run mode the same sequence of plan_alloc() calls returns those offsets,
 * so planning and running cannot disagree; a different sequence is an internal error.
 */
#ifndef SWIN_PLAN_H
#define SWIN_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define SWIN_PLAN_ALIGN 256

struct plan_tensor {
    size_t bytes;    /* rounded up to SWIN_PLAN_ALIGN */
    size_t offset;   /* assigned by plan_solve */
    int born, dies;  /* event numbers; dies == -1 while live */
    const char *name;
};

struct plan {
    struct plan_tensor *t;
    int n, cap;
    int event;       /* next event number */
    bool solved;
    int cursor;      /* run mode: index of the next tensor plan_alloc returns */
    size_t arena_bytes;  /* after plan_solve */
    size_t lower_bound;  /* largest sum of simultaneously live bytes */
};

void plan_init(struct plan *p);
void plan_release(struct plan *p);

/* Plan mode: declares a tensor of `bytes`; returns its id (>= 0) or -1 when out of host
 * memory for the plan itself. Run mode: returns the id of the next tensor in sequence,
 * or -1 if `bytes` differs from what was planned (the sequence diverged). */
int plan_alloc(struct plan *p, size_t bytes, const char *name);
/* Marks tensor `id` dead from now on (plan mode); a no-op in run mode. */
void plan_free(struct plan *p, int id);

/* Assigns offsets; every tensor must have been freed. Fills arena_bytes and lower_bound. */
swin_status plan_solve(struct plan *p, swin_error *err);
/* Rewinds to run mode (after plan_solve). */
void plan_rewind(struct plan *p);

#endif
