#include "runtime/plan.h"

#include <stdint.h>
#include <stdlib.h>

void plan_init(struct plan *p)
{
    *p = (struct plan){0};
}

void plan_release(struct plan *p)
{
    free(p->t);
    plan_init(p);
}

static size_t align_up(size_t n) { return (n + SWIN_PLAN_ALIGN - 1) / SWIN_PLAN_ALIGN * SWIN_PLAN_ALIGN; }

int plan_alloc(struct plan *p, size_t bytes, const char *name)
{
    size_t b = align_up(bytes ? bytes : 1);
    if (p->solved) {
        if (p->cursor >= p->n || p->t[p->cursor].bytes != b) return -1;
        return p->cursor++;
    }
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 256;
        struct plan_tensor *t = realloc(p->t, (size_t)cap * sizeof *t);
        if (!t) return -1;
        p->t = t;
        p->cap = cap;
    }
    p->t[p->n] = (struct plan_tensor){.bytes = b, .born = p->event++, .dies = -1, .name = name};
    return p->n++;
}

void plan_free(struct plan *p, int id)
{
    if (p->solved || id < 0 || id >= p->n) return;
    p->t[id].dies = p->event++;
}

static bool overlap_in_time(const struct plan_tensor *a, const struct plan_tensor *b)
{
    return a->born < b->dies && b->born < a->dies;
}

/* Sort keys carry what they compare, so no sort needs global state (the library is reentrant). */
struct sort_key {
    size_t key;
    int tie, idx;
};
static int by_key_desc(const void *x, const void *y)
{
    const struct sort_key *a = x, *b = y;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->tie - b->tie;
}
static int by_key_asc(const void *x, const void *y)
{
    const struct sort_key *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Lower bound: the largest sum of bytes live at one event. Any arena needs at least this. */
static size_t live_peak(const struct plan *p)
{
    size_t peak = 0;
    for (int e = 0; e < p->event; e++) {
        size_t live = 0;
        for (int i = 0; i < p->n; i++)
            if (p->t[i].born <= e && e < p->t[i].dies) live += p->t[i].bytes;
        if (live > peak) peak = live;
    }
    return peak;
}

swin_status plan_solve(struct plan *p, swin_error *err)
{
    for (int i = 0; i < p->n; i++)
        if (p->t[i].dies < 0)
            return swin_error_set(err, SWIN_ERR_INTERNAL, "plan: tensor '%s' is never freed",
                                  p->t[i].name ? p->t[i].name : "?");
    size_t cnt = (size_t)(p->n ? p->n : 1);
    struct sort_key *order = malloc(cnt * sizeof *order);
    int *placed = malloc(cnt * sizeof *placed);
    struct sort_key *near = malloc(cnt * sizeof *near);
    if (!order || !placed || !near) {
        free(order), free(placed), free(near);
        return swin_error_set(err, SWIN_ERR_NOMEM, "plan: out of host memory");
    }
    for (int i = 0; i < p->n; i++) order[i] = (struct sort_key){p->t[i].bytes, p->t[i].born, i};
    qsort(order, (size_t)p->n, sizeof *order, by_key_desc);

    /* Greedy by size, best fit: place each tensor, largest first, in the smallest gap
     * between tensors already placed whose lifetimes overlap its own. */
    size_t arena = 0;
    int nplaced = 0;
    for (int k = 0; k < p->n; k++) {
        struct plan_tensor *t = &p->t[order[k].idx];
        int nn = 0;
        for (int j = 0; j < nplaced; j++) {
            const struct plan_tensor *o = &p->t[placed[j]];
            if (overlap_in_time(t, o)) near[nn++] = (struct sort_key){o->offset, 0, placed[j]};
        }
        qsort(near, (size_t)nn, sizeof *near, by_key_asc);
        size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
        for (int j = 0; j < nn; j++) {
            const struct plan_tensor *o = &p->t[near[j].idx];
            if (o->offset > cursor && o->offset - cursor >= t->bytes && o->offset - cursor < best_gap) {
                best_gap = o->offset - cursor;
                best = cursor;
            }
            if (o->offset + o->bytes > cursor) cursor = o->offset + o->bytes;
        }
        t->offset = best != SIZE_MAX ? best : cursor;
        if (t->offset + t->bytes > arena) arena = t->offset + t->bytes;
        placed[nplaced++] = order[k].idx;
    }
    free(order), free(placed), free(near);
    p->arena_bytes = arena;
    p->lower_bound = live_peak(p);
    p->solved = true;
    p->cursor = 0;
    return SWIN_OK;
}

void plan_rewind(struct plan *p)
{
    p->cursor = 0;
}
