/* The planner against brute force: random lifetimes (some tensors shrinking in place), every pair of tensors that are live at the same event must get disjoint bytes, the
 * lower bound must equal an independent sweep, and the arena can never be below it. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/plan.h"
#include "tests/common/check.h"

/* Bytes [offset, offset + extent) that tensor t holds at event e (0 when it is not live):
 * its head, plus its tail until the tensor shrinks. */
static size_t extent_at(const struct swin_plan_tensor *t, int e)
{
    if (e < t->born || e >= t->dies) return 0;
    return e < t->tail_dies ? t->bytes : t->head;
}

/* Event by event, no two tensors may hold the same byte. */
static bool disjoint_when_live(const struct swin_plan *p)
{
    for (int e = 0; e < p->event; e++)
        for (int i = 0; i < p->n; i++)
            for (int j = i + 1; j < p->n; j++) {
                const struct swin_plan_tensor *a = &p->t[i], *b = &p->t[j];
                size_t ea = extent_at(a, e), eb = extent_at(b, e);
                if (ea && eb && a->offset < b->offset + eb && b->offset < a->offset + ea) {
                    fprintf(stderr, "  tensors %d and %d overlap at event %d\n", i, j, e);
                    return false;
                }
            }
    return true;
}

/* Independent lower bound: at every instant, the sum of live extents. */
static size_t brute_bound(const struct swin_plan *p)
{
    size_t best = 0;
    for (int e = 0; e < p->event; e++) {
        size_t s = 0;
        for (int i = 0; i < p->n; i++) s += extent_at(&p->t[i], e);
        if (s > best) best = s;
    }
    return best;
}

/* The in-place pattern of decoder1: the concat x (two maps) and a map a beside it, then x
 * shrinks to its head (the shortcut conv packed res there) and a third map joins them. Peaks
 * are 3 maps at every point, and the arena must be that, not 4. */
static bool shrink_case(void)
{
    const size_t m = 1000 * 256;
    struct swin_plan p;
    swin_error err;
    swin_plan_init(&p);
    int x = swin_plan_alloc(&p, 2 * m, "x");
    int a = swin_plan_alloc(&p, m, "a");
    bool ok = check_true("shrink to a head", swin_plan_shrink(&p, x, m));
    ok &= check_true("a second shrink is refused", !swin_plan_shrink(&p, x, m / 2));
    int b = swin_plan_alloc(&p, m, "b");
    swin_plan_free(&p, a);
    swin_plan_free(&p, x);
    swin_plan_free(&p, b);
    ok &= check_true("shrink plan solves", swin_plan_solve(&p, &err) == SWIN_OK);
    ok &= check_true("shrink: lower bound 3 maps", p.lower_bound == 3 * m);
    ok &= check_true("shrink: arena 3 maps", p.arena_bytes == 3 * m);
    ok &= check_true("shrink: disjoint", disjoint_when_live(&p));
    swin_plan_rewind(&p);
    ok &= check_true("run mode replays the size at allocation", swin_plan_alloc(&p, 2 * m, "x") == x);
    swin_plan_release(&p);

    swin_plan_init(&p);
    int s = swin_plan_alloc(&p, m, "s");
    ok &= check_true("shrinking a tensor to more is refused", !swin_plan_shrink(&p, s, 2 * m));
    swin_plan_free(&p, s);
    ok &= check_true("resizing a dead tensor is refused", !swin_plan_shrink(&p, s, m / 2));
    swin_plan_release(&p);
    return ok;
}

int main(void)
{
    bool ok = true;
    swin_error err;

    /* A known case: a, b live together (300 + 100), then c (250) after a dies, then d with c. */
    struct swin_plan p;
    swin_plan_init(&p);
    int a = swin_plan_alloc(&p, 300 * 256, "a"), b = swin_plan_alloc(&p, 100 * 256, "b");
    swin_plan_free(&p, a);
    int c = swin_plan_alloc(&p, 250 * 256, "c");
    swin_plan_free(&p, b);
    int d = swin_plan_alloc(&p, 50 * 256, "d");
    swin_plan_free(&p, c);
    swin_plan_free(&p, d);
    ok &= check_true("known case solves", swin_plan_solve(&p, &err) == SWIN_OK);
    ok &= check_true("known case: lower bound 400 blocks", p.lower_bound == 400 * 256);
    ok &= check_true("known case: arena 400 blocks", p.arena_bytes == 400 * 256);
    ok &= check_true("known case: disjoint", disjoint_when_live(&p));
    swin_plan_rewind(&p);
    ok &= check_true("run mode replays ids", swin_plan_alloc(&p, 300 * 256, "a") == a);
    ok &= check_true("run mode rejects a diverging size", swin_plan_alloc(&p, 7, "b") == -1);
    swin_plan_release(&p);

    /* A tensor never freed is an internal error, not a silent leak in the arena. */
    swin_plan_init(&p);
    swin_plan_alloc(&p, 1000, "leak");
    ok &= check_true("unfreed tensor is reported", swin_plan_solve(&p, &err) == SWIN_ERR_INTERNAL);
    swin_plan_release(&p);

    ok &= shrink_case();

    /* Random stacks of lifetimes; some tensors shrink in place on the way. */
    srand(12345);
    double worst = 1.0;
    for (int round = 0; round < 200; round++) {
        swin_plan_init(&p);
        int live[64], nlive = 0;
        for (int step = 0; step < 120; step++) {
            if (nlive < 64 && (nlive == 0 || rand() % 3)) {
                live[nlive++] = swin_plan_alloc(&p, (size_t)(1 + rand() % 100000), "t");
            } else if (rand() % 4 == 0) {
                int k = rand() % nlive;
                const struct swin_plan_tensor *t = &p.t[live[k]];
                swin_plan_shrink(&p, live[k], (size_t)(1 + rand() % t->bytes));
            } else {
                int k = rand() % nlive;
                swin_plan_free(&p, live[k]);
                live[k] = live[--nlive];
            }
        }
        while (nlive) swin_plan_free(&p, live[--nlive]);
        if (swin_plan_solve(&p, &err) != SWIN_OK) ok &= check_true("random plan solves", false);
        if (!disjoint_when_live(&p)) ok &= check_true("random plan disjoint", false);
        if (p.lower_bound != brute_bound(&p)) ok &= check_true("lower bound equals brute force", false);
        if (p.arena_bytes < p.lower_bound) ok &= check_true("arena >= bound", false);
        double r = (double)p.arena_bytes / (double)p.lower_bound;
        if (r > worst) worst = r;
        swin_plan_release(&p);
    }
    fprintf(stderr, "random plans: worst arena/bound %.3f\n", worst);
    ok &= check_true("200 random plans valid", ok);
    return test_exit(ok);
}
