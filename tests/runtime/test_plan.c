/* The planner against brute force: random lifetimes, every pair of tensors that are live at
 * the same time must get disjoint bytes, the lower bound must equal an independent sweep,
 * and the arena can never be below it. */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/plan.h"
#include "tests/common/check.h"

static bool disjoint_when_live(const struct swin_plan *p)
{
    for (int i = 0; i < p->n; i++)
        for (int j = i + 1; j < p->n; j++) {
            const struct swin_plan_tensor *a = &p->t[i], *b = &p->t[j];
            bool live_together = a->born < b->dies && b->born < a->dies;
            bool bytes_overlap = a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
            if (live_together && bytes_overlap) {
                fprintf(stderr, "  tensors %d and %d overlap in time and memory\n", i, j);
                return false;
            }
        }
    return true;
}

/* Independent lower bound: at every instant, the sum of live sizes. */
static size_t brute_bound(const struct swin_plan *p)
{
    size_t best = 0;
    for (int e = 0; e < p->event; e++) {
        size_t s = 0;
        for (int i = 0; i < p->n; i++)
            if (p->t[i].born <= e && e < p->t[i].dies) s += p->t[i].bytes;
        if (s > best) best = s;
    }
    return best;
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

    /* Random stacks of lifetimes. */
    srand(12345);
    double worst = 1.0;
    for (int round = 0; round < 200; round++) {
        swin_plan_init(&p);
        int live[64], nlive = 0;
        for (int step = 0; step < 120; step++) {
            if (nlive < 64 && (nlive == 0 || rand() % 3)) {
                live[nlive++] = swin_plan_alloc(&p, (size_t)(1 + rand() % 100000), "t");
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
