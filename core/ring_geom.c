/* swin_ring_layout_of (core/ring_geom.h). */
#include "core/ring_geom.h"

/* The first and the last slab row (cube index along ax) that reach plane a. In volume
 * coordinates start i is t_i = min(i * interval, padded - roi) - pad_lo: regular but for a
 * pulled-back last one, which always reaches the end. */
static int64_t first_row(const struct swin_ring_geom *g, int64_t a)
{
    const int ax = g->ax;
    const int64_t from = a + g->pad_lo[ax] - g->roi[ax]; /* rows starting at or before this end before a */
    const int64_t i = from < 0 ? 0 : from / g->interval[ax] + 1;
    return i < g->n[ax] - 1 ? i : g->n[ax] - 1;
}

static int64_t last_row(const struct swin_ring_geom *g, int64_t a)
{
    const int ax = g->ax;
    if (g->padded[ax] - g->roi[ax] - g->pad_lo[ax] <= a) return g->n[ax] - 1;
    const int64_t i = (a + g->pad_lo[ax]) / g->interval[ax];
    return i < g->n[ax] - 1 ? i : g->n[ax] - 1;
}

/* Whether planes `slots` apart can share a slot of the sliding ring (ring_geom.h). */
static bool slots_suffice(const struct swin_ring_geom *g, int64_t slots)
{
    const int64_t size = g->size[g->ax];
    for (int64_t a = 0; a + slots < size; a++) {
        const int64_t last = last_row(g, a);
        if (first_row(g, a + slots) < last) return false;
        if (a + 2 * slots < size && first_row(g, a + 2 * slots) <= last) return false;
    }
    return true;
}

void swin_ring_layout_of(const struct swin_ring_geom *g, struct swin_ring_layout *out)
{
    const int o1 = swin_ring_o1(g);
    const int64_t depth = swin_ring_depth(g), d = g->size[o1], span = d + g->roi[o1];
    *out = (struct swin_ring_layout){.slots = depth, .span = d};
    for (int64_t slots = 1; slots < depth && slots * span < depth * d; slots++)
        if (slots_suffice(g, slots)) {
            *out = (struct swin_ring_layout){.slots = slots, .span = span};
            return;
        }
}
