#include "runtime/plan.h"

#include <limits.h>
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
    int born = p->event++;
    p->t[p->n] = (struct swin_plan_tensor){.bytes = b, .head = b, .born = born, .dies = -1,
                                           .tail_dies = -1, .name = name};
    return p->n++;
}

void swin_plan_free(struct swin_plan *p, int id)
{
    if (p->solved || id < 0 || id >= p->n) return;
    struct swin_plan_tensor *t = &p->t[id];
    t->dies = p->event++;
    if (t->tail_dies < 0) t->tail_dies = t->dies;
}

static bool live(const struct swin_plan_tensor *t) { return t->dies < 0; }

bool swin_plan_shrink(struct swin_plan *p, int id, size_t bytes)
{
    if (p->solved) return true;
    if (id < 0 || id >= p->n) return false;
    struct swin_plan_tensor *t = &p->t[id];
    size_t b = align_up(bytes ? bytes : 1);
    if (!live(t) || t->tail_dies >= 0 || b >= t->bytes) return false;
    t->head = b;
    t->tail_dies = p->event++;
    return true;
}

/* A tensor as (time x bytes) rectangles: the head, then the tail if it has one. */
struct rect {
    int t0, t1;
    long long lo, hi;
};
static int rects_of(const struct swin_plan_tensor *t, struct rect r[2])
{
    r[0] = (struct rect){t->born, t->dies, 0, (long long)t->head};
    if (t->head == t->bytes) return 1;
    r[1] = (struct rect){t->born, t->tail_dies, (long long)t->head, (long long)t->bytes};
    return 2;
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

/* Lower bound: the largest sum of bytes live at one event. Any arena needs at least this. */
static size_t live_peak(const struct swin_plan *p)
{
    size_t peak = 0;
    for (int e = 0; e < p->event; e++) {
        size_t sum = 0;
        for (int i = 0; i < p->n; i++) {
            const struct swin_plan_tensor *t = &p->t[i];
            if (t->born <= e && e < t->dies) sum += t->head;
            if (t->born <= e && e < t->tail_dies) sum += t->bytes - t->head;
        }
        if (sum > peak) peak = sum;
    }
    return peak;
}

/* Offsets o at which tensor t would collide with tensor u placed at ou: the open interval
 * (a, b); t fits below u when o <= a, above it when o >= b. */
struct forbidden {
    long long a, b;
};
static int by_a_asc(const void *x, const void *y)
{
    const struct forbidden *f = x, *g = y;
    return f->a < g->a ? -1 : f->a > g->a;
}
static int collisions(const struct swin_plan_tensor *t, const struct swin_plan_tensor *u, size_t ou,
                      struct forbidden *out)
{
    struct rect rt[2], ru[2];
    int nt = rects_of(t, rt), nu = rects_of(u, ru), n = 0;
    for (int i = 0; i < nt; i++)
        for (int j = 0; j < nu; j++)
            if (rt[i].t0 < ru[j].t1 && ru[j].t0 < rt[i].t1)
                out[n++] = (struct forbidden){(long long)ou + ru[j].lo - rt[i].hi, (long long)ou + ru[j].hi - rt[i].lo};
    return n;
}

/* Places tensors in the given order, each at the lowest offset of the tightest gap (best
 * fit) that tensors already placed leave it, else above them all. Writes off[]; returns the
 * arena size. near[] holds up to 4 collisions per placed tensor. */
static size_t place_in_order(const struct swin_plan *p, const struct sort_key *order, size_t *off, int *placed,
                             struct forbidden *near)
{
    size_t arena = 0;
    int nplaced = 0;
    for (int k = 0; k < p->n; k++) {
        const struct swin_plan_tensor *t = &p->t[order[k].idx];
        int nn = 0;
        for (int j = 0; j < nplaced; j++) nn += collisions(t, &p->t[placed[j]], off[placed[j]], near + nn);
        qsort(near, (size_t)nn, sizeof *near, by_a_asc);
        long long best = -1, best_slack = LLONG_MAX, cursor = 0;
        for (int j = 0; j < nn; j++) {
            if (near[j].a >= cursor && near[j].a - cursor < best_slack) {
                best_slack = near[j].a - cursor;
                best = cursor;
            }
            if (near[j].b > cursor) cursor = near[j].b;
        }
        size_t at = (size_t)(best >= 0 ? best : cursor);
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
    struct sort_key *order = malloc(cnt * sizeof *order);
    struct forbidden *near = malloc(4 * cnt * sizeof *near);
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
