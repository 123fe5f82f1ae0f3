#include "runtime/plan.h"

#include <stdint.h>
#include <stdlib.h>

void swin_plan_init(struct swin_plan *p)
{
    *p = (struct swin_plan){0};
}

void swin_plan_release(struct swin_plan *p)
{
    free(p->t);
    swin_plan_init(p);
}

static size_t align_up(size_t n) { return (n + SWIN_PLAN_ALIGN - 1) / SWIN_PLAN_ALIGN * SWIN_PLAN_ALIGN; }

int swin_plan_alloc(struct swin_plan *p, size_t bytes, const char *name)
{
    size_t b = align_up(bytes ? bytes : 1);
    if (p->solved) {
        if (p->cursor >= p->n || p->t[p->cursor].bytes != b) return -1;
        return p->cursor++;
    }
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 256;
        struct swin_plan_tensor *t = realloc(p->t, (size_t)cap * sizeof *t);
        if (!t) return -1;
        p->t = t;
        p->cap = cap;
    }
    p->t[p->n] = (struct swin_plan_tensor){.bytes = b, .born = p->event++, .dies = -1, .name = name};
    return p->n++;
}

void swin_plan_free(struct swin_plan *p, int id)
{
    if (p->solved || id < 0 || id >= p->n) return;
    p->t[id].dies = p->event++;
}

static bool overlap_in_time(const struct swin_plan_tensor *a, const struct swin_plan_tensor *b)
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
static size_t live_peak(const struct swin_plan *p)
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

/* Places tensors in the given order, each in the smallest gap (best fit) between tensors
 * already placed whose lifetimes overlap its own, else above them. Writes off[]; returns
 * the arena size. */
static size_t place_in_order(const struct swin_plan *p, const struct sort_key *order, size_t *off, int *placed,
                             struct sort_key *near)
{
    size_t arena = 0;
    int nplaced = 0;
    for (int k = 0; k < p->n; k++) {
        const struct swin_plan_tensor *t = &p->t[order[k].idx];
        int nn = 0;
        for (int j = 0; j < nplaced; j++)
            if (overlap_in_time(t, &p->t[placed[j]])) near[nn++] = (struct sort_key){off[placed[j]], 0, placed[j]};
        qsort(near, (size_t)nn, sizeof *near, by_key_asc);
        size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
        for (int j = 0; j < nn; j++) {
            size_t o = near[j].key, end = o + p->t[near[j].idx].bytes;
            if (o > cursor && o - cursor >= t->bytes && o - cursor < best_gap) {
                best_gap = o - cursor;
                best = cursor;
            }
            if (end > cursor) cursor = end;
        }
        size_t at = best != SIZE_MAX ? best : cursor;
        off[order[k].idx] = at;
        if (at + t->bytes > arena) arena = at + t->bytes;
        placed[nplaced++] = order[k].idx;
    }
    return arena;
}

/* The orders tried; the smallest arena wins. Largest first is the classic greedy by size;
 * the others win on plans where long-lived small tensors fragment the big gaps. */
enum plan_order { ORDER_SIZE, ORDER_SIZE_X_LIFETIME, ORDER_LIFETIME, ORDER_BIRTH, ORDER_COUNT };

static size_t order_key(const struct swin_plan_tensor *t, enum plan_order o)
{
    size_t life = (size_t)(t->dies - t->born);
    switch (o) {
    case ORDER_SIZE: return t->bytes;
    case ORDER_SIZE_X_LIFETIME: return t->bytes / SWIN_PLAN_ALIGN * life;
    case ORDER_LIFETIME: return life;
    case ORDER_BIRTH: return (size_t)(INT32_MAX - t->born);
    case ORDER_COUNT: break;
    }
    return 0;
}

swin_status swin_plan_solve(struct swin_plan *p, swin_error *err)
{
    for (int i = 0; i < p->n; i++)
        if (p->t[i].dies < 0)
            return swin_error_set(err, SWIN_ERR_INTERNAL, "plan: tensor '%s' is never freed",
                                  p->t[i].name ? p->t[i].name : "?");
    size_t cnt = (size_t)(p->n ? p->n : 1);
    struct sort_key *order = malloc(cnt * sizeof *order), *near = malloc(cnt * sizeof *near);
    int *placed = malloc(cnt * sizeof *placed);
    size_t *off = malloc(cnt * sizeof *off);
    if (!order || !placed || !near || !off) {
        free(order), free(placed), free(near), free(off);
        return swin_error_set(err, SWIN_ERR_NOMEM, "plan: out of host memory");
    }
    size_t arena = SIZE_MAX;
    for (int o = 0; o < ORDER_COUNT; o++) {
        for (int i = 0; i < p->n; i++)
            order[i] = (struct sort_key){order_key(&p->t[i], (enum plan_order)o), p->t[i].born, i};
        qsort(order, (size_t)p->n, sizeof *order, by_key_desc);
        size_t a = place_in_order(p, order, off, placed, near);
        if (a < arena) {
            arena = a;
            for (int i = 0; i < p->n; i++) p->t[i].offset = off[i];
        }
    }
    free(order), free(placed), free(near), free(off);
    p->arena_bytes = p->n ? arena : 0;
    p->lower_bound = live_peak(p);
    p->solved = true;
    p->cursor = 0;
    return SWIN_OK;
}

void swin_plan_rewind(struct swin_plan *p)
{
    p->cursor = 0;
}
