/* The static memory planner.
 *
 * forward() runs twice through the same code. In plan mode every activation and every
 * op workspace is only declared: swin_plan_alloc() records its size and the event at which it
 * becomes live, swin_plan_free() the event at which it dies. swin_plan_solve() then gives each
 * tensor an offset in one arena (greedy best fit among the gaps left by tensors whose
 * lifetimes overlap, trying a few placement orders — by size, size x lifetime, lifetime,
 * birth — and keeping the smallest arena) and reports the lower bound: the largest sum of
 * bytes live at one event. In run mode the same sequence of swin_plan_alloc() calls returns those offsets,
 * so planning and running cannot disagree; a different sequence is an internal error.
 *
 * A tensor may shrink in place: swin_plan_shrink() gives back everything past a head (the op
 * before it packed what lives on into the head). So a tensor is a head [0, head) live over
 * [born, dies) plus at most one tail [head, bytes) live over [born, tail_dies); the
 * placement keeps every pair of (time x bytes) rectangles apart.
 */
#ifndef SWIN_PLAN_H
#define SWIN_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define SWIN_PLAN_ALIGN 256

struct swin_plan_tensor {
    size_t bytes;            /* extent at swin_plan_alloc, rounded up to SWIN_PLAN_ALIGN */
    size_t head;             /* bytes live over the whole life; == bytes when there is no tail */
    size_t offset;           /* assigned by swin_plan_solve */
    int born, dies;          /* event numbers; dies == -1 while live */
    int tail_dies;           /* end of [head, bytes)'s life; -1 until it ends */
    const char *name;
};

struct swin_plan {
    struct swin_plan_tensor *t;
    int n, cap;
    int event;       /* next event number */
    bool solved;
    int cursor;      /* run mode: index of the next tensor swin_plan_alloc returns */
    size_t arena_bytes;  /* after swin_plan_solve */
    size_t lower_bound;  /* largest sum of simultaneously live bytes */
};

void swin_plan_init(struct swin_plan *p);
void swin_plan_release(struct swin_plan *p);

/* Plan mode: declares a tensor of `bytes`; returns its id (>= 0) or -1 when out of host
 * memory for the plan itself. Run mode: returns the id of the next tensor in sequence,
 * or -1 if `bytes` differs from what was planned (the sequence diverged). */
int swin_plan_alloc(struct swin_plan *p, size_t bytes, const char *name);
/* Marks tensor `id` dead from now on (plan mode); a no-op in run mode. */
void swin_plan_free(struct swin_plan *p, int id);
/* Plan mode: tensor `id` (live, never shrunk) keeps only its first `bytes` (fewer than it
 * has) from now on. Returns false otherwise. No-op in run mode. */
bool swin_plan_shrink(struct swin_plan *p, int id, size_t bytes);

/* Assigns offsets; every tensor must have been freed. Fills arena_bytes and lower_bound. */
swin_status swin_plan_solve(struct swin_plan *p, swin_error *err);
/* Rewinds to run mode (after swin_plan_solve). */
void swin_plan_rewind(struct swin_plan *p);

#endif
